"""verify --perf: who runs perftest against whom, round by round (pure schedules; see schedule.py)."""
