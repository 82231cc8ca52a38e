"""``ibprov design``: plan a fat tree (:mod:`.plan`), its bill of materials (:mod:`.bom`) and, with the
user's unit prices (:mod:`.prices`), its cost."""

from __future__ import annotations

from ibprov.design.bom import Bom, Cost, bill_of_materials, bom_lines, compare_lines, cost, to_json
from ibprov.design.plan import (
    MAX_NODES,
    Design,
    DesignError,
    Shape,
    cluster_name,
    command_args,
    design,
    format_ratio,
    node_names,
    parse_blocking,
    plan_lines,
    spec_text,
)
from ibprov.design.prices import Prices, load_prices, parse_prices

__all__ = [
    "MAX_NODES",
    "Bom",
    "Cost",
    "Design",
    "DesignError",
    "Prices",
    "Shape",
    "bill_of_materials",
    "bom_lines",
    "cluster_name",
    "command_args",
    "compare_lines",
    "cost",
    "design",
    "format_ratio",
    "load_prices",
    "node_names",
    "parse_blocking",
    "parse_prices",
    "plan_lines",
    "spec_text",
    "to_json",
]
