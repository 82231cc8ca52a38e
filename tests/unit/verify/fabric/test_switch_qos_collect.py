"""collect(qos=True) asks smpquery sl2vl/vlarb for each switch egress port and files the answers by port."""

from __future__ import annotations

from collections.abc import Sequence

from ibprov.probes.runner import CommandResult
from ibprov.verify.fabric.collect import collect
from ibprov.verify.fabric.observation import PortRef

SW, NODE01 = 0x0002C90300000100, 0x0002C90300000200
IBNETDISCOVER = """#
# Initiated from node 0002c90300000200 port 0002c90300000201

vendid=0x2c9
devid=0xd2f2
sysimgguid=0x2c90300000100
switchguid=0x2c90300000100(2c90300000100)
Switch\t4 "S-0002c90300000100"\t\t# "leaf01" enhanced port 0 lid 1 lmc 0
[1]\t"H-0002c90300000200"[1](2c90300000201) \t\t# "node01 mlx5_0" lid 2 4xHDR

vendid=0x2c9
devid=0x101b
sysimgguid=0x2c90300000200
caguid=0x2c90300000200
Ca\t1 "H-0002c90300000200"\t\t# "node01 mlx5_0"
[1](2c90300000201) \t"S-0002c90300000100"[1]\t\t# lid 2 lmc 0 "leaf01" lid 1 4xHDR
"""
SL2VL_HEAD = "# SL2VL table: Lid 1\n#                 SL: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n"
ROW = "| 0| 1| 2| 3| 4| 5| 6| 7| 0| 1| 2| 3| 4| 5| 6|15|"


def sl2vl(out: int) -> str:
    return SL2VL_HEAD + "".join(f"ports: in {i:2d}, out {out:2d}: {ROW}\n" for i in range(5))


def vlarb(port: int) -> str:
    return (
        f"# VLArbitration tables: Lid 1 port {port} LowCap 8 HighCap 8\n"
        "# Low priority VL Arbitration Table:\n"
        "VL    : |0x0 |0x1 |0x2 |0x3 |0x0 |0x0 |0x0 |0x0 |\n"
        "WEIGHT: |0x20|0x40|0x40|0x10|0x0 |0x0 |0x0 |0x0 |\n"
        "# High priority VL Arbitration Table:\n"
        "VL    : |0x2 |0x0 |0x0 |0x0 |0x0 |0x0 |0x0 |0x0 |\n"
        "WEIGHT: |0x40|0x0 |0x0 |0x0 |0x0 |0x0 |0x0 |0x0 |\n"
    )


class SwitchQosRunnerDouble:
    """Test double of a Runner: the fabric above; answers the switch's QoS queries, fails the rest."""

    where = "test double"

    def __init__(self) -> None:
        self.asked: list[tuple[str, ...]] = []
        self.answers = {
            "ibnetdiscover": IBNETDISCOVER,
            "iblinkinfo": "",
            "ibqueryerrors": "",
            "smpquery sl2vl 1 0": sl2vl(0),
            "smpquery sl2vl 1 1": sl2vl(1),
            "smpquery vlarb 1 0": "# No VLArbitration tables (no VLs): Lid 1 port 0\n",
            "smpquery vlarb 1 1": vlarb(1),
        }

    def run_batch(self, commands: Sequence[Sequence[str]], *, parallel: bool = False) -> list[CommandResult]:
        out = []
        for argv in commands:
            self.asked.append(tuple(argv))
            answer = self.answers.get(" ".join(argv), self.answers.get(argv[0]))
            failed = CommandResult(tuple(argv), 255, "", "iberror: failed: query")
            out.append(failed if answer is None else CommandResult(tuple(argv), 0, answer, ""))
        return out

    def close(self) -> None:
        pass


def test_each_cabled_switch_port_and_port_0_are_asked_and_filed_by_port() -> None:
    runner = SwitchQosRunnerDouble()
    obs = collect(runner, qos=True)
    switch = [c for c in runner.asked if c[0] == "smpquery" and c[2] == "1"]
    assert sorted(switch) == sorted(("smpquery", op, "1", p) for op in ("sl2vl", "vlarb") for p in ("0", "1"))
    assert obs.switch_qos_ports == (2, 2)
    assert set(obs.switch_sl2vl) == {PortRef(SW, 0), PortRef(SW, 1)}
    rows = obs.switch_sl2vl[PortRef(SW, 1)]
    assert [i for i, _vls in rows] == [0, 1, 2, 3, 4]
    assert rows[0][1] == (0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 15)
    # a port 0 without VLArb tables (a base port 0) is not filed: nothing to judge
    assert set(obs.switch_vlarb) == {PortRef(SW, 1)}
    high, low = obs.switch_vlarb[PortRef(SW, 1)]
    assert (high[0], low[:4]) == ((2, 64), ((0, 32), (1, 64), (2, 64), (3, 16)))


def test_without_qos_no_switch_port_is_asked() -> None:
    runner = SwitchQosRunnerDouble()
    obs = collect(runner)
    assert not [c for c in runner.asked if c[:2] in (("smpquery", "sl2vl"), ("smpquery", "vlarb"))]
    assert obs.switch_qos_ports == (0, 0)
