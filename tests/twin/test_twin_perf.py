"""``verify --perf`` end to end over real SSH to the twin rack's containers, with a TEST DOUBLE of perftest.

The twin has no RDMA device, so its perf report must skip every perftest run ("no RDMA device on <node>",
found by looking) -- tests/twin/test_twin_rack.py checks that, with the real perftest and iperf3 the roles
install. Here a double (tests/doubles/perftest_double.py) stands in for perftest and ibv_devices on the
containers: its server really listens on its TCP port and its client really connects, and it prints real
captures from ../shared/fixtures/perftest, so that the orchestration is exercised for real: servers
confirmed listening before the client, one TCP port per concurrent pair, judging against the line rate,
culprit analysis, a hung client stopped and retried, every server stopped, and a node with no RDMA device
skipped. A rack no example has: five nodes, two leaves, an odd number of pairs per round.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ibprov.report.model import Report
from ibprov.spec import LoadedSpec, load_spec_text
from ibprov.twin.rack import RackState, down, up
from ibprov.verify.perf.baseline import load_baseline
from ibprov.verify.perf.section import save_baseline
from ibprov.verify.sections import VerifyOptions, run_sections, section_info

pytestmark = pytest.mark.twin

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT.parent / "shared" / "fixtures" / "perftest"
DOUBLE = ROOT / "tests" / "doubles" / "perftest_double.py"
CAPTURE = {
    "bw": "hdr200-ib_write_bw-a-gbits-client-partial-azure-aks.txt",  # 190.24 Gb/s at 64 KiB
    "lat": "edr100-ib_send_lat-server.txt",  # 1.01 us
    "slow_bw": "roce10g-cx4lx-ib_send_bw-a-client.txt",  # 9.2 Gb/s
    "slow_lat": "hdr200-ib_read_lat-client-partial-azure-aks.txt",  # 5.50 us
}

SPEC = """\
version: 1
cluster: {name: tp%(run)s, ssh_user: root}
nodes:
  - {name: sm01, hcas: [{device: mlx5_0}]}
  - {name: cn01, hcas: [{device: mlx5_0}]}
  - {name: cn02, hcas: [{device: mlx5_0}]}
  - {name: cn03, hcas: [{device: mlx5_0}]}
  - {name: cn04, hcas: [{device: mlx5_0}]}
switches:
  - {name: leaf01, role: leaf, ports: 36}
  - {name: leaf02, role: leaf, ports: 36}
  - {name: spine01, role: spine, ports: 36}
fabric:
  speed: HDR
  width: 4x
  links:
    - leaf01:1 <-> sm01/mlx5_0:1
    - leaf01:2 <-> cn01/mlx5_0:1
    - leaf01:3 <-> cn02/mlx5_0:1
    - leaf02:1 <-> cn03/mlx5_0:1
    - leaf02:2 <-> cn04/mlx5_0:1
    - leaf01:33 <-> spine01:1
    - leaf02:33 <-> spine01:2
subnet_manager:
  routing_engine: minhop
  instances: [{node: sm01, priority: 15}]
acceptance:
  latency_tests: [ib_write_lat]
  bandwidth_sizes: [65536, 8388608]
  perftest_timeout_seconds: 5
  tcp_probe: false
"""
TOOLS = ("ib_write_lat", "ib_write_bw", "ibv_devices")


def podman(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CONTAINERS_CONF=str(ROOT / "images" / "containers.conf"))
    return subprocess.run(["podman", *args], capture_output=True, text=True, env=env, check=False)


def install_double(
    state: RackState, node: str, *, devices: bool = True, slow: bool = False, hang: bool = False
) -> None:
    captures = CAPTURE
    box = state.nodes[node].container
    assert podman("cp", str(DOUBLE), f"{box}:/usr/local/bin/perftest_double").returncode == 0
    for name in captures.values():
        assert podman("cp", str(CAPTURES / name), f"{box}:/usr/local/share/{name}").returncode == 0
    config = {kind: f"/usr/local/share/{name}" for kind, name in captures.items()} | {"slow": slow, "hang": hang}
    links = [t for t in TOOLS if devices or t != "ibv_devices"]
    script = (
        "chmod 755 /usr/local/bin/perftest_double && "
        + " && ".join(f"ln -sf perftest_double /usr/local/bin/{t}" for t in links)
        + f" && printf '%s' {json.dumps(json.dumps(config))} > /etc/ibprov-perftest-double.json"
    )
    done = podman("exec", box, "sh", "-c", script)
    assert done.returncode == 0, done.stderr


def doubles_running(state: RackState) -> dict[str, str]:
    """node -> the double's processes still running there (none after a run)."""
    out = {}
    for node, box in state.nodes.items():
        ps = podman("exec", box.container, "sh", "-c", "ps -eo pid,args | grep '[p]erftest_double' || true")
        if ps.stdout.strip():
            out[node] = ps.stdout.strip()
    return out


def perf(loaded: LoadedSpec, **options: object) -> Report:
    return run_sections(loaded, [section_info("perf")], VerifyOptions(target="twin", **options))  # type: ignore[arg-type]


@pytest.fixture
def rack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LoadedSpec, RackState]]:
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (scripts/molecule.sh installs it)")
    if not CAPTURES.is_dir():
        pytest.skip(f"the shared perftest captures are not at {CAPTURES}")
    monkeypatch.setenv("IBPROV_TWIN_DIR", str(tmp_path / "twins"))
    loaded = load_spec_text(SPEC % {"run": os.getpid() % 10000}, str(tmp_path / "perf.yaml"))
    state = up(loaded)
    try:
        yield loaded, state
    finally:
        down(loaded)


def test_perf_runs_pairs_over_ssh_judges_them_names_the_culprit_and_leaves_no_server(
    rack: tuple[LoadedSpec, RackState], tmp_path: Path
) -> None:
    loaded, state = rack
    for node in ("sm01", "cn01", "cn03"):
        install_double(state, node)
    install_double(state, "cn02", slow=True)  # every pair with cn02 is slow: the culprit
    install_double(state, "cn04", devices=False)  # no ibv_devices, no sysfs: no RDMA device

    report = perf(loaded, pairs="all-pairs")
    section = report.section("perf")
    facts = section.facts.as_dict()
    assert facts["schedule"]["kind"] == "all-pairs"
    assert facts["schedule"]["rounds"] == 5  # odd n: n rounds with a bye
    assert facts["nodes_reached"] == 5
    assert facts["nodes_with_rdma"] == 4

    checks = {c.id: c for c in section.checks}
    assert dict(checks["perf.rdma_device"].skipped) == {
        "cn04": "no RDMA device on cn04 (the twin's containers have none)"
    }
    skipped = dict(checks["perf.bandwidth"].skipped)
    assert skipped
    assert all(reason == "no RDMA device on cn04" for reason in skipped.values())
    assert all("cn04" in obj for obj in skipped)

    results = {(r["client"].split("/")[0], r["server"].split("/")[0], r["test"]): r for r in facts["results"]}
    good = results.get(("sm01", "cn01", "ib_write_bw 64KiB")) or results[("cn01", "sm01", "ib_write_bw 64KiB")]
    assert (good["status"], good["value"], good["limit"]) == ("ok", 190.24, 180.0)  # 0.9 x HDR 4x, from the plan
    lat = results.get(("sm01", "cn01", "ib_write_lat 2B")) or results[("cn01", "sm01", "ib_write_lat 2B")]
    assert (lat["status"], lat["value"]) == ("ok", 1.01)

    found = {(f.check, f.object): f for f in report.findings}
    slow = [f for (check, obj), f in found.items() if check == "perf.bandwidth" and "cn02" in obj]
    assert len(slow) == 2 * 3  # two sizes x its three pairs with a device
    assert all(f.observed == "9.2 Gb/s (5 % of line rate)" for f in slow), [f.observed for f in slow]
    assert len([o for (c, o) in found if c == "perf.latency" and "cn02" in o]) == 3  # 5.50 us > 2.5 us
    assert not [o for (c, o) in found if c in ("perf.bandwidth", "perf.latency") and "cn02" not in o]
    suspect = found[("perf.suspect", "cn02 mlx5_0 port 1")]
    assert suspect.observed.startswith("3/3 pairs failed")
    assert doubles_running(state) == {}, "every server stopped"
    assert report.exit_code == 1

    baseline = tmp_path / "baseline.json"
    assert save_baseline(section, loaded.spec.cluster.name, baseline) == len(
        [r for r in facts["results"] if r["status"] == "ok"]
    )
    again = perf(loaded, pairs="all-pairs", baseline=baseline)
    assert not [f for f in again.findings if f.check == "perf.baseline"], "the same captures: nothing worse"
    assert load_baseline(baseline).results


def test_a_hung_client_is_stopped_retried_and_reported_and_nothing_is_left_running(
    rack: tuple[LoadedSpec, RackState],
) -> None:
    loaded, state = rack
    for node in state.nodes:
        install_double(state, node, hang=node == "cn01")
    report = perf(loaded, pairs="quick")
    hung = [f for f in report.findings if f.object.startswith("cn01/")]
    runs = [r for r in report.section("perf").facts.as_dict()["results"] if r["client"].startswith("cn01/")]
    assert runs, "cn01 is a client in the quick schedule"
    assert hung
    assert all("did not finish within 5 s (stopped)" in f.observed for f in hung), [f.observed for f in hung]
    assert doubles_running(state) == {}
