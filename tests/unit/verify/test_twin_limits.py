"""The twin's limits: one description of what it runs instead of the plan, read by verify's checks."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from itertools import product

import pytest
from checkkit import example, findings, perfect, plan_of, ref
from nodekit import healthy_host

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.types import Endpoint
from ibprov.clusterspec.units import Speed, Width
from ibprov.identity.guids import GuidBook
from ibprov.report import Report, to_dict, to_junit
from ibprov.twinnet.limits import TwinLimits, read_limits, release_speeds, twin_limits, twin_rate
from ibprov.twinnet.netfile import build_twin
from ibprov.verify.fabric.observation import ObservedLink
from ibprov.verify.fabric.plan import build_plan
from ibprov.verify.fabric.section import check_observation
from ibprov.verify.nodes.plan import build_node_plan
from ibprov.verify.nodes.section import check_nodes
from ibprov.verify.registry import report_schema

SIMULATED = {Speed.SDR, Speed.DDR, Speed.QDR, Speed.FDR, Speed.EDR, Speed.HDR}
OPTION = {Width.X1: "w=1", Width.X2: "w=16", Width.X4: "w=2", Width.X8: "w=4", Width.X12: "w=8"}
SPEED_OPTION = {Speed.SDR: "s=1", Speed.DDR: "s=2", Speed.QDR: "s=4", Speed.FDR: "e=1", Speed.EDR: "e=2"}
SPEED_OPTION[Speed.HDR] = "e=4"


def rack(speed: Speed, width: Width, nodes: int = 3) -> LoadedSpec:
    """A leaf with ``nodes`` hosts (the last one the SM) at ``width`` x ``speed``."""
    names = [f"n{i:02d}" for i in range(1, nodes + 1)]
    text = "\n".join(
        [
            "version: 1",
            "cluster: {name: rates}",
            "nodes:",
            *(f"  - {{name: {n}, hcas: [{{device: mlx5_0}}]}}" for n in names),
            "switches: [{name: leaf01, role: leaf, ports: 40}]",
            "fabric:",
            f"  speed: {speed}",
            f"  width: {width}",
            "  links:",
            *(f"    - leaf01:{i} <-> {n}/mlx5_0:1" for i, n in enumerate(names, 1)),
            f"subnet_manager: {{instances: [{{node: {names[-1]}, priority: 15}}]}}",
        ]
    )
    return load_spec_text(text + "\n", "rates.yaml")


def as_the_twin_runs(obs_links: list[ObservedLink]) -> list[ObservedLink]:
    out = []
    for link in obs_links:
        width, speed = twin_rate(Width(link.width), Speed(link.speed))
        out.append(dataclasses.replace(link, width=str(width), speed=str(speed)))
    return out


@pytest.mark.parametrize(("speed", "width"), list(product(Speed, Width)))
def test_the_twin_runs_every_width_and_every_speed_up_to_hdr_and_says_what_it_substitutes(
    speed: Speed, width: Width
) -> None:
    loaded = rack(speed, width)
    limits = twin_limits(loaded)
    twin = build_twin(loaded, GuidBook.for_spec(loaded, allow_synthetic=True, twin=True))
    expected = {Speed.FDR10: Speed.QDR, Speed.NDR: Speed.HDR, Speed.XDR: Speed.HDR}.get(speed, speed)
    assert twin_rate(width, speed) == (width, expected), "widths are never substituted (ibsim runs w=16 as 2X)"
    assert f"{OPTION[width]} {SPEED_OPTION[expected]}" in twin.text
    if speed in SIMULATED:
        assert (limits.links, limits.notes()) == ((), [])
    else:
        assert len(limits.links) == 3
        assert limits.notes()[0].startswith(f"3 links planned {width} {speed} run at {width} {expected} on the twin")
        assert f"# note: {limits.notes()[0]}" in twin.text


def test_the_limits_survive_their_json_file(tmp_path: object) -> None:
    limits = twin_limits(rack(Speed.NDR, Width.X2, nodes=5), notes=["port GUIDs are node GUID + port"])
    path = tmp_path / "twin-limits.json"  # type: ignore[operator]
    path.write_text(limits.to_json())
    again = read_limits(path.parent)
    assert again == limits
    assert again.stand_in("n03/mlx5_0:1", "leaf01:3") == again.stand_in("leaf01:3", "n03/mlx5_0:1") is not None
    assert json.loads(path.read_text())["links"][0]["twin"] == {"width": "2x", "speed": "HDR"}


def test_an_ndr_fabric_passes_its_twin_with_caveats_never_as_verified_ndr() -> None:
    loaded = rack(Speed.NDR, Width.X4, nodes=5)
    limits = twin_limits(loaded)
    plan = build_plan(loaded, GuidBook.for_spec(loaded, allow_synthetic=True, twin=True), twin=limits)
    obs = perfect(plan)
    obs.links = as_the_twin_runs(obs.links)
    section = check_observation(plan, obs)
    assert section.findings == []
    speed = next(c for c in section.checks if c.id == "link.speed")
    width = next(c for c in section.checks if c.id == "link.width")
    assert [o for o, _ in speed.caveats] == sorted(speed.objects)
    assert dict(speed.caveats)["n01 mlx5_0 port 1"] == "planned 4x NDR, which the twin cannot run: judged at 4x HDR"
    assert width.caveats == (), "the width is the planned one: verified for real"
    assert section.notes[0].startswith("5 links planned 4x NDR run at 4x HDR on the twin")
    report = Report.from_sections(cluster="rates", spec="", sections=[section])
    suite = ET.fromstring(to_junit(report)).find("testsuite")
    assert suite is not None
    assert (suite.get("skipped"), suite.get("failures")) == ("5", "0")
    skipped = [c.get("name") for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert skipped == [f"n0{i} mlx5_0 port 1" for i in range(1, 6)]
    assert all(c.get("classname") == "link.speed" for c in suite.iter("testcase") if c.find("skipped") is not None)
    notes = [p.get("value") for p in suite.iter("property")]
    assert notes[0] == section.notes[0]
    data = to_dict(report)
    check = next(c for c in data["checks"] if c["id"] == "link.speed")
    assert (check["status"], len(check["caveats"])) == ("pass", 5)
    pytest.importorskip("jsonschema").Draft202012Validator(report_schema()).validate(data)


def test_without_the_limits_the_same_twin_is_one_speed_error_per_link() -> None:
    loaded = rack(Speed.NDR, Width.X4, nodes=5)
    plan = build_plan(loaded, GuidBook.for_spec(loaded, allow_synthetic=True, twin=True))
    obs = perfect(plan)
    obs.links = as_the_twin_runs(obs.links)
    assert {(f.check, f.expected, f.observed) for f in findings(plan, obs)} == {("link.speed", "4x NDR", "4x HDR")}
    assert len(findings(plan, obs)) == 5


@pytest.mark.parametrize(
    ("seen_width", "seen_speed", "check"),
    [("1x", "HDR", "link.width"), ("4x", "EDR", "link.speed"), ("2x", "HDR", "link.width")],
)
def test_a_degraded_link_still_shows_through_the_substitution(seen_width: str, seen_speed: str, check: str) -> None:
    loaded = rack(Speed.XDR, Width.X4)
    plan = build_plan(loaded, GuidBook.for_spec(loaded, allow_synthetic=True, twin=True), twin=twin_limits(loaded))
    obs = perfect(plan)
    obs.links = as_the_twin_runs(obs.links)
    bad = ref(plan, Endpoint("n02", "mlx5_0", 1))
    obs.links = [
        dataclasses.replace(link, width=seen_width, speed=seen_speed) if bad in (link.a, link.b) else link
        for link in obs.links
    ]
    (found,) = findings(plan, obs)
    assert (found.check, found.object) == (check, "n02 mlx5_0 port 1")
    assert found.text == f"n02 mlx5_0 port 1: planned 4x XDR (the twin runs 4x HDR), found {seen_width} {seen_speed}"


def test_fdr10_is_judged_at_qdr_on_the_twin_and_a_real_fabric_is_judged_at_fdr10() -> None:
    loaded = rack(Speed.FDR10, Width.X4)
    limits = twin_limits(loaded)
    assert limits.notes()[0].startswith("3 links planned 4x FDR10 run at 4x QDR on the twin (FDR10 is a Mellanox")
    real = plan_of(loaded)
    obs = perfect(real)
    assert findings(real, obs) == []
    assert plan_of(example("rack")).twin is None


def test_nodes_are_judged_at_the_twin_rate_with_a_caveat_and_a_slower_port_is_still_found() -> None:
    loaded = rack(Speed.NDR, Width.X4)
    plan = build_node_plan(loaded, twin=twin_limits(loaded))
    seen = {"node01": "n01", "node02": "n02", "node03": "n03"}  # canned hosts under the rack's names
    hcas = {ours: healthy_host(canned, rate_text="200 Gb/sec (4X HDR)") for canned, ours in seen.items()}
    hcas["n03"] = healthy_host("node03", rate_text="100 Gb/sec (4X EDR)")
    section = check_nodes(plan, hcas, notes=twin_limits(loaded).notes())
    assert [(f.check, f.object) for f in section.findings if f.check == "node.rate"] == [
        ("node.rate", "n03 mlx5_0 port 1")
    ]
    rate = next(f for f in section.findings if f.check == "node.rate")
    assert rate.expected == "NDR 4x (400 Gb/s) (the twin runs HDR 4x (200 Gb/s))"
    caveats = dict(next(c for c in section.checks if c.id == "node.rate").caveats)
    assert set(caveats) == {"n01 mlx5_0 port 1", "n02 mlx5_0 port 1", "n03 mlx5_0 port 1"}
    assert build_node_plan(loaded).ports[0].twin_rate_gbps is None


def test_limits_name_what_no_run_of_the_twin_can_show() -> None:
    limits = TwinLimits(cluster="x")
    assert any("no RDMA data path" in text for text in limits.limits)
    assert any("IPoIB is judged on its files and units" in text for text in limits.limits)
    assert limits.max_clients == 10


def test_a_simulator_that_runs_ndr_gets_ndr_links_and_xdr_falls_back_to_ndr() -> None:
    loaded = rack(Speed.NDR, Width.X2, nodes=2)
    speeds = frozenset({Speed.SDR, Speed.DDR, Speed.QDR, Speed.FDR, Speed.EDR, Speed.HDR, Speed.NDR})
    book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)
    twin = build_twin(loaded, book, simulator="ibsim 0.11+", speeds=speeds)
    assert "w=16 e=8" in twin.text
    assert twin.limits.links == ()
    assert twin.limits.speeds[-1] == "NDR"
    xdr = twin_limits(rack(Speed.XDR, Width.X4, nodes=2), simulator="ibsim 0.11+", speeds=speeds)
    assert xdr.notes() == [
        "2 links planned 4x XDR run at 4x NDR on the twin (ibsim 0.11+ runs speeds up to NDR): "
        "judged at 4x NDR, not verified at 4x XDR"
    ]


# ------------------------------------------------------------------- per ibsim release (Debian 12: 0.10, 13: 0.12)
@pytest.mark.parametrize(
    ("package", "simulator", "ndr"),
    [
        ("0.10-2", "ibsim 0.10", False),  # Debian 12
        ("0.12-1", "ibsim 0.12", True),  # Debian 13
        ("0.11", "ibsim 0.11", True),
        ("0.13-1", "ibsim 0.13", True),  # a later release: at least what 0.12 runs
        ("0.9-1", "ibsim 0.9", False),  # an earlier one: no more than 0.10
        ("", "ibsim 0.10", False),  # dpkg-query said nothing
    ],
)
def test_each_ibsim_release_runs_the_speeds_it_was_measured_to_run(package: str, simulator: str, ndr: bool) -> None:
    name, speeds = release_speeds(package)
    assert name == simulator
    assert (Speed.NDR in speeds) is ndr
    assert Speed.HDR in speeds
    assert Speed.FDR10 not in speeds
    assert Speed.XDR not in speeds, "no ibsim has XDR"
