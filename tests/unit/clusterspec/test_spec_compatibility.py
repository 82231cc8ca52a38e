"""The spec format keeps its promise: a spec that validated under an earlier release of the same ``version``
still validates. A value renamed since (``acceptance.pairs``: ring, all, leaf_spread) is read as its new
spelling, with a located deprecation warning that names it; the old examples of the project's history
(tests/data/old-specs/, each from git with its source line) validate with exactly their warnings.

Expected strings are ``LINE:COL: path: message`` (the file name left out), each kept whole so that it can be
grepped for: hence no line-length limit in this file.
"""

# ruff: noqa: E501

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.clusterspec import load_spec, load_spec_text
from ibprov.clusterspec.model import Acceptance, ClusterSpec
from ibprov.clusterspec.schema import json_schema
from ibprov.errors import SpecError

REPO = Path(__file__).resolve().parents[3]
OLD_SPECS = REPO / "tests" / "data" / "old-specs"
OLD_SPEC_FILES = sorted(OLD_SPECS.glob("*.yaml"))

SMALL = """\
version: 1
cluster: {name: tiny}
nodes:
  - {name: a, hcas: [{device: mlx5_0}]}
  - {name: b, hcas: [{device: mlx5_0}]}
switches:
  - {name: leaf01, role: leaf, ports: 8}
fabric:
  speed: EDR
  links: ["leaf01:1 <-> a/mlx5_0:1", "leaf01:2 <-> b/mlx5_0:1"]
subnet_manager:
  instances: [{node: a}]
acceptance:
  soak_seconds: 0
  pairs: {pairs}
"""

RENAMED = [("ring", "quick"), ("all", "all-pairs"), ("leaf_spread", "route-aware")]

# every old spec and exactly the warnings it gets now (LINE:COL: path: message); a spec the loader cannot
# take any more is a bug to fix, not an entry to change
OLD_SPEC_WARNINGS: dict[str, list[str]] = {
    "b6e8958-2026-12-02-example.yaml": ["156:10: acceptance.pairs: 'ring' is deprecated, write 'quick'"],
    "b6e8958-2026-12-02-fat-tree.yaml": ["73:10: acceptance.pairs: 'leaf_spread' is deprecated, write 'route-aware'"],
    "b6e8958-2026-12-02-qos-partitions.yaml": [],
    "b6e8958-2026-12-02-rack.yaml": [],
    "e483ed0-2026-12-03-example.yaml": [],
    "e483ed0-2026-12-03-fat-tree.yaml": [],
    "b4f2bdd-2026-12-04-fat-tree.yaml": [],
    "17f45b2-2026-12-04-example.yaml": [],
}


def small(pairs: str) -> str:
    return SMALL.replace("{pairs}", pairs)


def warnings_of(text: str, name: str = "s.yaml") -> list[str]:
    return [str(w).removeprefix(f"{name}:") for w in load_spec_text(text, name).warnings]


# ------------------------------------------------------------------------------------- old spellings
@pytest.mark.parametrize(("old", "new"), RENAMED)
def test_an_old_spelling_validates_with_a_located_deprecation_warning(old: str, new: str) -> None:
    assert warnings_of(small(old)) == [f"15:10: acceptance.pairs: {old!r} is deprecated, write {new!r}"]


@pytest.mark.parametrize(("old", "new"), RENAMED)
def test_everything_after_the_loader_sees_only_the_new_spelling(old: str, new: str) -> None:
    loaded = load_spec_text(small(old))
    assert loaded.spec.acceptance.pairs == new
    assert loaded.spec == load_spec_text(small(new)).spec
    assert ClusterSpec.model_validate(yaml.safe_load(small(old))).acceptance.pairs == new
    assert Acceptance(pairs=old).pairs == new  # type: ignore[arg-type]


@pytest.mark.parametrize("new", ["quick", "all-pairs", "rail-aware", "route-aware"])
def test_a_current_spelling_gets_no_warning(new: str) -> None:
    assert warnings_of(small(new)) == []


def test_an_old_spelling_in_flow_style_is_located_at_its_value() -> None:
    text = small("ring").replace(
        "acceptance:\n  soak_seconds: 0\n  pairs: ring\n", "acceptance: {soak_seconds: 0, pairs: ring}\n"
    )
    assert warnings_of(text) == ["13:38: acceptance.pairs: 'ring' is deprecated, write 'quick'"]


def test_a_misspelt_schedule_is_still_an_error_that_names_only_the_current_spellings() -> None:
    with pytest.raises(SpecError) as info:
        load_spec_text(small("rnig"), "s.yaml")
    assert [str(p).removeprefix("s.yaml:") for p in info.value.problems] == [
        "15:10: acceptance.pairs: 'rnig' is not allowed: input should be 'quick', 'all-pairs', 'rail-aware' or 'route-aware'"
    ]


def test_an_old_spelling_warns_beside_the_routing_warnings_sorted_by_position() -> None:
    text = small("all").replace("  instances:", "  routing_engine: minhop\n  roots: [leaf01]\n  instances:")
    assert warnings_of(text) == [
        "13:10: subnet_manager.roots: roots are read by updn, dnup and ftree, and routing_engine lists none of them (minhop): OpenSM ignores them",
        "17:10: acceptance.pairs: 'all' is deprecated, write 'all-pairs'",
    ]


def test_validate_prints_the_deprecation_warning_on_stderr_and_exits_0(tmp_path: Path) -> None:
    spec = tmp_path / "old.yaml"
    spec.write_text(small("leaf_spread"))
    result = CliRunner().invoke(cli, ["validate", str(spec)], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout.endswith("; 1 warning\n")
    assert result.stderr.splitlines() == [
        f"{spec}:15:10: acceptance.pairs: warning: 'leaf_spread' is deprecated, write 'route-aware'"
    ]


def test_the_json_schema_takes_an_old_spelling_as_deprecated() -> None:
    pairs = json_schema()["$defs"]["Acceptance"]["properties"]["pairs"]
    (old,) = [alternative for alternative in pairs["anyOf"] if alternative.get("deprecated")]
    assert old["enum"] == ["ring", "all", "leaf_spread"]


def test_the_reference_lists_the_deprecated_spellings_of_the_field() -> None:
    doc = (REPO / "docs" / "spec.md").read_text(encoding="utf-8")
    (row,) = [line for line in doc.splitlines() if line.startswith("| `pairs` |")]
    assert row.endswith(
        "Deprecated spellings, still read with a warning: `ring` (write `quick`), `all` (write `all-pairs`), `leaf_spread` (write `route-aware`). |"
    )


# -------------------------------------------------------------------------------- old specs from git
def test_every_old_spec_has_its_expected_warnings_listed() -> None:
    assert sorted(p.name for p in OLD_SPEC_FILES) == sorted(OLD_SPEC_WARNINGS)


@pytest.mark.parametrize("path", OLD_SPEC_FILES, ids=lambda p: p.name)
def test_an_old_spec_from_the_history_starts_with_its_source_line(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.fullmatch(r"# source: ibprov ([0-9a-f]{7,40}) (\S+)", first)
    assert match, first
    assert path.name.startswith(match[1] + "-")


@pytest.mark.parametrize("path", OLD_SPEC_FILES, ids=lambda p: p.name)
def test_an_old_spec_from_the_history_validates_with_exactly_its_warnings(path: Path) -> None:
    loaded = load_spec(path)
    assert [str(w).removeprefix(f"{path}:") for w in loaded.warnings] == OLD_SPEC_WARNINGS[path.name]


@pytest.mark.parametrize("path", OLD_SPEC_FILES, ids=lambda p: p.name)
def test_the_json_schema_accepts_an_old_spec_from_the_history(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    errors = [f"{list(e.path)}: {e.message}" for e in jsonschema.Draft202012Validator(json_schema()).iter_errors(data)]
    assert errors == []
