"""The fabric twin: an ibsim copy of the planned fabric, and running real OpenSM / diags against it."""
