"""Every speed and width the spec accepts, on the twin: it comes up, verify passes with exactly the notes its
limits give, and a degraded link at each rate is still found (real OpenSM 3.3.23 on ibsim).

With Debian 12's ibsim 0.10 the twin runs NDR and XDR at HDR; run with ``IBPROV_IBSIM`` pointing at an
ibsim that takes NDR (0.11 or later) and the same tests expect NDR links verified as NDR, and XDR at NDR."""

from __future__ import annotations

import os
from collections import Counter
from itertools import product
from pathlib import Path

import pytest

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.units import Speed, Width
from ibprov.probes.runner import LocalRunner
from ibprov.twin.prove import prove
from ibprov.twin.sim import IBSIM_ENV, simulator
from ibprov.verify.fabric.section import verify_fabric

from .simkit import NetFile, probe, twin

pytestmark = pytest.mark.sim

RATES = list(product(Speed, Width))  # 9 speeds x 5 widths = 45 hosts, one per rate
NDR_SIM = Speed.NDR in simulator()[1]  # measured on the ibsim the twin runs
STAND_IN = (
    {Speed.FDR10: Speed.QDR, Speed.XDR: Speed.NDR}
    if NDR_SIM
    else {Speed.FDR10: Speed.QDR, Speed.NDR: Speed.HDR, Speed.XDR: Speed.HDR}
)
WIDTH_OPT = {Width.X1: "w=1", Width.X2: "w=16", Width.X4: "w=2", Width.X8: "w=4", Width.X12: "w=8"}
SPEED_OPT = {Speed.SDR: "s=1", Speed.DDR: "s=2", Speed.QDR: "s=4", Speed.FDR: "e=1", Speed.EDR: "e=2"}
SPEED_OPT[Speed.HDR] = "e=4"
SPEED_OPT[Speed.NDR] = "e=8"


def host(speed: Speed, width: Width) -> str:
    return f"h{speed.lower()}{str(width).removesuffix('x')}"


def place(i: int) -> tuple[str, int]:
    """Host i (0-based) on leaf01 ports 1-23, then leaf02 ports 1-22 (45 hosts, the leaves differ)."""
    return ("leaf01", i + 1) if i < 23 else ("leaf02", i - 22)


def rates_spec() -> LoadedSpec:
    """47 hosts (odd), two leaves under one NDR spine, the standby SM on the other leaf, three partitions;
    every host's HCA at its own speed and width."""
    lines = ["version: 1", "cluster: {name: rates}", "nodes:"]
    lines += [
        "  - {name: sm01, groups: [infra], hcas: [{device: mlx5_0}]}",
        "  - {name: sm02, groups: [infra], hcas: [{device: mlx5_0}]}",
    ]
    for i, (speed, width) in enumerate(RATES):
        group = "even" if i % 2 == 0 else "odd"
        lines.append(
            f"  - {{name: {host(speed, width)}, groups: [{group}], "
            f"hcas: [{{device: mlx5_0, speed: {speed}, width: {width}}}]}}"
        )
    lines += [
        "switches:",
        "  - {name: leaf01, role: leaf, ports: 40}",
        "  - {name: leaf02, role: leaf, ports: 40}",
        "  - {name: spine01, role: spine, ports: 40}",
        "fabric:",
        "  speed: NDR",
        "  width: 4x",
        "  links:",
        "    - leaf01:39 <-> sm01/mlx5_0:1",
        "    - leaf02:39 <-> sm02/mlx5_0:1",
        "    - leaf01:33 <-> spine01:1",
        "    - leaf01:34 <-> spine01:2",
        "    - leaf02:33 <-> spine01:3",
        "    - leaf02:34 <-> spine01:4",
    ]
    for i, rate in enumerate(RATES):
        leaf, port = place(i)
        lines.append(f"    - {leaf}:{port} <-> {host(*rate)}/mlx5_0:1")
    lines += [
        "subnet_manager:",
        "  routing_engine: minhop",
        "  instances:",
        "    - {node: sm01, priority: 15}",
        "    - {node: sm02, priority: 10}",
        "partitions:",
        "  - {name: evens, pkey: 0x0010, members: [{group: even}]}",
        "  - {name: odds, pkey: 0x0020, members: [{group: odd}, {group: even, membership: limited}]}",
        "  - {name: infra, pkey: 0x0030, members: [{all: true, membership: limited}, {group: infra}]}",
    ]
    return load_spec_text("\n".join(lines) + "\n", "rates.yaml")


def expected_notes() -> list[str]:
    """The substitution notes, counted from the table here (not from ibprov's limits)."""
    counts: Counter[tuple[Width, Speed]] = Counter()
    if Speed.NDR in STAND_IN:
        counts[(Width.X4, Speed.NDR)] = 2 + 4  # the SMs' HCAs and the uplinks run at the fabric's NDR
    counts.update((w, s) for s, w in RATES if s in STAND_IN)
    return sorted(
        f"{n} link{'s' if n != 1 else ''} planned {w} {s} run{'s' if n == 1 else ''} at {w} {STAND_IN[s]} on the twin"
        for (w, s), n in counts.items()
    )


def verify_as_twin(loaded: LoadedSpec, run):  # type: ignore[no-untyped-def]
    runner = LocalRunner(env=run.sim.env(probe(run)))
    try:
        return verify_fabric(loaded, runner, synthetic_guids=True, twin=run.limits)
    finally:
        runner.close()


def test_every_speed_and_width_passes_its_own_twin_with_exactly_its_substitution_notes(tmp_path: Path) -> None:
    loaded = rates_spec()
    assert len(loaded.spec.nodes) % 2 == 1
    proof = prove(loaded, tmp_path / "proof")
    assert proof.problems == [], proof.problems
    with twin(loaded, tmp_path / "twin") as run:
        assert run.limits is not None
        section = verify_as_twin(loaded, run)
    assert section.findings == [], [f.text for f in section.findings]
    substituted = sorted(n.split(" (")[0] for n in section.notes if " on the twin (" in n)
    assert substituted == expected_notes()
    assert sorted(n.split(" (")[0] for n in proof.notes) == expected_notes(), "the proof shows the same notes"
    speed = dict(next(c for c in section.checks if c.id == "link.speed").caveats)
    width = dict(next(c for c in section.checks if c.id == "link.width").caveats)
    ndr = {f"{host(s, w)} mlx5_0 port 1" for s, w in RATES if s in STAND_IN}
    assert ndr <= set(speed), "every substituted speed is a caveat, never a verified pass"
    assert width == {}, "ibsim runs every width: none is substituted"
    assert not {f"{host(s, w)} mlx5_0 port 1" for s, w in RATES if s not in STAND_IN} & set(speed)


def degraded(speed: Speed, width: Width) -> tuple[str, str] | None:
    """The net-file options of a worse link at this rate, and the check that must name it."""
    twin_speed = STAND_IN.get(speed, speed)
    if width != Width.X1:
        return f"w=1 {SPEED_OPT[twin_speed]}", "link.width"
    if twin_speed != Speed.SDR:
        return f"{WIDTH_OPT[width]} s=1", "link.speed"
    return None  # 1x SDR: there is nothing slower


def test_a_degraded_link_is_found_at_every_speed_and_width(tmp_path: Path) -> None:
    loaded = rates_spec()
    expected: set[tuple[str, str]] = set()

    def degrade(net: NetFile) -> None:
        for i, (speed, width) in enumerate(RATES):
            worse = degraded(speed, width)
            if worse is None:
                continue
            leaf, port = place(i)
            net.connect((f"S-{leaf}", port), (f"H-{host(speed, width)}-mlx5_0", 1), worse[0])
            expected.add((worse[1], f"{host(speed, width)} mlx5_0 port 1"))

    with twin(loaded, tmp_path, net=degrade) as run:
        section = verify_as_twin(loaded, run)
    assert len(expected) == len(RATES) - 1
    assert {(f.check, f.object) for f in section.findings} == expected
    ndr = next(f for f in section.findings if f.object == f"{host(Speed.NDR, Width.X4)} mlx5_0 port 1")
    twin_ndr = "" if NDR_SIM else " (the twin runs 4x HDR)"
    found = "1x NDR" if NDR_SIM else "1x HDR"
    assert ndr.text == f"{host(Speed.NDR, Width.X4)} mlx5_0 port 1: planned 4x NDR{twin_ndr}, found {found}"


@pytest.mark.skipif(bool(os.environ.get(IBSIM_ENV)), reason="another ibsim than Debian's is in use")
def test_debians_ibsim_is_measured_to_run_the_speeds_its_release_is_listed_with() -> None:
    """The speeds measured by starting Debian's ibsim are its release's row of IBSIM_RELEASES (Debian 12's 0.10 up
    to HDR; Debian 13's 0.12 NDR too): the table the twin rack trusts for its node image's ibsim is the
    measurement."""
    import subprocess

    from ibprov.twinnet.limits import release_speeds

    package = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Version}", "ibsim-utils"], capture_output=True, text=True, check=True
    ).stdout
    listed_name, listed = release_speeds(package)
    name, speeds = simulator()
    assert speeds == listed, (package, name)
    assert speeds >= {Speed.SDR, Speed.DDR, Speed.QDR, Speed.FDR, Speed.EDR, Speed.HDR}
    assert name == ("ibsim 0.11+" if Speed.NDR in speeds else "ibsim 0.10"), listed_name
