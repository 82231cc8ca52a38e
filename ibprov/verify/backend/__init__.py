"""``verify --backend``: the SM back end's own view (the switch's running configuration, UFM's pkeys) against the
plan. ``verify --fabric`` stays the judge of the fabric itself (PKey tables, SMs); this section says whether the
product holds what ``ibprov apply`` sends it, so that a drift is named where it is, not only where it shows."""
