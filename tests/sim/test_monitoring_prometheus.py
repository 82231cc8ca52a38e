"""Day 2 with real parts: `ibprov verify --history --metrics` run twice on the twin with a fault between the
runs, node_exporter's textfile collector serving the metrics file, and a real Prometheus scraping it and
evaluating ibprov's alerting rules (Debian's prometheus and prometheus-node-exporter, `make apt-monitor`).

Both servers listen on loopback ports this test picks, with their data in its temporary directory; they are
stopped by their PIDs (the Popen handles) whatever happens.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ibprov.clusterspec import load_spec
from ibprov.clusterspec.types import Endpoint
from ibprov.identity.guids import GuidBook

from .simkit import probe, twin

pytestmark = pytest.mark.sim
REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "examples" / "rack.yaml"
RULES = REPO / "monitoring" / "prometheus" / "ibprov.rules.yml"
TOOLS = {"prometheus": "/usr/bin/prometheus", "node_exporter": "/usr/bin/prometheus-node-exporter"}
TOOLS["promtool"] = "/usr/bin/promtool"


def _tools() -> None:
    missing = [path for path in TOOLS.values() if not Path(path).exists()]
    assert not missing, f"{', '.join(missing)} missing: `make apt-monitor` installs Debian's prometheus packages"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


@contextmanager
def _serving(argv: list[str], log: Path, ready: str) -> Iterator[subprocess.Popen[bytes]]:
    """Start a server, wait (bounded) until ``ready`` (a URL) answers, stop it by its PID at the end."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(ready, timeout=2).close()
                break
            except OSError:
                assert proc.poll() is None, f"{argv[0]} exited: {log.read_text()[-2000:]}"
                assert time.monotonic() < deadline, f"{argv[0]} did not answer {ready} in 60 s"
                time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _query(base: str, promql: str, *, want: int = 1, timeout: float = 90.0) -> list[dict[str, Any]]:
    """Poll an instant query until it returns at least ``want`` series (bounded)."""
    deadline = time.monotonic() + timeout
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    while True:
        result: list[dict[str, Any]] = _get(url)["data"]["result"]
        if len(result) >= want or time.monotonic() > deadline:
            return result
        time.sleep(0.5)


def _verify(env: dict[str, str], history: Path, metrics: Path, report: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "ibprov", "verify", str(SPEC), "--fabric", "--synthetic-guids"]
    argv += ["--history", str(history), "--metrics", str(metrics), "--json", str(report)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)


def test_prometheus_scrapes_the_finding_and_rate_a_fault_made_between_two_verify_runs(tmp_path: Path) -> None:
    _tools()
    loaded = load_spec(SPEC)
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    metrics, history = textfile / "ibprov.prom", tmp_path / "history"
    with twin(loaded, tmp_path / "twin") as run:
        env = {**os.environ, **run.sim.env(probe(run))}
        first = _verify(env, history, metrics, tmp_path / "first.json")
        assert first.returncode == 0, first.stdout + first.stderr
        assert "history: the first run kept" in first.stderr
        run.sim.ask('PerformanceSet "H-node02-mlx5_0"[1] PortCounters.SymbolErrorCounter=42')
        second = _verify(env, history, metrics, tmp_path / "second.json")
    assert second.returncode == 1, second.stdout + second.stderr
    assert "since the previous run: 1 new, 0 resolved, 0 persisting" in second.stderr, second.stderr
    assert "SymbolErrorCounter on node02 mlx5_0 port 1: 0 -> 42" in second.stderr, second.stderr
    assert len(list((history / loaded.spec.cluster.name).glob("*/report.json"))) == 2

    text = metrics.read_text()
    checked = subprocess.run([TOOLS["promtool"], "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    cluster = loaded.spec.cluster.name
    exporter_port, prometheus_port = _free_port(), _free_port()
    config = tmp_path / "prometheus.yml"
    rules = tmp_path / "ibprov.rules.yml"
    shutil.copy(RULES, rules)
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{rules}]\n"
        "scrape_configs:\n"
        # a site's own target label `cluster` (a common setting): ibprov's label is ib_cluster, nothing is renamed
        "  - job_name: node\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{exporter_port}'], labels: {{cluster: site}}}}]\n"
    )
    exporter = [TOOLS["node_exporter"], f"--web.listen-address=127.0.0.1:{exporter_port}"]
    exporter += ["--collector.disable-defaults", "--collector.textfile", f"--collector.textfile.directory={textfile}"]
    server = [TOOLS["prometheus"], f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}"]
    server += [f"--web.listen-address=127.0.0.1:{prometheus_port}"]
    base = f"http://127.0.0.1:{prometheus_port}"
    with (
        _serving(exporter, tmp_path / "node_exporter.log", f"http://127.0.0.1:{exporter_port}/metrics"),
        _serving(server, tmp_path / "prometheus.log", f"{base}/-/ready"),
    ):
        finding = _query(base, 'ibprov_finding_info{check="counters.threshold"}')
        book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)
        leaf = next(link.a if link.b == Endpoint("node02", "mlx5_0", 1) else link.b for link in loaded.topology.links
                    if Endpoint("node02", "mlx5_0", 1) in (link.a, link.b))  # fmt: skip
        assert [r["metric"] | {"__name__": ""} for r in finding] == [
            {
                "__name__": "",
                "ib_cluster": cluster,
                "cluster": "site",
                "section": "fabric",
                "check": "counters.threshold",
                "severity": "error",
                "object": "node02 mlx5_0 port 1",
                "guid": f"0x{book.hca_guid('node02', 'mlx5_0'):016x}",
                "port": "1",
                "remote_guid": f"0x{book.switch_guid(leaf.device):016x}",
                "remote_port": str(leaf.port),
                "instance": f"127.0.0.1:{exporter_port}",
                "job": "node",
            }
        ]
        # the labels that join with a per-port exporter's series (node GUID and port number) find the finding
        joined = _query(base, "ibprov_finding_info * on (guid, port) group_left() ibprov_port_error_limit_exceeded")
        assert [r["metric"]["object"] for r in joined] == ["node02 mlx5_0 port 1"]
        rate = _query(base, 'ibprov_port_error_limit_exceeded{counter="SymbolErrorCounter"}')
        assert [(r["metric"]["object"], r["value"][1]) for r in rate] == [("node02 mlx5_0 port 1", "1")]
        # a healthy check still has its series: zero, not "No data"
        zeros = _query(base, 'ibprov_findings{check="sm.master"}', want=4)
        assert sorted((r["metric"]["severity"], r["value"][1]) for r in zeros) == [
            ("critical", "0"),
            ("error", "0"),
            ("security", "0"),
            ("warning", "0"),
        ]
        new = _query(base, 'ibprov_findings_new{severity="error"}')
        assert [r["value"][1] for r in new] == ["1"]
        assert [r["value"][1] for r in _query(base, "ibprov_verify_last_run_exit_code")] == ["1"]
        firing = _query(base, 'ALERTS{alertname="IbprovCounterRateOverLimit",alertstate="firing"}')
        assert [(r["metric"]["object"], r["metric"]["counter"]) for r in firing] == [
            ("node02 mlx5_0 port 1", "SymbolErrorCounter")
        ], _get(f"{base}/api/v1/rules")
