"""The planned topology written the way `ibnetdiscover` prints a fabric, for people and for diffing."""

from __future__ import annotations

from collections import defaultdict

from ibprov.render.guids import GuidBook, fmt_guid
from ibprov.spec import LoadedSpec, collector_paused
from ibprov.spec.types import Endpoint


def _speed_token(link_width: str, speed: str) -> str:
    return f"{link_width}{speed}"


class _Names:
    """How ibnetdiscover prints each device and HCA port, worked out once per device and port."""

    def __init__(self, loaded: LoadedSpec, book: GuidBook) -> None:
        self.book, self.switches = book, loaded.topology.switches
        self.descs = {
            (n.name, h.device): n.description or f"{n.name} {h.device}" for n in loaded.spec.nodes for h in n.hcas
        }
        self.devices: dict[tuple[str, str | None], tuple[str, str]] = {}
        self.ports: dict[Endpoint, str] = {}  # each HCA port is printed twice: at its HCA and at its switch

    def device(self, end: Endpoint) -> tuple[str, str]:
        """(node id, description) of the device at ``end``."""
        key = (end.device, end.hca)
        found = self.devices.get(key)
        if found is None:
            if end.hca is None:
                g = self.book.switch_guid(end.device)
                nid = f"S-{g:016x}" if g is not None else f"S-{end.device}"
                found = (nid, self.switches[end.device].node_desc)
            else:
                g = self.book.hca_guid(end.device, end.hca)
                nid = f"H-{g:016x}" if g is not None else f"H-{end.device}-{end.hca}"
                found = (nid, self.descs[(end.device, end.hca)])
            self.devices[key] = found
        return found

    def port_guid(self, end: Endpoint) -> str:
        """'(portguid)' or '' as ibnetdiscover prints an HCA port; '' for a switch port."""
        if end.hca is None:
            return ""
        found = self.ports.get(end)
        if found is None:
            pg = self.book.port_guid(end.device, end.hca, end.port)
            found = self.ports[end] = f"({pg:x})" if pg is not None else ""
        return found


def _peer_lines(loaded: LoadedSpec, names: _Names) -> dict[tuple[str, str | None], dict[int, str]]:
    """Device -> port -> the line ibnetdiscover prints for that port's cable."""
    tokens: dict[tuple[object, object], str] = {}
    peers: dict[tuple[str, str | None], dict[int, str]] = defaultdict(dict)
    devices, ports = names.devices, names.ports
    last: tuple[object, object, str] = (None, None, "")
    for a, b, speed, width, _source in loaded.topology.links:
        if width is last[0] and speed is last[1]:
            token = last[2]
        else:
            token = tokens.get((width, speed)) or tokens.setdefault(
                (width, speed), _speed_token(width.value, speed.value)
            )
            last = (width, speed, token)
        ad, ah, ap = a
        bd, bh, bp = b
        a_id, a_desc = devices.get((ad, ah)) or names.device(a)
        b_id, b_desc = devices.get((bd, bh)) or names.device(b)
        a_guid = "" if ah is None else ports[a] if a in ports else names.port_guid(a)
        b_guid = "" if bh is None else ports[b] if b in ports else names.port_guid(b)
        if ah is None:
            line = f'[{ap}]\t"{b_id}"[{bp}]{b_guid}\t\t# "{b_desc}" lid 0 {token}'
        else:
            line = f'[{ap}]{a_guid}\t"{b_id}"[{bp}]\t\t# lid 0 lmc 0 "{b_desc}" lid 0 {token}'
        peers[(ad, ah)][ap] = line
        if bh is None:
            line = f'[{bp}]\t"{a_id}"[{ap}]{a_guid}\t\t# "{a_desc}" lid 0 {token}'
        else:
            line = f'[{bp}]{b_guid}\t"{a_id}"[{ap}]\t\t# lid 0 lmc 0 "{a_desc}" lid 0 {token}'
        peers[(bd, bh)][bp] = line
    return peers


def _port_lines(lines: dict[int, str]) -> list[str]:
    if len(lines) == 1:
        return list(lines.values())
    return [line for _p, line in sorted(lines.items())]


@collector_paused()
def build_topology_file(loaded: LoadedSpec, book: GuidBook) -> str:
    spec, topo = loaded.spec, loaded.topology
    names = _Names(loaded, book)
    descs = names.descs
    peers = _peer_lines(loaded, names)
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
        out += _port_lines(peers[(name, None)])
    hca_guid, extend = book.hca_guid, out.extend
    for node in spec.nodes:
        name = node.name
        for hca in node.hcas:
            dev = hca.device
            g = hca_guid(name, dev)
            if g is not None:
                extend(("", f"caguid=0x{g:016x}", f'Ca\t{max(hca.ports)} "H-{g:016x}"\t\t# "{descs[(name, dev)]}"'))
            else:
                extend(
                    (
                        "",
                        f"# {name}/{dev}: GUID unknown",
                        f'Ca\t{max(hca.ports)} "H-{name}-{dev}"\t\t# "{descs[(name, dev)]}"',
                    )
                )
            lines = peers.get((name, dev))
            if lines:
                extend(lines.values() if len(lines) == 1 else _port_lines(lines))
    return "\n".join(out) + "\n"
