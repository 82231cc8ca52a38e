"""``verify --scheduler``: Slurm's view of the cluster against the plan, and the drains that follow findings."""
