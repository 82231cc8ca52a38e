"""A site's perftest baseline: ``verify --perf --save-baseline FILE`` records every measured result; later
runs with ``--baseline FILE`` flag results more than ``acceptance.baseline_tolerance`` (5 %) worse.

The file is JSON: ``{"ibprov_perf_baseline": 1, "cluster": ..., "saved": ..., "results": {OBJECT: {"value":
V, "unit": "us" | "Gb/s"}}}``, OBJECT being the check object (``node01/mlx5_0:1 -> node02/mlx5_0:1
ib_write_bw 64KiB``). Only measured values are saved: a skipped or failed run has none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ibprov.errors import InputFileError

__all__ = ["FORMAT", "Baseline", "BaselineEntry", "baseline_text", "load_baseline", "worse_by"]

FORMAT = 1


@dataclass(frozen=True)
class BaselineEntry:
    value: float
    unit: str  # "us" (latency: lower is better) or "Gb/s" (bandwidth: higher is better)


@dataclass(frozen=True)
class Baseline:
    source: str  # the file
    cluster: str
    saved: str
    results: Mapping[str, BaselineEntry]


def worse_by(entry: BaselineEntry, value: float) -> float:
    """How much worse ``value`` is than the baseline, as a fraction (negative: better)."""
    if entry.value <= 0:
        return 0.0
    if entry.unit == "us":
        return (value - entry.value) / entry.value
    return (entry.value - value) / entry.value


def baseline_text(cluster: str, saved: str, results: Mapping[str, BaselineEntry]) -> str:
    data = {
        "ibprov_perf_baseline": FORMAT,
        "cluster": cluster,
        "saved": saved,
        "results": {k: {"value": v.value, "unit": v.unit} for k, v in sorted(results.items())},
    }
    return json.dumps(data, indent=2) + "\n"


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file; a file that is not one raises InputFileError naming the file and what is wrong."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputFileError(f"{path}: cannot read the baseline: {err.strerror or err}") from err
    except json.JSONDecodeError as err:
        raise InputFileError(f"{path}:{err.lineno}:{err.colno}: not a baseline (invalid JSON: {err.msg})") from err
    if not isinstance(data, dict) or data.get("ibprov_perf_baseline") != FORMAT:
        raise InputFileError(f"{path}: not an ibprov perf baseline (written by verify --perf --save-baseline)")
    results = data.get("results")
    if not isinstance(results, dict):
        raise InputFileError(f"{path}: results: expected an object")
    entries = {}
    for key, item in results.items():
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("value"), int | float)
            or item.get("unit") not in ("us", "Gb/s")
        ):
            raise InputFileError(f'{path}: results."{key}": expected {{"value": NUMBER, "unit": "us" or "Gb/s"}}')
        entries[str(key)] = BaselineEntry(float(item["value"]), str(item["unit"]))
    return Baseline(str(path), str(data.get("cluster", "")), str(data.get("saved", "")), entries)
