"""roles/ib_slurm_topology: the validation filter, and the two templates rendered with plain Jinja2 (as ibprov renders
role templates) for tree and block."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from role_code import ROLES, load

from ibprov.render.templates import render_role_template

f = load("ib_slurm_topology", "filter_plugins/ib_slurm_topology.py", "ib_slurm_topology_filters")
ROLE = ROLES / "ib_slurm_topology"
HEADER = "#\n# Ansible managed\n#\n"

TREE = [
    {"name": "leaf1", "nodes": "node[01-03]"},
    {"name": "leaf2", "nodes": "node[04-06]", "switches": None},
    {"name": "top", "switches": "leaf[1-2]"},
]
BLOCKS = [{"name": "b1", "nodes": "gpu[001-016]"}, {"name": "b2", "nodes": "gpu[017-032]"}]


def role_defaults() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
    return data


def variables(**over: Any) -> dict[str, Any]:
    v = {**role_defaults(), "ansible_managed": "Ansible managed"}
    v.update({f"ib_slurm_topology_{k}": val for k, val in over.items()})
    return v


def settings(**over: Any) -> dict[str, Any]:
    """The filter's input: the role's variables without the prefix."""
    base = {k.removeprefix("ib_slurm_topology_"): v for k, v in role_defaults().items()}
    base.update(over)
    return base


def render(kind: str, **over: Any) -> str:
    return render_role_template("ib_slurm_topology", f"topology.{kind}.j2", variables(**over))


def body(text: str) -> list[str]:
    """The lines after the header, without comments."""
    assert text.startswith(HEADER)
    return [line for line in text[len(HEADER) :].splitlines() if not line.startswith("#")]


def test_defaults_match_the_argument_specs() -> None:
    spec = yaml.safe_load((ROLE / "meta/argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    defaults = role_defaults()
    assert set(defaults) == set(spec)
    for name, option in spec.items():
        assert defaults[name] == option.get("default"), name


def test_tree_conf_lines() -> None:
    out = render("conf", switches=TREE)
    assert body(out) == [
        "SwitchName=leaf1 Nodes=node[01-03]",
        "SwitchName=leaf2 Nodes=node[04-06]",
        "SwitchName=top Switches=leaf[1-2]",
    ]


def test_a_switch_with_both_lists_names_switches_first() -> None:
    out = render("conf", switches=[{"name": "mid", "nodes": "n1", "switches": "leaf[1-2]"}])
    assert body(out) == ["SwitchName=mid Switches=leaf[1-2] Nodes=n1"]


def test_block_conf_lines() -> None:
    out = render("conf", plugin="block", blocks=BLOCKS, block_sizes=[16, 32])
    assert body(out) == ["BlockName=b1 Nodes=gpu[001-016]", "BlockName=b2 Nodes=gpu[017-032]", "BlockSizes=16,32"]


def test_block_conf_without_sizes_leaves_blocksizes_out() -> None:
    out = render("conf", plugin="block", blocks=BLOCKS)
    assert not any(line.startswith("BlockSizes") for line in body(out))


def test_tree_yaml_follows_the_man_page_schema() -> None:
    doc = yaml.safe_load(render("yaml", switches=TREE, name="fabric"))
    assert doc == [
        {
            "topology": "fabric",
            "cluster_default": True,
            "tree": {
                "switches": [
                    {"switch": "leaf1", "nodes": "node[01-03]"},
                    {"switch": "leaf2", "nodes": "node[04-06]"},
                    {"switch": "top", "children": "leaf[1-2]"},
                ]
            },
        }
    ]


def test_block_yaml_follows_the_man_page_schema() -> None:
    doc = yaml.safe_load(render("yaml", plugin="block", blocks=BLOCKS, block_sizes=[16, 32]))
    assert doc == [
        {
            "topology": "default",
            "cluster_default": True,
            "block": {
                "block_sizes": [16, 32],
                "blocks": [{"block": "b1", "nodes": "gpu[001-016]"}, {"block": "b2", "nodes": "gpu[017-032]"}],
            },
        }
    ]


def test_yaml_names_stay_strings() -> None:
    doc = yaml.safe_load(render("yaml", switches=[{"name": "1", "nodes": "yes"}], name="no"))
    assert doc[0]["topology"] == "no"
    assert doc[0]["tree"]["switches"] == [{"switch": "1", "nodes": "yes"}]


@pytest.mark.parametrize("kind", ["conf", "yaml"])
@pytest.mark.parametrize("plugin", ["tree", "block"])
def test_output_is_clean_and_deterministic(kind: str, plugin: str) -> None:
    over = {"plugin": plugin, "switches": TREE, "blocks": BLOCKS, "block_sizes": [16]}
    out = render(kind, **over)
    assert out == render(kind, **over)
    assert out.endswith("\n")
    assert not out.endswith("\n\n")
    assert all(line == line.rstrip() for line in out.splitlines())


@pytest.mark.parametrize("template", ["topology.conf.j2", "topology.yaml.j2"])
def test_templates_start_with_the_supported_header(template: str) -> None:
    lines = (ROLE / "templates" / template).read_text().splitlines()
    assert lines[0] == "#jinja2: trim_blocks:True, lstrip_blocks:True"
    assert lines[1] == "{{ ansible_managed | comment }}"


def test_valid_settings_have_no_problems() -> None:
    assert f.ib_slurm_topology_problems(settings(switches=TREE)) == []
    assert f.ib_slurm_topology_problems(settings(plugin="block", blocks=BLOCKS, block_sizes=[16, 32, 128])) == []
    assert f.ib_slurm_topology_problems(settings(plugin="block", blocks=BLOCKS)) == []


def test_tree_needs_switches_and_block_needs_blocks() -> None:
    assert f.ib_slurm_topology_problems(settings()) == [
        "plugin tree needs ib_slurm_topology_switches (at least one switch)"
    ]
    assert f.ib_slurm_topology_problems(settings(plugin="block", switches=TREE)) == [
        "plugin block needs ib_slurm_topology_blocks (at least one block)"
    ]


def test_names_are_unique_and_without_separators() -> None:
    problems = f.ib_slurm_topology_problems(
        settings(
            switches=[
                {"name": "leaf1", "nodes": "n1"},
                {"name": "leaf1", "nodes": "n2"},
                {"name": "leaf,3", "nodes": "n3"},
                {"name": "a" * 65, "nodes": "n4"},
                {"name": "top"},
            ]
        )
    )
    assert problems == [
        "switches[1].name 'leaf1' already used by switches[0]",
        "switches[2].name 'leaf,3': 1-64 characters without spaces, commas, '=', '#' or brackets",
        f"switches[3].name '{'a' * 65}': 1-64 characters without spaces, commas, '=', '#' or brackets",
        "switches[4] (top) has neither nodes nor switches",
    ]


def test_hostlists_without_spaces() -> None:
    problems = f.ib_slurm_topology_problems(settings(plugin="block", blocks=[{"name": "b1", "nodes": "n1 n2"}]))
    assert problems == ["blocks[0].nodes 'n1 n2' is not a Slurm hostlist (no spaces, quotes, '=' or '#')"]
    problems = f.ib_slurm_topology_problems(settings(plugin="block", blocks=[{"name": "b1"}]))
    assert problems == ["blocks[0].nodes is missing (a Slurm hostlist such as node[01-04])"]


@pytest.mark.parametrize(
    ("sizes", "problem"),
    [
        ([4, 12], "block_sizes[1] 12 is not a power-of-two multiple (2x, 4x, ...) of 4"),
        ([4, 4], "block_sizes[1] 4 is not a power-of-two multiple (2x, 4x, ...) of 4"),
        ([8, 4], "block_sizes[1] 4 is not a power-of-two multiple (2x, 4x, ...) of 8"),
        ([0], "block_sizes[0] 0 is not a positive integer"),
    ],
)
def test_block_sizes(sizes: list[int], problem: str) -> None:
    assert f.ib_slurm_topology_problems(settings(plugin="block", blocks=BLOCKS, block_sizes=sizes)) == [problem]


def test_yaml_topology_name_is_checked() -> None:
    assert f.ib_slurm_topology_problems(settings(file="yaml", switches=TREE, name="my topo")) == [
        "name 'my topo' (the topology's name in topology.yaml): 1-64 characters without spaces"
    ]


def test_role_lists_no_stray_files() -> None:
    """Every task file main.yml includes exists (no per-OS task files: the families differ only in vars/)."""
    main = (ROLE / "tasks/main.yml").read_text()
    for name in ("validate.yml", "check.yml", "configure.yml"):
        assert name in main
        assert (ROLE / "tasks" / name).is_file()
    assert {p.name for p in (ROLE / "vars").glob("*.yml")} == {"Debian.yml", "RedHat.yml", "main.yml"}
