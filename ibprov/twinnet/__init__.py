"""What the fabric twin *is*: its ibsim net file (:mod:`.netfile`) and what it cannot show (:mod:`.limits`),
derived from the spec and the cluster's identity. Render writes both; verify judges the twin by its limits;
the running twin (:mod:`ibprov.twin`) starts ibsim on them. Nothing here runs a process."""
