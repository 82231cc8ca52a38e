"""The switch's CLI lines, pure: rendering and reading back are exact inverses (for random states and odd ones),
``show running-config`` text reads into the same model, and the difference between two states is the minimal
set of commands, each kind of change with exactly its own."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibprov.smbackend.actions import Action
from ibprov.smbackend.state import BackendState, PartitionState, SmState
from ibprov.smbackend.switch.commands import (
    ALLOW_BOTH,
    CARRIED,
    SAVE,
    SM_PRIORITY,
    allows_both_pkeys,
    diff_commands,
    parse_commands,
    render_commands,
)

A, B, C = 0x0C42A10300B7E014, 0x0C42A10300B7E028, 0x0C42A10300B7E03C


SM_ON = SmState(True, 15)


def state(*parts: PartitionState, sm: SmState | None = SM_ON) -> BackendState:
    return BackendState(sm, {p.pkey: p for p in parts})


def part(pkey: int, name: str, *members: tuple[int, str], ipoib: bool = True) -> PartitionState:
    return PartitionState(pkey, name, ipoib, frozenset(members))  # type: ignore[arg-type]


COMPUTE = part(0x10, "compute", (A, "full"), (B, "full"))
STORAGE = part(0x20, "storage", (A, "limited"), (C, "full"), ipoib=False)


def texts(actions: list[Action]) -> list[str]:
    return [a.text for a in actions]


# --- render and read back --------------------------------------------------------------------------------

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)
members = st.frozensets(
    st.tuples(st.integers(0, 2**64 - 1), st.sampled_from(["full", "limited", "both"])),
    max_size=6,
).map(lambda ms: frozenset({g: m for g, m in sorted(ms)}.items()))  # one membership per GUID


@st.composite
def states(draw: st.DrawFn) -> BackendState:
    pkeys = draw(st.lists(st.integers(0x0001, 0x7FFE), unique=True, max_size=5))
    labels = draw(st.lists(names, unique=True, min_size=len(pkeys), max_size=len(pkeys)))
    parts = {
        pk: PartitionState(
            pk,
            label,
            draw(st.booleans()),
            draw(members),
            mtu=draw(st.none() | st.sampled_from([4, 5])),
            rate=draw(st.none() | st.sampled_from([100.0, 200.0])),
            sl=draw(st.none() | st.integers(0, 15)),
        )
        for pk, label in zip(pkeys, labels, strict=True)
    }
    sm = draw(st.none() | st.builds(SmState, st.booleans(), st.none() | st.integers(0, 15)))
    return BackendState(sm, parts)


@settings(max_examples=300)
@given(states(), st.booleans())
def test_rendered_commands_read_back_into_the_state_they_came_from(desired: BackendState, save: bool) -> None:
    assert parse_commands(render_commands(desired, save=save)) == desired.only(CARRIED)


@pytest.mark.parametrize(
    "desired",
    [
        state(),
        state(sm=None),
        state(COMPUTE, STORAGE, part(0x7FFE, "last"), part(0x0001, "first", (C, "both"))),
        state(part(0x30, "limited_only", (A, "limited"), (B, "limited"), ipoib=False)),
        state(COMPUTE, sm=SmState(True, 0)),
        state(COMPUTE, sm=SmState(False, 15)),
        state(COMPUTE, sm=SmState(True, None)),
    ],
    ids=["empty", "no-sm", "several-with-both", "limited-ipoib-off", "priority-0", "sm-off", "no-priority"],
)
def test_odd_states_read_back_exactly(desired: BackendState) -> None:
    assert parse_commands(render_commands(desired, save=True)) == desired


def test_the_rendering_is_the_whole_configuration_partitions_before_the_sm_is_turned_on() -> None:
    desired = state(STORAGE, COMPUTE, part(0x30, "both", (B, "both"), ipoib=False))
    assert render_commands(desired, save=True) == [
        "ib sm allow-both-pkeys",
        "ib partition compute pkey 0x0010",
        "ib partition compute ipoib",
        "ib partition compute member 0x0c42a10300b7e014 type full",
        "ib partition compute member 0x0c42a10300b7e028 type full",
        "ib partition storage pkey 0x0020",
        "ib partition storage member 0x0c42a10300b7e014 type limited",
        "ib partition storage member 0x0c42a10300b7e03c type full",
        "ib partition both pkey 0x0030",
        "ib partition both member 0x0c42a10300b7e028 type both",
        "ib sm sm-priority 15",
        "ib sm",
        "configuration write",
    ]
    assert render_commands(state(COMPUTE), save=False)[-1] == "ib sm"


def test_the_priority_keyword_is_one_constant() -> None:
    assert f"{SM_PRIORITY} 7" in render_commands(state(sm=SmState(True, 7)), save=False)


RUNNING = """\
##
## Running database "initial"
##
   interface ib 1/1 description "node01"
   interface ib 1/1 shutdown
## Subnet Manager configuration
   ib sm allow-both-pkeys
   ib sm virt enable
   ib partition management pkey 0x7fff
   ib partition management member ALL type full
   ib partition storage member 00:0c:42:a1:03:00:b7:e0:3c type full
   ib partition storage pkey 0x20
   ib partition compute pkey 0x0010
   ib partition compute ipoib
   ib partition compute member 0x0c42a10300b7e014 type full
   ib partition compute member 0x0c42a10300b7e028 type both
   ib sm sm-priority 14
   no ib sm
   hostname leaf01
"""


def test_a_running_configuration_reads_into_the_model_whatever_else_it_holds() -> None:
    lines = RUNNING.replace("00:0c:42:a1:03:00:b7:e0:3c", "0c:42:a1:03:00:b7:e0:3c").splitlines()
    assert parse_commands(lines) == state(
        part(0x10, "compute", (A, "full"), (B, "both")),
        part(0x20, "storage", (C, "full"), ipoib=False),
        sm=SmState(False, 14),
    )
    assert allows_both_pkeys(lines)
    assert not allows_both_pkeys(["ib sm allow-both-pkeys", "no ib sm allow-both-pkeys"])


def test_the_default_partition_is_the_switch_s_own_whatever_its_lines_say() -> None:
    lines = ["ib partition management member ALL type full", "ib partition management member 0x1 type limited"]
    assert parse_commands(lines) == BackendState(None, {})
    assert parse_commands([*lines, "ib partition management pkey 0x7fff"]) == BackendState(None, {})
    named = parse_commands(["ib partition management pkey 0x10", *lines[1:]])
    assert named.partitions[0x10].members == frozenset({(0x1, "limited")})


def test_lines_apply_in_order_as_the_switch_would() -> None:
    lines = [*render_commands(state(COMPUTE, STORAGE), save=False), "no ib partition storage"]
    lines += ["no ib partition compute ipoib", "no ib partition compute member 0x0c42a10300b7e028"]
    assert parse_commands(lines) == state(part(0x10, "compute", (A, "full"), ipoib=False))


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("ib partition x pkey 0x8000", "outside 0x1-0x7ffe"),
        ("ib partition x pkey zz", "not hexadecimal"),
        ("ib partition x member ALL type full", "names no port GUID"),
        ("ib partition x member 0x1 type partial", "not full, limited or both"),
        ("ib sm sm-priority high", "not a number"),
    ],
)
def test_a_line_the_model_cannot_hold_is_refused_naming_it(line: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_commands(["ib partition x pkey 0x10", line])


def test_a_partition_without_pkey_or_two_with_one_pkey_are_refused() -> None:
    with pytest.raises(ValueError, match="no pkey line"):
        parse_commands(["ib partition x ipoib"])
    with pytest.raises(ValueError, match="both hold pkey 0x0010"):
        parse_commands(["ib partition x pkey 0x10", "ib partition y pkey 0x10"])


# --- the difference --------------------------------------------------------------------------------------


def diff(current: BackendState, desired: BackendState, *, prune: bool = False, save: bool = False) -> list[str]:
    return texts(diff_commands(current, desired, prune=prune, save=save)[0])


@given(states())
def test_equal_states_give_no_action_at_all(desired: BackendState) -> None:
    carried = desired.only(CARRIED)
    actions, _notes = diff_commands(carried, desired, prune=True, save=True)
    assert actions == []


@settings(max_examples=200)
@given(states(), states(), st.booleans())
def test_the_difference_sent_to_a_switch_leaves_it_holding_the_desired_state(
    current: BackendState, desired: BackendState, prune: bool
) -> None:
    current = current.only(CARRIED)
    actions, _notes = diff_commands(current, desired, prune=prune, save=False)
    after = parse_commands([*render_commands(current, save=False), *texts(actions)])
    want = dict(desired.only(CARRIED).partitions)
    if not prune:  # unplanned partitions stay, unless a planned one needed their name or pkey
        names = {p.name for p in desired.partitions.values()}
        for pkey, have in current.partitions.items():
            if pkey not in desired.partitions and have.name not in names:
                want[pkey] = have
    assert dict(after.partitions) == want
    if desired.sm is not None:
        sm = after.sm or SmState(False, None)  # nothing said of the SM: the switch's default, off
        assert sm.enabled == desired.sm.enabled
        assert desired.sm.priority is None or sm.priority == desired.sm.priority


def test_a_member_added_changed_and_removed_each_send_exactly_their_command() -> None:
    current = state(part(0x10, "compute", (A, "full"), (B, "full"), (C, "limited")))
    desired = state(part(0x10, "compute", (A, "limited"), (B, "full"), (0x1, "full")))
    assert diff(current, desired) == [
        "ib partition compute member 0x0000000000000001 type full",
        "ib partition compute member 0x0c42a10300b7e014 type limited",
        "no ib partition compute member 0x0c42a10300b7e03c",
    ]
    kinds = [a.verb for a in diff_commands(current, desired, prune=False, save=False)[0]]
    assert kinds == ["add", "set", "remove"]
    assert {a.pkey for a in diff_commands(current, desired, prune=False, save=False)[0]} == {0x10}


def test_ipoib_toggled_sends_the_flag_alone() -> None:
    assert diff(state(COMPUTE), state(part(0x10, "compute", (A, "full"), (B, "full"), ipoib=False))) == [
        "no ib partition compute ipoib"
    ]
    off = part(0x10, "compute", (A, "full"), (B, "full"), ipoib=False)
    assert diff(state(off), state(COMPUTE)) == ["ib partition compute ipoib"]


def test_a_new_partition_is_created_whole_and_the_save_comes_last() -> None:
    assert diff(state(COMPUTE), state(COMPUTE, STORAGE), save=True) == [
        "ib partition storage pkey 0x0020",
        "ib partition storage member 0x0c42a10300b7e014 type limited",
        "ib partition storage member 0x0c42a10300b7e03c type full",
        SAVE,
    ]


def test_a_pkey_held_under_another_name_or_a_name_holding_another_pkey_is_removed_and_recreated() -> None:
    actions, notes = diff_commands(
        state(part(0x10, "old", (A, "full"))), state(part(0x10, "compute", (A, "full"))), prune=False, save=False
    )
    assert texts(actions) == [
        "no ib partition old",
        "ib partition compute pkey 0x0010",
        "ib partition compute ipoib",
        "ib partition compute member 0x0c42a10300b7e014 type full",
    ]
    assert any("removed and created again" in n and "old" in n for n in notes)
    moved = diff(state(part(0x10, "compute", (A, "full"))), state(part(0x11, "compute", (A, "full"))))
    assert moved[:2] == ["no ib partition compute", "ib partition compute pkey 0x0011"]
    assert "no ib partition compute" not in moved[1:]


def test_two_partitions_that_swapped_pkeys_are_both_removed_before_either_is_created() -> None:
    current = state(part(0x10, "a"), part(0x20, "b"))
    desired = state(part(0x10, "b"), part(0x20, "a"))
    assert diff(current, desired) == [
        "no ib partition a",
        "no ib partition b",
        "ib partition b pkey 0x0010",
        "ib partition b ipoib",
        "ib partition a pkey 0x0020",
        "ib partition a ipoib",
    ]


def test_an_unplanned_partition_is_left_alone_and_named_unless_prune() -> None:
    current = state(COMPUTE, part(0x40, "scratch", (C, "full")))
    actions, notes = diff_commands(current, state(COMPUTE), prune=False, save=True)
    assert actions == []
    assert notes == [
        "0x0040 (scratch, 1 member(s)) is on the switch, not in the spec: left alone (prune: true removes it)"
    ]
    actions, _notes = diff_commands(current, state(COMPUTE), prune=True, save=True)
    assert texts(actions) == ["no ib partition scratch", SAVE]
    assert actions[0] == Action("delete", "no ib partition scratch", 0x40)


def test_priority_and_enable_are_sent_only_when_different() -> None:
    assert diff(state(COMPUTE, sm=SmState(True, 15)), state(COMPUTE, sm=SmState(True, 15))) == []
    assert diff(state(COMPUTE, sm=SmState(True, 14)), state(COMPUTE)) == ["ib sm sm-priority 15"]
    assert diff(state(COMPUTE, sm=SmState(False, 15)), state(COMPUTE)) == ["ib sm"]
    assert diff(state(COMPUTE, sm=SmState(False, None)), state(COMPUTE)) == ["ib sm sm-priority 15", "ib sm"]
    assert diff(state(COMPUTE), state(COMPUTE, sm=SmState(False, 15))) == ["no ib sm"]
    assert diff(state(COMPUTE), state(COMPUTE, sm=None)) == []


def test_allow_both_is_sent_first_when_a_both_member_needs_it_and_the_switch_lacks_it() -> None:
    desired = state(part(0x10, "compute", (A, "both")))
    current = state(part(0x10, "compute", (A, "full")))
    assert diff(current, desired) == [ALLOW_BOTH, "ib partition compute member 0x0c42a10300b7e014 type both"]
    told = diff_commands(current, desired, prune=False, save=False, allow_both=True)[0]
    assert texts(told) == ["ib partition compute member 0x0c42a10300b7e014 type both"]
    holds_both = state(part(0x10, "compute", (A, "both")), part(0x20, "x"))
    assert diff(holds_both, state(part(0x10, "compute", (A, "both")), part(0x20, "x", (B, "both")))) == [
        "ib partition x member 0x0c42a10300b7e028 type both"
    ]


def test_save_false_sends_no_configuration_write_and_says_so() -> None:
    actions, notes = diff_commands(state(), state(COMPUTE), prune=False, save=False)
    assert SAVE not in texts(actions)
    assert any("configuration write" in n for n in notes)
    assert diff_commands(state(COMPUTE), state(COMPUTE), prune=False, save=False) == ([], [])


def test_a_member_line_without_type_is_a_full_member() -> None:
    lines = ["ib partition compute pkey 0x10", f"ib partition compute member 0x{A:016x}"]
    assert parse_commands(lines).partitions[0x10].members == frozenset({(A, "full")})


def test_no_ib_sm_priority_leaves_the_priority_unset_and_is_never_read_as_that_priority() -> None:
    assert parse_commands(["ib sm", "no ib sm sm-priority 5"]).sm == SmState(True, None)
    assert parse_commands(["ib sm sm-priority 9", "no ib sm sm-priority", "ib sm"]).sm == SmState(True, None)
