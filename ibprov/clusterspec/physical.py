"""What the spec means for the physical layer, where more than one step needs it (verify --physical, the
Slurm health check, the docs): the PCIe link an HCA port needs for its planned rate, the cable media and the
copper-or-optical rule ``ibprov design`` uses, and the default bit-error-rate limits with their sources.

PCIe arithmetic (PCIe base specification, as tabled in ``docs/physical.md``): a lane carries its transfer
rate times its encoding's efficiency: 8b/10b for Gen1 and Gen2, 128b/130b for Gen3 to Gen5, 242B/256B FLIT
for Gen6. Gen3 x16 is 126 Gb/s, Gen4 x16 252 Gb/s, Gen5 x16 504 Gb/s; so HDR 200 needs Gen4 x16 and NDR 400
Gen5 x16. The need is the port's planned data rate (:func:`~ibprov.clusterspec.units.data_rate_gbps`) of the
fastest port of the HCA: a dual-port card is expected to carry one port at its full rate.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from ibprov.clusterspec.units import Speed

__all__ = [
    "BER_SOURCES",
    "CABLE_TIERS",
    "EFFECTIVE_BER_MAX",
    "MEDIA",
    "MEDIUM_FAMILY",
    "PCIE_GT_S",
    "RAW_BER_MAX",
    "RAW_BER_WARN",
    "PcieLink",
    "cable_tier",
    "lane_gbps",
    "medium_matches",
    "needed_pcie",
    "pcie_generation",
]

# ------------------------------------------------------------------------------------------------ PCIe
PCIE_GT_S: dict[int, float] = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
_EFFICIENCY: dict[int, float] = {1: 0.8, 2: 0.8, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256}
PCIE_WIDTHS = (1, 2, 4, 8, 16, 32)


def lane_gbps(generation: int) -> float:
    """Usable Gb/s of one lane of this PCIe generation (transfer rate x encoding efficiency)."""
    return PCIE_GT_S[generation] * _EFFICIENCY[generation]


def pcie_generation(gt_s: float) -> int | None:
    """The generation of a transfer rate in GT/s (8.0 -> 3); None for a rate no generation has."""
    for gen, rate in PCIE_GT_S.items():
        if abs(rate - gt_s) < 0.01:
            return gen
    return None


@dataclass(frozen=True, order=True)
class PcieLink:
    """A PCIe link's generation and width: what a device trained at, is capable of, or needs."""

    generation: int
    width: int

    @property
    def gbps(self) -> float:
        """Usable bandwidth in Gb/s (Gen4 x8 -> 126.0)."""
        return lane_gbps(self.generation) * self.width

    @property
    def text(self) -> str:
        """``Gen4 x8``."""
        return f"Gen{self.generation} x{self.width}"

    def arithmetic(self) -> str:
        """``Gen4 x8 = 126 Gb/s usable``: the figure a finding shows."""
        return f"{self.text} = {self.gbps:.0f} Gb/s usable"

    def carries(self, rate_gbps: float) -> bool:
        return self.gbps >= rate_gbps


@functools.lru_cache(maxsize=256)  # a pure function of a handful of rates, asked once per HCA
def needed_pcie(rate_gbps: float, max_width: int = 16) -> PcieLink:
    """The slowest generation that carries ``rate_gbps`` at ``max_width`` lanes, at the fewest lanes that do:
    HDR 200 -> Gen4 x16, NDR 400 -> Gen5 x16, HDR100 -> Gen3 x16, EDR 100 -> Gen3 x16. A rate no link of that
    width carries gets the fastest generation at that width (the check then fails every port: the plan says
    so)."""
    for gen in PCIE_GT_S:
        if PcieLink(gen, max_width).carries(rate_gbps):
            width = next(w for w in PCIE_WIDTHS if w <= max_width and PcieLink(gen, w).carries(rate_gbps))
            return PcieLink(gen, width)
    return PcieLink(max(PCIE_GT_S), max_width)


# ------------------------------------------------------------------------------------------------ cables
Medium = Literal["dac", "acc", "aoc", "transceiver", "copper", "optical"]
MEDIA: dict[str, str] = {
    "dac": "passive copper (DAC)",
    "acc": "active copper (ACC)",
    "aoc": "active optical cable (AOC)",
    "transceiver": "optical transceivers and fibre",
    "copper": "copper (DAC or ACC)",
    "optical": "optical (AOC or transceivers)",
}
MEDIUM_FAMILY = {"dac": "copper", "acc": "copper", "aoc": "optical", "transceiver": "optical"}

# The cable tiers of a fabric, lowest first: a cable's tier is named by its ends (host-leaf, leaf-spine, ...);
# ``ibprov design --dac-max-tier`` and the spec's ``fabric.cables.copper_max_tier`` cut this list.
CABLE_TIERS = ("host-leaf", "leaf-spine", "spine-core")
_RANK = {"host": 0, "leaf": 1, "spine": 2, "core": 3}


@functools.lru_cache(maxsize=256)  # a pure function of a few roles, asked once per cable
def cable_tier(role_a: str, role_b: str) -> str:
    """The tier a cable between ends of these roles (host, leaf, spine, core) is in: host-leaf, leaf-spine,
    spine-core; a cable within a tier or skipping one (a ring of leaves, a host on a spine) is named by its
    two ends, lower first (``leaf-leaf``, ``host-spine``)."""
    low, high = sorted((role_a, role_b), key=lambda r: _RANK.get(r, 9))
    return f"{low}-{high}"


def tier_rank(tier: str) -> int:
    """How high a tier reaches: the rank of its upper end (host-leaf and leaf-leaf 1, leaf-spine 2, ...)."""
    return max(_RANK.get(role, 9) for role in tier.split("-"))


def medium_matches(planned: str, found: str) -> bool:
    """Whether a found medium (dac, acc, aoc, transceiver) is what the plan names (one of those, or a family)."""
    return planned == found or MEDIUM_FAMILY.get(found) == planned


# ------------------------------------------------------------------------------------------------ BER
# Effective (post-FEC) BER: what the application sees. 1e-12: Oracle OCI's health check and ibdiagnet's legacy
# --ber_test default (docs/physical.md names both).
EFFECTIVE_BER_MAX = 1e-12
# Raw (pre-FEC) BER, per speed: 1e-5 is Oracle OCI's fail limit, 1e-6 what NVIDIA's Quantum release notes call
# unclean (a warning). PAM4 speeds (HDR and up) carry RS-FEC: a raw BER near 1e-8 is healthy there. A link without
# FEC (NRZ up to FDR, EDR without FEC) reports its raw errors as effective ones too, so the effective limit
# judges it. No vendor publishes per-speed raw limits: these are policy, overridable per speed in
# acceptance.physical.
RAW_BER_MAX: dict[Speed, float] = dict.fromkeys(Speed, 1e-5)
RAW_BER_WARN: dict[Speed, float] = dict.fromkeys(Speed, 1e-6)
BER_SOURCES = (
    "effective BER 1e-12: Oracle OCI HPC health check (oci-dr-hpc-v2 link_check, test_limits.json) and "
    "ibdiagnet's --ber_test default threshold",
    "raw BER 1e-5 (HDR/NDR/XDR): Oracle OCI's fail limit; 1e-6: NVIDIA Quantum firmware release notes "
    "(27.2008.0232, 'unclean RAW BER (10e-6)'), a warning",
)
