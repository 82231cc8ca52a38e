"""The metrics ibprov writes (OpenMetrics text for node_exporter's textfile collector), one entry each: its
name, type, help text and labels. :mod:`ibprov.history.metrics` writes only these; the Prometheus rules and
the Grafana dashboard in ``monitoring/`` may name only these (a test reads both against this catalog).

Label cardinality is bounded for a 10,000-node fabric: per-object series exist only for findings (capped at
:data:`MAX_FINDING_SERIES`, the worst kept), port counters that moved since the previous run (capped at
:data:`MAX_RATE_SERIES`, those over their limit first, then the fastest), and failing perftest pairs (every
pair only while a run measured at most :data:`MAX_PAIR_SERIES`), and the physical layer's per-port bit error
rates and module temperatures (capped at :data:`MAX_PHY_SERIES` per metric: the ports with a finding of that
check first, then the worst; an effective or raw BER only where errors were counted at all); everything else
is a fabric-wide total or one series per check. bench/metrics_10k.py measures it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CATALOG",
    "CLUSTER",
    "MAX_FINDING_SERIES",
    "MAX_PAIR_SERIES",
    "MAX_PHY_SERIES",
    "MAX_RATE_SERIES",
    "PORT_IDS",
    "RENAMED",
    "Metric",
    "metric",
]

MAX_FINDING_SERIES = 1000  # per-finding series in one run; the rest are counted in ibprov_findings only
MAX_RATE_SERIES = 1000  # per-port counter rate series in one run; every rate over its limit is counted
MAX_PAIR_SERIES = 256  # perftest results per pair while a run measured at most this many; beyond, failing pairs
MAX_PHY_SERIES = 1000  # per-port series of each physical metric (BER, temperature) in one run; the worst kept


@dataclass(frozen=True)
class Metric:
    name: str
    type: str  # "gauge" (every ibprov metric is a gauge: a run's state, written whole each run)
    help: str
    labels: tuple[str, ...]


# the cluster (the spec's cluster.name): not "cluster", which sites commonly set as a target label (Prometheus
# would rename ours exported_cluster)
CLUSTER = "ib_cluster"
_C = (CLUSTER,)
# a planned port as the per-port exporters label it (node GUID, port number) and the far end of its cable:
# ``on(guid, port)`` joins with them; empty where the object is not one planned port or the GUID is not known
PORT_IDS = ("guid", "port", "remote_guid", "remote_port")
_FINDING = (*_C, "section", "check", "severity", "object", *PORT_IDS)
CATALOG: tuple[Metric, ...] = (
    Metric("ibprov_verify_last_run_timestamp_seconds", "gauge", "When the last verify run ended (Unix time)", _C),
    Metric("ibprov_verify_last_run_duration_seconds", "gauge", "How long the last verify run took", _C),
    Metric(
        "ibprov_verify_last_run_exit_code",
        "gauge",
        "The last run's exit code: 0 as planned, 1 findings, 2 spec error, 3 collect error, 70 internal error",
        _C,
    ),
    Metric(
        "ibprov_verify_last_run_success",
        "gauge",
        "1 when the last run collected and judged everything it was asked to (exit code 0 or 1), else 0",
        _C,
    ),
    Metric(
        "ibprov_check_passed",
        "gauge",
        "1 when the check passed in the last run, 0 when it failed",
        (*_C, "section", "check"),
    ),
    Metric("ibprov_check_objects", "gauge", "Objects the check examined in the last run", (*_C, "section", "check")),
    Metric(
        "ibprov_findings",
        "gauge",
        "Findings of the last run by check and severity (0 for every check that ran and each severity it did not find)",
        (*_C, "section", "check", "severity"),
    ),
    Metric(
        "ibprov_causes",
        "gauge",
        "Findings of the last run that no other finding explains (its causes), by check and severity (0 for "
        "every check that ran and each severity without a cause)",
        (*_C, "section", "check", "severity"),
    ),
    Metric(
        "ibprov_finding_info",
        "gauge",
        f"1 for each finding of the last run (at most {MAX_FINDING_SERIES} series, the most severe kept)",
        _FINDING,
    ),
    Metric(
        "ibprov_finding_first_seen_timestamp_seconds",
        "gauge",
        "When the run history first saw this finding, without a break since (Unix time)",
        _FINDING,
    ),
    Metric(
        "ibprov_finding_series_dropped",
        "gauge",
        f"Findings of the last run written without a series of their own (past {MAX_FINDING_SERIES})",
        _C,
    ),
    Metric("ibprov_findings_new", "gauge", "Findings not in the previous run, by severity", (*_C, "severity")),
    Metric(
        "ibprov_findings_resolved",
        "gauge",
        "Findings of the previous run gone in the last, by severity",
        (*_C, "severity"),
    ),
    Metric(
        "ibprov_sm_master_info",
        "gauge",
        "1 for the master SM the last run saw",
        (*_C, "object", "port_guid", "planned"),
    ),
    Metric(
        "ibprov_sm_master_changed",
        "gauge",
        "1 when the master SM's port differs from the previous run's",
        _C,
    ),
    Metric("ibprov_links_planned", "gauge", "Cables in the plan", _C),
    Metric("ibprov_links_below_plan", "gauge", "Planned cables down, or up below the planned width or speed", _C),
    Metric(
        "ibprov_port_errors_per_second",
        "gauge",
        f"Error counter increase per second between the previous run and the last (counters that moved: at most "
        f"{MAX_RATE_SERIES} series, those over their limit first, then the fastest)",
        (*_C, "object", *PORT_IDS, "counter"),
    ),
    Metric(
        "ibprov_port_error_limit_exceeded",
        "gauge",
        f"1 for each port counter that rose faster than its acceptance.error_rates_per_hour limit (at most "
        f"{MAX_RATE_SERIES} series)",
        (*_C, "object", *PORT_IDS, "counter"),
    ),
    Metric(
        "ibprov_port_counters_over_limit",
        "gauge",
        "Port counters that rose faster than their acceptance.error_rates_per_hour limit, all of them",
        _C,
    ),
    Metric(
        "ibprov_perf_pairs",
        "gauge",
        "perftest results by test and status: pass, missed_limit (measured, worse than its limit), failed "
        "(did not run through), skipped (could not run here)",
        (*_C, "test", "status"),
    ),
    Metric(
        "ibprov_perf_bandwidth_bytes_per_second",
        "gauge",
        "perftest bandwidth over all measured pairs of a test (stat: min, median, max)",
        (*_C, "test", "stat"),
    ),
    Metric(
        "ibprov_perf_latency_seconds",
        "gauge",
        "perftest latency over all measured pairs of a test (stat: min, median, max)",
        (*_C, "test", "stat"),
    ),
    Metric(
        "ibprov_perf_pair_bandwidth_bytes_per_second",
        "gauge",
        f"perftest bandwidth of one pair, status pass or missed_limit (every pair while a run measured at most "
        f"{MAX_PAIR_SERIES}, else those that missed their limit)",
        (*_C, "test", "client", "server", "status"),
    ),
    Metric(
        "ibprov_perf_pair_latency_seconds",
        "gauge",
        f"perftest latency of one pair, status pass or missed_limit (every pair while a run measured at most "
        f"{MAX_PAIR_SERIES}, else those that missed their limit)",
        (*_C, "test", "client", "server", "status"),
    ),
    Metric(
        "ibprov_physical_ports_read",
        "gauge",
        "Ports whose physical layer (mstlink) verify --physical read in the last run",
        _C,
    ),
    Metric(
        "ibprov_cables_not_as_planned",
        "gauge",
        "Cables whose module at either end is not the plan's (medium, length, part number, vendor), all of them",
        _C,
    ),
    Metric(
        "ibprov_port_effective_ber",
        "gauge",
        f"Effective (post-FEC) bit error rate of a port, where it counted errors (at most {MAX_PHY_SERIES} "
        "series: those with a phy.ber_effective finding first, then the highest)",
        (*_C, "object", *PORT_IDS),
    ),
    Metric(
        "ibprov_port_raw_ber",
        "gauge",
        f"Raw (pre-FEC) bit error rate of a port, where it counted errors (at most {MAX_PHY_SERIES} series: "
        "those with a phy.ber_raw finding first, then the highest)",
        (*_C, "object", *PORT_IDS),
    ),
    Metric(
        "ibprov_module_temperature_celsius",
        "gauge",
        f"Temperature of a port's cable module (at most {MAX_PHY_SERIES} series: those with a "
        "phy.module_temperature finding first, then the hottest)",
        (*_C, "object", *PORT_IDS),
    ),
)

# What earlier releases called these series (docs/monitoring.md lists them, with the label changes)
RENAMED: dict[str, str] = {
    "ibprov_finding": "ibprov_finding_info",
    "ibprov_port_error_rate_per_hour": "ibprov_port_errors_per_second",
    "ibprov_port_error_rate_over_limit": "ibprov_port_error_limit_exceeded",
    "ibprov_port_error_rates_over_limit": "ibprov_port_counters_over_limit",
    "ibprov_perf_value": "ibprov_perf_bandwidth_bytes_per_second, ibprov_perf_latency_seconds",
    "ibprov_perf_pair_value": "ibprov_perf_pair_bandwidth_bytes_per_second, ibprov_perf_pair_latency_seconds",
}


def metric(name: str) -> Metric:
    """The catalog entry named ``name``."""
    for m in CATALOG:
        if m.name == name:
            return m
    raise KeyError(name)
