"""Grid fabrics for the routing tests (imported as ``from gridkit import grid_spec``): switches at the points
of a grid, cabled in dimension order, as ibprov specs -- meshes, tori, hypercubes, rings (a grid of one
dimension). Validate's dor advice (unit tests) and the twin's routing audits (sim tests) read the same ones."""

from __future__ import annotations


def grid_spec(
    dims: tuple[int, ...],
    *,
    wrap: bool,
    engine: str = "dor",
    extra: str = "",
    roots: str = "",
    swap_first: bool = False,
) -> str:
    """Switches g<coordinates> at the points of a grid of ``dims``; dimension k cabled port 2k+1 to the next
    switch's port 2k+2 (``wrap``: a torus, else a mesh; a dimension of 2 has one cable, of 1 none); one HCA
    on port 8 of each. ``swap_first``: the first cable of dimension 0 uses ports 6 and 5 instead (not in
    dimension order). A 2x2x2 grid is a 3-D hypercube."""
    points: list[tuple[int, ...]] = [()]
    for size in dims:
        points = [(*p, i) for p in points for i in range(size)]
    name = {p: "g" + "".join(map(str, p)) for p in points}
    links: list[str] = []
    for p in points:
        for k, size in enumerate(dims):
            if size < 2 or (not wrap and p[k] == size - 1) or (size == 2 and p[k] == 1):
                continue
            q = (*p[:k], (p[k] + 1) % size, *p[k + 1 :])
            a, b = 2 * k + 1, 2 * k + 2
            if swap_first and k == 0 and p == points[0]:
                a, b = b + 4, a + 4
            links.append(f"    - {name[p]}:{a} <-> {name[q]}:{b}")
    return switch_fabric_spec(list(name.values()), links, engine=engine, roots=roots, extra=extra)


def switch_fabric_spec(switches: list[str], cables: list[str], *, engine: str, roots: str = "", extra: str = "") -> str:
    """A spec of 8-port leaf switches named ``switches`` (a letter and digits), each with one HCA on port 8 of a
    host named after it (g01 -> h01), the switch-to-switch ``cables`` (spec link lines), and the first host's
    SM."""
    links = [f"    - {n}:8 <-> h{n[1:]}/mlx5_0:1" for n in switches] + cables
    nodes = "\n".join(f"  - {{name: h{n[1:]}, hcas: [{{device: mlx5_0}}]}}" for n in switches)
    rows = "\n".join(f"  - {{name: {n}, ports: 8, role: leaf}}" for n in switches)
    return f"""version: 1
cluster: {{name: grid}}
nodes:
{nodes}
switches:
{rows}
fabric:
  speed: EDR
  links:
{chr(10).join(links)}
subnet_manager:
  routing_engine: {engine}
  {f"roots: [{roots}]" if roots else ""}
  instances: [{{node: h{switches[0][1:]}, priority: 15}}]
{extra}
"""
