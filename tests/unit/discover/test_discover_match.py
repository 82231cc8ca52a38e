"""Matching a discovered fabric to a spec: by GUID, by description, by cabling position; the lock file."""

from __future__ import annotations

import re
from pathlib import Path

from discoverdata import RACK, drop_device, example_text, redescribe

from ibprov.discover import found_from_text, match_fabric
from ibprov.identity.guids import LockFile


def test_every_device_of_the_plan_matches_by_description_and_is_locked_with_its_guid() -> None:
    loaded, text, book = example_text()
    result = match_fabric(loaded, found_from_text(text))
    assert result.complete
    assert {m.how for m in result.matched} == {"description"}
    assert len(result.matched) == result.planned == 40
    lock = result.lock
    assert lock.switches == {name: book.switch_guid(name) for name in loaded.topology.switches}
    hcas = [(n.name, h.device) for n in loaded.spec.nodes for h in n.hcas]
    assert lock.hca_nodes == {key: book.hca_guid(*key) for key in hcas}
    assert lock.hca_ports == {(*key, 1): book.port_guid(*key, 1) for key in hcas}


def test_lock_file_round_trips_through_yaml(tmp_path: Path) -> None:
    loaded, text, _book = example_text()
    lock = match_fabric(loaded, found_from_text(text)).lock
    path = tmp_path / "c.lock.yaml"
    path.write_text(lock.to_yaml())
    assert LockFile.read(path) == lock


def test_a_renamed_node_is_matched_by_its_position_and_reported() -> None:
    loaded, text, book = example_text()
    result = match_fabric(loaded, found_from_text(redescribe(text, "node07 mlx5_0", "localhost mlx5_0")))
    assert not result.complete
    (m, planned) = result.differs[0]
    assert len(result.differs) == 1
    assert (m.planned, m.how, m.via, m.device.desc, planned) == (
        "node07/mlx5_0",
        "position",
        "leaf01:8",  # sm01 is first: node07 is the eighth host of leaf01
        "localhost mlx5_0",
        "node07 mlx5_0",
    )
    assert result.lock.hca_nodes[("node07", "mlx5_0")] == book.hca_guid("node07", "mlx5_0")
    assert result.not_found == []
    assert result.extra == []
    assert any("description differs" in line for line in result.lines())


def test_renamed_switches_are_found_through_the_cables_of_their_neighbours() -> None:
    loaded, text, book = example_text()
    text = redescribe(redescribe(text, "spine01", "MF0;sw-x:MQM8700/U1"), "leaf02", "switch-without-name")
    result = match_fabric(loaded, found_from_text(text))
    how = {m.planned: m.how for m in result.matched}
    assert how["spine01"] == how["leaf02"] == "position"
    assert result.lock.switches["spine01"] == book.switch_guid("spine01")
    assert result.lock.switches["leaf02"] == book.switch_guid("leaf02")
    assert sorted(m.planned for m, _ in result.differs) == ["leaf02", "spine01"]


def test_a_missing_device_is_listed_and_the_rest_still_locked() -> None:
    loaded, text, book = example_text()
    gone = book.hca_guid("node05", "mlx5_0")
    assert gone is not None
    result = match_fabric(loaded, found_from_text(drop_device(text, gone)))
    assert result.not_found == ["node05/mlx5_0"]
    assert result.extra == []
    assert not result.complete
    assert ("node05", "mlx5_0") not in result.lock.hca_nodes
    assert len(result.lock.hca_nodes) == 33
    assert len(result.lock.switches) == 6
    assert "planned but not found (1): node05/mlx5_0" in result.lines()


def test_an_extra_device_is_listed_and_not_locked() -> None:
    loaded, text, book = example_text()
    leaf = book.switch_guid("leaf01")
    assert leaf is not None
    intruder = (
        "\ncaguid=0x0000000000abc000\n"
        'Ca\t1 "H-0000000000abc000"\t\t# "intruder mlx5_0"\n'
        f'[1](abc001)\t"S-{leaf:016x}"[40]\t\t# lid 0 lmc 0 "leaf01" lid 0 4xHDR\n'
    )
    result = match_fabric(loaded, found_from_text(text + intruder))
    assert [(d.desc, d.guid) for d in result.extra] == [("intruder mlx5_0", 0xABC000)]
    assert result.not_found == []
    assert not result.complete
    assert 0xABC000 not in result.lock.hca_nodes.values()
    assert any('HCA "intruder mlx5_0" 0x0000000000abc000' in line for line in result.lines())


def test_a_device_at_the_wrong_port_is_not_matched_by_position() -> None:
    loaded, text, book = example_text()
    guid = book.hca_guid("node07", "mlx5_0")
    assert guid is not None
    text = redescribe(text, "node07 mlx5_0", "stranger mlx5_0")
    # move the cable from leaf01:8 to leaf01:30 (a port the plan leaves free)
    text = re.sub(rf'^\[8\](\t"H-{guid:016x}")', r"[30]\1", text, flags=re.M)
    leaf = f'"S-{book.switch_guid("leaf01"):016x}"'
    assert f"\t{leaf}[8]" in text
    text = text.replace(f"\t{leaf}[8]", f"\t{leaf}[30]")
    result = match_fabric(loaded, found_from_text(text))
    assert result.not_found == ["node07/mlx5_0"]
    assert [d.desc for d in result.extra] == ["stranger mlx5_0"]


def test_spec_guids_match_first_and_a_different_guid_is_a_conflict_kept_out_of_the_lock() -> None:
    loaded, text, _book = example_text(RACK)
    result = match_fabric(loaded, found_from_text(text))
    assert {m.how for m in result.matched} == {"GUID"}
    assert result.complete
    swapped = text.replace("c42a10300d8e3c8", "c42a10300d8ffff")  # node01's HCA (node and port GUID) replaced
    result = match_fabric(loaded, found_from_text(swapped))
    (conflict,) = result.conflicts
    assert (conflict.planned, conflict.spec_guids, conflict.device.guid, conflict.how) == (
        "node01/mlx5_0",
        (0x0C42A10300D8E3C8,),
        0x0C42A10300D8FFFF,
        "description",
    )
    assert ("node01", "mlx5_0") not in result.lock.hca_nodes
    assert not result.complete
    assert result.extra == []


def test_the_previous_lock_keeps_what_is_not_found_now_unless_its_guid_moved() -> None:
    loaded, text, book = example_text()
    before = match_fabric(loaded, found_from_text(text)).lock
    gone = book.hca_guid("node05", "mlx5_0")
    assert gone is not None
    result = match_fabric(loaded, found_from_text(drop_device(text, gone)), before)
    assert result.kept == ["node05/mlx5_0"]
    assert result.lock == before
    stale = LockFile({**before.switches, "leaf03": before.switches["leaf01"]}, before.hca_nodes, before.hca_ports)
    leaf03 = book.switch_guid("leaf03")
    assert leaf03 is not None
    result = match_fabric(loaded, found_from_text(drop_device(text, leaf03)), stale)
    assert "leaf03" in result.not_found
    assert "leaf03" not in result.kept
    assert "leaf03" not in result.lock.switches  # its old GUID is leaf01's now
