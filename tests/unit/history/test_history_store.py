"""The run history on disk (ibprov.history.store): runs oldest first with unique ids, the oldest beyond
``keep`` removed, the per-cluster lock, cluster names refused, nothing half-written listed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from historykit import fabric_run, finding, when

from ibprov.errors import CollectError, ExitCode, IbprovError
from ibprov.history.store import History, LockHeld


def test_runs_are_listed_oldest_first_whatever_order_they_were_saved_in(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    history.save(fabric_run(5), ended=when(5))
    history.save(fabric_run(1), ended=when(1))
    history.save(fabric_run(3), ended=when(3))
    assert [r.id for r in history.runs()] == ["20261201T010000Z", "20261201T030000Z", "20261201T050000Z"]
    assert [r.report()["started"] for r in history.runs()] == [
        "2026-12-01T01:00:00Z",
        "2026-12-01T03:00:00Z",
        "2026-12-01T05:00:00Z",
    ]


def test_two_runs_ending_in_the_same_second_get_unique_ids_in_save_order(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    first = history.save(fabric_run(0, [finding("link.down", "first")]), ended=when(1))
    second = history.save(fabric_run(0, [finding("link.down", "second")]), ended=when(1))
    assert first.id != second.id
    runs = history.runs()
    assert [r.id for r in runs] == [first.id, second.id]
    assert [r.report()["findings"][0]["object"] for r in runs] == ["first", "second"]


def test_ten_runs_ending_in_the_same_second_stay_in_save_order(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    saved = [history.save(fabric_run(0), ended=when(1)).id for _ in range(10)]
    assert [r.id for r in history.runs()] == saved


def test_keep_removes_the_oldest_runs_beyond_n(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    for hour in range(5):
        history.save(fabric_run(hour), keep=3, ended=when(hour))
    runs = history.runs()
    assert [r.id for r in runs] == ["20261201T020000Z", "20261201T030000Z", "20261201T040000Z"]
    assert sorted(p.name for p in history.path.iterdir() if p.is_dir()) == [r.id for r in runs]


def test_keep_below_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IbprovError, match="keep at least 1"):
        History(tmp_path, "rack1").save(fabric_run(0), keep=0)


def test_a_second_lock_of_the_same_cluster_is_refused_at_once_naming_the_lock_file_and_holder(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    with history.lock():
        with pytest.raises(LockHeld) as held, History(tmp_path, "rack1").lock():
            pytest.fail("the second lock was granted")
        assert held.value.exit_code == ExitCode.COLLECT_ERROR == 3
        assert str(tmp_path / "rack1" / ".lock") in str(held.value)
        assert f"pid {os.getpid()}" in str(held.value)
    with History(tmp_path, "rack1").lock():  # released: the next run gets it
        pass


def test_the_lock_of_one_cluster_does_not_hold_another(tmp_path: Path) -> None:
    with History(tmp_path, "rack1").lock(), History(tmp_path, "rack2").lock():
        assert (tmp_path / "rack2" / ".lock").exists()


@pytest.mark.parametrize("name", ["", "a/b", ".hidden", "..", "."])
def test_cluster_names_that_are_not_one_plain_directory_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(IbprovError, match="cannot keep a history for cluster name"):
        History(tmp_path, name)


def test_a_directory_being_saved_without_its_report_is_not_a_run(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    kept = history.save(fabric_run(0), ended=when(0))
    (history.path / ".saving-abc123").mkdir()
    (history.path / "20261202T000000Z").mkdir()  # a run directory without report.json
    assert [r.id for r in history.runs()] == [kept.id]


def test_a_temporary_directory_with_a_half_written_report_is_not_a_run(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    kept = history.save(fabric_run(0), ended=when(0))
    (history.path / ".saving-abc123").mkdir()
    (history.path / ".saving-abc123" / "report.json").write_text('{"schema_version": 2, "find')
    assert [r.id for r in history.runs()] == [kept.id]


def test_a_saved_run_leaves_no_temporary_directory(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    history.save(fabric_run(0), ended=when(0))
    assert [p.name for p in history.path.iterdir() if p.name.startswith(".saving")] == []


def test_a_cluster_without_runs_has_an_empty_history(tmp_path: Path) -> None:
    assert History(tmp_path / "nowhere", "rack1").runs() == []


def test_a_run_whose_report_is_not_json_says_which_file(tmp_path: Path) -> None:
    history = History(tmp_path, "rack1")
    kept = history.save(fabric_run(0), ended=when(0))
    (kept.path / "report.json").write_text("[1, 2]")
    with pytest.raises(IbprovError, match=r"report\.json: not a report"):
        kept.report()


def test_a_history_directory_that_cannot_be_made_is_a_collect_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with (
        pytest.raises(CollectError, match="cannot use the history directory") as err,
        History(tmp_path / "file", "rack1").lock(),
    ):
        pytest.fail("locked under a file")
    assert err.value.exit_code == 3
