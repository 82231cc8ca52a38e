"""Helpers for the tests that run a twin of a spec on ibsim with the real OpenSM (test_verify_faults.py,
test_twin_rates.py): ibsim net-file edits made before ibsim starts, the twin with its planned SMs settled, and
the port the diags run from."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ibprov.clusterspec import LoadedSpec
from ibprov.twin.bringup import TwinRun, hca_id, start_twin  # (twin.netfile first is a circular import)

PORT_LINE = re.compile(r'^\[(\d+)\]\t"([^"]+)"\[(\d+)\]\t(.*)$')


# ------------------------------------------------------------------------------------ net-file variants
class NetFile:
    """Edit an ibsim net file: every cable is written at both of its ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.blocks = [block.split("\n") for block in path.read_text().strip().split("\n\n")]

    def _block(self, node: str) -> list[str]:
        for block in self.blocks:
            if any(f'"{node}"' in line and not line.startswith("[") for line in block):
                return block
        raise KeyError(node)

    def _drop(self, node: str, port: int) -> tuple[str, int] | None:
        block = self._block(node)
        for i, line in enumerate(block):
            match = PORT_LINE.match(line)
            if match and int(match[1]) == port:
                del block[i]
                return match[2], int(match[3])
        return None

    def disconnect(self, node: str, port: int) -> None:
        peer = self._drop(node, port)
        if peer is not None:
            self._drop(*peer)

    def connect(self, a: tuple[str, int], b: tuple[str, int], options: str = "w=2 e=4") -> None:
        for end in (a, b):
            self.disconnect(*end)
        for (node, port), (peer, peer_port) in ((a, b), (b, a)):
            self._block(node).append(f'[{port}]\t"{peer}"[{peer_port}]\t{options}')

    def add_ca(self, node: str, guid: int, description: str) -> None:
        self.blocks.append([f"caguid=0x{guid:016x}", f'Ca\t1 "{node}"\t\t# "{description}"'])

    def save(self) -> None:
        self.path.write_text("\n\n".join("\n".join(b) for b in self.blocks) + "\n")


# ----------------------------------------------------------------------------------------- harness
@contextmanager
def twin(
    loaded: LoadedSpec,
    workdir: Path,
    *,
    net: Callable[[NetFile], None] | None = None,
    opensm: Callable[[Path], None] | None = None,
) -> Iterator[TwinRun]:
    """The twin of ``loaded`` with the subnet up and every standby in STANDBY; ``net`` edits twin.net and
    ``opensm`` the OpenSM files before anything starts."""

    def before_start(opensm_dir: Path) -> None:
        if net is not None:
            netfile = NetFile(opensm_dir.parent / "twin.net")
            net(netfile)
            netfile.save()
        if opensm is not None:
            opensm(opensm_dir)

    run = start_planned_sms(loaded, start_twin(loaded, workdir, start_sms=False, before_start=before_start))
    try:
        yield run
    finally:
        run.stop()


def start_planned_sms(loaded: LoadedSpec, run: TwinRun) -> TwinRun:
    """Start the planned OpenSMs one at a time, highest priority first, each once the one before it is
    settled: started together, a standby can win the first sweep and the handover then stalls on ibsim."""
    workdir = run.sim.workdir.parent
    try:
        for inst in sorted(loaded.spec.subnet_manager.instances, key=lambda i: -i.priority):
            node = next(n for n in loaded.spec.nodes if n.name == inst.node)
            device = inst.hca or node.hcas[0].device
            conf = workdir / "opensm" / inst.node / f"opensm.{device}-{inst.port}.conf"
            sm = run.sim.start_opensm(hca_id(inst.node, device), conf, name=f"opensm-{inst.node}-{device}")
            settled = "SUBNET UP" if not run.sms else "Entering STANDBY state"
            run.sms.append((inst.node, inst.priority, sm))
            sm.expect(settled)
    except BaseException:
        run.stop()
        raise
    return run


def probe(run: TwinRun) -> str:
    """A port to run the diags from that hosts no SM (as an admin's login node would be)."""
    sm_hosts = {sm.sim_host for _n, _p, sm in run.sms}
    return sorted(h for h in run.sim_hosts.values() if h not in sm_hosts)[0]
