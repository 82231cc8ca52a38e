"""Rail-restricted partition members under the real OpenSM 3.3.23 on ibsim: the rendered partitions.conf
parses (a parse error would make OpenSM fall back to "Default=0x7fff : ALL=full" silently), and each HCA port
holds the PKeys of exactly the rails it is on, read back with smpquery and compared with what the test
derives from the spec itself (not with render's own expectation).

The fabric: 5 nodes with 2 HCAs each (mlx5_R is rail R), n4 without a rail-1 HCA, all on one leaf."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibprov.clusterspec import load_spec_text
from ibprov.identity.guids import fmt_guid, synthetic_guid
from ibprov.probes import ibnetdiscover, smpquery
from ibprov.twin.bringup import TwinRun
from ibprov.twin.prove import prove

pytestmark = pytest.mark.sim

NODES = ["n1", "n2", "n3", "n4", "n5"]
SPEC = """\
version: 1
cluster: {name: railparts}
nodes:
  - {name: n1, hcas: [{device: mlx5_0}, {device: mlx5_1}]}
  - {name: n2, hcas: [{device: mlx5_0}, {device: mlx5_1}]}
  - {name: n3, hcas: [{device: mlx5_0}, {device: mlx5_1}]}
  - {name: n4, groups: [odd], hcas: [{device: mlx5_0}]}
  - {name: n5, hcas: [{device: mlx5_0}, {device: mlx5_1}]}
switches:
  - {name: leaf01, role: leaf, ports: 9}
fabric:
  speed: HDR
  links:
    - leaf01:1 <-> n1/mlx5_0:1
    - leaf01:2 <-> n1/mlx5_1:1
    - leaf01:3 <-> n2/mlx5_0:1
    - leaf01:4 <-> n2/mlx5_1:1
    - leaf01:5 <-> n3/mlx5_0:1
    - leaf01:6 <-> n3/mlx5_1:1
    - leaf01:7 <-> n4/mlx5_0:1
    - leaf01:8 <-> n5/mlx5_0:1
    - leaf01:9 <-> n5/mlx5_1:1
subnet_manager:
  instances:
    - {node: n1, priority: 15}
mpi:
  rails:
    - {name: rail0, devices: ['mlx5_0:1'], ipoib_parent: ib0}
    - {name: rail1, devices: ['mlx5_1:1'], ipoib_parent: ib1}
partitions:
  - name: rail1
    pkey: 0x0011
    ipoib: true
    defmember: full
    members:
      - {all: true, rail: rail1}
  - name: mix
    pkey: 0x0020
    members:
      - {all: true, membership: full}
      - {all: true, rail: rail0, membership: limited}
      - {node: n3, rail: rail0, membership: full}
      - {node: n3, membership: limited}
"""


def planned_here() -> dict[str, set[int]]:
    """Port GUID -> its PKey table, from the spec above by hand: Default full everywhere; rail1 (full) on every
    rail-1 port; mix: full on rail-1 ports, limited on rail-0 ports, except n3's (node+rail full, node limited)."""
    out: dict[str, set[int]] = {}
    for node in NODES:
        for rail in (0, 1):
            if node == "n4" and rail == 1:
                continue
            keys = {0xFFFF}
            if rail == 1:
                keys.add(0x8011)
            full = rail == 0 if node == "n3" else rail == 1
            keys.add(0x8020 if full else 0x0020)
            out[fmt_guid(synthetic_guid("railparts", "hca", node, f"mlx5_{rail}") + 1)] = keys
    return out


def test_rail_partitions_parse_and_every_port_holds_the_pkeys_of_its_rails(tmp_path: Path) -> None:
    loaded = load_spec_text(SPEC, "railparts.yaml")
    read: dict[str, set[int]] = {}

    def read_pkeys(run: TwinRun, host: str) -> None:
        fabric = ibnetdiscover.parse(run.sim.run(["ibnetdiscover"], host).stdout)
        for node in fabric.nodes:
            if node.type != "CA":
                continue
            for port in node.ports:
                assert port.guid is not None
                assert port.lid is not None
                out = run.sim.run(["smpquery", "pkeys", str(port.lid), str(port.number)], host)
                read[fmt_guid(port.guid)] = set(smpquery.parse_pkeys(out.stdout).pkeys) - {0}

    result = prove(loaded, tmp_path, while_up=read_pkeys)
    # prove reads the OpenSM log: no "PARSE ERROR", no fall-back to the default partition, no ERR line
    assert result.problems == []
    assert "PKey tables: 9 of 9 ports exactly as planned" in result.lines
    assert read == planned_here()
    conf = (tmp_path / "opensm" / "partitions.conf").read_text()
    # Default alone says ALL: the rail members are listed port by port
    assert [line for line in conf.splitlines() if "ALL=" in line and not line.startswith("#")] == ["    ALL=full ;"]
