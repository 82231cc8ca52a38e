"""The bill of materials of a design: switches, cables and transceivers per tier, free ports, and — with
unit prices the user gives (:mod:`.prices`) — the cost. Counts only otherwise: no price is invented."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ibprov.design.plan import Design, format_ratio, plan_lines
from ibprov.design.prices import Prices
from ibprov.errors import Problem, SpecError

__all__ = ["CABLE_TIERS", "Bom", "Cost", "bill_of_materials", "bom_lines", "compare_lines", "cost", "to_json"]

CABLE_TIERS = ("host-leaf", "leaf-spine", "spine-core")
DAC_CHOICES = ("none", *CABLE_TIERS)


@dataclass(frozen=True)
class Bom:
    radix: int
    switches: dict[str, int]  # tier (leaf, spine, core) -> switches
    cables: dict[str, int]  # cable tier -> cables
    media: dict[str, str]  # cable tier -> copper | optical
    transceivers: dict[str, int]  # cable tier -> transceivers (optical tiers: 2 per cable)
    free_ports: dict[str, int]  # switch tier -> ports without a cable, over all its switches
    node_ports: int

    @property
    def total_transceivers(self) -> int:
        return sum(self.transceivers.values())


@dataclass(frozen=True)
class Cost:
    currency: str
    items: dict[str, Decimal]  # "leaf switches", "host-leaf cables", ... -> cost
    node_ports: int

    @property
    def total(self) -> Decimal:
        return sum(self.items.values(), Decimal(0))

    @property
    def per_node_port(self) -> Decimal:
        return self.total / self.node_ports


def bill_of_materials(d: Design, dac_max_tier: str = "host-leaf") -> Bom:
    """Counts per tier; cable tiers up to ``dac_max_tier`` are copper (DAC), the ones above optical."""
    if dac_max_tier not in DAC_CHOICES:
        raise ValueError(f"dac_max_tier {dac_max_tier!r}: one of {', '.join(DAC_CHOICES)}")
    copper = CABLE_TIERS[: DAC_CHOICES.index(dac_max_tier)]
    cables = d.cables
    media = {tier: "copper" if tier in copper else "optical" for tier in cables}
    transceivers = {tier: 2 * n for tier, n in cables.items() if media[tier] == "optical"}
    ft = d.fat_tree
    used = {
        "leaf": cables["host-leaf"] + cables.get("leaf-spine", 0),
        "spine": cables.get("leaf-spine", 0) + cables.get("spine-core", 0),
        "core": cables.get("spine-core", 0),
    }
    free = {tier: n * ft.radix - used[tier] for tier, n in d.tiers.items()}
    return Bom(ft.radix, d.tiers, cables, media, transceivers, free, d.ports)


def cost(bom: Bom, prices: Prices) -> Cost:
    """The cost of each item; a price the BOM needs and ``prices`` lacks is a located problem."""
    problems: list[Problem] = []
    items: dict[str, Decimal] = {}
    switch_price = prices.switches.get(bom.radix)
    if switch_price is None:
        problems.append(
            prices.problem(
                ("switches",),
                f"no price for a {bom.radix}-port switch: add {bom.radix}: PRICE under switches",
            )
        )
    for tier, n in bom.switches.items():
        if switch_price is not None:
            items[f"{tier} switches"] = n * switch_price
    for medium in sorted(set(bom.media.values())):
        if medium not in prices.cables:
            problems.append(
                prices.problem(
                    ("cables",),
                    f"no price for {'an' if medium == 'optical' else 'a'} {medium} cable: add {medium}: PRICE "
                    "under cables",
                )
            )
    if bom.transceivers and prices.transceiver is None:
        problems.append(
            prices.problem((), f"no price for a transceiver ({bom.total_transceivers} needed): add transceiver: PRICE")
        )
    if problems:
        raise SpecError(problems)
    for tier, n in bom.cables.items():
        price = prices.cables[bom.media[tier]] * n + (prices.transceiver or Decimal(0)) * bom.transceivers.get(tier, 0)
        items[f"{tier} cables"] = price
    return Cost(prices.currency, items, bom.node_ports)


def _money(value: Decimal, currency: str) -> str:
    text = f"{value:,.2f}"
    return f"{text} {currency}" if currency else text


def bom_lines(bom: Bom, price: Cost | None = None) -> list[str]:
    """The bill of materials as ``ibprov design`` prints it."""
    out = ["bill of materials:"]
    switches = ", ".join(f"{n} {tier}" for tier, n in bom.switches.items())
    out.append(f"  switches:     {sum(bom.switches.values())} x {bom.radix}-port ({switches})")
    for tier, n in bom.cables.items():
        optics = f", {bom.transceivers[tier]} transceivers" if tier in bom.transceivers else ""
        out.append(f"  {tier + ':':<13} {n} {bom.media[tier]} cables{optics}")
    if bom.transceivers:
        out.append(f"  transceivers: {bom.total_transceivers} (2 per optical cable)")
    out.append("  free ports:   " + ", ".join(f"{n} on the {tier} switches" for tier, n in bom.free_ports.items()))
    if price is None:
        out.append("  cost:         no prices given (--prices FILE): counts only")
        return out
    out.append("cost:")
    width = max(len(k) for k in price.items)
    for item, value in price.items.items():
        out.append(f"  {item + ':':<{width + 1}} {_money(value, price.currency)}")
    out.append(f"  {'total:':<{width + 1}} {_money(price.total, price.currency)}")
    out.append(
        f"  {'per node port:':<{width + 1}} {_money(price.per_node_port, price.currency)} ({bom.node_ports} node ports)"
    )
    return out


def to_json(d: Design, bom: Bom, price: Cost | None) -> dict[str, Any]:
    """The design, its BOM and (with prices) its cost, as ``--format json`` prints them."""
    ft = d.fat_tree
    return {
        "nodes": d.nodes,
        "rails": d.rails,
        "layout": d.layout,
        "radix": d.radix,
        "blocking_requested": format_ratio(d.target),
        "blocking_achieved": format_ratio(d.achieved),
        "levels": d.levels,
        "fat_tree": ft.model_dump(mode="json", exclude_none=True),
        "plan": plan_lines(d),
        "bom": {
            "switches": {"ports": bom.radix, "by_tier": bom.switches, "total": sum(bom.switches.values())},
            "cables": {
                tier: {"count": n, "medium": bom.media[tier], "transceivers": bom.transceivers.get(tier, 0)}
                for tier, n in bom.cables.items()
            },
            "transceivers": bom.total_transceivers,
            "free_ports": bom.free_ports,
            "spare_host_ports": d.spare_host_ports,
        },
        "cost": None
        if price is None
        else {
            "currency": price.currency,
            "items": {k: str(v) for k, v in price.items.items()},
            "total": str(price.total),
            "per_node_port": str(price.per_node_port.quantize(Decimal("0.01"))),
        },
    }


def compare_lines(rows: list[tuple[Design, Bom, Cost | None]]) -> list[str]:
    """Designs side by side (one column each): levels, switches, cables, transceivers, cost."""
    table: list[tuple[str, list[str]]] = [
        ("blocking", [format_ratio(d.target) for d, _b, _c in rows]),
        ("achieved", [format_ratio(d.achieved) for d, _b, _c in rows]),
        ("levels", [str(d.levels) for d, _b, _c in rows]),
        ("switches", [str(d.switches) for d, _b, _c in rows]),
    ]
    for tier in ("leaf", "spine", "core"):
        if any(tier in b.switches for _d, b, _c in rows):
            table.append((f"  {tier}", [str(b.switches.get(tier, 0)) for _d, b, _c in rows]))
    table.append(("cables", [str(sum(b.cables.values())) for _d, b, _c in rows]))
    for tier in CABLE_TIERS:
        if any(tier in b.cables for _d, b, _c in rows):
            table.append((f"  {tier}", [str(b.cables.get(tier, 0)) for _d, b, _c in rows]))
    table.append(("transceivers", [str(b.total_transceivers) for _d, b, _c in rows]))
    table.append(("spare host ports", [str(d.spare_host_ports) for d, _b, _c in rows]))
    if all(c is not None for _d, _b, c in rows):
        costs = [c for _d, _b, c in rows if c is not None]
        table.append(("total cost", [_money(c.total, c.currency) for c in costs]))
        table.append(("per node port", [_money(c.per_node_port, c.currency) for c in costs]))
    width = max(len(label) for label, _v in table)
    cols = [max(len(r[i]) for _l, r in table) for i in range(len(rows))]
    return [
        f"{label:<{width}}  " + "  ".join(f"{v:>{cols[i]}}" for i, v in enumerate(values)) for label, values in table
    ]
