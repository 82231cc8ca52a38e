"""Slurm hostlists (ibprov/hostlist.py): expanded as Slurm reads them, compressed as
``scontrol show hostlistsorted`` writes them, and the one undoing the other."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibprov.hostlist import MAX_HOSTS, compress, expand


def test_a_range_keeps_the_zero_padding_of_its_first_number() -> None:
    assert expand("node[001-003,015]") == ["node001", "node002", "node003", "node015"]
    assert expand("n[08-10]") == ["n08", "n09", "n10"]
    assert expand("n[8-10]") == ["n8", "n9", "n10"]


def test_several_bracket_groups_make_every_combination_first_group_slowest() -> None:
    assert expand("a[1-2]b[3-4]") == ["a1b3", "a1b4", "a2b3", "a2b4"]
    assert expand("rack[1-2]-node[01-02]x") == ["rack1-node01x", "rack1-node02x", "rack2-node01x", "rack2-node02x"]


def test_commas_outside_brackets_separate_names_and_order_and_duplicates_are_kept() -> None:
    assert expand("b,a[1,3],b") == ["b", "a1", "a3", "b"]
    assert expand("leaf01-leaf08,top") == ["leaf01-leaf08", "top"]


def test_an_empty_hostlist_is_no_name() -> None:
    assert expand("") == []
    assert compress([]) == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("node[1-3", "'[' without ']' in hostlist 'node[1-3'"),
        ("node1-3]", "']' without '[' at column 8 of hostlist 'node1-3]'"),
        ("n[1[2]]", "nested '[' at column 4 of hostlist 'n[1[2]]'"),
        ("a,,b", "empty name in hostlist 'a,,b' (two commas, or one at an end)"),
        ("a,", "empty name in hostlist 'a,' (two commas, or one at an end)"),
        ("n[5-3]", "hostlist 'n[5-3]' has the range 5-3 running backwards"),
        ("n[a-b]", "hostlist 'n[a-b]' has 'a-b', which is no number or range N-M in [a-b]"),
        ("n[1,,2]", "hostlist 'n[1,,2]' has an empty entry in [1,,2]"),
        ("n[]", "hostlist 'n[]' has an empty entry in []"),
        ("n1 n2", "whitespace at column 3 of hostlist 'n1 n2'"),
        ("n[0-99999999]", f"hostlist 'n[0-99999999]' names more than {MAX_HOSTS:,} hosts"),
        ("n[0-9999]m[0-9999]", f"hostlist 'n[0-9999]m[0-9999]' names more than {MAX_HOSTS:,} hosts"),
    ],
)
def test_malformed_hostlists_are_refused_with_the_text_quoted(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="hostlist") as info:
        expand(text)
    assert str(info.value) == message


def test_compress_groups_by_prefix_and_padding_in_slurms_sorted_order() -> None:
    assert compress(["node07", "gpu1", "node02", "node01", "node03"]) == "gpu1,node[01-03,07]"
    assert compress(["n10", "n9", "n8", "n2"]) == "n[2,8-10]"
    assert compress(["gpu10", "gpu2", "gpu1"]) == "gpu[1-2,10]"


def test_a_plain_number_joins_the_padded_group_of_its_width() -> None:
    # 10 is as wide as 08 and 09: Slurm writes n[08-10], and [08-10] reads back as 08, 09, 10
    assert compress(["n08", "n09", "n10"]) == "n[08-10]"
    assert compress(["n8", "n9", "n10", "n08"]) == "n[8-9],n[08,10]"


def test_names_without_a_number_stand_alone_and_duplicates_go() -> None:
    assert compress(["top", "spine", "top"]) == "spine,top"
    assert compress(["top", "leaf01-leaf08", "leaf09-leaf16"]) == "leaf01-leaf08,leaf09-leaf16,top"


@pytest.mark.parametrize("bad", ["a,b", "a[1]", "a b", ""])
def test_a_name_a_hostlist_cannot_hold_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="cannot be written in a hostlist"):
        compress(["ok1", bad])


_PREFIXES = st.sampled_from(["node", "gpu", "n", "rack1-n", "a1b", "x", ""])
_NUMBERS = st.tuples(st.integers(0, 120), st.integers(0, 4))  # value, zero padding width (0: plain)


def _name(prefix: str, number: tuple[int, int] | None) -> str:
    if number is None:
        return prefix or "solo"
    value, width = number
    return f"{prefix}{value:0{width}d}"


_NAMES = st.lists(st.builds(_name, _PREFIXES, st.none() | _NUMBERS), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_NAMES)
def test_expanding_the_compressed_form_gives_every_name_once_whatever_the_input_order(names: list[str]) -> None:
    text = compress(names)
    back = expand(text)
    assert len(back) == len(set(back))
    assert set(back) == set(names)
    assert compress(back) == text
    shuffled = list(names)
    random.Random(len(names)).shuffle(shuffled)
    assert compress(shuffled) == text


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4), st.data())
def test_one_prefix_and_width_compress_into_one_group_in_numeric_order(width: int, data: st.DataObject) -> None:
    numbers = data.draw(st.sets(st.integers(0, 10**width - 1), min_size=1))
    names = [f"node{n:0{width}d}" for n in numbers]
    text = compress(names)
    assert expand(text) == [f"node{n:0{width}d}" for n in sorted(numbers)]
    assert text.count("node") == 1


def test_a_range_of_one_number_is_that_number() -> None:
    assert expand("n[5-5]") == ["n5"]
    assert expand("n[05-05,7]") == ["n05", "n7"]


@pytest.mark.parametrize("text", ["n1\tn2", "n[1-2]\t", "n1,\tn2", "n\n1", "n[1,\t2]"])
def test_whitespace_anywhere_in_a_hostlist_is_refused_never_part_of_a_name(text: str) -> None:
    with pytest.raises(ValueError, match=r"whitespace|no number or range"):
        expand(text)


def test_single_and_double_digit_numbers_share_one_group_as_slurm_writes_them() -> None:
    assert compress([f"n{i}" for i in range(11)]) == "n[0-10]"
    assert compress(["n0", "n10", "n9"]) == "n[0,9-10]"


def test_a_hostlist_of_exactly_max_hosts_names_expands_and_one_more_is_refused() -> None:
    assert len(expand(f"n[1-{MAX_HOSTS}]")) == MAX_HOSTS
    assert len(expand(f"n[2-{MAX_HOSTS}],m")) == MAX_HOSTS
    with pytest.raises(ValueError, match=rf"names more than {MAX_HOSTS:,} hosts"):
        expand(f"n[1-{MAX_HOSTS}],m")


def test_a_product_of_groups_over_the_limit_is_refused_before_any_name_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ibprov.hostlist as hostlist

    def no_names(*pieces: object) -> object:
        raise AssertionError("names built for a hostlist over the limit")

    monkeypatch.setattr(hostlist, "product", no_names)
    with pytest.raises(ValueError, match=rf"'a\[0-1999\]b\[0-999\]' names more than {MAX_HOSTS:,} hosts"):
        hostlist.expand("a[0-1999]b[0-999]")


def test_a_short_range_of_large_numbers_is_not_taken_for_a_long_one() -> None:
    assert expand("n[999999-1000001]") == ["n999999", "n1000000", "n1000001"]


def test_compress_orders_names_naturally_numbers_before_text_and_a_bare_prefix_before_its_group() -> None:
    assert compress(["a10b", "a9b"]) == "a9b,a10b"
    assert compress(["a", "1a"]) == "1a,a"  # a digit run sorts before text at the same place, as in Slurm
    assert compress(["n2", "n", "n1"]) == "n,n[1-2]"


def test_names_of_one_natural_key_compress_in_one_order_whatever_the_input_order() -> None:
    assert compress(["a1b", "a01b"]) == compress(["a01b", "a1b"]) == "a01b,a1b"
