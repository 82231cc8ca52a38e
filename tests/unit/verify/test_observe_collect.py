"""collect(): the diag commands verify runs, and the Observation it builds from their output.

The fabric: leaf01 (8 ports, LID 1) with node01 mlx5_0 on port 1 (LID 2) and sm01 mlx5_0 on port 2
(LID 3, runs the master SM); port 3 is empty.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Sequence

import pytest

from ibprov.errors import CollectError
from ibprov.probes import ParseError
from ibprov.probes.cache import IS_SM, MAGIC, decode
from ibprov.probes.runner import CommandResult
from ibprov.verify.fabric.collect import Clock, collect
from ibprov.verify.fabric.observation import LinkState, PortRef

SW, NODE01, SM01 = 0x0002C90300000100, 0x0002C90300000200, 0x0002C90300000300

IBNETDISCOVER = """#
# Topology file: generated on Wed Dec  2 10:38:04 2026
#
# Initiated from node 0002c90300000200 port 0002c90300000201

vendid=0x2c9
devid=0xd2f2
sysimgguid=0x2c90300000100
switchguid=0x2c90300000100(2c90300000100)
Switch\t8 "S-0002c90300000100"\t\t# "leaf01" enhanced port 0 lid 1 lmc 0
[1]\t"H-0002c90300000200"[1](2c90300000201) \t\t# "node01 mlx5_0" lid 2 4xHDR
[2]\t"H-0002c90300000300"[1](2c90300000301) \t\t# "sm01 mlx5_0" lid 3 4xHDR

vendid=0x2c9
devid=0x101b
sysimgguid=0x2c90300000200
caguid=0x2c90300000200
Ca\t1 "H-0002c90300000200"\t\t# "node01 mlx5_0"
[1](2c90300000201) \t"S-0002c90300000100"[1]\t\t# lid 2 lmc 0 "leaf01" lid 1 4xHDR

vendid=0x2c9
devid=0x101b
sysimgguid=0x2c90300000300
caguid=0x2c90300000300
Ca\t1 "H-0002c90300000300"\t\t# "sm01 mlx5_0"
[1](2c90300000301) \t"S-0002c90300000100"[2]\t\t# lid 3 lmc 0 "leaf01" lid 1 4xHDR
"""

_UP = "==( 4X        53.125 Gbps Active/  LinkUp)==>"
_SW, _N1, _SM = (
    '"                        leaf01"',
    '"                 node01 mlx5_0"',
    '"                   sm01 mlx5_0"',
)
IBLINKINFO = f"""\
0x0002c90300000201 {_N1}      2    1[  ] {_UP}  0x0002c90300000100      1    1[  ] "leaf01" ( )
0x0002c90300000100 {_SW}      1    1[  ] {_UP}  0x0002c90300000201      2    1[  ] "node01 mlx5_0" ( )
0x0002c90300000100 {_SW}      1    2[  ] {_UP}  0x0002c90300000301      3    1[  ] "sm01 mlx5_0" ( )
0x0002c90300000100 {_SW}      1    3[  ] ==(                Down/ Polling)==>             [  ] "" ( )
0x0002c90300000301 {_SM}      3    1[  ] {_UP}  0x0002c90300000100      1    2[  ] "leaf01" ( )
"""

IBQUERYERRORS = """Errors for "node01 mlx5_0"
   GUID 0x2c90300000201 port 1: [SymbolErrorCounter == 42]
Errors for 0x2c90300000100 "leaf01"
   GUID 0x2c90300000100 port ALL: [LinkDownedCounter == 3]
   GUID 0x2c90300000100 port 2: [LinkDownedCounter == 3]

## Summary: 3 nodes checked, 2 bad nodes found
##          11 ports checked, 2 ports have errors beyond threshold
## Thresholds: 
## Suppressed:
"""
SMINFO = "sminfo: sm lid 3 sm guid 0x2c90300000301, activity count 10 priority 15 state 3 SMINFO_MASTER\n"


def pkeys(*keys: int) -> str:
    table = list(keys) + [0] * (64 - len(keys))
    rows = [f"{i:4d}: " + " ".join(f"0x{k:04x}" for k in table[i : i + 8]) for i in range(0, 64, 8)]
    return "\n".join(rows) + "\n64 pkeys capacity for this port\n"


PARTITION_CAPS = {SW: 8, NODE01: 128, SM01: 64}


def cache_file(sm_port_guid: int = SM01 + 1) -> bytes:
    nodes = [
        (SW, 2, 8, "leaf01", [(SW, 0), (SW, 1), (SW, 2), (SW, 3)]),
        (NODE01, 1, 1, "node01 mlx5_0", [(NODE01 + 1, 1)]),
    ]
    nodes.append((SM01, 1, 1, "sm01 mlx5_0", [(SM01 + 1, 1)]))
    ports = [(SW, n, 1, SW, 0x48 if n == 0 else 0) for n in range(4)]
    ports += [(NODE01 + 1, 1, 2, NODE01, 0x50C048), (SM01 + 1, 1, 3, SM01, 0x50C048)]
    ports = [(g, n, lid, owner, cap | (IS_SM if g == sm_port_guid and n else 0)) for g, n, lid, owner, cap in ports]
    data = struct.pack("<IIIIQI", MAGIC, 1, len(nodes), len(ports), NODE01, 1)
    for guid, kind, count, desc, stored in nodes:
        node_info = bytes(28) + PARTITION_CAPS[guid].to_bytes(2, "big") + bytes(34)  # wire order
        data += struct.pack("<HBB64sQBB64s64sB", 0, 0, 0, b"", guid, kind, count, node_info, desc.encode(), len(stored))
        data += b"".join(struct.pack("<QB", g, p) for g, p in stored)
    for guid, number, lid, owner, cap in ports:
        info = bytes(20) + cap.to_bytes(4, "big") + bytes(40)
        data += struct.pack("<QBBHB64sQBQB", guid, number, 0, lid, 0, info, owner, 0, 0, 0)
    return data


WHOLE_FABRIC = {"ibnetdiscover", "iblinkinfo", "ibqueryerrors", "base64"}


class FakeRunner:
    """Answers each diag command from a table (first word, or the first two for smpquery)."""

    where = "fake"

    def __init__(self, **answers: CommandResult | str) -> None:
        self.answers = {
            "ibnetdiscover": IBNETDISCOVER,
            "iblinkinfo": IBLINKINFO,
            "ibqueryerrors": IBQUERYERRORS,
            "base64": base64.b64encode(cache_file()).decode(),
            "sminfo": SMINFO,
            "sminfo 3": SMINFO,
            "smpquery pkeys 2": pkeys(0xFFFF, 0x8010),
            "smpquery pkeys 3": pkeys(0xFFFF),
            **{k.replace("_", " "): v for k, v in answers.items()},
        }
        self.batches: list[tuple[list[tuple[str, ...]], bool]] = []

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        self.batches.append(([tuple(c) for c in commands], parallel))
        out = []
        for argv in commands:
            tried = [" ".join(argv), " ".join(argv[:3])] + ([argv[0]] if argv[0] in WHOLE_FABRIC else [])
            if argv[:2] == ("python3", "-c"):
                tried = ["probe"]
            key = next((k for k in tried if k in self.answers), None)
            answer = self.answers.get(key or "", CommandResult(tuple(argv), 255, "", "iberror: failed: query"))
            out.append(answer if isinstance(answer, CommandResult) else CommandResult(tuple(argv), 0, answer, ""))
        return out

    def close(self) -> None:
        pass


def test_one_discovery_feeds_every_fabric_wide_tool_and_per_port_queries_run_concurrently() -> None:
    runner = FakeRunner()
    collect(runner)
    (first, serial), (second, concurrent), (third, parallel) = runner.batches
    assert first == [
        ("ibnetdiscover", "--cache", "{scratch}/fabric.cache"),
        ("base64", "-w0", "{scratch}/fabric.cache"),
    ]
    assert not serial
    *tools, probe = second
    assert tools == [
        ("iblinkinfo", "--load-cache", "{scratch}/fabric.cache", "-l"),
        ("ibqueryerrors", "--load-cache", "{scratch}/fabric.cache"),
        ("sminfo",),
    ]
    assert probe[:2] == ("python3", "-c")
    # one probe process for every CA port's PKey table; PartitionCap from the cache spares it the NodeInfo
    assert probe[3:] == ("2:1:128", "3:1:64")
    assert concurrent
    assert parallel
    # the fake host cannot run the probe: verify falls back to smpquery per port
    assert third == [("sminfo", "3"), ("smpquery", "pkeys", "2", "1"), ("smpquery", "pkeys", "3", "1")]


def test_the_observation_holds_nodes_links_states_counters_sms_and_pkeys() -> None:
    obs = collect(FakeRunner())
    assert {n.description for n in obs.nodes.values()} == {"leaf01", "node01 mlx5_0", "sm01 mlx5_0"}
    assert {(lk.a, lk.b) for lk in obs.links} == {
        (PortRef(SW, 1), PortRef(NODE01, 1)),
        (PortRef(SW, 2), PortRef(SM01, 1)),
    }
    assert obs.states[PortRef(SW, 3)] == LinkState("Down", "Polling")
    assert obs.states[PortRef(NODE01, 1)].active
    assert obs.counters == {PortRef(NODE01, 1): {"SymbolErrorCounter": 42}, PortRef(SW, 2): {"LinkDownedCounter": 3}}
    (sm,) = obs.sms
    assert (sm.port, sm.lid, sm.priority, sm.state) == (PortRef(SM01, 1), 3, 15, "MASTER")
    assert obs.pkeys == {NODE01 + 1: (0xFFFF, 0x8010), SM01 + 1: (0xFFFF,)}
    assert obs.from_port == "node01 mlx5_0"
    assert obs.soak is None
    assert obs.failures == []


def test_without_the_cache_every_port_is_asked_for_an_sm() -> None:
    runner = FakeRunner(base64=CommandResult(("base64",), 1, "", "base64: No such file"))
    obs = collect(runner)
    asked = [c for c in runner.batches[2][0] if c[0] == "sminfo"]
    assert asked == [("sminfo", "1"), ("sminfo", "2"), ("sminfo", "3")]
    assert [s.port for s in obs.sms] == [PortRef(SM01, 1)]


def test_a_port_that_does_not_answer_is_a_query_failure_not_an_abort() -> None:
    obs = collect(
        FakeRunner(smpquery_pkeys_2=CommandResult(("smpquery",), 255, "", "smpquery: iberror: failed: query"))
    )
    (failure,) = obs.failures
    assert (failure.port, failure.tool) == (PortRef(NODE01, 1), "smpquery pkeys")
    assert failure.reason == "smpquery exited 255: smpquery: iberror: failed: query"


def test_qos_adds_sl2vl_and_vlarb_queries_per_ca_port() -> None:
    runner = FakeRunner()
    obs = collect(runner, qos=True)  # the fake does not answer them: the point is what was asked
    ops = {c[1] for c in runner.batches[2][0] if c[0] == "smpquery"}
    assert ops == {"pkeys", "sl2vl", "vlarb"}
    assert {f.tool for f in obs.failures} == {"smpquery sl2vl", "smpquery vlarb"}


def test_no_fabric_is_a_collect_error_with_a_one_line_reason() -> None:
    failed = CommandResult(
        ("ibnetdiscover",),
        255,
        "",
        "ibwarn: [1] mad_rpc_open_port: can't open UMAD port ((null):0)\n"
        "ibnetdiscover: iberror: failed: Failed to open '(null)' port '0'\n",
    )
    with pytest.raises(CollectError) as info:
        collect(FakeRunner(ibnetdiscover=failed))
    assert str(info.value) == (
        "could not collect from the fabric: ibnetdiscover exited 255: "
        "ibnetdiscover: iberror: failed: Failed to open '(null)' port '0' (run verify on a host with an HCA on "
        "this fabric, or --via HOST to run the diags there; for the twin: `ibprov twin SPEC --verify`, or "
        "`--target twin` with a twin rack up)"
    )
    assert info.value.exit_code == 3


def test_unreadable_output_is_a_parse_error_naming_tool_and_line() -> None:
    broken = IBLINKINFO.replace("Active/  LinkUp)==>  0x0002c90300000301", "garbage")
    with pytest.raises(ParseError) as info:
        collect(FakeRunner(iblinkinfo=broken))
    assert str(info.value).startswith("iblinkinfo: line 3: ")


def test_a_soak_clears_the_counters_waits_and_reads_what_accumulated() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    runner = FakeRunner()
    runner.answers["ibqueryerrors --load-cache {scratch}/fabric.cache"] = IBQUERYERRORS
    obs = collect(runner, soak=30, clock=Clock(now=lambda: now[0], sleep=sleep))
    assert runner.batches[1][0][1] == ("ibqueryerrors", "--load-cache", "{scratch}/fabric.cache", "-k")
    assert slept == [30.0]
    assert obs.soak is not None
    assert obs.soak.seconds == 30.0
    assert runner.batches[3][0] == [("ibqueryerrors", "--load-cache", "{scratch}/fabric.cache")]
    assert obs.soak.deltas == obs.counters  # the fake returns the same counters both times


def test_the_cache_decoder_finds_the_sm_port_and_rejects_other_files() -> None:
    cache = decode(cache_file())
    assert [p.guid for p in cache.sm_ports()] == [SM01 + 1]
    assert cache.node_types == {SW: "SW", NODE01: "CA", SM01: "CA"}
    assert cache.partition_caps == PARTITION_CAPS
    with pytest.raises(ParseError, match="truncated at byte"):
        decode(cache_file()[:-10])
    with pytest.raises(ParseError, match="not a version 1 fabric cache"):
        decode(b"\x00" * 64)


def test_pkey_tables_come_from_one_probe_process_when_the_host_can_run_it() -> None:
    runner = FakeRunner(probe="2 1 64 0xffff 0x8010\n3 1 64 0xffff\n")
    obs = collect(runner)
    assert obs.pkeys == {NODE01 + 1: (0xFFFF, 0x8010), SM01 + 1: (0xFFFF,)}
    per_port = runner.batches[2][0]
    assert not [c for c in per_port if c[:2] == ("smpquery", "pkeys")]


def test_a_port_the_probe_cannot_read_is_asked_with_smpquery() -> None:
    runner = FakeRunner(probe="2 1 error P_KeyTable block 0 query failed\n3 1 64 0xffff\n")
    obs = collect(runner)
    assert [c for c in runner.batches[2][0] if c[:2] == ("smpquery", "pkeys")] == [("smpquery", "pkeys", "2", "1")]
    assert obs.pkeys[NODE01 + 1] == (0xFFFF, 0x8010)
