"""`ibprov apply` / `ibprov plan` from the command line: spec errors stop before Ansible, unreachable hosts are
named with the way to retry them (the hosts point at loopback, where no SSH server answers for them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ibprov.cli import cli

RACK = Path(__file__).resolve().parents[2] / "examples" / "rack.yaml"


def _loopback_rack(tmp_path: Path) -> Path:
    """The example rack with its nodes at 127.0.0.11, .12, ... (SSH port 1: nothing listens), user nobody."""
    text = RACK.read_text().replace("  name: rack1\n", "  name: rack1\n  ssh_user: nobody\n", 1)
    addresses = iter(range(11, 100))
    text = re.sub(
        r"^  - name: ((?:sm|node)\d+)\n",
        lambda m: f"{m[0]}    address: 127.0.0.{next(addresses)}\n",
        text,
        flags=re.MULTILINE,
    )
    spec = tmp_path / "rack.yaml"
    spec.write_text(text)
    return spec


def test_a_spec_error_exits_2_with_its_location_and_runs_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(RACK.read_text().replace("priority: 14", "priority: 16", 1))
    result = CliRunner().invoke(cli, ["apply", str(spec), "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert re.search(r"bad\.yaml:\d+:\d+: subnet_manager\.instances\[1\]\.priority: ", result.output)
    assert not (tmp_path / "run").exists()


def test_unreachable_hosts_are_named_with_the_retry_and_recorded_for_limit_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IBPROV_SM_KEY", "0x1")
    monkeypatch.setenv("ANSIBLE_SSH_COMMON_ARGS", "-p 1 -o UserKnownHostsFile=/dev/null")
    run_dir = tmp_path / "run"
    result = CliRunner().invoke(cli, ["plan", str(_loopback_rack(tmp_path)), "--run-dir", str(run_dir)])
    nodes = ["node01", "node02", "node03", "node04", "sm01", "sm02"]
    assert result.exit_code == 1, result.output
    assert f"failed or unreachable: {', '.join(nodes)}; retry them with --limit @failed" in result.output
    assert (run_dir / "runner" / "failed-hosts").read_text().split() == nodes
    assert (run_dir / "rendered" / "inventory" / "hosts.yml").is_file()


def test_a_new_rack_without_guids_applies_everything_but_the_subnet_managers_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.setenv("IBPROV_SM_KEY", "0x1")
    monkeypatch.setenv("ANSIBLE_SSH_COMMON_ARGS", "-p 1 -o UserKnownHostsFile=/dev/null")
    spec = _loopback_rack(tmp_path)
    text = re.sub(r"\n *node_guid: .*\n *port_guids: .*", "", spec.read_text())
    spec.write_text(text + "\npartitions:\n  - {name: compute, pkey: 0x0010, members: [{group: compute}]}\n")
    run_dir = tmp_path / "run"
    result = CliRunner().invoke(cli, ["plan", str(spec), "--run-dir", str(run_dir)])
    assert result.exit_code == 1, result.output  # the loopback hosts are unreachable, but Ansible ran
    assert "waiting: " in result.output
    assert "no port GUID for node01" in result.output
    assert "the subnet managers (ib_sm: OpenSM, partitions, QoS) wait for port GUIDs" in result.output
    assert not (run_dir / "rendered" / "opensm").exists(), "never a partitions.conf missing members"
    (command,) = [json.loads(p.read_text())["command"] for p in (run_dir / "runner" / "artifacts").glob("*/command")]
    assert command[command.index("--skip-tags") + 1] == "ib_sm"
