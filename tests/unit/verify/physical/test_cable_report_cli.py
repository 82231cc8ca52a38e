"""ibprov report cables: the held-out rack's report.json with one wrong cable gives every planned link in the CSV
and the JSON, names the wrong one, and exits 1; a report without a physical section is refused."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import phykit
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.report.json_report import to_json
from ibprov.report.model import Report
from ibprov.verify.physical.section import check_physical


def wrong_cable_report(tmp_path: Path) -> tuple[Path, int]:
    plan = phykit.plan_of()
    three_m = phykit.set_value(phykit.dac_text(), "Transfer Distance [m]", "3")
    obs = phykit.with_device(phykit.healthy(plan), "gpu04", "mlx5_0", links={1: phykit.reading(three_m)})
    report = Report.from_sections(cluster="heldout", spec="heldout.yaml", sections=[check_physical(plan, obs)])
    path = tmp_path / "report.json"
    path.write_text(to_json(report))
    return path, len(plan.cables)


def test_the_cable_report_lists_every_planned_link_and_exits_1_on_a_wrong_cable(tmp_path: Path) -> None:
    path, links = wrong_cable_report(tmp_path)
    out_csv, out_json = tmp_path / "cables.csv", tmp_path / "cables.json"
    result = CliRunner().invoke(cli, ["report", "cables", str(path), "--csv", str(out_csv), "--json", str(out_json)])
    assert result.exit_code == 1, result.output
    assert "gpu04/mlx5_0:1: not as planned: gpu04 mlx5_0 port 1: 3 m > 2 m" in result.output
    assert f"{links - 1} as planned, 1 not as planned, 0 not read of {links} planned links" in result.output
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert len(rows) == links
    wrong = [r for r in rows if r["status"] == "not as planned"]
    assert [r["end B"] for r in wrong] == ["gpu04 mlx5_0 port 1"]
    assert wrong[0]["B found"] == "Passive copper cable / Copper cable, passive, unequalized, 3 m, FS OSFPFL-400G-PC01"
    assert wrong[0]["B serial"] == "C2604279049-2"
    assert len(json.loads(out_json.read_text())) == links


def test_a_report_without_a_physical_section_is_refused(tmp_path: Path) -> None:
    path, _ = wrong_cable_report(tmp_path)
    data = json.loads(path.read_text())
    del data["sections"]["physical"]
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["report", "cables", str(path)])
    assert result.exit_code != 0
    assert "no physical section with cables" in result.output
