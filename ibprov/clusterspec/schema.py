"""The JSON Schema of cluster.yaml (``ibprov schema``), for editors and YAML language servers."""

from __future__ import annotations

import copy
from typing import Any

from ibprov.clusterspec.model import ClusterSpec

__all__ = ["SCHEMA_DIALECT", "json_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the spec as it is written (validation mode)."""
    body = ClusterSpec.model_json_schema(mode="validation")
    _allow_shorthands(body["$defs"])
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "ibprov cluster spec (cluster.yaml)",
        "description": (
            "One declarative file describing an InfiniBand cluster: nodes, switches, cabling, "
            "subnet manager, partitions, QoS, IPoIB, MPI and acceptance thresholds."
        ),
        **{k: v for k, v in body.items() if k not in {"title", "description"}},
    }


def _allow_shorthands(defs: dict[str, Any]) -> None:
    """Add the string forms the loader accepts before validation (pydantic only sees the parsed form)."""
    links = defs["Fabric"]["properties"]["links"]
    links["items"] = {
        "anyOf": [
            links["items"],
            {"type": "string", "description": "'A <-> B', each end SWITCH:PORT or NODE/HCA:PORT"},
        ]
    }
    engine = defs["SubnetManager"]["properties"]["routing_engine"]
    names = "|".join(engine["items"]["enum"])
    as_list = {k: copy.deepcopy(v) for k, v in engine.items() if k in {"type", "items", "minItems"}}
    for key in ("type", "items", "minItems"):
        engine.pop(key, None)
    engine["anyOf"] = [
        as_list,
        {"type": "string", "pattern": f"^ *({names}) *(, *({names}) *)*$", "description": "comma-separated"},
    ]
