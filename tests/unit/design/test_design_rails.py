"""`ibprov design` with multi-HCA nodes: rail-optimized and node-grouped plans that validate and cable
every node port once, their bill of materials (checked against the generated topology), prices and
the comparison of blocking ratios."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.design import (
    Design,
    DesignError,
    bill_of_materials,
    bom_lines,
    compare_lines,
    cost,
    design,
    parse_prices,
    spec_text,
)
from ibprov.errors import SpecError

PRICES = """\
currency: EUR
switches:
  8: 1000
  16: 2500
cables:
  copper: 10
  optical: 30
transceiver: 100
"""


def written(d: Design) -> LoadedSpec:
    return load_spec_text(spec_text(d, cluster="rails"), "rails.yaml")


CASES = [
    # nodes, radix, rails, blocking, unit_nodes, levels
    (7, 8, 2, "1:1", None, 2),
    (13, 8, 4, "1:1", None, 3),
    (13, 16, 4, "1:1", None, 2),
    (16, 8, 4, "1:1", 4, 3),
    (9, 16, 8, "1:1", None, 2),
    (33, 16, 8, "2:1", 8, 3),
    (101, 16, 4, "1:1", None, 3),
]


@pytest.mark.parametrize(("nodes", "radix", "rails", "blocking", "unit", "levels"), CASES)
def test_rail_optimized_plans_validate_and_put_each_rail_on_its_own_leaves(
    nodes: int, radix: int, rails: int, blocking: str, unit: int | None, levels: int
) -> None:
    d = design(nodes, radix, Fraction(blocking.replace(":", "/")), rails=rails, unit_nodes=unit)
    assert d.levels == levels
    assert d.layout == "rail-optimized"
    loaded = written(d)
    ft = loaded.spec.fabric.fat_tree
    assert ft is not None
    assert ft.rails == "rail-optimized"
    host_links = [link for link in loaded.topology.links if link.b.hca]
    assert len(host_links) == nodes * rails == d.cables["host-leaf"]
    assert len({link.b for link in host_links}) == nodes * rails
    rail_of_leaf: dict[str, set[str]] = defaultdict(set)
    for link in host_links:
        rail_of_leaf[link.a.device].add(link.b.hca or "")
    assert all(len(devices) == 1 for devices in rail_of_leaf.values())  # a leaf carries one rail
    used = Counter(end.device for link in loaded.topology.links for end in (link.a, link.b) if end.hca is None)
    assert max(used.values()) <= radix
    assert len(loaded.topology.switches) == d.switches
    assert sum(d.cables.values()) == len(loaded.topology.links)
    assert d.achieved <= Fraction(blocking.replace(":", "/"))
    if unit is not None:
        assert ft.unit_nodes == unit


def test_the_bill_of_materials_counts_what_the_generated_topology_has() -> None:
    d = design(33, 16, Fraction(2), rails=8, unit_nodes=8)
    loaded = written(d)
    bom = bill_of_materials(d, "host-leaf")
    roles = {name: sw.role for name, sw in loaded.topology.switches.items()}
    assert bom.switches == dict(Counter(roles.values()))
    tier_of = {frozenset(("leaf",)): "host-leaf", frozenset(("leaf", "spine")): "leaf-spine"}
    tier_of[frozenset(("spine", "core"))] = "spine-core"
    seen: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for link in loaded.topology.links:
        kinds = frozenset(roles[e.device] for e in (link.a, link.b) if e.hca is None)
        seen[tier_of[kinds]] += 1
        used.update(roles[e.device] for e in (link.a, link.b) if e.hca is None)
    assert bom.cables == dict(seen)
    assert bom.media == {"host-leaf": "copper", "leaf-spine": "optical", "spine-core": "optical"}
    assert bom.transceivers == {"leaf-spine": 2 * seen["leaf-spine"], "spine-core": 2 * seen["spine-core"]}
    assert bom.free_ports == {tier: n * 16 - used[tier] for tier, n in bom.switches.items()}


@pytest.mark.parametrize(
    ("tier", "optical"),
    [("none", {"host-leaf", "leaf-spine"}), ("host-leaf", {"leaf-spine"}), ("leaf-spine", set())],
)
def test_dac_max_tier_decides_which_tiers_need_transceivers(tier: str, optical: set[str]) -> None:
    bom = bill_of_materials(design(100, 40), tier)
    assert {t for t, m in bom.media.items() if m == "optical"} == optical
    assert set(bom.transceivers) == optical
    assert bom.total_transceivers == sum(2 * bom.cables[t] for t in optical)


def test_prices_give_the_cost_per_tier_the_total_and_per_node_port() -> None:
    d = design(13, 16, rails=4)
    assert d.levels == 2
    bom = bill_of_materials(d)
    price = cost(bom, parse_prices(PRICES))
    leaves, spines = bom.switches["leaf"], bom.switches["spine"]
    host, up = bom.cables["host-leaf"], bom.cables["leaf-spine"]
    assert price.items == {
        "leaf switches": Decimal(2500 * leaves),
        "spine switches": Decimal(2500 * spines),
        "host-leaf cables": Decimal(10 * host),
        "leaf-spine cables": Decimal(30 * up + 100 * 2 * up),
    }
    assert price.total == sum(price.items.values())
    assert price.per_node_port == price.total / 52
    lines = bom_lines(bom, price)
    assert lines[-1] == f"  per node port:     {price.per_node_port:,.2f} EUR (52 node ports)"


def test_without_prices_the_bom_has_counts_only() -> None:
    lines = bom_lines(bill_of_materials(design(13, 8, rails=4)))
    assert lines[-1] == "  cost:         no prices given (--prices FILE): counts only"
    assert not any("EUR" in line or line.strip() == "cost:" for line in lines)


def test_a_price_the_design_needs_is_never_invented() -> None:
    text = "switches: {40: 100}\ncables: {copper: 1}\n"
    with pytest.raises(SpecError) as err:
        cost(bill_of_materials(design(100, 64)), parse_prices(text, "p.yaml"))
    assert {str(p) for p in err.value.problems} == {
        "p.yaml:1:1: no price for a transceiver (208 needed): add transceiver: PRICE",
        "p.yaml:1:11: switches: no price for a 64-port switch: add 64: PRICE under switches",
        "p.yaml:2:9: cables: no price for an optical cable: add optical: PRICE under cables",
    }


def test_a_malformed_prices_file_is_reported_at_every_bad_place() -> None:
    text = "currency: USD\nswitches:\n  40: -3\n  forty: 1\ncables:\n  coper: 90\ntranscevier: 600\n"
    with pytest.raises(SpecError) as err:
        parse_prices(text, "bad.yaml")
    assert [str(p) for p in err.value.problems] == [
        "bad.yaml:3:7: switches[40]: a price is a number >= 0 (got -3)",
        "bad.yaml:4:3: switches.forty: a switch is priced by its port count, 1..254",
        "bad.yaml:6:3: cables.coper: unknown medium 'coper': copper or optical",
        "bad.yaml:7:1: transcevier: unknown key 'transcevier' (known: currency, switches, cables, transceiver)",
    ]


def test_compare_puts_blocking_ratios_side_by_side() -> None:
    prices = parse_prices(PRICES)
    rows = []
    for ratio in (Fraction(1), Fraction(2)):
        d = design(13, 8, ratio, rails=4)
        bom = bill_of_materials(d)
        rows.append((d, bom, cost(bom, prices)))
    lines = compare_lines(rows)
    table = {line.split("  ")[0].strip(): line.split()[-2:] for line in lines}
    assert lines[0].split() == ["blocking", "1:1", "2:1"]
    assert table["switches"] == [str(rows[0][0].switches), str(rows[1][0].switches)]
    assert table["transceivers"] == [str(r[1].total_transceivers) for r in rows]
    assert any(line.startswith("total cost") and line.count("EUR") == 2 for line in lines)


def test_unit_nodes_needs_rails_and_an_unfit_unit_is_refused() -> None:
    with pytest.raises(DesignError, match="--unit-nodes sizes the scalable units"):
        design(10, 8, unit_nodes=4)
    with pytest.raises(DesignError, match="--unit-nodes must be between 1 and --nodes"):
        design(10, 8, rails=2, unit_nodes=11)


def test_node_grouped_multi_hca_plans_keep_a_nodes_ports_on_one_leaf() -> None:
    d = design(10, 16, rails=4, layout="node-grouped")
    loaded = written(d)
    leaf_of: dict[str, set[str]] = defaultdict(set)
    for link in loaded.topology.links:
        if link.b.hca:
            leaf_of[link.b.device].add(link.a.device)
    assert len(leaf_of) == 10
    assert all(len(leaves) == 1 for leaves in leaf_of.values())


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["design", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_cli_writes_a_rail_optimized_spec_that_validates(tmp_path: Path) -> None:
    spec = tmp_path / "gpu.yaml"
    code, out, err = run("--nodes", "33", "--radix", "16", "--rails", "8", "--unit-nodes", "8", "-o", str(spec))
    assert code == 0, err
    assert "units:     5 scalable units of 8 nodes, 8 leaves each (1 per rail)" in out
    assert "bill of materials:" in out
    assert spec.read_text().startswith(
        "# Fat tree designed by `ibprov design --nodes 33 --radix 16 --blocking 1:1 --rails 8 --unit-nodes 8`"
    )
    assert CliRunner().invoke(cli, ["validate", str(spec)]).exit_code == 0


def test_the_cli_prints_json_and_compares_with_prices(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    code, out, err = run("--nodes", "13", "--radix", "8", "--rails", "4", "--prices", str(prices), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["bom"]["cables"]["host-leaf"] == {"count": 52, "medium": "copper", "transceivers": 0}
    assert data["cost"]["currency"] == "EUR"
    assert Decimal(data["cost"]["total"]) == sum(Decimal(v) for v in data["cost"]["items"].values())
    code, out, err = run("--nodes", "13", "--radix", "8", "--rails", "4", "--compare", "--blocking", "1:1,2:1")
    assert code == 0, err
    assert out.splitlines()[0].split() == ["blocking", "1:1", "2:1"]
    code, _out, err = run("--nodes", "13", "--radix", "8", "--prices", str(tmp_path / "none.yaml"))
    assert code == 2
    assert "none.yaml:1:1: no such file" in err


def test_compare_and_output_do_not_combine(tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    code, out, err = run("--nodes", "10", "--radix", "8", "--compare", "--blocking", "1:1,2:1", "-o", str(spec))
    assert code == 2
    assert out == ""
    assert "-o writes one design: drop --compare" in err
    assert not spec.exists()
