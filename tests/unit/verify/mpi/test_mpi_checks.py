"""verify --mpi's judging, pure: a plan from a small spec, a perfect observation built from real captures (an RDMA
host's ucx_info -d, OSU on HDR), one thing changed, the exact finding."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import read_capture
from mpikit import NO_RDMA_UCX, TOOLS, healthy_host, osu_run, perfect, plan_of, ring_tcp_run

from ibprov.probes import ucx_info
from ibprov.report.model import Severity
from ibprov.verify.mpi.checks import FAMILIES
from ibprov.verify.mpi.observation import HostMpi, MpiObservation, MpiRun
from ibprov.verify.mpi.plan import NO_RDMA_ON_TWIN, MpiPlan
from ibprov.verify.mpi.section import check_mpi

PLAN = plan_of()


def findings(plan: MpiPlan, obs: MpiObservation) -> list[tuple[str, str, str, str, str]]:
    report = check_mpi(plan, obs)
    return [(f.check, str(f.severity), f.object, f.expected, f.observed) for c in report.checks for f in c.findings]


def with_host(obs: MpiObservation, host: HostMpi) -> MpiObservation:
    return replace(obs, hosts={**obs.hosts, host.host: host})


def test_the_plan_is_what_the_role_writes_from_the_spec() -> None:
    assert PLAN.hosts == ("sm01", "cn01", "cn02")
    assert PLAN.pair == ("cn01", "cn02")
    assert PLAN.ucx == {"UCX_TLS": "rc,ud,sm,self", "UCX_NET_DEVICES": "mlx5_0:1"}
    assert PLAN.mca == {"pml": "ucx", "osc": "ucx", "btl": "^tcp,openib,uct,ofi"}
    assert PLAN.nccl == {}
    assert PLAN.devices == ("mlx5_0:1",)
    assert PLAN.bandwidth_mbs == pytest.approx(0.7 * 200 * 1000 / 8)
    assert PLAN.line_rate_text == "HDR 4x (200 Gb/s)"
    allowed = plan_of("  forbid_tcp: false")
    assert allowed.mca == {"pml": "^cm", "btl": "^openib,uct,ofi"}  # no osc line: Open MPI chooses
    nccl = plan_of("  nccl: {ib_gid_index: 3, socket_ifname: '=eth0'}")
    assert nccl.nccl == {
        "NCCL_IB_GID_INDEX": "3",
        "NCCL_IB_HCA": "=mlx5_0:1",
        "NCCL_NET": "IB",
        "NCCL_SOCKET_IFNAME": "=eth0",
    }


def test_a_healthy_rack_passes_every_check() -> None:
    report = check_mpi(PLAN, perfect(PLAN))
    assert [f for c in report.checks for f in c.findings] == []
    assert {c.id: c.status for c in report.checks} == {
        "mpi.unreachable": "pass",
        "mpi.ucx_config": "pass",
        "mpi.mca_params": "pass",
        "mpi.nccl_env": "pass",
        "mpi.env_override": "pass",
        "mpi.verbs_transports": "pass",
        "mpi.run": "pass",
        "mpi.latency": "pass",
        "mpi.bandwidth": "pass",
    }
    assert {c.id for f in FAMILIES for c in f.checks} == {c.id for c in report.checks}


def test_a_node_with_only_tcp_and_shared_memory_would_fall_back() -> None:
    obs = with_host(perfect(PLAN), replace(healthy_host(PLAN, "cn02"), ucx=NO_RDMA_UCX))
    assert findings(PLAN, obs) == [
        (
            "mpi.verbs_transports",
            "error",
            "cn02",
            "rc/ud/dc verbs transports on mlx5_0:1",
            "MPI traffic on cn02 would fall back to TCP (ucx_info -d lists self, tcp, sysv, posix, cma)",
        )
    ]
    allowed = plan_of("  forbid_tcp: false")
    obs = with_host(perfect(allowed), replace(healthy_host(allowed, "cn02"), ucx=NO_RDMA_UCX))
    assert [(f[0], f[1]) for f in findings(allowed, obs)] == [("mpi.verbs_transports", str(Severity.WARNING))]


def test_an_old_ucx_with_a_warning_is_judged_and_the_warning_is_a_note() -> None:
    warning = "[1700000000.123456] [cn02:1234 :0]  ucp_context.c:1234 UCX  WARN  unused env variable: UCX_IB_SL"
    old = read_capture("ucx_info/ucx1.6-ompi4.0.2-centos7.6-mlx5.txt")  # one Transport: tcp, two Device lines
    ucx = ucx_info.parse(warning + "\n" + old)
    obs = with_host(perfect(PLAN), replace(healthy_host(PLAN, "cn02"), ucx=ucx))
    assert findings(PLAN, obs) == []  # its rail mlx5_0:1 has rc, rc_mlx5, dc_mlx5, ud, ud_mlx5 and cm
    assert list(check_mpi(PLAN, obs).notes) == [
        f"cn02: ucx_info -d printed 1 line besides its output (read past): line 1: {warning}"
    ]


def test_verbs_on_another_port_than_the_rail_is_a_fall_back_on_that_rail() -> None:
    plan = plan_of().__class__(**{**plan_of().__dict__, "devices": ("mlx5_1:1",)})
    assert findings(plan, perfect(plan)) == [
        (
            "mpi.verbs_transports",
            "error",
            host,
            "rc/ud/dc verbs transports on mlx5_1:1",
            "no verbs transport on mlx5_1:1 (verbs on mlx5_0:1): MPI traffic over those rails would fall back",
        )
        for host in ("cn01", "cn02", "sm01")
    ]


def test_configuration_files_missing_or_different() -> None:
    host = replace(
        healthy_host(PLAN, "cn01"),
        ucx_conf={"UCX_TLS": "all"},
        mca={"openmpi": {"pml": "^ucx", "osc": "^ucx,pt2pt", "btl": "^uct,openib,ofi"}},  # Debian's own file
    )
    assert findings(PLAN, with_host(perfect(PLAN), host)) == [
        (
            "mpi.ucx_config",
            "error",
            "cn01",
            "UCX_TLS=rc,ud,sm,self, UCX_NET_DEVICES=mlx5_0:1",
            "UCX_TLS=all, UCX_NET_DEVICES=unset in /etc/ucx/ucx.conf",
        ),
        (
            "mpi.mca_params",
            "error",
            "cn01 openmpi",
            "pml=ucx, osc=ucx, btl=^tcp,openib,uct,ofi",
            "pml=^ucx, osc=^ucx,pt2pt, btl=^uct,openib,ofi",
        ),
    ]
    gone = replace(healthy_host(PLAN, "sm01"), ucx_conf=None, mca={"openmpi": None})
    assert [f[4] for f in findings(PLAN, with_host(perfect(PLAN), gone))] == [
        "no /etc/ucx/ucx.conf",
        "no openmpi-mca-params.conf",
    ]


def test_nccl_settings_are_checked_only_where_planned() -> None:
    plan = plan_of("  nccl: {ib_gid_index: 3}")
    obs = with_host(
        perfect(plan), replace(healthy_host(plan, "cn01"), nccl_conf={**plan.nccl, "NCCL_IB_GID_INDEX": "0"})
    )
    assert findings(plan, obs) == [
        (
            "mpi.nccl_env",
            "error",
            "cn01",
            "NCCL_IB_GID_INDEX=3, NCCL_IB_HCA==mlx5_0:1, NCCL_NET=IB",
            "NCCL_IB_GID_INDEX=0",
        )
    ]
    assert check_mpi(PLAN, perfect(PLAN)).checks[3].objects == ()


def test_an_environment_variable_that_overrides_the_files() -> None:
    obs = with_host(perfect(PLAN), replace(healthy_host(PLAN, "cn01"), env={"UCX_TLS": "tcp", "OMPI_MCA_pml": "ucx"}))
    assert findings(PLAN, obs) == [
        ("mpi.env_override", "error", "cn01", "the configuration files' values", "UCX_TLS=tcp in the environment")
    ]


def test_an_unreachable_host_is_one_finding() -> None:
    obs = with_host(perfect(PLAN), HostMpi("sm01", error="unreachable: ssh timed out"))
    assert findings(PLAN, obs) == [("mpi.unreachable", "error", "sm01", "reachable", "unreachable: ssh timed out")]


def test_slow_latency_and_bandwidth_are_findings() -> None:
    slow = replace(osu_run(), latency_us=25.0, bandwidth_mbs=1100.0)
    assert findings(PLAN, replace(perfect(PLAN), runs=(slow,))) == [
        ("mpi.latency", "error", "cn01 <-> cn02", "at most 3 us (osu_latency + osu_bw)", "25.00 us (0 B)"),
        (
            "mpi.bandwidth",
            "error",
            "cn01 <-> cn02",
            "at least 17500 MB/s (0.7 x HDR 4x (200 Gb/s), osu_latency + osu_bw)",
            "1100 MB/s (4194304 B, streamed (osu_bw))",
        ),
    ]


def test_a_run_that_fails_is_a_finding_and_leaves_the_limits_unjudged() -> None:
    failed = MpiRun("configured", "mpi4py.bench ringtest", "failed", "latency run: ssh: Permission denied")
    report = check_mpi(PLAN, replace(perfect(PLAN), runs=(failed,)))
    assert findings(PLAN, replace(perfect(PLAN), runs=(failed,))) == [
        (
            "mpi.run",
            "error",
            "cn01 -> cn02 (as configured)",
            "mpi4py.bench ringtest completes",
            "failed: latency run: ssh: Permission denied",
        )
    ]
    by_id = {c.id: c for c in report.checks}
    assert by_id["mpi.latency"].status == "skipped"
    assert by_id["mpi.latency"].skipped == (("cn01 <-> cn02", "no measurement: the run failed (mpi.run)"),)


def test_on_the_twin_the_fall_back_is_expected_and_the_tcp_numbers_are_shown_not_judged() -> None:
    plan = plan_of(twin=True)
    assert plan.no_rdma == NO_RDMA_ON_TWIN
    hosts = {h: replace(healthy_host(plan, h), ucx=NO_RDMA_UCX, tools=TOOLS) for h in plan.hosts}
    init = MpiRun(
        "configured", "mpi4py.bench ringtest", "failed", "latency run: [cn01:01289] PML ucx cannot be selected"
    )
    report = check_mpi(plan, MpiObservation(hosts, (init, ring_tcp_run())))
    assert [f for c in report.checks for f in c.findings] == []
    by_id = {c.id: c for c in report.checks}
    assert by_id["mpi.verbs_transports"].status == "skipped"
    assert dict(by_id["mpi.verbs_transports"].skipped)["cn02"] == (
        "MPI traffic on cn02 would fall back to TCP (ucx_info -d lists self, tcp, sysv, posix, cma): "
        "expected, the twin's containers have no RDMA device"
    )
    assert dict(by_id["mpi.run"].skipped) == {
        "cn01 -> cn02 (as configured)": "expected: MPI_Init stops (latency run: [cn01:01289] PML ucx cannot be "
        "selected): mpi.forbid_tcp leaves no transport to MPI and the twin's containers have no RDMA device"
    }
    assert by_id["mpi.run"].objects == ("cn01 -> cn02 (as configured)", "cn01 -> cn02 (forced onto TCP)")
    assert report.facts.benchmark == "mpi4py.bench ringtest", "the benchmark the pair's tools run (no OSU here)"
    lines = report.facts.lines()
    assert lines[2].startswith("as configured: failed: latency run: [cn01:01289] PML ucx cannot be selected")
    assert lines[3] == "forced onto TCP: 17579.50 us (8 B)"  # what was measured, and nothing else
    # a run that fails on the twin for another reason (no SSH between the nodes) is still a finding
    ssh = replace(init, reason="latency run: Host key verification failed.")
    assert [f[0] for f in findings(plan, MpiObservation(hosts, (ssh,)))] == ["mpi.run"]


def test_a_twin_run_allowed_onto_tcp_is_measured_but_not_judged() -> None:
    plan = plan_of("  forbid_tcp: false", twin=True)
    hosts = {h: replace(healthy_host(plan, h), ucx=NO_RDMA_UCX, tools=TOOLS) for h in plan.hosts}
    run = replace(ring_tcp_run(), transport="configured", bandwidth_mbs=84.0, bandwidth_size=4194304)
    report = check_mpi(plan, MpiObservation(hosts, (run,)))
    by_id = {c.id: c for c in report.checks}
    assert dict(by_id["mpi.latency"].skipped) == {
        "cn01 <-> cn02": "not judged: the twin's containers have no RDMA device, the run went over TCP "
        "(17579.50 us (8 B) measured)"
    }
