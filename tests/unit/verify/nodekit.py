"""Canned node observations for the verify --nodes tests: ib_facts output and probe stdout of healthy hosts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ibprov.clusterspec import load_spec
from ibprov.probes.hostprobe import MARK
from ibprov.run.adhoc import HostOutcome
from ibprov.verify.nodes.collect import observe_host
from ibprov.verify.nodes.observation import HostObservation
from ibprov.verify.nodes.plan import NodePlan, build_node_plan

RACK = Path(__file__).resolve().parents[3] / "examples" / "rack.yaml"
IPOIB = {"sm01": "10.20.0.1", "sm02": "10.20.0.2", "node01": "10.20.0.11", "node02": "10.20.0.12"}
IPOIB |= {"node03": "10.20.0.13", "node04": "10.20.0.14"}


def rack_plan() -> NodePlan:
    return build_node_plan(load_spec(RACK))


def ib_facts(
    *,
    device: str = "mlx5_0",
    fw: str = "20.39.1002",
    state: str = "ACTIVE",
    phys: str = "LinkUp",
    rate_text: str = "200 Gb/sec (4X HDR)",
    ports: tuple[int, ...] = (1,),
) -> dict[str, Any]:
    """The ``res`` of a successful ib_facts run, in the module's shape (ports keyed by strings)."""
    port = {
        "state": state,
        "state_code": 4,
        "phys_state": phys,
        "phys_state_code": 5,
        "rate": float(rate_text.split()[0]) if rate_text else None,
        "rate_text": rate_text,
        "port_guid": "0x0c42a10300d8e3c8",
        "link_layer": "InfiniBand",
        "lid": 7,
        "sm_lid": 1,
    }
    dev = {"node_guid": "0x0c42a10300d8e3c8", "fw_ver": fw, "ports": {str(p): dict(port) for p in ports}}
    return {"ansible_facts": {"ib": {"devices": {device: dev}}}, "changed": False}


def probe_stdout(
    *,
    memlock: str = "unlimited",
    opensm: str = "inactive\ninactive",
    ifaces: dict[str, list[str]] | None = None,
    stack: str = "50.0-2ubuntu0.2",
) -> str:
    links = [{"ifindex": 1, "ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8}]}]
    for name, addrs in (ifaces or {}).items():
        infos = [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1])} for a in addrs]
        links.append({"ifindex": len(links) + 1, "ifname": name, "addr_info": infos})
    return "\n".join(
        [
            f"{MARK}memlock",
            memlock,
            f"{MARK}opensm",
            opensm,
            f"{MARK}ip",
            json.dumps(links),
            f"{MARK}stack",
            stack,
        ]
    )


def healthy_host(host: str, **facts: Any) -> HostObservation:
    """A host exactly as the rack plans it (any ib_facts keyword changes that)."""
    probe = probe_stdout(
        ifaces={"ib0": [f"{IPOIB[host]}/24"]},
        opensm="active" if host.startswith("sm") else "inactive\ninactive",
    )
    return observe_host(host, HostOutcome("ok", ib_facts(**facts)), HostOutcome("ok", {"stdout": probe, "rc": 0}))


def healthy_rack() -> dict[str, HostObservation]:
    return {h: healthy_host(h) for h in IPOIB}
