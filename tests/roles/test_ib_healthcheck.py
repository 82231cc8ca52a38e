"""The ib_healthcheck role's script (roles/ib_healthcheck/files/ib_healthcheck.py) against sysfs trees this test
builds under tmp_path, and its drain decisions against a Slurm test double (tests/doubles/slurm_double.py).

The trees hold the kernel's sysfs formats (drivers/infiniband/core/sysfs.c, as ibstatus prints them):
``ports/N/state`` "4: ACTIVE", ``phys_state`` "5: LinkUp", ``rate`` "200 Gb/sec (4X HDR)" (data rates: FDR
"56 Gb/sec (4X FDR)", SDR "2.5 Gb/sec (1X SDR)"), ``pkeys/<index>`` "0x8010" (one entry per file, empty entries
"0x0000"), and the HCA's PCIe link under ``device/`` (the PCI function sysfs links there):
``current_link_speed`` "16.0 GT/s PCIe" (kernels up to 5.6: "16 GT/s"; "Unknown" without a link),
``current_link_width`` "8". They are no capture of a real host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from role_code import ROLES, load

from ibprov import pkey as ibprov_pkey
from ibprov.clusterspec import physical
from ibprov.clusterspec.units import LANE_DATA_GBPS
from ibprov.probes.hostprobe import parse_rate
from ibprov.probes.slurm import REASON_PREFIX

SCRIPT = ROLES / "ib_healthcheck" / "files" / "ib_healthcheck.py"
DOUBLE = Path(__file__).resolve().parents[1] / "doubles" / "slurm_double.py"
hc = load("ib_healthcheck", "files/ib_healthcheck.py", "ib_healthcheck_script")
filters = load("ib_healthcheck", "filter_plugins/ib_healthcheck.py", "ib_healthcheck_filters")
PREFIX = "ibprov: node.health"


def make_port(
    root: Path,
    device: str = "mlx5_0",
    port: int = 1,
    *,
    state: str = "4: ACTIVE",
    phys: str = "5: LinkUp",
    rate: str = "200 Gb/sec (4X HDR)",
    pkeys: tuple[str, ...] = ("0xffff", "0x8010"),
) -> Path:
    """One HCA port as sysfs shows it, built by this test; the table padded with empty entries to 8."""
    base = root / device / "ports" / str(port)
    (base / "pkeys").mkdir(parents=True)
    (base / "state").write_text(state + "\n")
    (base / "phys_state").write_text(phys + "\n")
    (base / "rate").write_text(rate + "\n")
    for i, text in enumerate([*pkeys, *["0x0000"] * (8 - len(pkeys))]):
        (base / "pkeys" / str(i)).write_text(text + "\n")
    return base


def make_pcie(
    root: Path, device: str = "mlx5_0", speed: str | None = "32.0 GT/s PCIe", width: str | None = "16"
) -> None:
    """The HCA's PCIe link as sysfs shows it under <root>/<device>/device/ (None: the file is missing)."""
    base = root / device / "device"
    base.mkdir(parents=True, exist_ok=True)
    for name, text in (("current_link_speed", speed), ("current_link_width", width)):
        if text is not None:
            (base / name).write_text(text + "\n")


def config(root: Path, **ports: Any) -> dict[str, Any]:
    want = {"device": "mlx5_0", "port": 1, "rate_gbps": 200.0, "pkeys": ["0xffff", "0x8010"], **ports}
    return {"sysfs_root": str(root), "ports": [want], "memlock": None, "drain": True, "reason_prefix": PREFIX}


def texts(problems: list[Any]) -> list[str]:
    return [p.text for p in problems]


# ------------------------------------------------------------------------------------- contracts
def test_the_script_has_ibprovs_pkey_constants_and_lane_rates() -> None:
    for name in ("FULL_MEMBER_BIT", "BASE_MASK", "MAX_WIRE"):
        assert getattr(hc, name) == getattr(ibprov_pkey, name)
    assert {str(speed): rate for speed, rate in LANE_DATA_GBPS.items()} == hc.LANE_DATA_GBPS


def test_the_script_has_ibprovs_pcie_table() -> None:
    assert hc.PCIE_GT_S == physical.PCIE_GT_S
    assert {gen: hc.pcie_gbps(gen, 1) for gen in hc.PCIE_GT_S} == {
        gen: physical.lane_gbps(gen) for gen in physical.PCIE_GT_S
    }
    assert {gen: hc.pcie_generation(f"{rate} GT/s") for gen, rate in hc.PCIE_GT_S.items()} == {
        gen: physical.pcie_generation(rate) for gen, rate in physical.PCIE_GT_S.items()
    }
    for gen in physical.PCIE_GT_S:
        for width in physical.PCIE_WIDTHS:
            link = physical.PcieLink(gen, width)
            for rate in (link.gbps * 0.99, link.gbps, link.gbps * 1.001):
                assert (hc.pcie_gbps(gen, width) >= rate) == link.carries(rate), (link, rate)


@pytest.mark.parametrize(
    "text",
    ["200 Gb/sec (4X HDR)", "100 Gb/sec (2X HDR)", "56 Gb/sec (4X FDR)", "40 Gb/sec (4X FDR10)", "40 Gb/sec (4X QDR)",
     "2.5 Gb/sec (1X SDR)", "400 Gb/sec (4X NDR)", "10 Gb/sec", "junk"],
)  # fmt: skip
def test_the_script_reads_a_rate_as_verify_nodes_does(text: str) -> None:
    assert hc.parse_rate(text) == parse_rate(text)


def test_the_script_and_the_role_default_to_the_prefix_under_ibprovs() -> None:
    assert hc.DEFAULT_PREFIX == PREFIX
    assert PREFIX.startswith(REASON_PREFIX)  # verify --resume never resumes it: it judges no check node.health


# ------------------------------------------------------------------------------------- the ports
def test_a_healthy_port_has_no_problem(tmp_path: Path) -> None:
    make_port(tmp_path)
    assert hc.check(config(tmp_path)) == []


def test_a_down_port_is_one_problem_per_state_and_its_rate_is_not_judged(tmp_path: Path) -> None:
    make_port(tmp_path, state="1: DOWN", phys="2: Polling", rate="10 Gb/sec (4X SDR)")
    assert texts(hc.check(config(tmp_path))) == [
        "mlx5_0 port 1: state DOWN, expected ACTIVE",
        "mlx5_0 port 1: physical state Polling, expected LinkUp",
    ]


def test_an_initializing_port_waits_for_the_sm(tmp_path: Path) -> None:
    make_port(tmp_path, state="2: INIT")
    assert texts(hc.check(config(tmp_path))) == ["mlx5_0 port 1: state INIT, expected ACTIVE"]


@pytest.mark.parametrize(
    ("rate", "data"),
    [("100 Gb/sec (2X HDR)", "100"), ("2.5 Gb/sec (1X SDR)", "2"), ("56 Gb/sec (4X FDR)", "54.56")],
)
def test_a_slow_port_is_a_problem(tmp_path: Path, rate: str, data: str) -> None:
    make_port(tmp_path, rate=rate)
    assert texts(hc.check(config(tmp_path))) == [f"mlx5_0 port 1: rate {rate} ({data} Gb/s data), expected >= 200 Gb/s"]


def test_a_faster_port_and_an_fdr_port_planned_as_fdr_pass(tmp_path: Path) -> None:
    make_port(tmp_path, rate="400 Gb/sec (4X NDR)")
    make_port(tmp_path, "mlx5_1", rate="56 Gb/sec (4X FDR)")
    cfg = config(tmp_path)
    cfg["ports"].append({"device": "mlx5_1", "port": 1, "rate_gbps": 54.56})
    assert hc.check(cfg) == []


def test_a_missing_pkey_is_a_problem(tmp_path: Path) -> None:
    make_port(tmp_path, pkeys=("0xffff",))
    assert texts(hc.check(config(tmp_path))) == ["mlx5_0 port 1: P_Key 0x8010 (full) missing"]


def test_limited_where_full_is_planned_and_the_other_way_round(tmp_path: Path) -> None:
    make_port(tmp_path, pkeys=("0x7fff", "0x0010"))
    assert texts(hc.check(config(tmp_path))) == [
        "mlx5_0 port 1: P_Key 0x7fff held as limited member (0x7fff), expected full (0xffff)",
        "mlx5_0 port 1: P_Key 0x0010 held as limited member (0x0010), expected full (0x8010)",
    ]
    assert texts(hc.check(config(tmp_path, pkeys=["0x7fff", "0x0010"]))) == []
    make_port(tmp_path, "mlx5_1", pkeys=("0xffff", "0x8020"))
    assert texts(hc.check(config(tmp_path, device="mlx5_1", pkeys=["0x0020"]))) == [
        "mlx5_1 port 1: P_Key 0x0020 held as full member (0x8020), expected limited (0x0020)"
    ]


def test_both_memberships_held_satisfy_either(tmp_path: Path) -> None:
    make_port(tmp_path, pkeys=("0xffff", "0x8010", "0x0010"))
    assert hc.check(config(tmp_path, pkeys=["0xffff", "0x8010", "0x0010"])) == []


def test_pkeys_beyond_the_plan_are_not_judged_here(tmp_path: Path) -> None:
    make_port(tmp_path, pkeys=("0xffff", "0x8010", "0x8077"))
    assert hc.check(config(tmp_path)) == []


def test_a_missing_device_port_and_sysfs_are_clear_problems(tmp_path: Path) -> None:
    make_port(tmp_path, "mlx5_1")
    assert texts(hc.check(config(tmp_path))) == [
        f"mlx5_0 port 1: device mlx5_0 not found in {tmp_path} (devices: mlx5_1)"
    ]
    assert texts(hc.check(config(tmp_path, device="mlx5_1", port=2))) == [
        f"mlx5_1 port 2: no such port ({tmp_path}/mlx5_1/ports/2/state unreadable)"
    ]
    gone = tmp_path / "nothing"
    assert texts(hc.check(config(gone))) == [f"mlx5_0 port 1: no {gone} (no InfiniBand driver loaded?)"]


# ------------------------------------------------------------------------------------- PCIe
def test_a_narrowed_pcie_link_under_an_ndr_plan_is_a_problem_with_the_numbers(tmp_path: Path) -> None:
    make_port(tmp_path, rate="400 Gb/sec (4X NDR)")
    make_pcie(tmp_path, speed="16.0 GT/s PCIe", width="8")
    problems = hc.check(config(tmp_path, rate_gbps=400.0))
    assert texts(problems) == ["mlx5_0: PCIe Gen4 x8 = 126 Gb/s usable < 400 Gb/s planned"]
    assert hc.reason_for(PREFIX, problems) == f"{PREFIX} mlx5_0 PCIe Gen4 x8"


def test_gen5_x16_carries_ndr_400(tmp_path: Path) -> None:
    make_port(tmp_path, rate="400 Gb/sec (4X NDR)")
    make_pcie(tmp_path, speed="32.0 GT/s PCIe", width="16")
    assert hc.check(config(tmp_path, rate_gbps=400.0)) == []


@pytest.mark.parametrize("speed", ["16.0 GT/s PCIe", "16 GT/s"])
def test_both_sysfs_speed_formats_are_read(tmp_path: Path, speed: str) -> None:
    make_port(tmp_path)
    make_pcie(tmp_path, speed=speed, width="16")
    assert hc.check(config(tmp_path)) == []  # Gen4 x16 = 252 Gb/s carries HDR 200
    assert texts(hc.check(config(tmp_path, rate_gbps=400.0)))[-1] == (
        "mlx5_0: PCIe Gen4 x16 = 252 Gb/s usable < 400 Gb/s planned"
    )


@pytest.mark.parametrize(
    ("speed", "width"),
    [(None, None), (None, "8"), ("8.0 GT/s PCIe", None), ("Unknown", "8"), ("Unknown speed", "16"), ("2.5 GT/s", "0")],
)
def test_missing_pcie_files_or_an_unknown_speed_pass_silently(
    tmp_path: Path, speed: str | None, width: str | None
) -> None:
    make_port(tmp_path, rate="400 Gb/sec (4X NDR)")
    make_pcie(tmp_path, speed=speed, width=width)
    assert hc.check(config(tmp_path, rate_gbps=400.0)) == []


def test_an_mlx4_host_without_pcie_files_passes_silently(tmp_path: Path) -> None:
    make_port(tmp_path, "mlx4_0", rate="56 Gb/sec (4X FDR)")
    assert hc.check(config(tmp_path, device="mlx4_0", rate_gbps=54.56)) == []


def test_a_dual_port_card_is_judged_once_against_its_fastest_port(tmp_path: Path) -> None:
    make_port(tmp_path)
    make_port(tmp_path, port=2, rate="100 Gb/sec (4X EDR)")
    make_pcie(tmp_path, speed="8.0 GT/s PCIe", width="16")  # Gen3 x16 = 126: EDR yes, HDR no
    cfg = config(tmp_path)
    cfg["ports"].append({"device": "mlx5_0", "port": 2, "rate_gbps": 100.0})
    assert texts(hc.check(cfg)) == ["mlx5_0: PCIe Gen3 x16 = 126 Gb/s usable < 200 Gb/s planned"]


def test_a_port_without_a_planned_rate_has_no_pcie_check(tmp_path: Path) -> None:
    make_port(tmp_path)
    make_pcie(tmp_path, speed="2.5 GT/s PCIe", width="1")
    cfg = config(tmp_path)
    del cfg["ports"][0]["rate_gbps"]
    assert hc.check(cfg) == []


def test_the_pcie_check_runs_no_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: Any, **_k: Any) -> None:
        raise AssertionError("the health check ran a command")

    monkeypatch.setattr(hc.subprocess, "run", refuse)
    monkeypatch.setattr(hc.subprocess, "Popen", refuse)
    make_port(tmp_path)
    make_pcie(tmp_path, speed="16.0 GT/s PCIe", width="4")
    assert texts(hc.check(config(tmp_path))) == ["mlx5_0: PCIe Gen4 x4 = 63 Gb/s usable < 200 Gb/s planned"]


# ------------------------------------------------------------------------------------- memlock
def _proc(tmp_path: Path, limit: str, comm: str = "slurmd") -> Path:
    """A /proc with one process, built by this test; the line as the kernel writes /proc/<pid>/limits."""
    pid = tmp_path / "proc" / "4242"
    pid.mkdir(parents=True)
    (pid / "comm").write_text(comm + "\n")
    (pid / "limits").write_text(
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        f"Max locked memory         {limit:<20} {limit:<20} bytes     \n"
    )
    return tmp_path / "proc"


@pytest.mark.parametrize(
    ("limit", "expected", "problem"),
    [
        ("unlimited", "unlimited", None),
        ("8388608", "unlimited", "memlock 8192 KiB for slurmd (pid 4242), expected unlimited"),
        ("8388608", 8192, None),
        ("8388608", 16384, "memlock 8192 KiB for slurmd (pid 4242), expected >= 16384 KiB"),
        ("unlimited", 16384, None),
    ],
)
def test_memlock_is_slurmds(tmp_path: Path, limit: str, expected: Any, problem: str | None) -> None:
    proc = _proc(tmp_path, limit)
    assert texts(hc.check_memlock(expected, str(proc))) == ([problem] if problem else [])


def test_memlock_without_slurmd_is_this_processs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = _proc(tmp_path, "unlimited", comm="sshd")
    monkeypatch.setattr(hc.resource, "getrlimit", lambda _r: (65536, 65536))
    assert texts(hc.check_memlock("unlimited", str(proc))) == [
        "memlock 64 KiB for this process (no slurmd running), expected unlimited"
    ]
    assert hc.check_memlock(None, str(proc)) == []


# ------------------------------------------------------------------------------------- NHC's convention
P = [hc.Problem("mlx5_0 port 1: state DOWN, expected ACTIVE", "mlx5_0:1 DOWN")]
MINE = f"{PREFIX} mlx5_0:1 DOWN"


@pytest.mark.parametrize(
    ("state", "reason", "problems", "verb"),
    [
        ("idle", "none", P, "drain"),  # healthy in Slurm, sick here: drain
        ("allocated", "none", P, "drain"),  # DRAIN lets the running jobs finish
        ("mixed", "none", P, "drain"),
        ("drained", "bad DIMM, ticket 42|x", P, "keep"),  # an admin's drain: their reason kept
        ("draining", "ibprov: link.state leaf01:2 <-> cn02/mlx5_0:1", P, "keep"),  # verify's drain is not ours
        ("drained", MINE, P, "keep"),  # already drained for this
        ("drained", f"{PREFIX} memlock 8192K", P, "drain"),  # ours, for another problem: the reason follows
        ("down*", "Not responding", P, "keep"),  # DOWN is Slurm's
        ("down", MINE, P, "keep"),
        ("unknown", "none", P, "keep"),
        ("idle@", "Reboot ASAP", P, "keep"),  # a reboot pending
        ("drained@", "Reboot ASAP", [], "keep"),
        ("idle#", "none", P, "keep"),  # powering up
        ("drained", MINE, [], "resume"),  # healthy again, drained by us
        ("draining", MINE, [], "resume"),
        ("drained", "bad DIMM", [], "keep"),  # never undo an admin's drain
        ("drained", "ibprov: link.state leaf01:2", [], "keep"),  # nor verify's
        ("drained", "none", [], "keep"),
        ("idle", "none", [], "keep"),
        ("down", MINE, [], "keep"),
    ],
)
def test_drain_decisions_follow_nhc(state: str, reason: str, problems: list[Any], verb: str) -> None:
    action = hc.decide("cn01", state, reason, PREFIX, problems)
    assert action.verb == verb, action.why
    if verb == "drain":
        assert action.argv == ["scontrol", "update", "NodeName=cn01", "State=DRAIN", f"Reason={MINE}"]
    if verb == "resume":
        assert action.argv == ["scontrol", "update", "NodeName=cn01", "State=RESUME"]


def test_the_reason_is_cut_to_its_limit_and_counts_the_others() -> None:
    many = [hc.Problem("x", "mlx5_0:1 pkey 0x8010 " + "y" * 80)] + P * 3
    reason = hc.reason_for(PREFIX, many)
    assert len(reason) == hc.REASON_MAX
    assert reason.startswith(PREFIX + " mlx5_0:1 pkey 0x8010 y")
    assert reason.endswith("... (+3)")
    assert hc.reason_for(PREFIX, [hc.Problem("x", 'a "quoted"\tword')]) == f"{PREFIX} a quoted word"


# ------------------------------------------------------------------------------------- with the double
@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """sinfo and scontrol on PATH: the test double, with cn01 idle; returns its state file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sinfo", "scontrol"):
        (bin_dir / tool).symlink_to(DOUBLE)
    state = tmp_path / "slurm-double.json"
    state.write_text(json.dumps({"node": "cn01", "state": "idle", "reason": "none"}))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_DOUBLE_STATE", str(state))
    return state


def _run(tmp_path: Path, cfg: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "healthcheck.json"
    path.write_text(json.dumps(cfg))
    return subprocess.run(
        [sys.executable, "-I", str(SCRIPT), "--config", str(path), "--node", "cn01", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=os.environ.copy(),
    )


def _calls(state: Path) -> list[list[str]]:
    log = state.with_name(state.name + ".log")
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_a_sick_node_is_drained_then_resumed_when_healthy(tmp_path: Path, slurm: Path) -> None:
    port = make_port(tmp_path / "sys", state="1: DOWN", phys="3: Disabled")
    cfg = config(tmp_path / "sys")
    done = _run(tmp_path, cfg)
    assert (done.returncode, done.stdout.splitlines()) == (
        1,
        ["mlx5_0 port 1: state DOWN, expected ACTIVE", "mlx5_0 port 1: physical state Disabled, expected LinkUp"],
    )
    assert json.loads(slurm.read_text())["reason"] == f"{PREFIX} mlx5_0:1 DOWN (+1)"
    assert _calls(slurm)[-1][:4] == ["scontrol", "update", "NodeName=cn01", "State=DRAIN"]
    (port / "state").write_text("4: ACTIVE\n")
    (port / "phys_state").write_text("5: LinkUp\n")
    done = _run(tmp_path, cfg)
    assert (done.returncode, done.stdout) == (0, "")
    assert json.loads(slurm.read_text()) == {"node": "cn01", "state": "idle", "reason": "none"}
    assert _calls(slurm)[-1] == ["scontrol", "update", "NodeName=cn01", "State=RESUME"]


def test_an_admins_drain_is_kept_and_never_resumed(tmp_path: Path, slurm: Path) -> None:
    slurm.write_text(json.dumps({"node": "cn01", "state": "drained", "reason": "bad DIMM, ticket 42|x"}))
    make_port(tmp_path / "sys")
    done = _run(tmp_path, config(tmp_path / "sys"))
    assert done.returncode == 0
    assert "drained by someone else (bad DIMM, ticket 42|x): never resumed here" in done.stderr
    assert [c[0] for c in _calls(slurm)] == ["sinfo"]


def test_dry_run_prints_the_command_and_no_slurm_asks_nothing(tmp_path: Path, slurm: Path) -> None:
    make_port(tmp_path / "sys", rate="100 Gb/sec (2X HDR)")
    done = _run(tmp_path, config(tmp_path / "sys"), "--dry-run")
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == (
        "scontrol update NodeName=cn01 State=DRAIN 'Reason=ibprov: node.health mlx5_0:1 rate 100<200'"
    )
    assert [c[0] for c in _calls(slurm)] == ["sinfo"]
    done = _run(tmp_path, config(tmp_path / "sys"), "--no-slurm")
    assert (done.returncode, done.stderr) == (1, "")
    assert [c[0] for c in _calls(slurm)] == ["sinfo"]


def test_a_controller_that_does_not_answer_costs_one_timeout(
    tmp_path: Path, slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slurm.write_text(json.dumps({"node": "cn01", "state": "idle", "reason": "none", "sleep": 5}))
    monkeypatch.setattr(hc, "COMMAND_TIMEOUT_S", 1)
    notes = hc.act("cn01", {"reason_prefix": PREFIX}, P, dry_run=False)
    assert notes == ["sinfo failed: sinfo did not answer within 1 s: Slurm not touched"]


def test_a_node_slurm_does_not_know_is_left_alone(tmp_path: Path, slurm: Path) -> None:
    assert hc.act("cn99", {}, P, dry_run=False) == ["Slurm does not know node cn99: Slurm not touched"]


def test_without_scontrol_the_check_still_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert hc.act("cn01", {}, P, dry_run=False) == ["scontrol/sinfo not on PATH: Slurm not touched"]


def test_an_unreadable_configuration_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    done = _run(tmp_path, {}, "--no-slurm")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    (tmp_path / "healthcheck.json").write_text("{")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--config", str(tmp_path / "healthcheck.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout.startswith(f"ib-healthcheck: cannot use {tmp_path / 'healthcheck.json'}: Expecting")
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------------------------- the role's filters
def test_the_filters_accept_what_render_writes_and_name_every_problem() -> None:
    good = {"ports": [{"device": "mlx5_0", "port": 1, "rate_gbps": 200.0, "pkeys": ["0xffff", "0x0010"]}]}
    assert filters.ib_healthcheck_problems({**good, "memlock": "unlimited", "reason_prefix": PREFIX}) == []
    bad = {
        "ports": [
            {"device": "mlx5 0", "port": 0, "rate_gbps": -1, "pkeys": ["0x8000", "8010"]},
            {"device": "mlx5_0", "port": 1},
            {"device": "mlx5_0", "port": 1},
        ],
        "memlock": "lots",
        "reason_prefix": 'say "hi"',
    }
    assert filters.ib_healthcheck_problems(bad) == [
        "ib_healthcheck_ports[0].device: 'mlx5 0' is no device name (mlx5_0)",
        "ib_healthcheck_ports[0].port: 0 is not a port number 1-254",
        "ib_healthcheck_ports[0].rate_gbps: -1 is not a positive number of Gb/s",
        "ib_healthcheck_ports[0].pkeys[0]: '0x8000' is no P_Key entry (0x0001-0xffff, e.g. 0x8010)",
        "ib_healthcheck_ports[0].pkeys[1]: '8010' is no P_Key entry (0x0001-0xffff, e.g. 0x8010)",
        "ib_healthcheck_ports[2]: mlx5_0 port 1 is listed twice",
        "ib_healthcheck_memlock: 'lots' is neither 'unlimited' nor a number of KiB",
        "ib_healthcheck_reason_prefix: 'say \"hi\"' must be printable, without a double quote",
    ]
    assert filters.ib_healthcheck_ports([{"device": "mlx5_0", "port": "1", "rate_gbps": 200, "pkeys": ["0xFFFF"]}]) == [
        {"device": "mlx5_0", "port": 1, "rate_gbps": 200.0, "pkeys": ["0xffff"]}
    ]
