"""Day 2: verify runs kept in a history, what changed between two runs, and the metrics of the last run."""
