"""verify --routing on the twin: the forwarding tables the real OpenSM 3.3.23 writes on ibsim, audited.

Clean: a two-level fat tree under ftree and under updn; a ring of five switches under updn with a root, and
under dfsssp and lash with QoS (SL-aware, the SLs read from the SA). Faults: minhop on the ring (the credit
loop, listed), updn without roots on the ring (the fall-back to minhop, quoted from the log, and the loop back), one
uplink unlinked under ftree (no loop; a balance finding), and the ``file`` engine loading hand-made tables
(a forwarding loop, an unreachable LID, a route that goes down then up). One OpenSM per twin: well within
ibsim's ten clients with the diags' six.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from gridkit import grid_spec, switch_fabric_spec

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.probes import ibnetdiscover, lfts
from ibprov.probes.runner import LocalRunner
from ibprov.report.model import SectionReport, Severity
from ibprov.routing.model import RoutingModel, from_discovery
from ibprov.twin.bringup import TwinRun
from ibprov.verify.registry import VerifyOptions
from ibprov.verify.routing.section import log_reader, verify_routing

from .simkit import NetFile, probe, twin

pytestmark = pytest.mark.sim

SWITCHES = 5


def ring_spec(engine: str, *, roots: str = "", qos: bool = False) -> str:
    nodes = "\n".join(f"  - {{name: h{i}, hcas: [{{device: mlx5_0}}]}}" for i in range(1, SWITCHES + 1))
    switches = "\n".join(f"  - {{name: ring{i}, ports: 8, role: leaf}}" for i in range(1, SWITCHES + 1))
    links = "\n".join(
        [f"    - ring{i}:1 <-> h{i}/mlx5_0:1" for i in range(1, SWITCHES + 1)]
        + [f"    - ring{i}:3 <-> ring{i % SWITCHES + 1}:4" for i in range(1, SWITCHES + 1)]
    )
    return f"""version: 1
cluster: {{name: ring5}}
nodes:
{nodes}
switches:
{switches}
fabric:
  speed: EDR
  links:
{links}
subnet_manager:
  routing_engine: {engine}
  {f"roots: [{roots}]" if roots else ""}
  instances: [{{node: h1, priority: 15}}]
qos: {{enabled: {"true" if qos else "false"}}}
"""


def fat_tree_spec(engine: str) -> str:
    nodes = "\n".join(f"  - {{name: n{i:02d}, hcas: [{{device: mlx5_0}}]}}" for i in range(1, 7))
    return f"""version: 1
cluster: {{name: ft32}}
nodes:
{nodes}
fabric:
  speed: EDR
  fat_tree: {{radix: 8, leaves: 3, spines: 2, hosts_per_leaf: 2, uplinks_per_leaf: 2}}
subnet_manager:
  routing_engine: {engine}
  instances: [{{node: n01, priority: 15}}]
"""


def spec(text: str, tmp_path: Path) -> LoadedSpec:
    return load_spec_text(text, str(tmp_path / "cluster.yaml"))


def audit(loaded: LoadedSpec, run: TwinRun, sm_log: Path | None = None) -> SectionReport:
    runner = LocalRunner(env=run.sim.env(probe(run)))
    try:
        reader = log_reader(loaded, VerifyOptions(sm_log=sm_log or run.master.log))
        return verify_routing(loaded, runner, reader, twin=True)
    finally:
        runner.close()


def failed(report: SectionReport) -> set[str]:
    return {f.check for f in report.findings if f.severity.fails}


def texts(report: SectionReport, check: str) -> list[str]:
    return [f"{f.object}: expected {f.expected}; found {f.observed}" for f in report.findings if f.check == check]


def facts(report: SectionReport) -> dict[str, object]:
    return report.facts.as_dict()


@contextmanager
def running(loaded: LoadedSpec, tmp_path: Path, **kwargs: object) -> Iterator[TwinRun]:
    with twin(loaded, tmp_path / "twin", **kwargs) as run:  # type: ignore[arg-type]
        yield run


# ----------------------------------------------------------------------------------------------- clean
@pytest.mark.parametrize("engine", ["ftree", "updn"])
def test_a_two_level_fat_tree_is_clean_under_ftree_and_updn(engine: str, tmp_path: Path) -> None:
    loaded = spec(fat_tree_spec(engine), tmp_path)
    with running(loaded, tmp_path) as run:
        report = audit(loaded, run)
    assert failed(report) == set(), [f.text for f in report.findings]
    got = facts(report)
    assert got["engine_used"] == engine
    assert got["pairs"] == got["delivered"] == 6 * 5
    assert got["credit_loops"] == 0
    assert set(got["switches_per_route"]) == {"1", "3"}  # type: ignore[arg-type]
    assert not report.findings  # not even a warning: every route minimal
    ups = [row for row in got["balance"] if row["group"] == "leaf ↑"]  # type: ignore[attr-defined]
    assert ups
    assert ups[0]["dlids_max"] - ups[0]["dlids_min"] <= 1


def test_the_ring_under_updn_with_a_root_is_clean_with_longer_routes_noted(tmp_path: Path) -> None:
    loaded = spec(ring_spec("updn", roots="ring1"), tmp_path)
    with running(loaded, tmp_path) as run:
        report = audit(loaded, run)
    assert failed(report) == set(), [f.text for f in report.findings]
    assert facts(report)["engine_used"] == "updn"
    assert facts(report)["credit_loops"] == 0
    (minimal,) = texts(report, "routing.minimal")  # a warning: updn pays for deadlock freedom with detours
    assert "CA pairs take longer routes" in minimal


@pytest.mark.parametrize("engine", ["dfsssp", "lash"])
def test_the_ring_under_an_sl_engine_with_qos_is_clean_over_the_vls_its_sls_map_to(engine: str, tmp_path: Path) -> None:
    loaded = spec(ring_spec(engine, qos=True), tmp_path)
    with running(loaded, tmp_path) as run:
        report = audit(loaded, run)
    assert failed(report) == set(), [f.text for f in report.findings]
    got = facts(report)
    assert got["engine_used"] == engine
    assert got["sl_aware"] is True
    assert len(got["vls"]) >= 2, got  # type: ignore[arg-type]
    assert any("credit loops checked over (port, VL)" in n for n in report.notes)


def test_nue_on_the_ring_reads_its_sls_and_says_so_though_no_cycle_needs_the_vls(tmp_path: Path) -> None:
    loaded = spec(ring_spec("nue", qos=True), tmp_path)
    with running(loaded, tmp_path) as run:
        run.master.expect("nue tables configured")
        report = audit(loaded, run)
    assert failed(report) == set(), [f.text for f in report.findings]
    got = facts(report)
    assert got["engine_used"] == "nue"
    assert got["sl_aware"] is True, got  # the verdict holds with the SLs as read
    assert got["sls_read"] == [0], got  # nue routed the ring deadlock-free on SL 0 alone
    assert got["vls"] == []  # no per-VL graph was needed: no cycle on one VL
    assert "SL-aware: SLs 0 read; no cycle on one VL, so none on any" in " ".join(report.facts.lines())


# ----------------------------------------------------------------------------------------------- faults
def test_the_ring_under_minhop_has_its_credit_loop_found_and_listed_port_by_port(tmp_path: Path) -> None:
    loaded = spec(ring_spec("minhop"), tmp_path)
    with running(loaded, tmp_path) as run:
        report = audit(loaded, run)
    assert failed(report) == {"routing.credit_loops"}
    loops = texts(report, "routing.credit_loops")
    assert len(loops) == 2  # one each way round
    # each channel as the cable it crosses: ringI port 3 is cabled to ring(I+1) port 4
    clockwise = {(i, 3, i % SWITCHES + 1, 4) for i in range(1, SWITCHES + 1)}
    counter = {(i % SWITCHES + 1, 4, i, 3) for i in range(1, SWITCHES + 1)}
    assert sorted(_channels(t) for t in loops) == sorted([clockwise, counter]), loops
    assert all("(VL 0)" in t for t in loops)


def _channels(text: str) -> set[tuple[int, int, int, int]]:
    """The cycle's channels, (switch, port, peer, peer's port), from wherever it starts."""
    found = re.findall(r"ring(\d):(\d) → ring(\d):(\d)", text.split("found ")[1].split(";")[0])
    return {(int(a), int(p), int(b), int(q)) for a, p, b, q in found}


def test_updn_without_roots_on_the_ring_falls_back_to_minhop_and_the_loop_is_back(tmp_path: Path) -> None:
    loaded = spec(ring_spec("updn"), tmp_path)  # validate warns: OpenSM finds no roots on a ring of like switches
    assert any("updn has no roots" in w.message for w in loaded.warnings)
    with running(loaded, tmp_path) as run:
        report = audit(loaded, run)
    assert failed(report) == {"routing.engine", "routing.credit_loops"}
    (engine,) = texts(report, "routing.engine")
    assert "fell back to minhop" in engine
    assert "'osm_ucast_mgr_process: minhop tables configured on all switches'" in engine
    assert "updn: cannot build lid matrices" in engine
    assert facts(report)["engine_used"] == "minhop"


def test_a_lost_uplink_under_ftree_makes_no_loop_and_a_balance_finding(tmp_path: Path) -> None:
    loaded = spec(fat_tree_spec("ftree"), tmp_path)
    with running(loaded, tmp_path, net=lambda net: net.disconnect("leaf01", 3)) as run:
        report = audit(loaded, run)
    assert "routing.credit_loops" not in failed(report)
    assert facts(report)["credit_loops"] == 0
    assert facts(report)["pairs"] == facts(report)["delivered"]
    balance = texts(report, "routing.balance")
    assert balance, [f.text for f in report.findings]
    assert any("leaf01:4" in t for t in balance), balance  # its one uplink left carries every remote LID


# ------------------------------------------------------------------------------- the file engine
def _model(run: TwinRun, loaded: LoadedSpec) -> tuple[RoutingModel, str]:
    sim_host = probe(run)
    topo = run.sim.run(ibnetdiscover.argv(), sim_host)
    dump = run.sim.run(lfts.argv(), sim_host)
    return from_discovery(ibnetdiscover.parse(topo.stdout), lfts.parse(dump.stdout)), dump.stdout


def _edit(dump: str, model: RoutingModel, edits: dict[tuple[str, int], int | None]) -> str:
    """``dump`` (dump_lfts) with the entries (switch name, LID) -> out port changed (None: deleted)."""
    guid_of = {name: guid for name, guid in zip(model.names, model.guids, strict=True)}
    wanted = {(guid_of[name], lid): port for (name, lid), port in edits.items()}
    out, guid = [], 0
    for line in dump.splitlines():
        header = re.match(r"^Unicast lids .* guid 0x([0-9a-f]+) ", line)
        if header:
            guid = int(header[1], 16)
        entry = re.match(r"^0x([0-9a-f]{4}) (\d{3})( .*)?$", line)
        if entry and (guid, int(entry[1], 16)) in wanted:
            port = wanted.pop((guid, int(entry[1], 16)))
            if port is None:
                continue
            line = f"0x{entry[1]} {port:03d}{entry[3] or ''}"
        out.append(line)
    assert not wanted, f"entries not in the dump: {wanted}"
    return "\n".join(out) + "\n"


def _port_to(model: RoutingModel, switch: str, peer: str) -> int:
    s, p = model.names.index(switch), model.names.index(peer)
    return next(port for port in range(model.ports) if int(model.peer[s, port]) == p)


def test_hand_made_tables_loaded_by_the_file_engine_give_each_exact_fault(tmp_path: Path) -> None:
    loaded = spec(fat_tree_spec("ftree"), tmp_path)
    with running(loaded, tmp_path) as run:
        model, dump = _model(run, loaded)
        lid = {ca.name.split("/")[0]: ca.lid for ca in model.cas}
        leaf02 = model.names.index("leaf02")
        via = model.names[int(model.peer[leaf02, model.out_port(leaf02, lid["n01"]) or 0])]
        other = "spine02" if via == "spine01" else "spine01"
        edits: dict[tuple[str, int], int | None] = {
            # a forwarding loop: leaf02 sends n05 (on leaf03) up to spine01, which sends it back down to leaf02
            ("leaf02", lid["n05"]): _port_to(model, "leaf02", "spine01"),
            ("spine01", lid["n05"]): _port_to(model, "spine01", "leaf02"),
            # an unreachable LID: leaf01 has no entry for n04 (on leaf02)
            ("leaf01", lid["n04"]): None,
            # down then up: the spine leaf02 sends n01 (on leaf01) through sends it down to leaf03 instead, and
            # leaf03 sends it up to the other spine, which goes down to leaf01
            (via, lid["n01"]): _port_to(model, via, "leaf03"),
            ("leaf03", lid["n01"]): _port_to(model, "leaf03", other),
        }
        lfts_file = tmp_path / "hand-made.lfts"
        lfts_file.write_text(_edit(dump, model, edits))
        node, _priority, master = run.sms[0]
        master.stop()
        conf = Path(str(master.log).replace("opensm.log", "opensm-file.conf"))
        planned = (tmp_path / "twin" / "opensm" / node).glob("opensm.*.conf")
        text = next(iter(planned)).read_text()
        text = re.sub(r"(?m)^routing_engine .*$", "routing_engine file", text) + f"\nlfts_file {lfts_file}\n"
        conf.write_text(text)
        sm = run.sim.start_opensm(master.sim_host, conf, name=master.log.parent.name)
        sm.expect("file tables configured on all switches")
        sm.expect("SUBNET UP")
        report = audit(loaded, run, sm.log)
    got = {f.check: f for f in report.findings}
    assert got["routing.lft_loop"].object == f"LID {lid['n05']} (n05/mlx5_0:1)"
    assert "leaf02:" in got["routing.lft_loop"].observed
    assert "spine01:" in got["routing.lft_loop"].observed
    assert got["routing.reachable"].object == f"LID {lid['n04']} (n04/mlx5_0:1)"
    assert "dead end at leaf01 (no entry)" in got["routing.reachable"].observed
    assert "turn up after going down" in got["routing.updown"].observed
    assert f"leaf02 ↑ {via} ↓ leaf03 ↑ {other} ↓ leaf01" in got["routing.updown"].observed
    assert got["routing.engine"].observed.startswith("routed with file")  # the plan says ftree
    assert got["routing.lft_loop"].severity is Severity.ERROR


# a ring under lash (every LID routed), fat trees under ftree and updn, whose dumps leave out the LIDs a switch
# has no route to (spine to spine) while the footer still gives the top LID, and the direct networks: the
# dump must give the same findings as the live tables, loops included
def dragonfly_spec(engine: str, roots: str = "") -> str:
    """Three groups of two switches (d<g><i>), each group's switches cabled to each other, each group cabled to
    each other group once (a dragonfly's global links), one HCA on port 8 of every switch."""
    names = [f"d{g}{i}" for g in range(3) for i in range(2)]
    cables = [f"    - d{g}0:1 <-> d{g}1:1" for g in range(3)]
    cables += ["    - d00:2 <-> d10:2", "    - d11:3 <-> d20:3", "    - d21:4 <-> d01:4"]
    return switch_fabric_spec(names, cables, engine=engine, roots=roots)


def cross_cabled_fat_tree(engine: str) -> str:
    text = fat_tree_spec(engine)
    return text.replace("  fat_tree:", '  links: ["leaf01:8 <-> leaf02:8"]\n  fat_tree:', 1)


NetEdit = Callable[[NetFile], None]
# name -> (the spec, its engine, an edit of the twin's cabling before it starts, whether it routes clean)
DUMPED: dict[str, tuple[Callable[[], str], str, NetEdit | None, bool]] = {
    "ring-lash": (lambda: ring_spec("lash", qos=True), "lash", None, True),
    "ftree": (lambda: fat_tree_spec("ftree"), "ftree", None, True),
    "updn": (lambda: fat_tree_spec("updn"), "updn", None, True),
    "ring-minhop": (lambda: ring_spec("minhop"), "minhop", None, False),
    "ring-dfsssp": (lambda: ring_spec("dfsssp", qos=True), "dfsssp", None, True),
    "ring-nue": (lambda: ring_spec("nue", qos=True), "nue", None, True),
    "hypercube-dor": (lambda: grid_spec((2, 2, 2), wrap=False, engine="dor"), "dor", None, True),
    "mesh-dor": (lambda: grid_spec((4, 4), wrap=False, engine="dor"), "dor", None, True),
    "torus-updn": (lambda: grid_spec((4, 4), wrap=True, engine="updn", roots="g00"), "updn", None, True),
    "torus-5x3-dor": (lambda: grid_spec((5, 3), wrap=True, engine="dor"), "dor", None, False),
    # a fat tree with an uplink cut (routing.balance, routing.reachable), one cross-cabled between two leaves;
    # a small dragonfly
    "ftree-cut": (lambda: fat_tree_spec("ftree"), "ftree", lambda net: net.disconnect("leaf01", 3), False),
    "ftree-cross-cabled": (lambda: cross_cabled_fat_tree("ftree"), "ftree", None, False),  # routing.tiers
    "dragonfly-minhop": (lambda: dragonfly_spec("minhop"), "minhop", None, False),  # two credit loops
    "dragonfly-updn": (lambda: dragonfly_spec("updn", roots="d00"), "updn", None, True),
}


@pytest.mark.parametrize("fabric", list(DUMPED))
def test_the_tables_opensm_dumps_audit_the_same_as_the_tables_read_from_the_switches(
    fabric: str, tmp_path: Path
) -> None:
    build, engine, edit, clean = DUMPED[fabric]
    text = build()
    loaded = spec(text, tmp_path)

    def dump_routing(opensm_dir: Path) -> None:  # log flag 0x40: OpenSM writes opensm-lfts.dump
        for conf in opensm_dir.rglob("opensm.*.conf"):
            text = re.sub(r"(?m)^log_flags .*$", "", conf.read_text())
            conf.write_text(text + "\nlog_flags 0x43\n")

    extra = {"net": edit} if edit is not None else {}
    with running(loaded, tmp_path, opensm=dump_routing, **extra) as run:
        dump = run.master.log.parent / "opensm-lfts.dump"
        run.master.expect(f"{engine} tables configured")
        live = audit(loaded, run)
        runner = LocalRunner(env=run.sim.env(probe(run)))
        try:
            reader = log_reader(loaded, VerifyOptions(sm_log=run.master.log))
            dumped = verify_routing(loaded, runner, reader, twin=True, tables_file=dump)
        finally:
            runner.close()
    assert failed(live) == failed(dumped)
    assert [f.text for f in live.findings] == [f.text for f in dumped.findings]
    assert (failed(live) == set()) == clean, [f.text for f in live.findings]
    ours, theirs = facts(live), facts(dumped)
    assert theirs["tables"] == str(dump)
    # the tables come from the file; the path SLs (and so the VLs) from the SA in both runs, read a moment
    # apart: under dfsssp on the ring the SLs read differed between the two reads (SL 0 among them once, not
    # the next time; not looked into), the verdict did not
    own = ("tables", "sls_read", "vls")
    assert {k: v for k, v in ours.items() if k not in own} == {k: v for k, v in theirs.items() if k not in own}


@pytest.mark.parametrize(
    ("dims", "wrap", "engine"),
    [
        ((2, 2, 2), False, "dor"),  # a 3-D hypercube: every port carries 4 routes, destinations 1-4 per port
        ((4, 4), False, "dor"),  # a mesh: dor is deadlock-free on it
        ((4, 4), True, "updn"),  # a torus under up*/down*
        ((3, 3), True, "lash"),
    ],
    ids=["hypercube-dor", "mesh-dor", "torus-updn", "torus-lash"],
)
def test_a_correctly_routed_direct_network_gets_no_balance_finding(
    dims: tuple[int, ...], wrap: bool, engine: str, tmp_path: Path
) -> None:
    qos = "qos: {enabled: true}" if engine == "lash" else ""
    roots = "g00" if engine == "updn" else ""  # without roots updn falls back to minhop
    loaded = spec(grid_spec(dims, wrap=wrap, engine=engine, extra=qos, roots=roots), tmp_path)
    with running(loaded, tmp_path) as run:
        run.master.expect(f"{engine} tables configured")
        report = audit(loaded, run)
    got = facts(report)
    assert got["engine_used"] == engine
    assert got["pairs"] == got["delivered"]
    assert not [f.text for f in report.findings if f.check == "routing.balance"]
    assert failed(report) == set(), [f.text for f in report.findings]
