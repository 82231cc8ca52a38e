"""``ibprov verify``: observe the live fabric and hosts (or the twin's) and compare them with the plan.

:mod:`.registry` lists the sections and their options; :mod:`.judge` declares checks and runs them;
:mod:`.skeleton` is the one shape of a section's run (plan and collect -> checks -> report); :mod:`.target`
is where the sections run when it is not the spec's hosts (``--target twin``). One package per section
(fabric, nodes, mpi, perf): plan, collect, observation, checks, facts, and ``section.py``, its entry point.
"""
