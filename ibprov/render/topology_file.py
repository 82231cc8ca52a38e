"""The planned topology written the way `ibnetdiscover` prints a fabric, for people and for diffing."""

from __future__ import annotations

from ibprov.clusterspec import LoadedSpec, collector_paused
from ibprov.identity.guids import GuidBook, fmt_guid

Device = tuple[str, str | None]  # (switch, None) or (node, HCA)
# how ibnetdiscover names a device (node id), its description, and port -> the line printed for its cable
Printed = tuple[str, str, dict[int, str]]


def _speed_token(link_width: str, speed: str) -> str:
    return f"{link_width}{speed}"


class _Devices(dict[Device, Printed]):
    """(device, HCA) -> :data:`Printed`, each device worked out the first time a cable names it."""

    def __init__(self, loaded: LoadedSpec, book: GuidBook) -> None:
        super().__init__()
        self.book, self.switches = book, loaded.topology.switches
        self.descs: dict[Device, str] = {
            (n.name, h.device): n.description or f"{n.name} {h.device}" for n in loaded.spec.nodes for h in n.hcas
        }

    def __missing__(self, key: Device) -> Printed:
        device, hca = key
        found: Printed
        if hca is None:
            g = self.book.switch_guid(device)
            found = (f"S-{g:016x}" if g is not None else f"S-{device}", self.switches[device].node_desc, {})
        else:
            g = self.book.hca_guid(device, hca)
            found = (f"H-{g:016x}" if g is not None else f"H-{device}-{hca}", self.descs[key], {})
        self[key] = found
        return found


def _peer_lines(loaded: LoadedSpec, book: GuidBook) -> _Devices:
    """Every cabled device with the line ibnetdiscover prints for each of its cabled ports (one pass over
    the cables, both ends' lines at once; each HCA port's GUID is looked up once)."""
    tokens: dict[tuple[object, object], str] = {}
    devices = _Devices(loaded, book)
    switches: dict[str, Printed] = {}  # the same entries by switch name: a str key hashes once, a tuple each time
    port_guids, port_guid, missing = book.port_guids(), book.port_guid, object()
    last_width: object = None
    last_speed: object = None
    token = ""
    for a, b, speed, width, _source in loaded.topology.links:
        ad, ah, ap = a
        bd, bh, bp = b
        if width is not last_width or speed is not last_speed:
            token = tokens.get((width, speed)) or tokens.setdefault(
                (width, speed), _speed_token(width.value, speed.value)
            )
            last_width, last_speed = width, speed
        if ah is None:
            found = switches.get(ad)
            if found is None:
                found = switches[ad] = devices[(ad, None)]
            a_id, a_desc, a_lines = found
            a_guid = ""
        else:
            a_id, a_desc, a_lines = devices[(ad, ah)]
            pg = port_guids.get(a, missing)
            if pg is missing:
                pg = port_guid(ad, ah, ap)
            a_guid = f"({pg:x})" if pg is not None else ""
        if bh is None:
            found = switches.get(bd)
            if found is None:
                found = switches[bd] = devices[(bd, None)]
            b_id, b_desc, b_lines = found
            b_guid = ""
            b_lines[bp] = f'[{bp}]\t"{a_id}"[{ap}]{a_guid}\t\t# "{a_desc}" lid 0 {token}'
        else:
            b_id, b_desc, b_lines = devices[(bd, bh)]
            pg = port_guids.get(b, missing)
            if pg is missing:
                pg = port_guid(bd, bh, bp)
            b_guid = f"({pg:x})" if pg is not None else ""
            b_lines[bp] = f'[{bp}]{b_guid}\t"{a_id}"[{ap}]\t\t# lid 0 lmc 0 "{a_desc}" lid 0 {token}'
        if ah is None:
            a_lines[ap] = f'[{ap}]\t"{b_id}"[{bp}]{b_guid}\t\t# "{b_desc}" lid 0 {token}'
        else:
            a_lines[ap] = f'[{ap}]{a_guid}\t"{b_id}"[{bp}]\t\t# lid 0 lmc 0 "{b_desc}" lid 0 {token}'
    return devices


def _port_lines(lines: dict[int, str]) -> list[str]:
    if len(lines) == 1:
        return list(lines.values())
    return [lines[port] for port in sorted(lines)]  # ints sort faster than (port, line) pairs


@collector_paused()
def build_topology_file(loaded: LoadedSpec, book: GuidBook) -> str:
    spec, topo = loaded.spec, loaded.topology
    devices = _peer_lines(loaded, book)
    descs = devices.descs
    out = [
        "#",
        f"# Topology file: planned fabric of cluster {spec.cluster.name}, written by ibprov render",
        "# (ibnetdiscover format; LIDs are assigned by the SM and shown as 0)",
        "#",
    ]
    if book.synthetic:
        out.append("# SYNTHETIC GUIDs (0x02... prefix) stand in for GUIDs the spec and lock file do not name")
    for name, sw in topo.switches.items():
        g = book.switch_guid(name)
        nid = f"S-{g:016x}" if g is not None else f"S-{name}"
        out += ["", f"switchguid={fmt_guid(g)}({g:x})" if g is not None else f"# switch {name}: GUID unknown"]
        out.append(f'Switch\t{sw.ports} "{nid}"\t\t# "{sw.node_desc}" enhanced port 0 lid 0 lmc 0')
        found = devices.get((name, None))
        if found:
            out += _port_lines(found[2])
    hca_guid, append, get = book.hca_guid, out.append, devices.get
    for node in spec.nodes:  # one string per HCA: its block, lines joined, after an empty line
        name = node.name
        for hca in node.hcas:
            dev = hca.device
            g = hca_guid(name, dev)
            if g is not None:
                head = f'\ncaguid=0x{g:016x}\nCa\t{max(hca.ports)} "H-{g:016x}"\t\t# "{descs[(name, dev)]}"'
            else:
                head = (
                    f'\n# {name}/{dev}: GUID unknown\nCa\t{max(hca.ports)} "H-{name}-{dev}"\t\t# "{descs[(name, dev)]}"'
                )
            found = get((name, dev))
            if not found:
                append(head)
            elif len(lines := found[2]) == 1:
                append(f"{head}\n{next(iter(lines.values()))}")
            else:
                append("\n".join((head, *_port_lines(lines))))
    return "\n".join(out) + "\n"
