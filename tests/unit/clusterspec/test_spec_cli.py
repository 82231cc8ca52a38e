"""The spec commands of the CLI: validate, schema, example — exit codes, message format, no tracebacks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ibprov.cli import cli
from ibprov.clusterspec import load_spec
from ibprov.clusterspec.example import example_text

REPO = Path(__file__).resolve().parents[3]
RACK = REPO / "examples" / "rack.yaml"
PROBLEM_LINE = re.compile(
    r"^(?P<file>[^:]+):(?P<line>[1-9]\d*):(?P<col>[1-9]\d*): (?:(?P<path>[\w.\[\]]+): )?(?P<msg>.+)$"
)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def assert_clean(result: Result) -> None:
    """No traceback and no internal error, whatever the input."""
    assert "Traceback" not in result.output
    assert "internal error" not in result.output
    assert result.exit_code != 70


def test_validate_a_valid_spec_exits_0_with_a_summary() -> None:
    result = run("validate", str(RACK))
    assert result.exit_code == 0
    assert result.stdout == (
        f"{RACK}: valid — cluster rack1: 6 nodes, 1 switches (0 generated), 6 links, 0 partitions, "
        "2 subnet managers, QoS off\n"
    )
    assert result.stderr == ""


def test_validate_quiet_prints_nothing_for_a_valid_spec() -> None:
    result = run("validate", "-q", str(RACK))
    assert (result.exit_code, result.output) == (0, "")


def test_validate_an_invalid_spec_exits_2_with_one_line_per_problem(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(RACK.read_text().replace("speed: HDR", "speed: HRD").replace("  name: rack1", "  nmae: rack1"))
    result = run("validate", str(spec))
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[-1] == "3 problems found"
    assert lines[:-1] == [
        f"{spec}:6:3: cluster.name: missing required key 'name'",
        f"{spec}:6:3: cluster.nmae: unknown key 'nmae' (did you mean 'name'?)",
        f"{spec}:54:10: fabric.speed: 'HRD' is not allowed: input should be 'SDR', 'DDR', 'QDR', 'FDR10', 'FDR', "
        "'EDR', 'HDR', 'NDR' or 'XDR' (did you mean 'HDR'?)",
    ]
    for line in lines[:-1]:
        assert PROBLEM_LINE.match(line), line


def test_validate_a_single_problem_says_problem_not_problems(tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text(RACK.read_text().replace("priority: 14", "priority: 15"))
    result = run("validate", str(spec))
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "1 problem found"


def test_validate_a_missing_file_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    result = run("validate", str(missing))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"{missing}:1:1: no such file", "1 problem found"]
    assert_clean(result)


def test_validate_a_directory_exits_2(tmp_path: Path) -> None:
    result = run("validate", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == f"{tmp_path}:1:1: is a directory, not a spec file"
    assert_clean(result)


NASTY: dict[str, bytes] = {
    "empty": b"",
    "whitespace": b"   \n\n",
    "list": b"- 1\n- 2\n",
    "syntax": b"cluster: [\n",
    "invalid-utf8": b"cluster:\n  name: \xc3\x28\n",
    "utf16": "cluster: {name: x}\n".encode("utf-16"),
    "nul": b"cluster: {name: x}\x00\n",
    "binary": bytes(range(256)) * 4,
    "deep": b"[" * 100_000,
    "deep-block": b"".join(b"  " * i + b"- \n" for i in range(2_000)),
    "bomb": b"a: &a [x,x,x,x,x,x,x,x,x]\n"
    + b"".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n".encode() for i in range(9)),
    "tag": b"cluster: !!python/name:os.system x\n",
    "two-docs": b"a: 1\n---\nb: 2\n",
    "long-line": b"cluster: " + b"x" * 1_000_000 + b"\n",
    "huge-number": b"version: 1" + b"0" * 5000 + b"\n",
}


@pytest.mark.parametrize("content", NASTY.values(), ids=NASTY.keys())
def test_validate_never_prints_a_traceback(tmp_path: Path, content: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # an internal error would leave ibprov-debug.log here
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(content)
    result = run("validate", str(spec))
    assert result.exit_code == 2, result.output
    assert_clean(result)
    assert not (tmp_path / "ibprov-debug.log").exists()
    lines = result.stderr.splitlines()
    assert re.fullmatch(r"\d+ problems? found", lines[-1])
    for line in lines[:-1]:
        assert PROBLEM_LINE.match(line), line


def test_schema_prints_json_with_the_top_level_sections() -> None:
    result = run("schema")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["title"]
    assert set(schema["properties"]) == {
        "version", "cluster", "nodes", "switches", "fabric", "stack", "subnet_manager",
        "partitions", "default_partition", "qos", "ipoib", "mpi", "acceptance", "scheduler", "monitoring",
    }  # fmt: skip
    assert schema["additionalProperties"] is False


def test_example_prints_the_example_to_stdout() -> None:
    result = run("example")
    assert result.exit_code == 0
    assert result.stdout == example_text()


def test_example_writes_a_spec_that_validates(tmp_path: Path) -> None:
    target = tmp_path / "cluster.yaml"
    result = run("example", "-o", str(target))
    assert result.exit_code == 0
    assert result.stderr == f"wrote {target}\n"
    assert target.read_text() == example_text()
    load_spec(target)
    assert run("validate", str(target)).exit_code == 0


def test_example_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    target = tmp_path / "cluster.yaml"
    target.write_text("mine\n")
    result = run("example", "-o", str(target))
    assert result.exit_code == 2
    assert result.stderr == f"error: {target} exists; use --force to overwrite it\n"
    assert target.read_text() == "mine\n"
    result = run("example", "-o", str(target), "--force")
    assert result.exit_code == 0
    assert target.read_text() == example_text()
