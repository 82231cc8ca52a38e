"""Causes before symptoms: which finding explains which (:mod:`.rules`), over what each finding is about
(:mod:`.subjects`), put together into one graph per report (:mod:`.graph`). A finding keeps its check and
severity and gains a cause; the causes are the findings nothing explains."""

from ibprov.verify.causes.graph import explain, explain_report
from ibprov.verify.causes.rules import RULES, Rule
from ibprov.verify.causes.subjects import Fabric, Subjects, fabric_of

__all__ = ["RULES", "Fabric", "Rule", "Subjects", "explain", "explain_report", "fabric_of"]
