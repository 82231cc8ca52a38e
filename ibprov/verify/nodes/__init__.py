"""The nodes section of verify (``verify --nodes``); its entry point is :mod:`.section`."""
