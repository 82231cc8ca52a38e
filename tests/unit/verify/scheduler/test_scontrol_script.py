"""The script that carries the scontrol commands to the controller runs each one in a real bash, goes on after
a failure, and its output gives each command's outcome and message (quoting survives reasons with spaces,
quotes and shell characters)."""

from __future__ import annotations

import subprocess

from ibprov.verify.scheduler.collect import parse_results, run_script


def test_each_command_runs_once_in_order_and_a_failure_does_not_stop_the_others() -> None:
    commands = [
        ["printf", "%s\n", "Reason=ibprov: link.state leaf01:1 <-> cn01/mlx5_0:1 $(reboot) `x` it's"],
        ["sh", "-c", "echo slurm_update error: Invalid node name specified >&2; exit 1"],
        ["true"],
    ]
    done = subprocess.run(["bash", "-c", run_script(commands)], capture_output=True, text=True, check=True)
    results = parse_results(commands, done.stdout)
    assert [r.ok for r in results] == [True, False, True]
    assert results[0].output == "Reason=ibprov: link.state leaf01:1 <-> cn01/mlx5_0:1 $(reboot) `x` it's"
    assert results[1].output == "slurm_update error: Invalid node name specified"


def test_a_command_whose_marker_never_came_did_not_run() -> None:
    results = parse_results([["true"], ["true"]], "### ibprov-scontrol 0 0\n")
    assert [(r.ok, r.output) for r in results] == [(True, ""), (False, "did not run")]
