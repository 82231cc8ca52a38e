"""Free text that validates reaches each rendered file as exactly one value on exactly one line."""

from __future__ import annotations

import re

from ibprov.clusterspec import load_spec_text
from ibprov.render import render_files

DESC = "rack 3 (A/B), slot=7; it's ok: ~|"
USE = "MPI: ranks 0-7, SL=1; don't \\ mind"
USE_YAML = USE.replace("\\", "\\\\")
SPEC = f"""\
version: 1
cluster: {{name: t}}
nodes:
  - {{name: a, description: "{DESC}", hcas: [{{device: mlx5_0, node_guid: 0x0c42a10300000001}}]}}
  - {{name: b, hcas: [{{device: mlx5_0, node_guid: 0x0c42a10300000002}}]}}
switches: [{{name: leaf01, role: leaf, ports: 4, description: "Quantum (row 2)", node_guid: 0x0c42a103000000ff}}]
fabric: {{speed: HDR, links: ['leaf01:1 <-> a/mlx5_0:1', 'leaf01:2 <-> b/mlx5_0:1']}}
subnet_manager: {{instances: [{{node: a}}]}}
qos:
  enabled: true
  levels: [{{name: mpi, sl: 1, use: "{USE_YAML}"}}]
  match_rules: [{{qos_level: mpi, qos_class: [1], use: "{USE_YAML}"}}]
"""


def test_each_name_map_line_names_its_own_node() -> None:
    files = render_files(load_spec_text(SPEC), synthetic_guids=True).files
    lines = [line for line in files["opensm/node-name-map"].splitlines() if line and not line.startswith("#")]
    assert lines == [
        f'0x0c42a10300000001 "{DESC}"',
        '0x0c42a10300000002 "b mlx5_0"',
        '0x0c42a103000000ff "Quantum (row 2)"',
    ]
    for line in lines:  # the diags split the name on '"' and '#': the whole name survives
        assert re.fullmatch(r'0x[0-9a-f]{16} "[^"#]*"', line)


def test_a_use_text_stays_on_its_line_of_the_qos_policy() -> None:
    policy = render_files(load_spec_text(SPEC), synthetic_guids=True).files["opensm/qos-policy.conf"]
    assert policy.count(f"use: {USE}\n") == 2
    assert "#" not in policy.split("qos-levels", 1)[1]


def test_descriptions_stay_inside_their_quotes_in_the_topology_and_twin_files() -> None:
    files = render_files(load_spec_text(SPEC), synthetic_guids=True).files
    for name in ("fabric/topology.ibnd", "fabric/twin.net"):
        assert sum(f'"{DESC}"' in line for line in files[name].splitlines()) >= 1
