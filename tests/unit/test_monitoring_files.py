"""The monitoring files (monitoring/): the Prometheus alerting rules, their promtool unit tests and the Grafana
dashboard. promtool accepts the rules and passes their tests (and fails a test that expects the wrong thing);
rules and dashboard name only metrics of ibprov.history.catalog, filtered and grouped only by labels those
metrics have; every alert has tests; every catalog metric is on the dashboard.

promtool is Debian's (`make apt-monitor`, a prerequisite of `make unit` and `make test`): without it these tests
fail, they do not skip.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ibprov.clusterspec.physical import EFFECTIVE_BER_MAX, RAW_BER_MAX
from ibprov.history.catalog import CATALOG

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "monitoring" / "prometheus" / "ibprov.rules.yml"
RULE_TESTS = REPO / "monitoring" / "prometheus" / "ibprov.rules.test.yml"
DASHBOARD = REPO / "monitoring" / "grafana" / "ibprov-fabric.json"
PROMTOOL = Path("/usr/bin/promtool")

LABELS = {m.name: set(m.labels) for m in CATALOG}
# Catalog metrics the dashboard need not show, with the reason. None: every metric is on it.
NOT_ON_DASHBOARD: dict[str, str] = {}

METRIC = re.compile(r"\bibprov_[a-z_]+\b")
SELECTOR = re.compile(r"\b(ibprov_[a-z_]+)\s*\{([^}]*)\}")
# a label matcher: `name="..."`, `name=~"..."` (and in an annotation's query template, `name=%q`)
MATCHER = re.compile(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)\s*(?:\"|%q)")
TEMPLATE_QUERY = re.compile(r'printf\s+"((?:[^"\\]|\\.)*)"[^}]*\|\s*query')
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")


def promtool(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL.exists(), f"{PROMTOOL} is missing: `make apt-monitor` installs it (Debian's prometheus package)"
    return subprocess.run(
        [str(PROMTOOL), *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd, check=False
    )


def rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def alerts() -> dict[str, list[dict[str, Any]]]:
    """Alert name -> its rules (one alert may have several)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rule in rules():
        if "alert" in rule:
            out.setdefault(rule["alert"], []).append(rule)
    return out


def rule_test_cases() -> Iterator[dict[str, Any]]:
    for group in yaml.safe_load(RULE_TESTS.read_text())["tests"]:
        yield from group.get("alert_rule_test", [])


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel but rows, also those inside collapsed rows."""
    for panel in board["panels"]:
        if panel["type"] == "row":
            yield from panel.get("panels", [])
        else:
            yield panel


def catalog_problems(promql: str) -> list[str]:
    """What a PromQL expression names that the catalog does not have: metrics outside it, label matchers on
    labels a metric lacks, grouping/matching (by, without, on, ignoring, group_left/right) on labels that not
    every metric of the expression has."""
    promql = re.sub(r"#[^\n]*", "", promql)  # comments
    names = set(METRIC.findall(promql))
    problems = [f"{name}: not in the catalog" for name in sorted(names - set(LABELS))]
    for name, body in SELECTOR.findall(promql):
        for label in MATCHER.findall(body):
            if name in LABELS and label not in LABELS[name]:
                problems.append(f"{name}{{{body}}}: {name} has no label {label!r}")
    for group in GROUPING.findall(promql):
        for label in filter(None, (part.strip() for part in group.split(","))):
            lacking = sorted(name for name in names if name in LABELS and label not in LABELS[name])
            if lacking:
                problems.append(f"({group}): {', '.join(lacking)} {'have' if len(lacking) > 1 else 'has'} no {label!r}")
    return problems


# --- the catalog check itself ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("promql", "problem"),
    [
        ('ibprov_findings{ib_cluster="c1"} > 0', None),
        ('ibprov_findings{cluster="c1"}', "ibprov_findings has no label 'cluster'"),
        ("ibprov_findingz > 0", "ibprov_findingz: not in the catalog"),
        ('ibprov_findings{object="x"}', "ibprov_findings has no label 'object'"),
        ("sum by (object) (ibprov_findings)", "ibprov_findings has no 'object'"),
        ("ibprov_findings and on (check) ibprov_findings_new", "ibprov_findings_new has no 'check'"),
        ("ibprov_finding_info{ib_cluster=%q,counter=%q}", "ibprov_finding_info has no label 'counter'"),
        ("ibprov_finding > 0", "ibprov_finding: not in the catalog"),
        ("# ibprov_findingz in a comment\nibprov_findings", None),
    ],
)
def test_the_catalog_check_finds_unknown_metrics_and_labels(promql: str, problem: str | None) -> None:
    found = catalog_problems(promql)
    if problem is None:
        assert found == []
    else:
        assert any(problem in p for p in found), found


# --- (a) and (b): promtool ------------------------------------------------------------------------------------


def test_promtool_check_rules_accepts_the_rules_file() -> None:
    result = promtool("check", "rules", RULES)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules())} rules found" in result.stdout


def test_promtool_check_rules_rejects_a_rule_whose_expression_does_not_parse(tmp_path: Path) -> None:
    broken = yaml.safe_load(RULES.read_text())
    broken["groups"][0]["rules"][0]["expr"] = "ibprov_finding{severity=critical} == 1"  # unquoted value
    path = tmp_path / "broken.rules.yml"
    path.write_text(yaml.safe_dump(broken, sort_keys=False))
    result = promtool("check", "rules", path)
    assert result.returncode != 0, result.stdout + result.stderr


def test_the_promtool_unit_tests_of_the_rules_pass() -> None:
    result = promtool("test", "rules", RULE_TESTS.name, cwd=RULE_TESTS.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_promtool_fails_a_test_that_expects_a_wrong_label(tmp_path: Path) -> None:
    # the harness can fail: the test group of the critical finding passes as it is, and fails with one
    # expected label of the firing alert changed
    tests = yaml.safe_load(RULE_TESTS.read_text())
    group = next(g for g in tests["tests"] for c in g["alert_rule_test"] if c["alertname"] == "IbprovCriticalFinding")
    tests["rule_files"], tests["tests"] = [str(RULES)], [group]
    as_is = tmp_path / "as-is.test.yml"
    as_is.write_text(yaml.safe_dump(tests, sort_keys=False))
    result = promtool("test", "rules", as_is)
    assert result.returncode == 0, result.stdout + result.stderr

    case = next(c for c in group["alert_rule_test"] if c["alertname"] == "IbprovCriticalFinding")
    assert case["exp_alerts"][0]["exp_labels"]["check"] == "sm.master"
    case["exp_alerts"][0]["exp_labels"]["check"] = "sm.rogue"
    wrong = tmp_path / "wrong.test.yml"
    wrong.write_text(yaml.safe_dump(tests, sort_keys=False))
    result = promtool("test", "rules", wrong)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "IbprovCriticalFinding" in result.stdout + result.stderr
    assert 'check="sm.rogue"' in result.stdout + result.stderr


# --- (c) the rules name only the catalog ----------------------------------------------------------------------


def test_every_alert_expression_names_only_catalog_metrics_and_their_labels() -> None:
    problems = {
        name: catalog_problems(rule["expr"])
        for name, rs in alerts().items()
        for rule in rs
        if catalog_problems(rule["expr"])
    }
    assert problems == {}
    assert all(METRIC.search(rule["expr"]) for rule in rules()), "an expression without an ibprov metric"


def test_every_query_in_an_alert_annotation_names_only_catalog_metrics_and_their_labels() -> None:
    # the PromQL of the templates' queries ({{ with printf "METRIC{label=%q}" ... | query }}); the prose around
    # them may name metrics too, all of the catalog
    texts = [text for rs in alerts().values() for r in rs for text in r["annotations"].values()]
    queries = [q for text in texts for q in TEMPLATE_QUERY.findall(text)]
    assert queries, "no annotation queries a metric"
    assert {q: catalog_problems(q) for q in queries if catalog_problems(q)} == {}
    assert sorted({name for text in texts for name in METRIC.findall(text)} - set(LABELS)) == []


def test_every_alert_has_a_severity_and_summary_and_description() -> None:
    for name, rs in alerts().items():
        for rule in rs:
            own = rule.get("labels", {}).get("severity")
            if "ibprov_finding_info" in rule["expr"]:
                assert own is None, f"{name}: an alert on findings keeps the finding's own severity, as verify's"
            else:
                assert own in ("critical", "security", "error", "warning"), name
            assert {"summary", "description"} <= set(rule["annotations"]), name
            assert "{{ $labels.ib_cluster }}" in rule["annotations"]["description"] or name == "IbprovVerifyStale", name
            assert "for" in rule, f"{name}: say the `for:` (0m is a choice too)"


def test_alerts_over_what_verify_judges_carry_verifys_severity_for_it() -> None:
    from ibprov.verify.judge import catalogue
    from ibprov.verify.registry import SECTIONS, load_section

    severity = {c.id: str(c.severity) for info in SECTIONS for c in catalogue(load_section(info).families)}
    judged_by = {"IbprovCounterRateOverLimit": "counters.threshold", "IbprovPortBerHigh": "phy.ber_effective"}
    for name, check in judged_by.items():
        (rule,) = alerts()[name]
        assert rule["labels"]["severity"] == severity[check], name
    assert severity["link.width"] == "error", "the control: a 4x link trained at 1x is an error in verify"


def test_the_ber_alert_fires_above_ibprovs_default_limits() -> None:
    # the rule cannot read a spec's acceptance.physical: it has the defaults, one raw limit for every speed
    (rule,) = alerts()["IbprovPortBerHigh"]
    limits = {m[0]: float(m[1]) for m in re.findall(r"\b(ibprov_port_\w+_ber)\s*>\s*([0-9.e+-]+)", rule["expr"])}
    assert set(RAW_BER_MAX.values()) == {limits["ibprov_port_raw_ber"]}
    assert limits == {
        "ibprov_port_effective_ber": EFFECTIVE_BER_MAX,
        "ibprov_port_raw_ber": RAW_BER_MAX[next(iter(RAW_BER_MAX))],
    }


# --- (d) the dashboard ----------------------------------------------------------------------------------------


def test_the_dashboard_is_json_with_a_datasource_and_a_cluster_variable_from_a_catalog_metric() -> None:
    board = dashboard()
    assert board["schemaVersion"] >= 36
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["DS_PROMETHEUS"]["query"] == "prometheus"
    cluster = variables["cluster"]
    query = cluster["query"]["query"] if isinstance(cluster["query"], dict) else cluster["query"]
    assert query == "label_values(ibprov_verify_last_run_timestamp_seconds, ib_cluster)"
    assert cluster["definition"] == query
    assert "ib_cluster" in LABELS["ibprov_verify_last_run_timestamp_seconds"]
    assert cluster["datasource"]["uid"] == "${DS_PROMETHEUS}"


def test_every_dashboard_panel_queries_catalog_metrics_of_the_chosen_cluster_from_the_variable_datasource() -> None:
    board = dashboard()
    assert list(panels(board))
    for panel in panels(board):
        title = panel["title"]
        assert panel["targets"], f"{title}: no query"
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", title
        for target in panel["targets"]:
            expr = target["expr"]
            assert target["datasource"]["uid"] == "${DS_PROMETHEUS}", title
            assert METRIC.search(expr), f"{title}: {expr} names no ibprov metric"
            assert catalog_problems(expr) == [], f"{title}: {expr}"
            for name, body in SELECTOR.findall(expr):
                assert 'cluster="$cluster"' in body, f"{title}: {name}{{{body}}} not of the chosen cluster"
            for name in METRIC.findall(expr):
                assert re.search(rf"\b{name}\s*\{{", expr), f"{title}: {name} without a cluster matcher"


def test_every_dashboard_query_is_promql_promtool_parses(tmp_path: Path) -> None:
    exprs = sorted({t["expr"] for p in panels(dashboard()) for t in p["targets"]})
    recording = [
        {"record": f"ibprov_dashboard:query_{i}", "expr": expr.replace("$cluster", "c1")}
        for i, expr in enumerate(exprs)
    ]
    path = tmp_path / "dashboard-queries.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": recording}]}))
    result = promtool("check", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_catalog_metric_is_on_the_dashboard() -> None:
    shown = {name for p in panels(dashboard()) for t in p["targets"] for name in METRIC.findall(t["expr"])}
    assert set(NOT_ON_DASHBOARD) <= set(LABELS), "an exclusion that is not a catalog metric"
    assert sorted(set(LABELS) - shown - set(NOT_ON_DASHBOARD)) == []


def test_the_dashboard_panels_have_unique_ids_and_fit_the_24_column_grid() -> None:
    board = dashboard()
    ids = [p["id"] for p in board["panels"]] + [p["id"] for p in panels(board) if p not in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] >= 0, panel["title"]
        assert 0 < grid["w"] <= 24 - grid["x"], panel["title"]


# --- (e) every alert is tested --------------------------------------------------------------------------------


def test_the_promtool_tests_cover_exactly_the_alerts_of_the_rules() -> None:
    assert {case["alertname"] for case in rule_test_cases()} == set(alerts())


def test_every_alert_is_tested_firing_and_quiet() -> None:
    firing = {c["alertname"] for c in rule_test_cases() if c.get("exp_alerts")}
    quiet = {c["alertname"] for c in rule_test_cases() if not c.get("exp_alerts")}
    assert sorted(set(alerts()) - firing) == [], "alerts no test sees firing"
    assert sorted(set(alerts()) - quiet) == [], "alerts no test sees quiet"


def test_every_firing_case_expects_annotations() -> None:
    for case in rule_test_cases():
        for alert in case.get("exp_alerts") or []:
            assert {"summary", "description"} <= set(alert.get("exp_annotations", {})), case["alertname"]
