"""What verify --perf reads besides perftest: the iperf3 report (real captures of Debian 12's iperf3 3.12 in
tests/data/iperf3), the node probe's sysfs rates and PCIe links, baseline files, and the CLI's perf
options (dry run, misplaced options, a broken baseline: exit 2, one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ibprov.cli import cli
from ibprov.errors import InputFileError
from ibprov.probes import ParseError
from ibprov.probes.iperf3 import parse as parse_iperf3
from ibprov.probes.perfprobe import parse as parse_probe
from ibprov.probes.perfprobe import pcie_gbps, rate_gbps
from ibprov.verify.perf.baseline import BaselineEntry, baseline_text, load_baseline, worse_by

DATA = Path(__file__).resolve().parents[3] / "data" / "iperf3"
EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "fat-tree.yaml"


def capture(name: str) -> str:
    lines = (DATA / name).read_text().split("\n")
    assert lines[0].startswith("# source:")
    return "\n".join(lines[1:])


def test_iperf3_reports_are_read_in_decimal_gigabits_and_a_refused_connection_is_an_error() -> None:
    ok = parse_iperf3(capture("client-ok-3.12.txt"))
    assert ok.ok
    assert ok.received_gbps is not None
    assert ok.received_gbps > 1
    assert ok.version == "iperf 3.12"
    refused = parse_iperf3(capture("client-refused-3.12.txt"))
    assert not refused.ok
    assert refused.error == "unable to connect to server: Connection refused"
    with pytest.raises(ParseError):
        parse_iperf3("iperf3: error - unable to connect to server\n")


@pytest.mark.parametrize(
    ("sysfs", "gbps"),
    [
        ("200 Gb/sec (4X HDR)", 200.0),
        ("400 Gb/sec (4X NDR)", 400.0),
        ("200 Gb/sec (2X NDR)", 200.0),
        ("800 Gb/sec (4X XDR)", 800.0),
        ("56 Gb/sec (4X FDR)", 54.55),
        ("40 Gb/sec (4X FDR10)", 40.0),
        ("40 Gb/sec (4X QDR)", 32.0),
        ("10 Gb/sec (4X)", 8.0),  # SDR: the kernel names no speed
        ("2.5 Gb/sec (1X)", 2.0),
    ],
)
def test_the_sysfs_rate_is_read_as_a_data_rate_at_every_speed_and_width(sysfs: str, gbps: float) -> None:
    assert rate_gbps(sysfs) == pytest.approx(gbps, abs=0.02)


def test_pcie_links_are_read_as_data_rates_per_generation() -> None:
    assert pcie_gbps("8 GT/s", "16") == 126.0  # PCIe 3.0 x16, the older kernels' text
    assert pcie_gbps("16.0 GT/s PCIe", "16") == 252.1  # 4.0
    assert pcie_gbps("32.0 GT/s PCIe", "16") == 504.1  # 5.0
    assert pcie_gbps("5.0 GT/s PCIe", "8") == 32.0  # 2.0, 8b/10b
    assert pcie_gbps("Unknown", "16") is None


def test_the_probe_refuses_output_that_is_not_its_own() -> None:
    with pytest.raises(ParseError, match="not the output of the perf probe"):
        parse_probe("bash: line 1: syntax error\n")


def test_a_baseline_round_trips_and_worse_means_slower_or_later(tmp_path: Path) -> None:
    results = {
        "a -> b ib_write_bw 64KiB": BaselineEntry(190.0, "Gb/s"),
        "a -> b ib_write_lat 2B": BaselineEntry(1.0, "us"),
    }
    path = tmp_path / "base.json"
    path.write_text(baseline_text("c1", "2026-12-03T10:00:00Z", results))
    loaded = load_baseline(path)
    assert loaded.results == results
    assert worse_by(results["a -> b ib_write_bw 64KiB"], 171.0) == pytest.approx(0.1)
    assert worse_by(results["a -> b ib_write_lat 2B"], 1.2) == pytest.approx(0.2)
    assert worse_by(results["a -> b ib_write_lat 2B"], 0.9) < 0


def test_a_file_that_is_not_a_baseline_is_refused_naming_the_file_and_where(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"ibprov_perf_baseline": 1,\n "results": {"x": {"value": "fast"}}}')
    with pytest.raises(InputFileError, match=r'bad\.json: results\."x": expected'):
        load_baseline(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{\n  nope\n")
    with pytest.raises(InputFileError, match=r"broken\.json:2:3: not a baseline \(invalid JSON"):
        load_baseline(broken)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"results": {}}))
    with pytest.raises(InputFileError, match="not an ibprov perf baseline"):
        load_baseline(other)


def test_dry_run_prints_the_schedule_coverage_and_tests_and_starts_nothing() -> None:
    result = CliRunner().invoke(cli, ["verify", str(EXAMPLE), "--perf", "--dry-run", "--pairs", "all-pairs"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "all-pairs schedule: 33 rounds, 561 pairs"  # 34 nodes: n - 1 rounds of n/2 pairs
    assert (
        "each pair runs: ib_write_lat 2B, ib_send_lat 2B, ib_read_lat 2B, ib_write_bw 64KiB, ib_write_bw 8MiB" in lines
    )
    assert lines[-1] == "dry run: nothing was started"


def test_perf_options_without_perf_and_a_broken_baseline_are_clear_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    misplaced = runner.invoke(cli, ["verify", str(EXAMPLE), "--fabric", "--pairs", "quick"])
    assert misplaced.exit_code == 2
    assert "--pairs: only with --perf" in misplaced.output
    dry = runner.invoke(cli, ["verify", str(EXAMPLE), "--dry-run"])
    assert dry.exit_code == 2
    assert "--dry-run: only with --perf" in dry.output
    bad = tmp_path / "base.json"
    bad.write_text("[]")
    broken = runner.invoke(cli, ["verify", str(EXAMPLE), "--perf", "--baseline", str(bad)])
    assert broken.exit_code == 2
    assert f"{bad}: not an ibprov perf baseline" in broken.output
    assert "Traceback" not in broken.output
