from __future__ import annotations

import pytest
from diagtext import shared

from ibprov.verify.collect import ParseError
from ibprov.verify.collect.ibstat import CaPort, parse


def test_single_hdr_ca() -> None:
    (ca,) = parse(shared("ibstat/hdr200-mt4123-single-ca.txt", not_output=1))  # "[root@cu02 ~]# ibstat"
    assert (ca.name, ca.ca_type, ca.num_ports, ca.firmware) == ("mlx5_0", "MT4123", 1, "20.30.1004")
    assert (ca.node_guid, ca.system_guid) == (0xB8CEF60300025B90, 0xB8CEF60300025B90)
    assert ca.port(1) == CaPort(
        1, "Active", "LinkUp", 200.0, False, 17, 0, 1, 0x2651E848, 0xB8CEF60300025B90, "InfiniBand"
    )


def test_spaces_instead_of_tabs() -> None:
    (ca,) = parse(shared("ibstat/hdr100-mt4123-rate100-mi100-host.txt", not_output=1))  # "$ ibstat"
    port = ca.port(1)
    assert port is not None
    assert (port.rate, port.base_lid, port.sm_lid, port.cap_mask) == (100.0, 29, 2, 0xA659E84A)


def test_many_cas_with_ethernet_and_infiniband_ports() -> None:
    cas = parse(shared("ibstat/hdr200-a100-mt4126-vf-gpud.txt"))
    assert [ca.name for ca in cas] == [f"mlx5_{i}" for i in range(9)]
    assert cas[0].ports[0].link_layer == "Ethernet"
    ib = cas[1].ports[0]
    assert (ib.link_layer, ib.base_lid, ib.sm_lid, ib.port_guid) == (
        "InfiniBand",
        1369,
        83,
        0x6B9D7F2C99902A63,
    )
    assert cas[8].ports[0].port_guid == 0x4C1037318E9CD20A


def test_ndr400_host_with_roce_ports() -> None:
    cas = parse(shared("ibstat/ndr400-h100-mt4129-mixed-roce-gpud.txt"))
    assert len(cas) == 12
    by_name = {ca.name: ca for ca in cas}
    assert by_name["mlx5_10"].ports[0].rate == 400.0
    assert (by_name["mlx5_1"].ca_type, by_name["mlx5_1"].ports[0].rate) == ("MT4125", 100.0)
    assert by_name["mlx5_1"].ports[0].port_guid == 0
    assert {ca.ports[0].link_layer for ca in cas} == {"Ethernet"}


def test_sim_ca() -> None:
    (ca,) = parse(shared("sim/ibstat-sim-v44.txt"))
    assert (ca.name, ca.ca_type, ca.hardware, ca.node_guid) == ("ibsim0", "simulator", "a1", 0x100000)
    port = ca.port(1)
    assert port is not None
    assert (port.rate, port.link_layer, port.port_guid) == (104.0, "IB", 0x100001)


def test_ibpanic_after_partial_output_is_an_error() -> None:
    with pytest.raises(ParseError) as caught:
        parse(shared("ibstat/hdr200-a100-rdmacore39-ibpanic-gpud.txt"))
    assert caught.value.line_no == 8 * 17 + 1
    assert caught.value.line.startswith("ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed")
    assert caught.value.reason == "the tool reported a failure"


def test_single_port_form_fdr10_and_sdr_rates() -> None:
    text = """\
CA: 'mlx4_0'
Port 2:
State: Down
Physical state: Polling
Rate: 10 (FDR10)
Base lid: 65535
Link layer: InfiniBand
Switch 'sw'
\tPort 0:
\t\tRate: 2.5
\t\tSome future field: 1
"""
    mlx4, switch = parse(text)
    assert (mlx4.name, mlx4.node_type) == ("mlx4_0", "CA")
    assert mlx4.ports == (CaPort(2, "Down", "Polling", 10.0, True, 65535, link_layer="InfiniBand"),)
    assert (switch.node_type, switch.ports) == ("Switch", (CaPort(0, rate=2.5),))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("\tState: Active\n", "line 1: expected a \"CA '<name>'\" line first"),
        ("CA 'x'\n\tState: Active\n", "line 2: port field before any 'Port N:' line"),
        ("CA 'x'\n\tPort 1:\n\t\tRate: fast\n", "line 3: cannot parse the rate"),
        ("CA 'x'\n\tNode GUID: 0xzz\n", "line 2: not a number"),
        ("CA 'x'\nno colon here\n", "line 2: cannot parse"),
        ("", "ibstat: no CA in the output"),
    ],
)
def test_unreadable_output_is_an_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse(text)
