"""UFM's payload, pure: the desired partitions as UFM's PUT /resources/pkeys/ bodies and back (an exact inverse),
and UFM's detailed pkeys answer read into the one model -- GUIDs in any of the spellings UFM and its clients
use, the Default partition left out, either answer shape, and a malformed answer refused with the reason."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibprov.clusterspec.units import MTU_CODE, RATE_CODE
from ibprov.smbackend.state import BackendState, PartitionState
from ibprov.smbackend.ufm.payload import CARRIED, parse_payload, parse_pkeys, render_payload

A, B, C = 0x0002C90300A1B2C3, 0x1070FD0300C8A014, 0x000000000000BEEF


def _state(*parts: PartitionState) -> BackendState:
    return BackendState(None, {p.pkey: p for p in parts})


members = st.frozensets(st.tuples(st.integers(0, 2**64 - 1), st.sampled_from(["full", "limited"])), max_size=6).filter(
    lambda ms: len({g for g, _m in ms}) == len(ms)
)
partitions = st.builds(
    PartitionState,
    pkey=st.integers(1, 0x7FFE),
    name=st.none(),
    ipoib=st.booleans(),
    members=members,
    mtu=st.none() | st.sampled_from(sorted(MTU_CODE.values())),
    rate=st.none() | st.sampled_from(sorted(RATE_CODE)),
    sl=st.none() | st.integers(0, 15),
)
states = st.lists(partitions, max_size=5, unique_by=lambda p: p.pkey).map(lambda ps: _state(*ps))


@settings(max_examples=200)
@given(states)
def test_the_payload_parses_back_to_exactly_the_state_it_was_rendered_from(state: BackendState) -> None:
    bodies = render_payload(state)
    assert parse_payload(bodies) == state
    assert parse_payload(json.loads(json.dumps(bodies))) == state  # as it travels, through JSON


def test_a_body_is_the_documented_put_shape_with_qos_only_where_the_spec_sets_it() -> None:
    part = PartitionState(0x10, "compute", True, frozenset({(B, "limited"), (A, "full")}), mtu=5, sl=None, rate=200.0)
    bare = PartitionState(0x11, "gpu", False, frozenset({(C, "full")}))
    assert render_payload(_state(bare, part)) == [
        {
            "pkey": "0x0010",
            "guids": ["0002c90300a1b2c3", "1070fd0300c8a014"],
            "memberships": ["full", "limited"],
            "ip_over_ib": True,
            "index0": False,
            "mtu_limit": 5,
            "rate_limit": 200.0,
        },
        {
            "pkey": "0x0011",
            "guids": ["000000000000beef"],
            "memberships": ["full"],
            "ip_over_ib": False,
            "index0": False,
        },
    ]


def test_a_both_member_cannot_be_rendered_for_ufm() -> None:
    part = PartitionState(0x10, None, True, frozenset({(A, "both")}))
    with pytest.raises(ValueError, match="full or limited only"):
        render_payload(_state(part))


def test_ufm_carries_no_partition_name() -> None:
    assert "name" not in CARRIED
    part = PartitionState(0x10, "compute", True, frozenset({(A, "full")}))
    assert parse_payload(render_payload(_state(part))) == _state(part).only(CARRIED)


def test_a_post_style_body_gives_every_guid_its_single_membership() -> None:
    body = {"pkey": "0x12", "guids": ["0002C90300A1B2C3", "1070fd0300c8a014"], "membership": "limited"}
    assert parse_payload([body]).partitions[0x12].member_map == {A: "limited", B: "limited"}


ANSWER: dict[str, Any] = {
    "0x7fff": {"partition": "management", "ip_over_ib": True, "guids": [{"guid": "0002C90300A1B2C3"}]},
    "0x10": {
        "partition": "api_pkey_0x10",
        "ip_over_ib": True,
        "sharp_enabled": False,
        "guids": [
            {"guid": "0002C90300A1B2C3", "membership": "full", "index0": False},
            {"guid": "0x1070fd0300c8a014", "membership": "limited", "index0": True},
            {"guid": "00:00:00:00:00:00:BE:EF", "membership": "full", "index0": False},
        ],
        "mtu_limit": 4,
        "service_level": 0,
        "rate_limit": 2.5,
    },
    "0x0011": {"ip_over_ib": False, "guids": [], "mtu_limit": None, "service_level": None, "rate_limit": None},
}
EXPECTED = _state(
    PartitionState(0x10, None, True, frozenset({(A, "full"), (B, "limited"), (C, "full")}), mtu=4, rate=2.5, sl=0),
    PartitionState(0x11, None, False, frozenset()),
)


def test_the_detailed_answer_is_read_with_guids_normalised_and_default_left_out() -> None:
    assert parse_pkeys(ANSWER) == EXPECTED


def test_the_list_shape_of_the_answer_reads_the_same() -> None:
    listed = [{"pkey": key, **entry} for key, entry in ANSWER.items()]
    assert parse_pkeys(listed) == EXPECTED


def test_bare_guid_strings_and_a_missing_membership_read_as_full() -> None:
    answer = {"0x12": {"ip_over_ib": True, "guids": ["0002c90300a1b2c3", {"guid": "1070FD0300C8A014"}]}}
    assert parse_pkeys(answer).partitions[0x12].member_map == {A: "full", B: "full"}


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (["0x10", "0x7fff"], "pkeys only"),
        ("oops", "not a map keyed by pkey"),
        ({"0x10": {"guids": [{"guid": "not-a-guid"}]}}, "not a 64-bit port GUID"),
        ({"0x10": {"guids": [{"guid": "1" * 17}]}}, "not a 64-bit port GUID"),
        ({"0x10": {"guids": [{"guid": "0002C90300A1B2C3", "membership": "both"}]}}, "neither full nor limited"),
        ({"0x10": {"ip_over_ib": "yes"}}, "ip_over_ib 'yes'"),
        ({"0xzz": {}}, "not hex"),
        ({"0x8010": {}}, "outside 0x0001-0x7fff"),
        ({"0x10": {"mtu_limit": "big"}}, "mtu_limit 'big' is not a number"),
        ({"0x10": {"guids": "0002C90300A1B2C3"}}, "guids is not a list"),
        ({"0x10": []}, "is not an object"),
    ],
)
def test_a_malformed_answer_is_refused_saying_what_was_wrong(answer: Any, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_pkeys(answer)


def test_an_answer_without_ip_over_ib_is_ufm_s_default_ipoib_on() -> None:
    answer = {"0x10": {"guids": [{"guid": "0C42A10300B7E014", "membership": "full"}]}}
    assert parse_pkeys(answer).partitions[0x10].ipoib is True


def test_a_new_partition_is_created_with_the_spec_s_ipoib_flag() -> None:
    from ibprov.smbackend.ufm.payload import create_body

    for ipoib in (True, False):
        part = PartitionState(0x10, None, ipoib, frozenset({(0x0C42A10300B7E014, "full")}))
        assert create_body(part)["ip_over_ib"] is ipoib


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({True: {"guids": []}}, "is not a hex string"),
        ({"0x0": {"guids": []}}, "outside 0x0001-0x7fff"),
        ({"0x8000": {"guids": []}}, "outside 0x0001-0x7fff"),
        ({"0x10": {"guids": ["1" + "0" * 16]}}, "is not a 64-bit port GUID"),
        ({"0x10": {"guids": [], "service_level": 2.5}}, "service_level 2.5 is not an integer"),
        ({"0x10": {"guids": [], "mtu_limit": True}}, "mtu_limit True is not a number"),
        ({"0x10": {"guids": [], "ip_over_ib": "yes"}}, "ip_over_ib 'yes' is not true or false"),
    ],
)
def test_an_answer_ufm_should_not_give_is_refused_naming_what(answer: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_pkeys(answer)


def test_a_0x_prefix_in_either_case_reads_the_same_pkey() -> None:
    assert set(parse_pkeys({"0X10": {"guids": []}, "0x20": {"guids": []}}).partitions) == {0x10, 0x20}


def _whole(message: str) -> str:
    return f"^{re.escape(message)}$"


# Each refusal whole, as the user reads it: what was wrong and where (which pkey of UFM's answer, which body of
# a payload), so that a support ticket can quote it. A fragment match would let the location go missing unseen.
@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (["0x10"], "the answer lists pkeys only (asked without guids_data=true?)"),
        ([{"pkey": "0x10"}, 7], "the answer is a list whose entries are not objects"),
        (7, "the answer is int, not a map keyed by pkey or a list of pkeys"),
        ({"0xzz": {}}, "pkey entry: pkey '0xzz' is not hex"),
        ({"0x10": 7}, "pkey 0x0010: its entry is not an object"),
        ({"0x10": {"guids": "a"}}, "pkey 0x0010: guids is not a list"),
        ({"0x10": {"guids": [12]}}, "pkey 0x0010: a guids entry 12 is neither a GUID nor an object with one"),
        ({"0x10": {"guids": ["xyz"]}}, "pkey 0x0010: 'xyz' is not a 64-bit port GUID"),
        ({"0x10": {"guids": [{"guid": 5}]}}, "pkey 0x0010: GUID 5 is not a string"),
        (
            {"0x10": {"guids": [{"guid": "beef", "membership": "x"}]}},
            "pkey 0x0010: membership 'x' is neither full nor limited",
        ),
        ({"0x10": {"ip_over_ib": 1}}, "pkey 0x0010: ip_over_ib 1 is not true or false"),
        ({"0x10": {"mtu_limit": "big"}}, "pkey 0x0010: mtu_limit 'big' is not a number"),
        ({"0x10": {"mtu_limit": 4.5}}, "pkey 0x0010: mtu_limit 4.5 is not an integer"),
        ({"0x10": {"rate_limit": []}}, "pkey 0x0010: rate_limit [] is not a number"),
        ({"0x10": {"service_level": "2.5"}}, "pkey 0x0010: service_level '2.5' is not an integer"),
    ],
)
def test_a_refused_answer_says_what_and_at_which_pkey_in_full(answer: Any, message: str) -> None:
    with pytest.raises(ValueError, match=_whole(message)):
        parse_pkeys(answer)


@pytest.mark.parametrize(
    ("bodies", "message"),
    [
        ([{"pkey": "0x10"}, 7], "body 1 is not an object"),
        ([{"pkey": "0x10"}, {"pkey": None}], "body 1: pkey None is not a hex string"),
        ([{"pkey": "0x10", "guids": "beef"}], "body 0: guids is not a list"),
        (
            [{"pkey": "0x10", "guids": ["beef"], "memberships": "f"}],
            "body 0: memberships does not give one membership per GUID",
        ),
        (
            [{"pkey": "0x10", "guids": ["beef"], "memberships": []}],
            "body 0: memberships does not give one membership per GUID",
        ),
        ([{"pkey": "0x10", "guids": [3]}], "body 0: GUID 3 is not a string"),
        (
            [{"pkey": "0x10", "guids": ["beef"], "membership": "both"}],
            "body 0: membership 'both' is neither full nor limited",
        ),
        ([{"pkey": "0x10", "ip_over_ib": None}], "body 0 (0x0010): ip_over_ib None is not true or false"),
        ([{"pkey": "0x10", "mtu_limit": 4.5}], "body 0 (0x0010): mtu_limit 4.5 is not an integer"),
        ([{"pkey": "0x10", "rate_limit": "fast"}], "body 0 (0x0010): rate_limit 'fast' is not a number"),
        ([{"pkey": "0x10", "service_level": 1.5}], "body 0 (0x0010): service_level 1.5 is not an integer"),
    ],
)
def test_a_refused_payload_says_what_and_at_which_body_in_full(bodies: list[Any], message: str) -> None:
    with pytest.raises(ValueError, match=_whole(message)):
        parse_payload(bodies)


def test_a_body_without_guids_or_memberships_is_an_empty_partition_and_one_membership_defaults_to_full() -> None:
    parsed = parse_payload([{"pkey": "0x10"}, {"pkey": "0x11", "guids": ["beef", "0002c90300a1b2c3"]}])
    assert parsed.partitions[0x10].members == frozenset()
    assert parsed.partitions[0x11].member_map == {C: "full", A: "full"}


def test_an_answer_entry_without_guids_is_an_empty_partition() -> None:
    assert parse_pkeys({"0x10": {}, "0x11": {"guids": None}}).partitions[0x10].members == frozenset()
    assert parse_pkeys({"0x11": {"guids": None}}).partitions[0x11].members == frozenset()


def test_a_pkey_given_as_a_json_number_reads_as_that_pkey() -> None:
    assert set(parse_pkeys([{"pkey": 16, "guids": []}]).partitions) == {0x10}
    assert set(parse_payload([{"pkey": 17}]).partitions) == {0x11}


def test_a_both_member_refusal_names_the_partition_and_the_first_guid_sent() -> None:
    from ibprov.smbackend.ufm.payload import add_guids_body

    part = PartitionState(0x10, None, True, frozenset())
    both = "is 'both'; UFM holds a GUID as full or limited only"
    with pytest.raises(ValueError, match=_whole(f"partition 0x0010: member 0002c90300a1b2c3 {both}")):
        add_guids_body(part, [B, A], "both")
    with pytest.raises(ValueError, match=_whole(f"partition 0x0010: member 0000000000000000 {both}")):
        add_guids_body(part, [], "both")
    with pytest.raises(ValueError, match=_whole(f"partition 0x0012: member 1070fd0300c8a014 {both}")):
        render_payload(_state(PartitionState(0x12, None, True, frozenset({(A, "full"), (B, "both")}))))
