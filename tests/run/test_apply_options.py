"""ApplyOptions (how apply runs) is built once by the CLI and read whole by every layer below it; a Target (where
it runs) only narrows it: its hosts, the tasks it cannot run. Ansible itself is a test double here."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

import ibprov.cli
import ibprov.run
from ibprov.cli import cli
from ibprov.clusterspec import load_spec
from ibprov.errors import IbprovError
from ibprov.run import ApplyOptions, RunResult, Target, apply_spec, run_playbook

RACK = Path(__file__).resolve().parents[2] / "examples" / "rack.yaml"


def test_options_are_frozen_and_default_to_a_tuned_real_run() -> None:
    options = ApplyOptions()
    assert (options.check, options.diff, options.limit, options.tags, options.skip_tags, options.tuned) == (
        False,
        False,
        None,
        None,
        None,
        True,
    )
    with pytest.raises(FrozenInstanceError):
        options.check = True  # type: ignore[misc]


def test_skipping_adds_tags_and_within_intersects_the_limit() -> None:
    assert ApplyOptions().skipping(["ib_sm"]).skip_tags == "ib_sm"
    assert ApplyOptions(skip_tags="a,b").skipping(["ib_sm", "molecule-notest"]).skip_tags == "a,b,ib_sm,molecule-notest"
    assert ApplyOptions().within(["n1", "n2"]).limit == "n1,n2"
    assert ApplyOptions(limit="compute").within(["n1", "n2"]).limit == "n1,n2,&compute"
    assert ApplyOptions(check=True, tags="x").within(["n1"]).skipping(["y"]) == ApplyOptions(
        check=True, tags="x", limit="n1", skip_tags="y"
    ), "the other choices stay as they were"


def test_retrying_names_the_hosts_that_failed_last_time(tmp_path: Path) -> None:
    (tmp_path / "failed-hosts").write_text("n2\nn5\n")
    assert ApplyOptions(limit="@failed", diff=True).retrying(tmp_path) == ApplyOptions(limit="n2,n5", diff=True)
    assert ApplyOptions(limit="n1").retrying(tmp_path) == ApplyOptions(limit="n1")
    with pytest.raises(IbprovError, match="no failed hosts recorded"):
        ApplyOptions(limit="@failed").retrying(tmp_path / "fresh")


def _fake_ansible(tmp_path: Path, seen: list[dict[str, Any]]) -> Any:
    def run(**kwargs: Any) -> Any:
        seen.append(kwargs)
        config = SimpleNamespace(artifact_dir=str(tmp_path / "artifacts"))
        return SimpleNamespace(stats={"ok": {"n1": 1}}, rc=0, status="successful", events=[], config=config)

    return run


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (ApplyOptions(), {"cmdline": None, "limit": None, "tags": None, "skip_tags": None}),
        (ApplyOptions(check=True), {"cmdline": "--check"}),
        (ApplyOptions(diff=True), {"cmdline": "--diff"}),
        (ApplyOptions(check=True, diff=True), {"cmdline": "--check --diff"}),
        (ApplyOptions(limit="n1,n2"), {"limit": "n1,n2"}),
        (ApplyOptions(tags="ib_sm"), {"tags": "ib_sm"}),
        (ApplyOptions(skip_tags="molecule-notest"), {"skip_tags": "molecule-notest"}),
    ],
)
def test_run_playbook_hands_each_option_to_ansible_runner(
    tmp_path: Path, options: ApplyOptions, expected: dict[str, Any]
) -> None:
    seen: list[dict[str, Any]] = []
    playbook = tmp_path / "play" / "site.yml"
    run_playbook(
        playbook,
        tmp_path / "inv.yml",
        tmp_path / "run",
        options,
        roles_path=tmp_path,
        run=_fake_ansible(tmp_path, seen),
    )
    (call,) = seen
    assert {key: call[key] for key in expected} == expected


def test_an_untuned_run_has_ansibles_defaults(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    playbook = tmp_path / "play" / "site.yml"
    for options in (ApplyOptions(), ApplyOptions(tuned=False)):
        run_playbook(
            playbook,
            tmp_path / "inv.yml",
            tmp_path / "run",
            options,
            roles_path=tmp_path,
            run=_fake_ansible(tmp_path, seen),
        )
    tuned, untuned = seen
    assert tuned["envvars"]["ANSIBLE_PIPELINING"] == "True"
    assert tuned["settings"]["fact_cache_type"] == "jsonfile"
    assert "ANSIBLE_PIPELINING" not in untuned["envvars"]
    assert untuned["settings"] == {}


def test_apply_spec_narrows_the_options_to_the_target_and_retries_its_failed_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IBPROV_SM_KEY", "0x1")
    seen: list[tuple[list[Path], ApplyOptions]] = []

    def fake_run_playbook(
        _playbook: Path, inventory: list[Path], run_dir: Path, options: ApplyOptions, **_: Any
    ) -> RunResult:
        seen.append((inventory, options))
        return RunResult("successful", 0, {}, run_dir)

    monkeypatch.setattr(ibprov.run, "run_playbook", fake_run_playbook)
    (tmp_path / "run" / "runner").mkdir(parents=True)
    (tmp_path / "run" / "runner" / "failed-hosts").write_text("node02\n")
    twin = Target(
        "twin", inventory=tmp_path / "twin.yml", hosts=("node01", "node02"), unsupported_tags=("molecule-notest",)
    )
    asked = ApplyOptions(check=True, limit="@failed", skip_tags="kernel", tuned=False)
    apply_spec(load_spec(RACK), tmp_path / "run", asked, target=twin)
    ((inventory, options),) = seen
    assert inventory == [tmp_path / "run" / "rendered" / "inventory", tmp_path / "twin.yml"]
    assert options == ApplyOptions(
        check=True, limit="node01,node02,&node02", skip_tags="kernel,molecule-notest", tuned=False
    ), "@failed is read before the limit is the target's hosts: Ansible would take '&@failed' for a host"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["apply"], ApplyOptions(diff=True)),  # --diff is apply's default
        (["plan"], ApplyOptions(check=True, diff=True)),
        (["apply", "--check"], ApplyOptions(check=True, diff=True)),
        (["apply", "--check", "--no-diff"], ApplyOptions(check=True)),
        (["apply", "--limit", "node01"], ApplyOptions(diff=True, limit="node01")),
        (
            ["plan", "--tags", "ib_sm", "--skip-tags", "kernel"],
            ApplyOptions(check=True, diff=True, tags="ib_sm", skip_tags="kernel"),
        ),
        (["apply", "--untuned"], ApplyOptions(diff=True, tuned=False)),
    ],
)
def test_the_cli_builds_the_options_once_from_its_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], expected: ApplyOptions
) -> None:
    seen: list[tuple[Path, ApplyOptions, dict[str, Any]]] = []

    def fake_apply_spec(_loaded: Any, run_dir: Path, options: ApplyOptions, **where: Any) -> RunResult:
        seen.append((run_dir, options, where))
        return RunResult("successful", 0, {}, run_dir)

    monkeypatch.setattr(ibprov.cli, "apply_spec", fake_apply_spec)
    result = CliRunner().invoke(cli, [*argv, str(RACK), "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    ((run_dir, options, where),) = seen
    assert (run_dir, options) == (tmp_path / "run", expected)
    assert where["target"] is None
    assert f"{'plan' if expected.check else 'apply'}: rack1" in result.output
