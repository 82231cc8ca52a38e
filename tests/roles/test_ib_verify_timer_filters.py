"""Unit tests for roles/ib_verify_timer/filter_plugins/ib_verify_timer.py: every input problem at once, the
systemd quoting of ExecStart= and EnvironmentFile= lines, and which wheels an incremental copy sends."""

from __future__ import annotations

from typing import Any

from role_code import load

f = load("ib_verify_timer", "filter_plugins/ib_verify_timer.py", "ib_verify_timer_filters")

GOOD: dict[str, Any] = {
    "spec_path": "/etc/ibprov/cluster.yaml",
    "history_dir": "/var/lib/ibprov/history",
    "textfile_dir": "/var/lib/prometheus/node-exporter",
    "lock_file": "/run/ibprov-verify.lock",
    "venv": "/opt/ibprov",
    "command": "/opt/ibprov/bin/ibprov",
    "wheelhouse_dest": "/var/cache/ibprov/wheelhouse",
    "metrics_file": "ibprov.prom",
    "keep": 90,
    "sections": ["fabric"],
    "extra_args": ["--via", "sm01"],
    "on_calendar": "*-*-* 00/6:00:00",
    "randomized_delay_sec": "0",
    "timeout_sec": "1h",
    "environment": {"IBPROV_SM_KEY": "0x1"},
}


def test_good_input_has_no_problems() -> None:
    assert f.ib_verify_timer_problems(GOOD) == []


def test_every_problem_is_reported_at_once() -> None:
    bad = GOOD | {
        "history_dir": "var/lib/h",
        "metrics_file": "ibprov.txt",
        "keep": True,
        "sections": ["fabric", "fabrik", "fabric"],
        "extra_args": ["--metrics=/tmp/x.prom"],
        "on_calendar": "daily\nExecStartPre=/bin/evil",
        "environment": {"1BAD": "x", "TOKEN": "a\nb"},
    }
    problems = f.ib_verify_timer_problems(bad)
    assert problems == [
        "ib_verify_timer_history_dir: 'var/lib/h' is not an absolute path",
        "ib_verify_timer_metrics_file: 'ibprov.txt' must be a file name ending in .prom (node_exporter's textfile "
        "collector reads no other files)",
        "ib_verify_timer_keep: True is not a number of runs (1 or more)",
        "ib_verify_timer_sections[1]: 'fabrik' is none of fabric, nodes, routing, scheduler, mpi, perf, backend",
        "ib_verify_timer_sections: ['fabric', 'fabrik', 'fabric'] names a section twice",
        "ib_verify_timer_extra_args[0]: --metrics=/tmp/x.prom is set by the role (ib_verify_timer_history_dir, "
        "ib_verify_timer_keep, ib_verify_timer_metrics_file)",
        "ib_verify_timer_on_calendar: 'daily\\nExecStartPre=/bin/evil' holds a line break or NUL",
        "ib_verify_timer_environment: '1BAD' is not an environment variable name",
        "ib_verify_timer_environment.TOKEN: the value holds a line break or NUL",
    ]
    assert "a\nb" not in " ".join(problems), "a secret's value is never shown"


def test_exec_start_quotes_what_systemd_would_split_or_expand() -> None:
    argv = ["/usr/bin/flock", "--nonblock", "/run/l", "/opt/ibprov/bin/ibprov", "verify", "/etc/my spec.yaml"]
    argv += ["--html", '/var/www/100%/$HOME/"x".html']
    assert f.ib_verify_timer_exec_args(argv) == (
        '/usr/bin/flock --nonblock /run/l /opt/ibprov/bin/ibprov verify "/etc/my spec.yaml" '
        '--html "/var/www/100%%/$$HOME/\\"x\\".html"'
    )


def test_environment_lines_escape_what_an_environment_file_would_expand() -> None:
    assert f.ib_verify_timer_env_lines({"B": 'a"b$c`d\\e', "A": 1}) == ['A="1"', 'B="a\\"b\\$c\\`d\\\\e"']


def test_only_new_or_changed_wheels_are_copied_and_only_gone_ones_removed() -> None:
    controller = [{"path": "/w/a.whl", "checksum": "1"}, {"path": "/w/b.whl", "checksum": "2"}]
    host = [{"path": "/h/a.whl", "checksum": "1"}, {"path": "/h/b.whl", "checksum": "old"}, {"path": "/h/c.whl"}]
    assert f.ib_verify_timer_wheels_to_copy(controller, host) == ["/w/b.whl"]
    assert f.ib_verify_timer_wheels_to_remove(host, controller) == ["/h/c.whl"]
    assert f.ib_verify_timer_wheels_to_copy(controller, []) == ["/w/a.whl", "/w/b.whl"]
