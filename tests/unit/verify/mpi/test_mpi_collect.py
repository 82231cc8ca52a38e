"""verify --mpi's gathering without hosts: the probe's and the runs' outcomes (as ansible-runner hands them over)
read into observations, the mpirun lines, the benchmark choice; and the whole section over a collector double."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from mpikit import OSU_TOOLS, RDMA_UCX_TEXT, TOOLS, capture, plan_of

from ibprov.probes.mpiconf import Tools
from ibprov.report import to_json
from ibprov.report.model import Report
from ibprov.run.adhoc import HostOutcome
from ibprov.verify.mpi.collect import FORCE_TCP, mpirun_script, observe_host, observe_run, pair_tools
from ibprov.verify.mpi.observation import HostMpi, MpiRun, Transport
from ibprov.verify.mpi.plan import MpiPlan
from ibprov.verify.mpi.section import verify_mpi
from ibprov.verify.registry import load_section, report_schema, section_info

PLAN = plan_of()


def probe_stdout(ucx: str, env: str = "", tools: str = "/usr/bin/mpirun\nmpi4py 3.1.4") -> str:
    return "\n".join(
        [
            "@@ibprov-mpi ucx.conf",
            "#\n# Ansible managed\n#",
            "UCX_TLS=rc,ud,sm,self",
            "UCX_NET_DEVICES=mlx5_0:1",
            "@@ibprov-mpi mca openmpi",
            "pml = ucx\nosc = ucx\nbtl = ^tcp,openib,uct,ofi\nbtl_base_warn_component_unused = 0",
            "@@ibprov-mpi nccl.conf",
            "@@ibprov-missing",
            "@@ibprov-mpi env",
            env,
            "@@ibprov-mpi ucx_info",
            ucx,
            "@@ibprov-mpi tools",
            tools,
        ]
    )


def test_a_probe_outcome_becomes_the_hosts_observation() -> None:
    done = HostOutcome("ok", {"stdout": probe_stdout(RDMA_UCX_TEXT, env="UCX_IB_SL=1")})
    host = observe_host(PLAN, "cn01", done)
    assert host.ucx_conf == PLAN.ucx
    assert host.mca == {"openmpi": {**PLAN.mca, "btl_base_warn_component_unused": "0"}}
    assert host.nccl_conf is None
    assert host.env == {"UCX_IB_SL": "1"}
    assert host.ucx is not None
    assert len(host.ucx.verbs) == 5
    assert host.tools == TOOLS


def test_an_unreadable_probe_part_is_named_not_raised() -> None:
    stdout = probe_stdout("#\nbash: ucx_info: error while loading shared libraries").replace(
        "UCX_TLS=rc,ud,sm,self", "this is not a setting"
    )
    host = observe_host(PLAN, "cn01", HostOutcome("ok", {"stdout": stdout}))
    assert host.ucx is None
    assert host.ucx_problem is not None
    assert "not ucx_info -d output" in host.ucx_problem
    assert host.ucx_conf is None
    assert "expected KEY=VALUE" in host.unreadable["/etc/ucx/ucx.conf"]
    assert observe_host(PLAN, "cn02", HostOutcome("unreachable", {"msg": "ssh: timed out"})).error == (
        "unreachable: ssh: timed out"
    )


def test_the_mpirun_lines_of_each_benchmark_and_transport() -> None:
    plan = replace(PLAN, addresses={"cn01": "10.0.0.1", "cn02": "10.0.0.2"})
    ring = mpirun_script(plan, TOOLS, "configured")
    assert "mpirun $ROOT -np 2 --host 10.0.0.1,10.0.0.2 --map-by node python3 -m mpi4py.bench ringtest -n 8" in ring
    assert FORCE_TCP not in ring
    assert f"--map-by node {FORCE_TCP} /opt/osu/osu_bw 2>&1" in mpirun_script(plan, OSU_TOOLS, "tcp")
    twin = mpirun_script(plan_of(twin=True), TOOLS, "tcp")  # MPI without the twin's umad2sim shim, both nodes
    assert "env -u LD_PRELOAD mpirun $ROOT -np 2 --host cn01,cn02 --map-by node" in twin
    assert "--mca orte_launch_agent 'env -u LD_PRELOAD orted'" in twin
    assert "LD_PRELOAD" not in ring


def _run_stdout(latency: str, bandwidth: str, rc: tuple[int, int] = (0, 0)) -> str:
    return f"@@ibprov-mpi latency\n{latency}\n@@rc {rc[0]}\n@@ibprov-mpi bandwidth\n{bandwidth}\n@@rc {rc[1]}\n"


def test_an_osu_run_reads_the_smallest_latency_and_the_largest_bandwidth() -> None:
    stdout = _run_stdout(capture("osu_latency_ucx_rc_hdr.txt"), capture("osu_bw_ucx_rc_hdr.txt"))
    run = observe_run("configured", OSU_TOOLS, HostOutcome("ok", {"stdout": stdout}))
    assert (run.status, run.latency_us, run.latency_size, run.bandwidth_mbs, run.bandwidth_size) == (
        "ok",
        1.61,
        0,
        24453.38,
        4194304,
    )


def test_a_failed_launch_says_why() -> None:
    out = "----\nNo components were able to be opened in the pml framework.\n[cn01:489] PML ucx cannot be selected"
    run = observe_run("configured", TOOLS, HostOutcome("ok", {"stdout": _run_stdout(out, out, (1, 1))}))
    assert (run.status, run.reason) == ("failed", "latency run: [cn01:489] PML ucx cannot be selected")
    timed_out = observe_run("tcp", TOOLS, HostOutcome("ok", {"stdout": _run_stdout("", "", (124, 0))}))
    assert timed_out.reason == "latency run: stopped after 180 s: no output"


def test_the_benchmark_is_osu_where_both_nodes_have_it_else_mpi4py() -> None:
    hosts = {"cn01": HostMpi("cn01", tools=OSU_TOOLS), "cn02": HostMpi("cn02", tools=OSU_TOOLS)}
    assert pair_tools(hosts, ("cn01", "cn02")) == (OSU_TOOLS, "")
    mixed = {**hosts, "cn02": HostMpi("cn02", tools=TOOLS)}
    assert pair_tools(mixed, ("cn01", "cn02"))[1].startswith("no MPI benchmark on cn01")
    bare = {**hosts, "cn02": HostMpi("cn02", tools=Tools())}
    assert pair_tools(bare, ("cn01", "cn02")) == (Tools(), "no mpirun on cn02 (mpi.install_openmpi)")


class MpiCollectorDouble:
    """A test double of the Ansible collector: hands out canned host observations and runs."""

    where = "test double"

    def __init__(self, hosts: dict[str, HostMpi], runs: dict[Transport, MpiRun]) -> None:
        self.hosts, self.runs, self.ran = hosts, runs, []  # type: ignore[var-annotated]

    def collect(self, plan: MpiPlan) -> dict[str, HostMpi]:
        return {h: self.hosts[h] for h in plan.hosts}

    def run(self, plan: MpiPlan, tools: Tools, transport: Transport) -> MpiRun:
        self.ran.append((transport, tools))
        return self.runs[transport]


def test_the_section_runs_the_contrast_only_when_asked_and_its_report_follows_the_schema() -> None:
    from mpikit import healthy_host, osu_run

    hosts = {h: healthy_host(PLAN, h) for h in PLAN.hosts}
    tcp = replace(osu_run(), transport="tcp", latency_us=28.4, bandwidth_mbs=1120.0)
    double = MpiCollectorDouble(hosts, {"configured": osu_run(), "tcp": tcp})
    assert [c.status for c in verify_mpi(PLAN, double).checks] == ["pass"] * 9
    assert [t for t, _ in double.ran] == ["configured"]
    section = verify_mpi(PLAN, double, contrast_tcp=True)
    assert section.facts.lines()[1:] == [
        "MPI point-to-point cn01 <-> cn02 with osu_latency + osu_bw",
        "as configured: 1.61 us (0 B), 24453 MB/s (4194304 B, streamed (osu_bw))",
        "forced onto TCP: 28.40 us (0 B), 1120 MB/s (4194304 B, streamed (osu_bw))",
    ]
    report = Report.from_sections(cluster="mpi1", spec="mpi.yaml", sections=[section])
    assert report.command == "verify --mpi"
    data = json.loads(to_json(report))
    assert [r["transport"] for r in data["sections"]["mpi"]["facts"]["runs"]] == ["configured", "tcp"]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(report_schema(), format_checker=jsonschema.FormatChecker()).validate(data)


def test_the_section_is_registered_and_runs_only_when_asked_for() -> None:
    info = section_info("mpi")
    assert (info.default, info.options) == (False, frozenset({"inventory", "target", "contrast_tcp"}))
    assert load_section(info).name == "mpi"


def test_contrast_tcp_belongs_to_the_mpi_section() -> None:
    from click.testing import CliRunner

    from ibprov.cli import cli

    result = CliRunner().invoke(cli, ["verify", "examples/rack.yaml", "--nodes", "--contrast-tcp"])
    assert result.exit_code == 2
    assert "--contrast-tcp: only with --mpi" in result.output


def test_the_twin_s_nodes_get_the_rack_key_to_log_in_to_each_other(tmp_path: Path) -> None:
    import base64
    import re

    from ibprov.twin.rack import RackState, _peer_login

    state = RackState("c", "r1", str(tmp_path), "net", "ibsim", "10.89.0.2", "img")
    assert _peer_login(state) == []  # no rack key yet: nothing to hand out
    state.key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n")
    script = "\n".join(_peer_login(state))
    encoded = re.search(r"printf '%s' '([A-Za-z0-9+/=]+)' \| base64 -d > /root/.ssh/id_ed25519", script)
    assert encoded is not None
    assert base64.b64decode(encoded[1]).decode() == state.key.read_text()
    assert "StrictHostKeyChecking no" in script
