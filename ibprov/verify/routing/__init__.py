"""The routing section of verify (``verify --routing``): the forwarding tables the SM wrote, audited; its entry
point is :mod:`.section`."""
