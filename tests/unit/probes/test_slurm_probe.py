"""The Slurm readers on real output of Debian 12's Slurm 22.05.8 (tests/fixtures/slurm, each with its source
line): switch levels and hostlists, node states and reasons (with the characters reasons may hold), and the
lines that are no record kept as notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibprov.probes._text import ParseError
from ibprov.probes.slurm import (
    MARK,
    SEP,
    SlurmBlock,
    SlurmNode,
    SlurmSwitch,
    SlurmView,
    parse_blocks,
    parse_config,
    parse_sinfo,
    parse_topology,
    parse_view,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slurm"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_topology_records_give_levels_nodes_and_switches_with_hostlists_expanded() -> None:
    switches, notes = parse_topology(fixture("scontrol-show-topology-22.05.txt"))
    assert [(s.name, s.level) for s in switches.values()] == [
        ("leaf01", 0), ("leaf02", 0), ("leaf03", 0), ("spine01", 1), ("top", 2),
    ]  # fmt: skip
    assert switches["leaf01"].nodes == ("cn01", "cn02", "cn03")
    assert switches["leaf01"].switches == ()
    assert switches["spine01"].switches == ("leaf01", "leaf02")
    assert switches["top"].nodes == ("cn01", "cn02", "cn03", "cn04", "cn05", "gpu7")  # every node below
    assert notes == [f"scontrol show topology: {fixture('scontrol-show-topology-22.05.txt').splitlines()[0]}"]


def test_a_topology_line_that_is_no_record_is_a_note_and_a_bad_hostlist_an_error_with_the_line() -> None:
    switches, notes = parse_topology("scontrol: error: slurm_load_topo error: something\nSwitchName=a Level=0 Nodes=x")
    assert list(switches) == ["a"]
    assert notes == ["scontrol show topology: scontrol: error: slurm_load_topo error: something"]
    with pytest.raises(ParseError, match=r"line 1: bad hostlist 'n\[1-'"):
        parse_topology("SwitchName=a Level=0 Nodes=n[1-")


def test_sinfo_states_reasons_and_who_set_them() -> None:
    nodes, notes = parse_sinfo(fixture("sinfo-nodes-22.05.txt"))
    assert {n: (v.state, v.reason) for n, v in nodes.items()} == {
        "cn01": ("unknown", ""),
        "cn02": ("drained", "ibprov: link.state leaf01:2 <-> cn02/mlx5_0:1"),
        "cn03": ("drained", "ibprov: link.width leaf01:3 <-> cn03/mlx5_0:1 (+1)"),
        "cn04": ("drained", "bad DIMM, ticket 42|x"),  # a reason may hold '|' and ','
        "cn05": ("down*", "ibprov: node.rate cn05"),
        "gpu7": ("unknown", ""),
    }
    assert nodes["cn02"].drained
    assert not nodes["cn02"].down
    assert nodes["cn05"].down
    assert nodes["cn04"].user == "root"
    assert nodes["cn01"].user == ""  # "Unknown"
    assert len(notes) == 1  # the source line
    assert notes[0].startswith("sinfo: # source:")


def test_a_node_in_two_partitions_is_one_node() -> None:
    line = SEP.join(["cn01", "idle", "Unknown", "Unknown", "none"])
    nodes, _ = parse_sinfo(f"{line}\n{line}\n")
    assert list(nodes) == ["cn01"]


def test_config_lines_give_the_plugin() -> None:
    assert parse_config(fixture("scontrol-show-config-22.05.txt"))["TopologyPlugin"] == "topology/tree"


def _probe(**sections: str) -> str:
    return "".join(f"{MARK}{name}\n{text}\n" for name, text in sections.items())


def test_the_view_of_a_whole_probe_run() -> None:
    view = parse_view(
        _probe(
            version="slurm-wlm 22.05.8",
            config=fixture("scontrol-show-config-22.05.txt"),
            topology=fixture("scontrol-show-topology-22.05.txt"),
            nodes=fixture("sinfo-nodes-22.05.txt"),
        )
    )
    assert view.error is None
    assert view.version == "slurm-wlm 22.05.8"
    assert view.plugin == "topology/tree"
    assert set(view.switches) == {"leaf01", "leaf02", "leaf03", "spine01", "top"}
    assert len(view.nodes) == 6


def test_a_controller_without_slurm_or_without_slurmctld_is_an_error_saying_which() -> None:
    missing = parse_view(
        _probe(version="bash: line 1: sinfo: command not found", nodes="bash: sinfo: command not found")
    )
    assert missing.error is not None
    assert "not on the controller" in missing.error
    down = parse_view(
        _probe(
            version="slurm-wlm 22.05.8",
            nodes="slurm_load_partitions: Unable to contact slurm controller (connect failure)",
        )
    )
    assert down.error == "sinfo failed: slurm_load_partitions: Unable to contact slurm controller (connect failure)"


# ------------------------------------------------------------- Debian 13's Slurm 24.11.5 (trixie), topology/block
def test_slurm_24_11s_block_records_give_base_and_aggregated_blocks_with_their_sizes() -> None:
    text = fixture("scontrol-show-topology-block-24.11.txt")
    blocks = parse_blocks(text)
    assert [(b.name, b.index, b.size, b.aggregated) for b in blocks.values()] == [
        ("b1", 0, 2, False), ("b2", 1, 2, False), ("b3", 2, 2, False), ("b[1-2]", 3, 4, True),
    ]  # fmt: skip
    assert blocks["b2"].nodes == ("node03", "node04")
    assert blocks["b[1-2]"].nodes == ("node01", "node02", "node03", "node04")
    switches, notes = parse_topology(text)
    assert switches == {}
    assert notes == [f"scontrol show topology: {text.splitlines()[0]}"], "block records are records, not notes"


def test_slurm_24_11s_tree_records_read_as_22_05s() -> None:
    switches, _ = parse_topology(fixture("scontrol-show-topology-24.11.txt"))
    assert [(s.name, s.level, s.switches) for s in switches.values()] == [
        ("leaf1", 0, ()), ("leaf2", 0, ()), ("top", 1, ("leaf1", "leaf2")),
    ]  # fmt: skip
    assert parse_blocks(fixture("scontrol-show-topology-24.11.txt")) == {}


def test_slurm_24_11s_sinfo_marks_unresponsive_nodes_with_a_star_and_names_root_for_unknown_ones() -> None:
    nodes, _ = parse_sinfo(fixture("sinfo-nodes-24.11.txt"))
    assert {n: (v.state, v.drained, v.down) for n, v in nodes.items()} == {
        "node01": ("drained*", True, False),
        "node02": ("drained*", True, False),
        **{f"node0{i}": ("unknown*", False, True) for i in range(3, 7)},
    }
    assert nodes["node01"].reason == "ibprov: link.state leaf01:1 <-> node01/mlx5_0:1"
    assert nodes["node02"].reason == "RMA 4711"


def test_a_bad_block_size_is_an_error_with_its_line() -> None:
    with pytest.raises(ParseError, match="line 1: BlockIndex or BlockSize is not a number"):
        parse_blocks("BlockName=b1 BlockIndex=0 Nodes=n1 BlockSize=x")


def test_the_view_of_a_block_controller_on_slurm_24_11() -> None:
    view = parse_view(
        _probe(
            version=fixture("sinfo-version-24.11.txt").splitlines()[1],
            config=fixture("scontrol-show-config-block-24.11.txt"),
            topology=fixture("scontrol-show-topology-block-24.11.txt"),
            nodes=fixture("sinfo-nodes-24.11.txt"),
        )
    )
    assert (view.error, view.plugin, view.version) == (None, "topology/block", "slurm-wlm 24.11.5")
    assert set(view.blocks) == {"b1", "b2", "b3", "b[1-2]"}
    assert len(view.nodes) == 6


# ------------------------------------------------------------------------------- records as sparse as Slurm allows
def test_records_without_their_optional_words_and_blank_lines_between_them() -> None:
    text = "SwitchName=a\n\n   \nSwitchName=b Level=1 Switches=a\n\nBlockName=b1\n\nBlockName=b2 Nodes=n[1-2]\n"
    switches, notes = parse_topology(text)
    assert switches == {
        "a": SlurmSwitch("a", 0, (), ()),
        "b": SlurmSwitch("b", 1, (), ("a",)),
    }
    assert notes == []
    assert parse_blocks(text) == {
        "b1": SlurmBlock("b1", 0, (), None),
        "b2": SlurmBlock("b2", 0, ("n1", "n2"), None),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "SwitchName=a\nSwitchName=b Level=x",
            "scontrol show topology: line 2: Level is not a number: 'SwitchName=b Level=x'",
        ),
        (
            "SwitchName=a\nSwitchName=b Level=1 Switches=s[1-",
            "scontrol show topology: line 2: bad hostlist 's[1-': '[' without ']' in hostlist 's[1-': "
            "'SwitchName=b Level=1 Switches=s[1-'",
        ),
    ],
)
def test_a_topology_record_that_cannot_be_read_is_an_error_naming_the_tool_the_line_and_why(
    text: str, message: str
) -> None:
    with pytest.raises(ParseError) as caught:
        parse_topology(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("BlockName=b1 BlockIndex=x Nodes=n1", "BlockIndex or BlockSize is not a number"),
        ("AggregatedBlock=b[1-2] BlockIndex=3 Nodes=n1 BlockSize=4x", "BlockIndex or BlockSize is not a number"),
        ("BlockName=b1 BlockIndex=0 Nodes=n[1-", "bad hostlist 'n[1-': '[' without ']' in hostlist 'n[1-'"),
    ],
)
def test_a_block_record_that_cannot_be_read_is_an_error_naming_the_tool_the_line_and_why(
    line: str, message: str
) -> None:
    with pytest.raises(ParseError) as caught:
        parse_blocks(f"BlockName=b0 Nodes=n0\n{line}")
    assert str(caught.value) == f"scontrol show topology: line 2: {message}: {line!r}"


def test_sinfo_lines_read_past_blank_lines_and_give_reasons_users_and_times_as_they_are() -> None:
    text = "\n".join(
        [
            SEP.join(["cn01", "IDLE", "(null)", "None", "none"]),
            "",
            SEP.join(["cn02", "drained", "root", "2026-12-07T17:47:24", "ibprov: x"]),
            "sinfo: warning: something",
            SEP.join(["", "idle", "", "", ""]),  # no node name: a note
        ]
    )
    nodes, notes = parse_sinfo(text)
    assert nodes == {
        "cn01": SlurmNode("cn01", "idle", "", "", ""),
        "cn02": SlurmNode("cn02", "drained", "ibprov: x", "root", "2026-12-07T17:47:24"),
    }
    assert notes == ["sinfo: sinfo: warning: something", "sinfo: idle"]  # the separators are whitespace to strip


# --------------------------------------------------------------------------------------- the probe run as a whole
def test_an_empty_probe_run_says_no_shell_and_a_missing_version_says_which() -> None:
    assert parse_view("") == SlurmView(error="the Slurm probe printed nothing (no shell on the controller?)")
    assert parse_view(_probe(nodes="x")) == SlurmView(
        error="Slurm's commands are not on the controller (sinfo printed nothing)"
    )


def test_a_failed_sinfo_keeps_the_version_that_was_read() -> None:
    view = parse_view(_probe(version="slurm 24.11.5", nodes="sinfo: error: Invalid user"))
    assert view == SlurmView(version="slurm 24.11.5", error="sinfo failed: sinfo: error: Invalid user")


def test_a_probe_without_topology_or_config_reads_no_switch_no_block_and_no_plugin() -> None:
    view = parse_view(_probe(version="slurm 24.11.5", nodes=SEP.join(["cn01", "idle", "", "", "none"])))
    assert view.error is None
    assert (view.version, view.plugin, dict(view.switches), dict(view.blocks)) == ("24.11.5", "", {}, {})
    assert list(view.nodes) == ["cn01"]
    none = parse_view(
        _probe(
            version="slurm 24.11.5",
            config="TopologyPlugin = (null)",
            nodes=SEP.join(["cn01", "idle", "Unknown", "Unknown", "none"]),
        )
    )
    assert none.plugin == "topology/none"
