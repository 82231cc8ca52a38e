from __future__ import annotations

from checkkit import EXAMPLES, example, findings, pairs, perfect, plan_of, plan_text, ref

from ibprov.clusterspec.types import Endpoint
from ibprov.verify.fabric.observation import LinkState, ObservedLink

RACK = plan_of(example("rack"))
NODE01 = Endpoint("node01", "mlx5_0", 1)


def _relink(width: str | None, speed: str | None) -> list[ObservedLink]:
    obs_links = perfect(RACK).links
    here = ref(RACK, NODE01)
    return [ObservedLink(lk.a, lk.b, width, speed) if here in (lk.a, lk.b) else lk for lk in obs_links]


def test_a_link_at_one_lane_is_named_with_the_planned_and_found_rate() -> None:
    obs = perfect(RACK)
    obs.links = _relink("1x", "HDR")
    (finding,) = findings(RACK, obs)
    assert finding.check == "link.width"
    assert finding.text == "node01 mlx5_0 port 1: planned 4x HDR, found 1x HDR"


def test_a_link_at_a_lower_speed_is_a_speed_finding() -> None:
    obs = perfect(RACK)
    obs.links = _relink("4x", "EDR")
    (finding,) = findings(RACK, obs)
    assert (finding.check, finding.expected, finding.observed) == ("link.speed", "4x HDR", "4x EDR")


def test_width_and_speed_both_wrong_are_two_findings_on_the_same_link() -> None:
    obs = perfect(RACK)
    obs.links = _relink("1x", "SDR")
    assert pairs(RACK, obs) == {("link.width", "node01 mlx5_0 port 1"), ("link.speed", "node01 mlx5_0 port 1")}


def test_an_unreadable_rate_is_reported_not_guessed() -> None:
    obs = perfect(RACK)
    obs.links = _relink(None, None)
    assert {f.observed for f in findings(RACK, obs)} == {"?? ???"}


def test_a_link_that_the_sm_has_not_brought_up_is_down_and_its_rate_is_not_judged() -> None:
    obs = perfect(RACK)
    obs.links = _relink("1x", "HDR")
    obs.states[ref(RACK, NODE01)] = LinkState("Initialize", "LinkUp")
    (finding,) = findings(RACK, obs)
    assert finding.check == "link.down"
    assert finding.text == "node01 mlx5_0 port 1: planned Active/LinkUp, found node01 mlx5_0 port 1 Initialize/LinkUp"


def test_the_planned_rate_of_a_link_override_is_what_counts() -> None:
    text = (
        (EXAMPLES / "rack.yaml")
        .read_text()
        .replace(
            "    - leaf01:1 <-> node01/mlx5_0:1", "    - {link: 'leaf01:1 <-> node01/mlx5_0:1', speed: EDR, width: 1x}"
        )
    )
    plan = plan_text(text)
    obs = perfect(plan)
    assert [lk.speed for lk in obs.links if ref(plan, NODE01) in (lk.a, lk.b)] == ["EDR"]
    assert findings(plan, obs) == []
    obs.links = [ObservedLink(lk.a, lk.b, "4x", "HDR") for lk in obs.links]
    assert pairs(plan, obs) == {("link.width", "node01 mlx5_0 port 1"), ("link.speed", "node01 mlx5_0 port 1")}
