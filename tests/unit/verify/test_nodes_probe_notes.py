"""The nodes section notes the lines a host's probe printed besides its tools' output (a shell warning before
``ulimit -l``, a banner around ``ip -j addr``: read past, issue 26), and reads the values as without them."""

from __future__ import annotations

from nodekit import IPOIB, healthy_host, ib_facts, probe_stdout, rack_plan

from ibprov.probes.hostprobe import MARK
from ibprov.run.adhoc import HostOutcome
from ibprov.verify.nodes.collect import observe_host
from ibprov.verify.nodes.observation import HostObservation
from ibprov.verify.nodes.section import check_nodes

LOCALE = "bash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)"
BANNER = "WARNING: this node is reserved for maintenance"


def noisy_host(host: str) -> HostObservation:
    probe = probe_stdout(ifaces={"ib0": [f"{IPOIB[host]}/24"]}, opensm="inactive\ninactive")
    probe = probe.replace(f"{MARK}memlock\n", f"{MARK}memlock\n{LOCALE}\n")
    probe = probe.replace(f"{MARK}stack\n", f"{MARK}stack\n{BANNER}\n")
    return observe_host(host, HostOutcome("ok", ib_facts()), HostOutcome("ok", {"stdout": probe, "rc": 0}))


def test_probe_warnings_are_host_notes_and_change_no_value() -> None:
    obs = noisy_host("node01")
    clean = healthy_host("node01")
    assert obs.notes == (f"ulimit -l: line 1: {LOCALE}", f"the rdma-core version (dpkg/rpm): line 1: {BANNER}")
    assert (obs.memlock, obs.stack_version, obs.addresses) == (clean.memlock, clean.stack_version, clean.addresses)


def test_the_section_notes_them_per_host() -> None:
    hosts = {h: healthy_host(h) for h in IPOIB}
    hosts["node01"] = noisy_host("node01")
    report = check_nodes(rack_plan(), hosts)
    assert [n for n in report.notes if n.startswith("node01:")] == [
        f"node01: the probe printed 2 lines besides its tools' output (read past): ulimit -l: line 1: {LOCALE}; "
        f"the rdma-core version (dpkg/rpm): line 1: {BANNER}"
    ]
    assert not [n for n in report.notes if n.startswith("node02:")]
