"""The repository's inventories/example is what `ibprov render examples/rack.yaml` writes today."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ibprov.cli import cli

REPO = Path(__file__).resolve().parents[3]


def test_inventories_example_is_current_with_the_rack_example() -> None:
    result = CliRunner().invoke(
        cli, ["render", str(REPO / "examples" / "rack.yaml"), "-o", str(REPO / "inventories" / "example"), "--check"]
    )
    assert result.exit_code == 0, result.output + "\nre-render: ibprov render examples/rack.yaml -o inventories/example"


def test_render_writes_to_inventories_cluster_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["render", str(REPO / "examples" / "rack.yaml")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "inventories" / "rack1" / "inventory" / "hosts.yml").is_file()
    assert (tmp_path / "inventories" / "rack1" / "opensm" / "partitions.conf").is_file()
