"""`ibprov design`: the fat tree it proposes validates, cables every host once and fits the radix."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.model import FatTree
from ibprov.clusterspec.topology import fat_tree_problems
from ibprov.design import Design, DesignError, design, format_ratio, parse_blocking, plan_lines, spec_text
from ibprov.render import render_files


def written(d: Design) -> LoadedSpec:
    return load_spec_text(spec_text(d, cluster="designed"), "designed.yaml")


def check_plan(n: int, radix: int, blocking: Fraction) -> Design:
    d = design(n, radix, blocking)
    loaded = written(d)
    links = loaded.topology.links
    host_links = [link for link in links if link.a.hca or link.b.hca]
    assert len(host_links) == n
    assert len({end for link in host_links for end in (link.a, link.b) if end.hca}) == n
    used = Counter(end.device for link in links for end in (link.a, link.b) if end.hca is None)
    assert max(used.values()) <= radix
    assert len(loaded.topology.switches) == d.switches
    assert all(sw.ports == radix for sw in loaded.topology.switches.values())
    assert d.achieved <= blocking
    cables = d.cables
    assert sum(cables.values()) == len(links)
    assert cables["host-leaf"] == n
    return d


CASES = [
    (1, 40, "1:1"),
    (2, 4, "1:1"),
    (36, 36, "1:1"),
    (37, 36, "1:1"),
    (48, 8, "1:1"),
    (100, 40, "1:1"),
    (100, 40, "2:1"),
    (333, 36, "3:1"),
    (500, 36, "3:2"),
    (799, 40, "1:1"),
    (800, 40, "1:1"),
    (801, 40, "1:1"),
    (1000, 40, "2:1"),
    (128, 8, "1:1"),  # (8/2)^2 x 8: the most three levels of 8-port switches hold
    (200, 10, "2:1"),
    (2048, 64, "1:1"),
    (2049, 64, "1:1"),
    (5000, 128, "2:1"),
]


@pytest.mark.parametrize(("n", "radix", "blocking"), CASES, ids=[f"{n}x{r}-{b}" for n, r, b in CASES])
def test_written_spec_validates_cables_every_host_once_and_fits_the_radix(n: int, radix: int, blocking: str) -> None:
    check_plan(n, radix, parse_blocking(blocking))


@pytest.mark.parametrize("radix", [40, 64])
@pytest.mark.parametrize("blocking", ["1:1", "2:1"])
def test_ten_thousand_hosts_need_three_levels_and_fit(radix: int, blocking: str) -> None:
    d = check_plan(10_000, radix, parse_blocking(blocking))
    assert d.levels == 3
    assert d.fat_tree.pods > 1
    assert d.fat_tree.cores > 0


def test_ten_thousand_hosts_on_40_ports_is_the_textbook_tree() -> None:
    ft = design(10_000, 40).fat_tree
    assert (ft.leaves, ft.spines, ft.cores, ft.pods, ft.hosts_per_leaf, ft.uplinks_per_leaf) == (
        500,
        500,
        400,
        25,
        20,
        20,
    )


def test_one_host_is_a_single_leaf() -> None:
    d = check_plan(1, 40, Fraction(1))
    assert (d.levels, d.switches, d.fat_tree.spines, d.free_ports["leaf"]) == (1, 1, 0, 39)


@pytest.mark.parametrize("radix", [8, 36, 40, 64])
def test_two_levels_up_to_half_the_radix_squared_then_three(radix: int) -> None:
    limit = radix * radix // 2
    at = design(limit, radix)
    assert at.levels == 2
    assert (at.fat_tree.leaves, at.fat_tree.spines) == (radix, radix // 2)
    assert at.free_ports == {"leaf": 0, "spine": 0}
    above = check_plan(limit + 1, radix, Fraction(1))
    assert above.levels == 3


def test_blocking_trades_uplinks_for_host_ports() -> None:
    full, half = design(1000, 40, Fraction(1)), design(1000, 40, Fraction(2))
    assert half.switches < full.switches
    assert half.achieved == 2
    assert full.achieved == 1
    assert half.fat_tree.hosts_per_leaf > full.fat_tree.hosts_per_leaf


def _fewest_two_level_switches(n: int, radix: int, blocking: Fraction) -> int | None:
    """Brute force over every fat tree the generator accepts (two levels)."""
    best = None
    for hosts in range(1, radix):
        for up in range(1, radix - hosts + 1):
            if Fraction(hosts, up) > blocking:
                continue
            leaves = -(-n // hosts)
            for spines in range(1, up + 1):
                ft = FatTree(radix=radix, leaves=leaves, spines=spines, hosts_per_leaf=hosts, uplinks_per_leaf=up)
                if not fat_tree_problems(ft):
                    best = leaves + spines if best is None else min(best, leaves + spines)
    return best


@pytest.mark.parametrize(
    ("n", "radix", "blocking"),
    [(9, 8, 1), (20, 8, 1), (32, 8, 1), (17, 6, 1), (30, 8, 2), (45, 12, 3), (70, 12, 1)],
)
def test_two_level_designs_use_the_fewest_switches_any_valid_tree_needs(n: int, radix: int, blocking: int) -> None:
    best = _fewest_two_level_switches(n, radix, Fraction(blocking))
    assert best is not None
    d = design(n, radix, Fraction(blocking))
    assert d.levels == 2
    assert d.switches == best


def test_written_spec_renders_with_two_subnet_managers_and_ftree() -> None:
    loaded = written(design(801, 40))
    sm = loaded.spec.subnet_manager
    assert sm.routing_engine == ("ftree",)
    assert [(i.node, i.priority) for i in sm.instances] == [("node0001", 15), ("node0002", 14)]
    assert all(n.groups == ("compute",) and [h.device for h in n.hcas] == ["mlx5_0"] for n in loaded.spec.nodes)
    assert loaded.spec.nodes[-1].name == "node0801"
    files = render_files(loaded).files
    assert "inventory/hosts.yml" in files
    assert "node0801" in files["inventory/hosts.yml"]
    assert "fabric/twin.net" in files


def test_plan_names_levels_switches_cables_free_ports_and_blocking() -> None:
    text = "\n".join(plan_lines(design(10_000, 40, Fraction(2))))
    assert "levels:    3 (20 pods)" in text
    assert "switches:  790 (400 leaf, 260 spine (13 per pod), 130 core)" in text
    assert "leaf:      26 host ports + 13 uplinks (1 to each of 13 spines), 1 free; 400 host ports spare" in text
    assert "spine:     20 down + 20 up, 0 free" in text
    assert "core:      40 down, 0 free" in text
    assert "cables:    10000 host-leaf, 5200 leaf-spine, 5200 spine-core (20400 in all)" in text
    assert "blocking:  2:1 at the leaves; spines non-blocking" in text


@pytest.mark.parametrize(("text", "ratio"), [("1:1", 1), ("2:1", 2), ("3:2", Fraction(3, 2)), (" 1.5 : 1 ", 1.5)])
def test_blocking_is_read_as_down_to_up(text: str, ratio: float) -> None:
    assert parse_blocking(text) == Fraction(ratio)


@pytest.mark.parametrize("text", ["2", "a:b", "1:0", "1:2", "-1:1"])
def test_meaningless_blocking_is_refused(text: str) -> None:
    with pytest.raises(DesignError):
        parse_blocking(text)


def test_ratios_print_as_people_write_them() -> None:
    assert [format_ratio(Fraction(x)) for x in (1, 2, Fraction(3, 2))] == ["1:1", "2:1", "3:2"]
    assert format_ratio(Fraction(13, 6)) == "13:6 (2.17:1)"


def test_more_hosts_than_three_levels_hold_is_refused_with_the_reason() -> None:
    design(16_000, 40)  # (40/2)^2 x 40: the most three levels of 40-port switches hold at 1:1
    with pytest.raises(DesignError, match="do not fit a three-level fat tree of 40-port switches"):
        design(16_001, 40)


@pytest.mark.parametrize(("n", "radix"), [(0, 40), (10, 3), (10, 255)])
def test_out_of_range_requests_are_refused(n: int, radix: int) -> None:
    with pytest.raises(DesignError):
        design(n, radix)
