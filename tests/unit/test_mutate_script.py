"""`make mutate` (scripts/mutate.py): how it reads mutmut's answers, scores modules, leaves the listed
equivalent mutants out, and keeps the score table; and the list of equivalents itself stays true."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from scriptload import load_script

REPO = Path(__file__).resolve().parents[2]


mutate = load_script("mutate")

SHOW = """# ibprov.hostlist.x_expand__mutmut_11: survived
--- ibprov/hostlist.py
+++ ibprov/hostlist.py
@@ -6,7 +6,7 @@
         names.extend(_expand_one(part, text))
-        if len(names) > MAX_HOSTS:
+        if len(names) >= MAX_HOSTS:
             raise ValueError(f"hostlist {text!r} names more than {MAX_HOSTS:,} hosts")
"""


def test_the_changed_line_of_a_mutant_is_read_from_mutmuts_diff_without_the_file_headers() -> None:
    assert mutate.changed_line(SHOW) == ("if len(names) > MAX_HOSTS:", "if len(names) >= MAX_HOSTS:")


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("ibprov.hostlist.x_expand__mutmut_11", ("ibprov/hostlist.py", "expand")),
        ("ibprov.hostlist.x__split_top__mutmut_3", ("ibprov/hostlist.py", "_split_top")),
        ("ibprov.smbackend.ufm.payload.x_read_pkey__mutmut_2", ("ibprov/smbackend/ufm/payload.py", "read_pkey")),
        ("ibprov.history.diff.xǁDiffǁ__init____mutmut_1", ("ibprov/history/diff.py", "Diff.__init__")),
        ("ibprov.routing.x_f__mutmut_1", ("ibprov/routing/__init__.py", "f")),
    ],
)
def test_a_mutant_name_gives_its_module_file_and_function(name: str, where: tuple[str, str]) -> None:
    modules = [
        "ibprov/hostlist.py",
        "ibprov/smbackend/ufm/payload.py",
        "ibprov/history/diff.py",
        "ibprov/routing/__init__.py",
    ]
    assert mutate.module_of(name, modules) == where


def test_a_mutant_of_a_module_not_asked_for_is_an_error_not_a_silent_skip() -> None:
    with pytest.raises(ValueError, match="in no module asked for"):
        mutate.module_of("ibprov.pkey.x_f__mutmut_1", ["ibprov/hostlist.py"])


def test_timeouts_count_as_killed_and_listed_equivalents_leave_the_score() -> None:
    equivalent = mutate.Equivalent("ibprov/x.py", "f", "a = 1", "a = 2", "why")
    s = mutate.ModuleScore("ibprov/x.py", status=Counter({"killed": 16, "timeout": 2, "survived": 2}))
    assert (s.total, s.killed, s.score) == (20, 18, 0.9)
    s.equivalent.append(("ibprov.x.x_f__mutmut_1", equivalent))
    assert s.score == 18 / 19
    assert mutate.ModuleScore("ibprov/x.py", status=Counter({"no tests": 3})).score == 0.0, "untested is not killed"
    assert mutate.ModuleScore("ibprov/x.py").score == 1.0, "no mutant: nothing to miss"


def test_the_report_flags_a_module_under_the_target_and_shows_each_survivor_with_its_change() -> None:
    s = mutate.ModuleScore("ibprov/x.py", status=Counter({"killed": 8, "survived": 2}))
    s.survivors = [
        ("ibprov.x.x_f__mutmut_3", "survived", "a > b", "a >= b"),
        ("ibprov.x.x_f__mutmut_4", "no tests", "x", "None"),
    ]
    text = mutate.report([s], 0.9)
    assert "80.0%  < target" in text.splitlines()[1]
    assert "ibprov.x.x_f__mutmut_3 (ibprov/x.py) survived:\n  - a > b\n  + a >= b" in text
    assert "ibprov.x.x_f__mutmut_4 (ibprov/x.py) no tests:\n  - x\n  + None" in text, "no test calls it: said so"
    assert "< target" not in mutate.report([mutate.ModuleScore("ibprov/x.py", Counter(killed=9, survived=1))], 0.9)


def test_recording_replaces_a_modules_row_keeps_the_others_and_the_text_around(tmp_path: Path) -> None:
    table = tmp_path / "mutation.md"
    table.write_text(
        "# Mutation testing\n\nbefore\n<!-- scores:start -->\n| module | ... |\n|---|\n"
        "| `ibprov/a.py` | 1 | 1 | 0 | 0 | 100.0% | old |\n| `ibprov/b.py` | 4 | 2 | 0 | 2 | 50.0% | old |\n"
        "<!-- scores:end -->\nafter\n"
    )
    mutate.record([mutate.ModuleScore("ibprov/b.py", Counter(killed=9, survived=1))], table)
    text = table.read_text()
    assert text.startswith("# Mutation testing\n\nbefore\n<!-- scores:start -->\n| module |")
    assert text.endswith("<!-- scores:end -->\nafter\n")
    rows = [ln for ln in text.splitlines() if ln.startswith("| `")]
    assert rows[0] == "| `ibprov/a.py` | 1 | 1 | 0 | 0 | 100.0% | old |"
    assert rows[1].startswith("| `ibprov/b.py` | 10 | 9 | 0 | 1 | 90.0% | ")
    assert len(rows) == 2


def test_the_work_directory_sees_the_repository_and_mutates_only_the_modules_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutate, "WORK", tmp_path / ".mutate")
    work = mutate.work_dir(["ibprov/hostlist.py", "ibprov/pkey.py"])
    assert (work / "ibprov").resolve() == REPO / "ibprov"
    assert (work / "tests").resolve() == REPO / "tests"
    assert not (work / ".git").exists(), "mutmut never sees (or touches) the repository's git"
    text = (work / "pyproject.toml").read_text()
    assert 'only_mutate = ["ibprov/hostlist.py", "ibprov/pkey.py"]' in text
    assert not (work / "pyproject.toml").is_symlink(), "the repository's pyproject.toml is never changed"
    assert mutate.work_dir(["ibprov/hostlist.py", "ibprov/pkey.py"]) == work, "kept for the next run"
    assert mutate.mutant_globs(["ibprov/hostlist.py", "ibprov/routing/__init__.py"]) == [
        "ibprov.hostlist.*",
        "ibprov.routing.*",
    ]


def test_every_listed_equivalent_names_a_line_its_module_still_has_and_says_why() -> None:
    """An equivalent whose line changed is judged again: its entry must go (or be rewritten), not linger."""
    listed = mutate.load_equivalents()
    assert listed, "tests/mutation/equivalents.toml is read"
    for entry in listed:
        source = (REPO / entry.module).read_text()
        lines = {line.strip() for line in source.splitlines()}
        assert entry.before in lines, f"{entry.module}: no line {entry.before!r} any more"
        assert f"def {entry.function.rsplit('.', 1)[-1]}(" in source, f"{entry.module}: no {entry.function}"
        assert entry.before != entry.after
        assert len(entry.why) > 20, entry
    keys = [(e.module, e.function, e.before, e.after) for e in listed]
    assert len(keys) == len(set(keys)), "each equivalent listed once"


def test_spec_rules_are_judged_by_the_spec_s_own_tests_and_everything_else_by_the_unit_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutate, "WORK", tmp_path / ".mutate")
    rules = ["ibprov/clusterspec/rules/sm.py", "ibprov/clusterspec/advice.py"]
    assert (
        'pytest_add_cli_args_test_selection = ["tests/unit/clusterspec/"]'
        in (mutate.work_dir(rules) / "pyproject.toml").read_text()
    )
    mixed = mutate.work_dir(["ibprov/clusterspec/rules/sm.py", "ibprov/pkey.py"])
    assert 'pytest_add_cli_args_test_selection = ["tests/unit/"]' in (mixed / "pyproject.toml").read_text()
    assert mutate.tests_for([]) is None
