"""The subnet managers in the skeleton: found on a live fabric (IsSM bit in the fabric cache, then
``sminfo <lid>``), written as subnet_manager.instances marked REVIEW; the placeholder when none is found
or nothing live can be asked.

The fabric: leaf01 (8 ports, LID 1) with node01 mlx5_0 (port 1, LID 2), sm01 mlx5_0 (port 2, LID 3)
and sm02 mlx5_0 (port 3, LID 4).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.clusterspec import load_spec, load_spec_text
from ibprov.discover import FoundSm, SmSurvey, build_skeleton, found_from_text, survey_sms
from ibprov.probes.cache import IS_SM, MAGIC, decode
from ibprov.probes.runner import CommandResult

SW, NODE01, SM01, SM02 = 0x0002C90300000100, 0x0002C90300000200, 0x0002C90300000300, 0x0002C90300000400
LIDS = {NODE01: 2, SM01: 3, SM02: 4}


def _block(guid: int, name: str, port: int) -> str:
    return (
        f"caguid=0x{guid:x}\n"
        f'Ca\t1 "H-{guid:016x}"\t\t# "{name} mlx5_0"\n'
        f'[1]({guid + 1:x}) \t"S-{SW:016x}"[{port}]\t\t# lid {LIDS[guid]} lmc 0 "leaf01" lid 1 4xHDR\n'
    )


IBNETDISCOVER = (
    "#\n# Initiated from node 0002c90300000200 port 0002c90300000201\n\n"
    f"switchguid=0x{SW:x}({SW:x})\n"
    f'Switch\t8 "S-{SW:016x}"\t\t# "leaf01" enhanced port 0 lid 1 lmc 0\n'
    + "".join(
        f'[{port}]\t"H-{guid:016x}"[1]({guid + 1:x}) \t\t# "{name} mlx5_0" lid {LIDS[guid]} 4xHDR\n'
        for port, guid, name in ((1, NODE01, "node01"), (2, SM01, "sm01"), (3, SM02, "sm02"))
    )
    + "\n"
    + "\n".join(_block(g, n, p) for p, g, n in ((1, NODE01, "node01"), (2, SM01, "sm01"), (3, SM02, "sm02")))
)


def cache_file(sm_ports: Sequence[int] = (SM01 + 1, SM02 + 1), switch_sm: bool = False) -> bytes:
    """The fabric cache ibnetdiscover --cache writes, with the IsSM bit on these port GUIDs (and on the
    switch's port 0 with ``switch_sm``)."""
    cas = [(NODE01, "node01"), (SM01, "sm01"), (SM02, "sm02")]
    nodes = [(SW, 2, 8, "leaf01", [(SW, n) for n in range(4)])]
    nodes += [(guid, 1, 1, f"{name} mlx5_0", [(guid + 1, 1)]) for guid, name in cas]
    ports = [(SW, n, 1, SW, IS_SM if switch_sm and n == 0 else 0) for n in range(4)]
    ports += [(g + 1, 1, LIDS[g], g, 0x50C048 | (IS_SM if g + 1 in sm_ports else 0)) for g, _n in cas]
    data = struct.pack("<IIIIQI", MAGIC, 1, len(nodes), len(ports), NODE01, 1)
    for guid, kind, count, desc, stored in nodes:
        data += struct.pack("<HBB64sQBB64s64sB", 0, 0, 0, b"", guid, kind, count, bytes(64), desc.encode(), len(stored))
        data += b"".join(struct.pack("<QB", g, p) for g, p in stored)
    for guid, number, lid, owner, cap in ports:
        info = bytes(20) + cap.to_bytes(4, "big") + bytes(40)
        data += struct.pack("<QBBHB64sQBQB", guid, number, 0, lid, 0, info, owner, 0, 0, 0)
    return data


def sminfo(lid: int, guid: int, priority: int, state: int) -> str:
    name = {0: "SMINFO_NOTACT", 1: "SMINFO_DISCOVER", 2: "SMINFO_STANDBY", 3: "SMINFO_MASTER"}[state]
    return f"sminfo: sm lid {lid} sm guid 0x{guid:x}, activity count 7 priority {priority} state {state} {name}\n"


MASTER = sminfo(3, SM01 + 1, 14, 3)
STANDBY = sminfo(4, SM02 + 1, 3, 2)


class FakeRunner:
    """Answers ``sminfo [lid]`` from a table; anything else fails as sminfo does with no SM there."""

    where = "fake"

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.batches: list[tuple[list[tuple[str, ...]], bool]] = []

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        self.batches.append(([tuple(c) for c in commands], parallel))
        out = []
        for argv in commands:
            text = self.answers.get(" ".join(argv))
            failed = CommandResult(tuple(argv), 255, "", "ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid 4)")
            out.append(failed if text is None else CommandResult(tuple(argv), 0, text, ""))
        return out

    def close(self) -> None:
        pass


def survey(answers: dict[str, str], cache: bytes | None = None) -> tuple[SmSurvey, FakeRunner]:
    runner = FakeRunner(answers)
    found = found_from_text(IBNETDISCOVER)
    data = cache_file() if cache is None else cache
    return survey_sms(runner, found, decode(data) if data else None, "" if data else "no cache here"), runner


def sm_section(text: str) -> list[str]:
    return text[text.index("subnet_manager:\n") :].splitlines()


def instances(text: str) -> list[tuple[str, str | None, int, int]]:
    return [(i.node, i.hca, i.port, i.priority) for i in load_spec_text(text).spec.subnet_manager.instances]


def test_every_port_with_the_issm_bit_is_asked_with_sminfo_and_the_master_with_plain_sminfo() -> None:
    found, runner = survey({"sminfo": MASTER, "sminfo 3": MASTER, "sminfo 4": STANDBY})
    assert runner.batches == [([("sminfo",), ("sminfo", "3"), ("sminfo", "4")], True)]
    assert found.sms == (
        FoundSm(SM01, 1, SM01 + 1, 3, 14, "MASTER"),
        FoundSm(SM02, 1, SM02 + 1, 4, 3, "STANDBY"),
    )
    assert found.asked
    assert found.notes == ()


def test_the_skeleton_records_the_sms_found_with_their_port_priority_and_state_marked_review() -> None:
    found, _runner = survey({"sminfo": MASTER, "sminfo 3": MASTER, "sminfo 4": STANDBY})
    skeleton = build_skeleton(found_from_text(IBNETDISCOVER), sms=found)
    assert sm_section(skeleton.text) == [
        "subnet_manager:",
        "  routing_engine: minhop   # REVIEW: OpenSM's routing engine is not visible on the fabric",
        "  instances:",
        "    - {node: sm01, hca: mlx5_0, port: 1, priority: 14}   # REVIEW: found MASTER",
        "    - {node: sm02, hca: mlx5_0, port: 1, priority: 3}   # REVIEW: found STANDBY",
    ]
    assert instances(skeleton.text) == [("sm01", "mlx5_0", 1, 14), ("sm02", "mlx5_0", 1, 3)]
    assert (
        skeleton.sm_status
        == "subnet managers found: sm01/mlx5_0:1 MASTER (priority 14), sm02/mlx5_0:1 STANDBY (priority 3)"
    )
    header = skeleton.text.split("version: 1")[0]
    assert "#   - subnet_manager: the subnet managers found running (port, priority; state in a comment)" in header
    assert "PLACEHOLDER" not in skeleton.text


def test_an_issm_port_that_does_not_answer_is_a_note_not_an_instance() -> None:
    found, _runner = survey({"sminfo": MASTER, "sminfo 3": MASTER})
    assert [sm.node_guid for sm in found.sms] == [SM01]
    assert found.notes == (
        f'port 1 of HCA "sm02 mlx5_0" 0x{SM02:016x} has the IsSM bit but did not answer: '
        "sminfo exited 255: ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid 4)",
    )
    skeleton = build_skeleton(found_from_text(IBNETDISCOVER), sms=found)
    assert instances(skeleton.text) == [("sm01", "mlx5_0", 1, 14)]
    assert f"# note: {found.notes[0]}" in skeleton.text


def test_without_a_cache_the_master_sminfo_names_is_found_by_its_lid() -> None:
    found, runner = survey({"sminfo": MASTER}, cache=b"")
    assert runner.batches == [([("sminfo",)], True)]
    assert found.sms == (FoundSm(SM01, 1, SM01 + 1, 3, 14, "MASTER"),)
    assert found.notes == (
        "the fabric cache could not be read (no cache here): only the master SM (plain sminfo) was looked for; "
        "add any standby by hand",
    )


def test_a_master_without_the_issm_bit_is_still_found() -> None:
    found, _runner = survey({"sminfo": MASTER, "sminfo 4": STANDBY}, cache=cache_file(sm_ports=(SM02 + 1,)))
    assert [(sm.node_guid, sm.state) for sm in found.sms] == [(SM01, "MASTER"), (SM02, "STANDBY")]


def test_no_sm_answering_keeps_the_placeholder_and_says_none_was_found() -> None:
    found, _runner = survey({}, cache=cache_file(sm_ports=()))
    assert found.sms == ()
    assert found.notes == (
        "no subnet manager answered (sminfo: sminfo exited 255: ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid 4))",
    )
    skeleton = build_skeleton(found_from_text(IBNETDISCOVER), sms=found)
    why = "no subnet manager was found running on the fabric"
    assert sm_section(skeleton.text)[-1] == "    - {node: node01, priority: 15}   # REVIEW: a placeholder"
    assert f"# REVIEW: a placeholder so that the spec validates ({why})." in skeleton.text
    assert skeleton.sm_status == f"subnet_manager is a placeholder: {why}"
    assert instances(skeleton.text) == [("node01", None, 1, 15)]


def test_from_a_saved_output_nothing_live_is_asked_and_the_placeholder_says_so() -> None:
    skeleton = build_skeleton(found_from_text(IBNETDISCOVER))  # as `--from FILE` builds it
    why = "the fabric was read from a saved ibnetdiscover output, so no SM could be asked"
    assert f"# REVIEW: a placeholder so that the spec validates ({why})." in skeleton.text
    assert f"#   - subnet_manager: a PLACEHOLDER ({why}): one instance on the first node" in skeleton.text
    assert skeleton.sm_status == f"subnet_manager is a placeholder: {why}"
    assert skeleton.sms == []


def test_sms_sharing_the_highest_priority_keep_the_master_on_top_and_the_spec_valid() -> None:
    found, _runner = survey({"sminfo": MASTER, "sminfo 3": MASTER, "sminfo 4": sminfo(4, SM02 + 1, 14, 2)})
    skeleton = build_skeleton(found_from_text(IBNETDISCOVER), sms=found)
    assert instances(skeleton.text) == [("sm01", "mlx5_0", 1, 14), ("sm02", "mlx5_0", 1, 13)]
    assert sm_section(skeleton.text)[-1] == (
        "    - {node: sm02, hca: mlx5_0, port: 1, priority: 13}   "
        "# REVIEW: found STANDBY with priority 14, written as 13 (see the notes at the top)"
    )
    assert (
        "2 subnet managers run with the same highest priority 14; a spec needs exactly one highest priority, "
        "so the MASTER one keeps it and the others are written with 13: set sm_priority on the fabric to match "
        "(or fix the spec)"
    ) in skeleton.notes


def test_an_sm_on_a_switch_cannot_go_into_the_spec_and_is_a_note() -> None:
    cache = cache_file(sm_ports=(SM02 + 1,), switch_sm=True)
    found, _runner = survey(
        {"sminfo": sminfo(1, SW, 15, 3), "sminfo 1": sminfo(1, SW, 15, 3), "sminfo 4": STANDBY}, cache
    )
    assert [(sm.node_guid, sm.port, sm.state) for sm in found.sms] == [(SW, 0, "MASTER"), (SM02, 1, "STANDBY")]
    skeleton = build_skeleton(found_from_text(IBNETDISCOVER), sms=found)
    assert instances(skeleton.text) == [("sm02", "mlx5_0", 1, 3)]
    assert skeleton.notes == [
        f'a subnet manager runs on port 0 of switch "leaf01" 0x{SW:016x} (MASTER priority 15, lid 1, port GUID '
        f"0x{SW:016x}): a spec places SMs on node HCAs only, so verify will report it (sm.rogue) until it is "
        "stopped or moved to a node"
    ]


def _tool(bin_dir: Path, name: str, body: str) -> None:
    tool = bin_dir / name
    tool.write_text(f"#!/bin/sh\n{body}\n")
    tool.chmod(0o755)


def test_discover_on_a_live_fabric_asks_the_sms_the_way_it_runs_ibnetdiscover(tmp_path: Path) -> None:
    (bin_dir := tmp_path / "bin").mkdir()
    (tmp_path / "out.txt").write_text(IBNETDISCOVER)
    (tmp_path / "cache").write_bytes(cache_file())
    # the fake tools answer only in the environment discover was started with (as on the twin)
    _tool(
        bin_dir,
        "ibnetdiscover",
        f'[ "$SIM_HOST" = node01 ] || exit 9\ncp {tmp_path}/cache "$2"\ncat {tmp_path}/out.txt',
    )
    _tool(
        bin_dir,
        "sminfo",
        '[ "$SIM_HOST" = node01 ] || exit 9\n'
        f'case "$1" in ""|3) echo "{MASTER.strip()}";; 4) echo "{STANDBY.strip()}";; *) exit 1;; esac',
    )
    spec = tmp_path / "live.yaml"
    result = CliRunner().invoke(
        cli, ["discover", "-o", str(spec)], env={"PATH": f"{bin_dir}:/usr/bin:/bin", "SIM_HOST": "node01"}
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "subnet managers found: sm01/mlx5_0:1 MASTER (priority 14), sm02/mlx5_0:1 STANDBY (priority 3)"
    )
    assert instances(spec.read_text()) == [("sm01", "mlx5_0", 1, 14), ("sm02", "mlx5_0", 1, 3)]


def test_discover_from_a_file_says_the_sm_is_a_placeholder(tmp_path: Path) -> None:
    saved = tmp_path / "saved.txt"
    saved.write_text(IBNETDISCOVER)
    spec = tmp_path / "new.yaml"
    result = CliRunner().invoke(cli, ["discover", "-o", str(spec), "--from", str(saved)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "subnet_manager is a placeholder: the fabric was read from a saved ibnetdiscover output, so no SM "
        "could be asked"
    )
    assert [(i.node, i.priority) for i in load_spec(spec).spec.subnet_manager.instances] == [("node01", 15)]
