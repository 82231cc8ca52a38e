"""Partition members restricted to one rail (``rail:`` with node, group or all: true) on multi-HCA nodes:
partitions.conf lists exactly the port GUIDs of that rail's ports, the most specific entry sets a port's
membership, and every wrong rail reference is a located problem, all of them in one run.

The specs: 5 nodes (an odd count) with one single-port HCA per rail (rail R is mlx5_R:1); node n4 has no HCA
of the last rail. GUIDs are the synthetic ones render stands in (computed here from the names)."""

# ruff: noqa: E501

from __future__ import annotations

import re

import pytest

from ibprov.clusterspec import load_spec_text
from ibprov.errors import SpecError
from ibprov.identity.guids import synthetic_guid
from ibprov.render import render_files

NODES = ["n1", "n2", "n3", "n4", "n5"]


def rail_spec(rails: int, *, lacking: str = "n4", parents: bool = True, tail: str = "") -> str:
    """5 nodes with one single-port HCA per rail (mlx5_R is rail R); ``lacking`` has no HCA of the last rail.
    One leaf cables every HCA port; rail R is mlx5_R:1, with IPoIB link ibR when ``parents``."""
    lines = ["version: 1", "cluster:", "  name: rails", "nodes:"]
    links = []
    for name in NODES:
        count = rails - 1 if name == lacking else rails
        groups = "[gpu, odd]" if name == lacking else "[gpu]"
        hcas = ", ".join(f"{{device: mlx5_{r}}}" for r in range(count))
        lines.append(f"  - {{name: {name}, groups: {groups}, hcas: [{hcas}]}}")
        links += [f"{name}/mlx5_{r}:1" for r in range(count)]
    lines += ["switches:", f"  - {{name: leaf01, role: leaf, ports: {len(links)}}}", "fabric:", "  speed: HDR"]
    lines += ["  links:", *(f"    - leaf01:{k} <-> {end}" for k, end in enumerate(links, 1))]
    lines += ["subnet_manager:", "  instances:", "    - {node: n1, priority: 15}", "mpi:", "  rails:"]
    for r in range(rails):
        parent = f", ipoib_parent: ib{r}" if parents else ""
        lines.append(f"    - {{name: rail{r}, devices: ['mlx5_{r}:1']{parent}}}")
    return "\n".join(lines) + "\n" + tail


def port_guid(node: str, rail: int) -> str:
    """The synthetic GUID of ``node``'s port of rail ``rail`` (mlx5_RAIL port 1): the HCA's GUID + 1."""
    return f"0x{synthetic_guid('rails', 'hca', node, f'mlx5_{rail}') + 1:016x}"


def partitions_conf(text: str) -> dict[str, dict[str, str]]:
    """Rendered spec -> partition name -> port GUID -> membership, read back from partitions.conf."""
    conf = render_files(load_spec_text(text, "rails.yaml"), synthetic_guids=True).files["opensm/partitions.conf"]
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    name = ""
    for line in conf.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        header = re.match(r"^([A-Za-z0-9_.-]+)=0x[0-9a-f]{4}\b.*:$", line)
        member = re.match(r"^    (0x[0-9a-f]{16})=(full|limited|both)[,;]$", line.replace(" ;", ";"))
        if header:
            name = header.group(1)
            current = out.setdefault(name, {})
        elif member:
            current[member.group(1)] = member.group(2)
        else:  # nothing else: only Default says ALL, a rail member never does
            assert name == "Default", line
            assert line == "    ALL=full ;", line
    return out


def problems(text: str) -> list[str]:
    with pytest.raises(SpecError) as err:
        load_spec_text(text, "s.yaml")
    return [str(p) for p in err.value.problems]


# ------------------------------------------------------------------------------------------- render
@pytest.mark.parametrize("rails", [2, 8])
def test_a_rail_member_lists_exactly_the_port_guids_of_that_rail(rails: int) -> None:
    # one partition per rail holding every node's port of that rail: {all: true, rail: railR}
    tail = "partitions:\n" + "".join(
        f"  - {{name: r{r}, pkey: {0x100 + r:#06x}, defmember: full, members: [{{all: true, rail: rail{r}}}]}}\n"
        for r in range(rails)
    )
    conf = partitions_conf(rail_spec(rails, tail=tail))
    assert set(conf) == {"Default", *(f"r{r}" for r in range(rails))}
    for r in range(rails):
        have = [n for n in NODES if not (n == "n4" and r == rails - 1)]
        assert conf[f"r{r}"] == {port_guid(n, r): "full" for n in have}, f"rail {r}"
    assert len(conf[f"r{rails - 1}"]) == 4  # n4 has no port of the last rail: 4 ports, not 5


@pytest.mark.parametrize("rails", [2, 8])
def test_node_and_group_members_with_a_rail_hold_only_that_rails_ports(rails: int) -> None:
    last = rails - 1
    tail = f"""\
partitions:
  - name: pair
    pkey: 0x0010
    members:
      - {{node: n2, rail: rail{last}}}
      - {{node: n3, rail: rail0, membership: full}}
      - {{group: odd, rail: rail0}}
"""
    conf = partitions_conf(rail_spec(rails, tail=tail))
    assert conf["pair"] == {
        port_guid("n2", last): "limited",
        port_guid("n3", 0): "full",
        port_guid("n4", 0): "limited",
    }


def test_the_most_specific_member_sets_a_ports_membership() -> None:
    # node+rail > node > group+rail > group > all+rail > all; between equals the strongest membership
    tail = """\
partitions:
  - name: mix
    pkey: 0x0010
    defmember: limited
    members:
      - {all: true, membership: full}
      - {all: true, rail: rail0, membership: limited}
      - {node: n2, membership: full}
      - {node: n3, rail: rail0, membership: full}
      - {node: n3, membership: limited}
      - {group: odd, rail: rail1, membership: both}
      - {group: odd, membership: full}
"""
    conf = partitions_conf(rail_spec(3, tail=tail))
    want = {}
    for node in NODES:
        for r in range(3):
            if node == "n4" and r == 2:
                continue  # no such port
            if node == "n2":
                ms = "full"  # node beats all and all+rail
            elif node == "n3":
                ms = "full" if r == 0 else "limited"  # node+rail beats node
            elif node == "n4":
                ms = "both" if r == 1 else "full"  # group+rail beats group, group beats all+rail
            else:
                ms = "limited" if r == 0 else "full"  # all+rail beats all
            want[port_guid(node, r)] = ms
    assert conf["mix"] == want


def test_the_same_node_with_and_without_a_rail_is_no_conflict() -> None:
    tail = """\
partitions:
  - name: p
    pkey: 0x0010
    members:
      - {node: n1, rail: rail1, membership: full}
      - {node: n1, membership: limited}
"""
    assert partitions_conf(rail_spec(2, tail=tail))["p"] == {port_guid("n1", 0): "limited", port_guid("n1", 1): "full"}


# ------------------------------------------------------------------------------------------- problems
def test_every_wrong_rail_reference_is_located_and_all_are_reported_at_once() -> None:
    tail = """\
partitions:
  - name: r1
    pkey: 0x0010
    ipoib: true
    members:
      - {all: true, rail: rail9}
      - {node: n4, rail: rail1}
      - {group: odd, rail: rail1}
      - {node: n2, rail: rail0, membership: full}
      - {node: n2, rail: rail0, membership: limited}
      - {node: n2, membership: limited}
  - name: r0
    pkey: 0x0011
    ipoib: true
    members:
      - {all: true, rail: rail0}
ipoib:
  - {rail: rail7, subnet: 10.7.0.0/24}
  - {rail: rail0, parent: ib5, subnet: 10.0.0.0/24}
  - {rail: rail1, subnet: 10.1.0.0/24, addresses: {n4: 10.1.0.44}}
  - {partition: r0, subnet: 10.2.0.0/24, parent: ib1}
  - {partition: r0, rail: rail1, subnet: 10.3.0.0/24}
"""
    text = rail_spec(2, parents=False, tail=tail).replace("['mlx5_0:1']}", "['mlx5_0:1'], ipoib_parent: ib0}")
    assert problems(text) == [
        "s.yaml:36:27: partitions[0].members[0].rail: unknown rail 'rail9' (did you mean 'rail1'?): mpi.rails defines rail0, rail1",
        "s.yaml:37:26: partitions[0].members[1].rail: node n4 has no port of rail rail1 (mlx5_1:1); its HCA ports: mlx5_0:1",
        "s.yaml:38:28: partitions[0].members[2].rail: no node of group odd has a port of rail rail1 (mlx5_1:1)",
        "s.yaml:40:45: partitions[0].members[4].membership: node n2 with rail rail0 is listed twice in partition r1 with different memberships: limited here, full at partitions[0].members[3] (list it once)",
        "s.yaml:48:12: ipoib[0].rail: unknown rail 'rail7' (did you mean 'rail1'?): mpi.rails defines rail0, rail1",
        "s.yaml:49:27: ipoib[1].parent: parent and rail together: remove parent, the interface sits on rail rail0's ipoib_parent ib0 (mpi.rails[0].ipoib_parent)",
        "s.yaml:50:12: ipoib[2].rail: rail rail1 has no ipoib_parent: set mpi.rails[1].ipoib_parent to the IPoIB link of its port on the nodes (e.g. ib3 or ibp26s0)",
        "s.yaml:50:56: ipoib[2].addresses.n4: n4 has no port of rail rail1 (mlx5_1:1): only the nodes that have it get this interface",
        "s.yaml:51:17: ipoib[3].partition: partition r0 has only the ports of rail rail0, and parent ib1 is no such rail's ipoib_parent: give the interface rail: rail0 (one entry per rail)",
        "s.yaml:52:27: ipoib[4].rail: no member of partition r0 has a port of rail rail1 (mlx5_1:1) in it: the interface is on no node",
        "s.yaml:52:27: ipoib[4].rail: rail rail1 has no ipoib_parent: set mpi.rails[1].ipoib_parent to the IPoIB link of its port on the nodes (e.g. ib3 or ibp26s0)",
    ]


def test_a_rail_member_without_any_rails_defined_says_so() -> None:
    text = rail_spec(2, tail="partitions:\n  - {name: p, pkey: 0x10, members: [{all: true, rail: rail1}]}\n")
    text = re.sub(r"mpi:\n  rails:\n(    - .*\n)+", "", text)  # no mpi section
    assert problems(text) == [
        "s.yaml:28:55: partitions[0].members[0].rail: unknown rail 'rail1': mpi.rails defines no rail (add it there with its DEVICE:PORT entries)"
    ]


def test_two_rails_on_one_ipoib_link_are_a_located_problem() -> None:
    text = rail_spec(2).replace("ipoib_parent: ib1", "ipoib_parent: ib0")
    assert problems(text) == [
        "s.yaml:30:58: mpi.rails[1].ipoib_parent: rail rail1 has the same ipoib_parent ib0 as rail rail0 (mpi.rails[0]): each rail has its own port and IPoIB link"
    ]


def test_a_rail_member_is_a_structural_field_next_to_its_selector() -> None:
    # rail alone selects no node: the member still needs exactly one of node, group or all
    text = rail_spec(2, tail="partitions:\n  - {name: p, pkey: 0x10, members: [{rail: rail1}]}\n")
    assert problems(text) == [
        "s.yaml:32:37: partitions[0].members[0]: a member names exactly one of node, group or all: true"
    ]


def test_a_rail_interfaces_pool_needs_room_only_for_the_nodes_that_have_the_rails_port() -> None:
    # 4 of the 5 nodes have rail 1's port: 10.9.0.1 .. 10.9.0.4 of a /29 (6 hosts, pool from .3) is room for 4
    ipoib = "ipoib:\n  - {rail: rail1, subnet: 10.9.0.0/29, pool_start: 10.9.0.3}\n"
    load_spec_text(rail_spec(2, tail=ipoib), "s.yaml")  # validates: n4 needs no address
    one_less = "ipoib:\n  - {rail: rail1, subnet: 10.9.0.0/29, pool_start: 10.9.0.4}\n"
    with pytest.raises(SpecError) as exc:
        load_spec_text(rail_spec(2, tail=one_less), "s.yaml")
    assert "ipoib[0].subnet: 4 nodes need an address but 10.9.0.0/29 has only 3 from 10.9.0.4" in str(exc.value)
