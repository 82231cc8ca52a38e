"""``ibprov verify``: observe the live fabric (or its twin) and compare it with the plan.

collect (:mod:`.collect` parsers, :mod:`.observe`, :mod:`.runner`) -> observation -> checks
(:mod:`.checks`, against :mod:`.plan`) -> :class:`ibprov.report.Report`.
"""
