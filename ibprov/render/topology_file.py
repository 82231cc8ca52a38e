"""The planned topology written the way `ibnetdiscover` prints a fabric, for people and for diffing."""

from __future__ import annotations

from collections import defaultdict

from ibprov.render.guids import GuidBook, fmt_guid
from ibprov.spec import LoadedSpec
from ibprov.spec.types import Endpoint


def _speed_token(link_width: str, speed: str) -> str:
    return f"{link_width}{speed}"


def build_topology_file(loaded: LoadedSpec, book: GuidBook) -> str:
    spec, topo = loaded.spec, loaded.topology
    descs = {(n.name, h.device): n.description or f"{n.name} {h.device}" for n in spec.nodes for h in n.hcas}

    def ident(end: Endpoint) -> tuple[str, str, str]:
        """(node id, description, '(portguid)' or '') as ibnetdiscover prints a peer."""
        if end.hca is None:
            g = book.switch_guid(end.device)
            nid = f"S-{g:016x}" if g is not None else f"S-{end.device}"
            return nid, topo.switches[end.device].node_desc, ""
        g = book.hca_guid(end.device, end.hca)
        pg = book.port_guid(end.device, end.hca, end.port)
        nid = f"H-{g:016x}" if g is not None else f"H-{end.device}-{end.hca}"
        return nid, descs[(end.device, end.hca)], f"({pg:x})" if pg is not None else ""

    peers: dict[tuple[str, str | None], dict[int, str]] = defaultdict(dict)
    for link in topo.links:
        for near, far in ((link.a, link.b), (link.b, link.a)):
            fid, fdesc, fguid = ident(far)
            token = _speed_token(link.width.value, link.speed.value)
            if near.hca is None:
                line = f'[{near.port}]\t"{fid}"[{far.port}]{fguid}\t\t# "{fdesc}" lid 0 {token}'
            else:
                _nid, _ndesc, nguid = ident(near)
                line = f'[{near.port}]{nguid}\t"{fid}"[{far.port}]\t\t# lid 0 lmc 0 "{fdesc}" lid 0 {token}'
            peers[(near.device, near.hca)][near.port] = line
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
        out += [line for _p, line in sorted(peers[(name, None)].items())]
    for node in spec.nodes:
        for hca in node.hcas:
            g = book.hca_guid(node.name, hca.device)
            nid = f"H-{g:016x}" if g is not None else f"H-{node.name}-{hca.device}"
            out += [
                "",
                f"caguid={fmt_guid(g)}" if g is not None else f"# {node.name}/{hca.device}: GUID unknown",
            ]
            out.append(f'Ca\t{max(hca.ports)} "{nid}"\t\t# "{descs[(node.name, hca.device)]}"')
            out += [line for _p, line in sorted(peers[(node.name, hca.device)].items())]
    return "\n".join(out) + "\n"
