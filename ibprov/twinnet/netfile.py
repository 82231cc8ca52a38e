"""The twin: the planned fabric as an ibsim net file (ibnetdiscover syntax plus ibsim's w=/s=/e= options).

ibsim 0.10 gives an HCA port the GUID ``node GUID + port`` and a switch port the switch's node GUID;
it runs link widths 1x/2x/4x/8x/12x and speeds up to HDR. Where the plan asks for more (NDR, XDR) or
for FDR10, the twin runs what :mod:`ibprov.twinnet.limits` says and notes it in the file header; the same
description is written beside the net file (``twin-limits.json``) for whatever judges the twin.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ibprov.clusterspec import LoadedSpec, collector_paused
from ibprov.clusterspec.topology import PlannedLink
from ibprov.clusterspec.units import Speed, Width
from ibprov.identity.guids import GuidBook, fmt_guid
from ibprov.twinnet.limits import SIM_SPEEDS, SIMULATOR, TwinLimits, twin_limits, twin_rate

# PortInfo LinkWidthEnabled bits and LinkSpeed(Ext)Enabled bits as ibsim takes them.
_WIDTH_CODE = {Width.X1: 1, Width.X4: 2, Width.X8: 4, Width.X12: 8, Width.X2: 16}
_SPEED_OPT = {
    Speed.SDR: "s=1",
    Speed.DDR: "s=2",
    Speed.QDR: "s=4",
    Speed.FDR: "e=1",
    Speed.EDR: "e=2",
    Speed.HDR: "e=4",
    Speed.NDR: "e=8",  # ibsim 0.11 and later
}


def switch_id(name: str) -> str:
    return f"S-{name}"


def hca_id(node: str, device: str) -> str:
    return f"H-{node}-{device}"


@dataclass
class Twin:
    text: str
    limits: TwinLimits
    sim_hosts: dict[str, str] = field(default_factory=dict)  # "node/device" -> SIM_HOST value

    @property
    def notes(self) -> list[str]:
        return self.limits.notes()


def _link_options(link: PlannedLink, speeds: frozenset[Speed]) -> str:
    width, speed = twin_rate(link.width, link.speed, speeds)
    return f"w={_WIDTH_CODE[width]} {_SPEED_OPT[speed]}"


def _port_lines(lines: dict[int, str]) -> Iterable[str]:
    """A device's port lines (each already '[port]\t...') in port order."""
    if len(lines) == 1:
        return lines.values()
    return [lines[port] for port in sorted(lines)]  # ints sort faster than (port, line) pairs


@collector_paused()
def build_twin(
    loaded: LoadedSpec, book: GuidBook, *, simulator: str = SIMULATOR, speeds: frozenset[Speed] = SIM_SPEEDS
) -> Twin:
    """The ibsim net file of the planned fabric, for a simulator that runs ``speeds`` (default: Debian 12's
    ibsim 0.10). GUIDs must be resolvable (use a synthetic-GUID book)."""
    spec, topo = loaded.spec, loaded.topology
    notes: set[str] = set()
    # device id -> port -> its whole line; the hot loop of a large fabric (one pass, two lines per cable)
    ports: dict[str, dict[int, str]] = defaultdict(dict)
    ids: dict[tuple[str, str | None], str] = {}
    options: dict[tuple[Width, Speed], str] = {}

    last: tuple[object, object, str] = (None, None, "")
    for link in topo.links:
        (ad, ah, ap), (bd, bh, bp), speed, width, _source = link
        if width is last[0] and speed is last[1]:
            opts = last[2]
        else:
            opts = options.get((width, speed)) or options.setdefault((width, speed), _link_options(link, speeds))
            last = (width, speed, opts)
        a = ids.get((ad, ah))
        if a is None:
            a = ids[(ad, ah)] = hca_id(ad, ah) if ah else switch_id(ad)
        b = ids.get((bd, bh))
        if b is None:
            b = ids[(bd, bh)] = hca_id(bd, bh) if bh else switch_id(bd)
        ports[a][ap] = f'[{ap}]\t"{b}"[{bp}]\t{opts}'
        ports[b][bp] = f'[{bp}]\t"{a}"[{ap}]\t{opts}'
    out: list[str] = []  # the blocks' lines, each block after an empty line
    extend, append = out.extend, out.append
    no_ports: dict[int, str] = {}
    for name, sw in topo.switches.items():
        guid = book.switch_guid(name)
        assert guid is not None, "twin needs a GUID book that allows synthetic GUIDs"
        sid = switch_id(name)
        extend(
            ("", f"switchguid={fmt_guid(guid)}", f'Switch\t{sw.ports} "{sid}"\t\t# "{sw.node_desc}" enhanced port 0')
        )
        extend(_port_lines(ports.get(sid, no_ports)))
    sim_hosts: dict[str, str] = {}
    hca_guid = book.hca_guid
    for node in spec.nodes:
        name, description = node.name, node.description
        for hca in node.hcas:
            dev = hca.device
            base = hca_guid(name, dev)
            assert base is not None, "twin needs a GUID book that allows synthetic GUIDs"
            if hca.port_guids:
                for port, guid in hca.port_guids.items():
                    if guid != base + port:
                        notes.add(
                            f"{name}/{dev}: ibsim derives port GUIDs as node GUID + port, "
                            f"so port {port} cannot be {fmt_guid(guid)} in the twin"
                        )
            nid = ids.get((name, dev)) or hca_id(name, dev)
            sim_hosts[f"{name}/{dev}"] = nid
            # the block as one string (its lines joined, after an empty line): one of 100,000s
            head = f'\ncaguid=0x{base:016x}\nCa\t{max(hca.ports)} "{nid}"\t\t# "{description or f"{name} {dev}"}"'
            lines = ports.get(nid)
            if not lines:
                append(head)
            elif len(lines) == 1:
                append(f"{head}\n{next(iter(lines.values()))}")
            else:
                append("\n".join((head, *_port_lines(lines))))
    header = [
        f"# ibsim net file of cluster {spec.cluster.name}: the fabric twin. Generated by ibprov - do not edit.",
        f"# {len(topo.switches)} switches, {sum(len(n.hcas) for n in spec.nodes)} HCAs, {len(topo.links)} links.",
        "# Run: ibsim -s twin.net; attach a process with LD_PRELOAD=libumad2sim.so SIM_HOST=<node id>.",
    ]
    if book.synthetic:
        header.append(
            f"# SYNTHETIC GUIDs (0x02... prefix) for {len(book.synthetic)} devices the spec and lock "
            "file do not name; they are not the real fabric's."
        )
    limits = twin_limits(loaded, notes=sorted(notes), simulator=simulator, speeds=speeds)
    header += [f"# note: {n}" for n in limits.notes()]
    text = "\n".join(header) + "\n" + ("\n".join(out) if out else "\n") + "\n"
    return Twin(text, limits, sim_hosts)
