"""partitions.conf read back into the one model: the grammar of OpenSM 3.3 as written by hand, not only as the
ib_sm role writes it (one line or many, comments, defmember, a member without a membership, NONE), Default
left out, and what names no GUID refused rather than guessed."""

from __future__ import annotations

import pytest

from ibprov.smbackend.opensm import parse_partitions_conf, partition_vars
from ibprov.smbackend.state import BackendState, PartitionState

HAND_WRITTEN = """
# written by hand on an older cluster
Default=0x7fff, ipoib : ALL=full, SELF=full ;
compute=0x8010,ipoib,mtu=5,rate=7,sl=1,defmember=full: 0x0002c90300a1b2c1, 0x0002c90300a1b2c2=limited;
storage=0x0020, ipoib, defmember=both :
    0x0002C90300A1B2C3 , # the server
    0x0002c90300a1b2c4=full ;
empty=0x0030 : NONE ;
"""


def test_a_hand_written_file_reads_back_with_defaults_limits_and_case_folded_guids() -> None:
    state = parse_partitions_conf(HAND_WRITTEN)
    assert sorted(state.partitions) == [0x10, 0x20, 0x30]  # Default left out, 0x8010 read as 0x0010
    compute = state.partitions[0x10]
    assert compute == PartitionState(
        pkey=0x10,
        name="compute",
        ipoib=True,
        members=frozenset({(0x0002C90300A1B2C1, "full"), (0x0002C90300A1B2C2, "limited")}),
        mtu=5,
        rate=40,
        sl=1,
    )
    assert state.partitions[0x20].member_map == {0x0002C90300A1B2C3: "both", 0x0002C90300A1B2C4: "full"}
    assert state.partitions[0x30].members == frozenset()


def test_a_member_without_membership_and_without_defmember_is_limited() -> None:
    state = parse_partitions_conf("p=0x0040 : 0x1 ;")
    assert state.partitions[0x40].member_map == {1: "limited"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p=0x0040 : ALL=full ;", "member 'ALL=full' names no port GUID"),
        ("p=0x0040 : 0x1=owner ;", "has no membership full, limited or both"),
        ("p : 0x1 ;", "partition 'p' has no P_Key"),
        ("p=0x0040 0x1 ;", "partition entry without ':'"),
    ],
)
def test_what_the_model_cannot_hold_is_refused_with_the_entry_named(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_partitions_conf(text)


def test_partition_vars_render_every_field_the_role_template_reads() -> None:
    state = BackendState(
        None,
        {
            0x11: PartitionState(0x11, "gpu", False, frozenset({(0xB, "full"), (0xA, "limited")}), mtu=5, rate=400),
            0x10: PartitionState(0x10, None, True, frozenset()),
        },
    )
    out = partition_vars(state)
    assert [p["pkey"] for p in out] == [0x10, 0x11]
    assert out[0]["name"] == "pkey_0010"  # a back end that keeps no name (UFM) still gives OpenSM one
    assert out[1]["members"] == [
        {"guid": "0x000000000000000a", "membership": "limited"},
        {"guid": "0x000000000000000b", "membership": "full"},
    ]
    assert out[1]["rate"] == 21  # 400 Gb/s as OpenSM's rate code (IBTA)
