from __future__ import annotations

from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path

import pytest
from captures import capture_names, read_capture
from hypothesis import given, settings
from hypothesis import strategies as st

from ibprov.probes import ParseError
from ibprov.probes.perftest import (
    TOOLS,
    BwRow,
    LatRow,
    Message,
    PerftestRun,
    argv,
    parse,
    parse_json,
    to_gbps,
)

NAMES = [Path(name).name for name in capture_names("perftest/*.txt")]  # tests/fixtures/perftest: every capture


def mib(value: float) -> float:
    """MB/sec or MiB/sec as printed, in Gb/s: perftest's MB and MiB are both 2^20 bytes."""
    return value * 2**20 * 8 / 1e9


def capture(name: str) -> str:
    """The capture without its ``# source:`` line (prompts and elisions stay: the parser keeps them as notes)."""
    return read_capture(f"perftest/{name}")


def _expected_side(name: str) -> str:
    if "loopback" in name:
        return "both"  # superbench logs hold the server's and the client's output
    if "partial" in name:
        return "unknown"  # the header was cut from the capture
    return "server" if "server" in name else "client"


# --------------------------------------------------------------------------------------------------- every capture


@pytest.mark.parametrize("name", NAMES)
def test_every_capture_parses_to_a_complete_run(name: str) -> None:
    result = parse(capture(name))
    assert result.complete
    assert result.ok
    assert result.kind == ("lat" if "_lat" in name else "bw")
    assert result.side == _expected_side(name)
    assert result.errors == ()
    rows = result.bandwidth or result.latency
    assert rows
    assert all(row.line_no > 0 for row in rows)
    if "partial" not in name:
        assert result.setup.kind == result.kind
        assert result.setup.mtu in (1024, 2048, 4096)


@pytest.mark.parametrize("name", NAMES)
def test_every_bandwidth_row_obeys_perftests_own_arithmetic(name: str) -> None:
    # print_report_bw: bw = size * iters * f / (cycles * format_factor), msgRate = iters * f / (cycles * 10^6), so
    # bytes/s = MsgRate * 10^6 * size whatever the unit. Only the 2^20 reading of MB/sec satisfies this.
    for row in parse(capture(name)).bandwidth:
        from_rate = [(row.msg_rate_mpps + d) * row.bytes * 8e-3 for d in (-0.5e-6, 0.5e-6)]
        printed = 0.5e-6 if row.unit == "Gb/sec" and row.printed_average < 0.1 else 0.005  # %.6f / %.2f
        slack = to_gbps(printed, row.unit)
        assert from_rate[0] - slack <= row.bw_average_gbps <= from_rate[1] + slack, row


def test_a_decimal_megabyte_would_break_that_arithmetic() -> None:
    row = parse(capture("hdr-cx6-ib_send_bw-a-client.txt")).bandwidth[-1]
    from_rate = row.msg_rate_mpps * row.bytes * 8e-3  # 196.29 Gb/s
    assert row.bw_average_gbps == pytest.approx(from_rate, rel=5e-4)
    assert row.printed_average * 1e6 * 8 / 1e9 == pytest.approx(187.17, abs=0.01)  # 4.6 % short: not 10^6


# --------------------------------------------------------------------------------------------------- exact values


def test_hdr_send_bw_all_sizes_client() -> None:
    result = parse(capture("hdr-cx6-ib_send_bw-a-client.txt"))
    assert [row.bytes for row in result.bandwidth] == [2**n for n in range(1, 24)]
    assert result.bandwidth[-1] == BwRow(
        bytes=8388608,
        iterations=1000,
        bw_peak_gbps=mib(23401.80),
        bw_average_gbps=mib(23396.08),
        msg_rate_mpps=0.002925,
        unit="MB/sec",
        printed_peak=23401.80,
        printed_average=23396.08,
    )
    assert result.bandwidth[-1].bw_average_gbps == pytest.approx(196.2605, abs=1e-4)
    assert result.bandwidth[-1].line_no == 43
    setup = result.setup
    assert (setup.test, setup.verb, setup.bidirectional, setup.device, setup.link_type) == (
        "Send BW Test",
        "Send",
        False,
        "mlx5_2",
        "IB",
    )
    assert (setup.mtu, setup.gid_index, setup.transport, setup.connection, setup.qps) == (4096, None, "IB", "RC", 1)
    assert (setup.tx_depth, setup.rx_depth, setup.cq_moderation, setup.max_inline) == (128, None, 100, 0)
    assert (setup.rdma_cm_qps, setup.data_exchange, setup.uses_rdma_cm) == (False, "Ethernet", False)
    assert (setup.fields["pcie_relax_order"], setup.fields["ibv_wr_api"]) == ("ON", "ON")
    assert result.messages == (
        Message(1, "centos6@centos6:~$ ib_send_bw -a -F  -d mlx5_2 172.16.242.27", "note"),
        Message(45, "centos6@centos6:~$", "note"),
    )


def test_send_bw_server_prints_no_peak() -> None:
    result = parse(capture("hdr-cx6-ib_send_bw-a-server.txt"))
    assert result.side == "server"
    assert {row.bw_peak_gbps for row in result.bandwidth} == {0.0}
    assert (result.setup.tx_depth, result.setup.rx_depth) == (None, 512)
    assert result.bandwidth[-1].printed_average == 23426.81


def test_send_latency_server_typical_and_percentiles() -> None:
    result = parse(capture("edr100-ib_send_lat-server.txt"))
    assert result.side == "server"
    assert result.latency == (
        LatRow(
            bytes=2,
            iterations=1000,
            unit="usec",
            t_min=0.96,
            t_max=3.45,
            t_typical=1.00,
            t_avg=1.01,
            t_stdev=0.09,
            p99=1.06,
            p99_9=3.45,
        ),
    )
    assert (result.setup.test, result.setup.kind, result.setup.max_inline, result.setup.rx_depth) == (
        "Send Latency Test",
        "lat",
        236,
        512,
    )


def test_read_latency_without_header() -> None:
    result = parse(capture("hdr200-ib_read_lat-client-partial-azure-aks.txt"))
    (row,) = result.latency
    assert (row.t_min, row.t_typical, row.t_avg, row.p99, row.p99_9) == (5.35, 5.49, 5.50, 5.74, 11.78)
    assert (result.side, result.setup.test, result.setup.kind, result.complete) == ("unknown", None, None, True)
    assert [message.text for message in result.messages] == [
        "...",
        "Starting RDMA client 'ib_read_lat' for mlx5_0 (Port 18515)...",
        "...",
        "...",
    ]


def test_gbits_and_megabytes_captures_of_one_link_class_agree() -> None:
    # The same FDR 4X link class: ib_send_bw --report_gbits and ib_write_bw in MB/sec.
    gbits = parse(capture("fdr56-mlx4-ib_send_bw-gbits-client.txt")).bandwidth[0]
    mbytes = parse(capture("fdr-mlx4-ib_write_bw-client-rst-indented.txt")).bandwidth[0]
    assert (gbits.unit, gbits.printed_average, gbits.bw_average_gbps) == ("Gb/sec", 49.57, 49.57)
    assert (mbytes.unit, mbytes.printed_average) == ("MB/sec", 6033.76)
    assert mbytes.bw_average_gbps == pytest.approx(50.6148, abs=1e-4)
    assert abs(gbits.bw_average_gbps - mbytes.bw_average_gbps) / gbits.bw_average_gbps < 0.025
    # And HDR 200: 8 MiB in Gb/sec (write) against 8 MiB in MB/sec (send).
    hdr_gbits = parse(capture("hdr200-ib_write_bw-a-gbits-client-partial-azure-aks.txt")).bandwidth[-1]
    hdr_mbytes = parse(capture("hdr-cx6-ib_send_bw-a-client.txt")).bandwidth[-1]
    assert hdr_gbits.bytes == hdr_mbytes.bytes == 8388608
    assert hdr_gbits.bw_average_gbps == 196.55
    assert abs(hdr_gbits.bw_average_gbps - hdr_mbytes.bw_average_gbps) < 0.5


def test_small_gbit_values_have_six_decimals() -> None:
    rows = parse(capture("ndr200-ib_send_bw-a-gbits-client-cx7.txt")).bandwidth
    assert (rows[0].printed_peak, rows[0].bw_average_gbps, rows[0].msg_rate_mpps) == (0.052812, 0.050794, 3.174618)
    assert rows[-1].bw_average_gbps == 196.69


def test_write_server_prints_the_clients_last_row_only() -> None:
    result = parse(capture("hdr200-ib_write_bw-a-server-final-row-only.txt"))
    assert (result.side, result.complete, result.setup.tx_depth) == ("server", True, None)
    (row,) = result.bandwidth
    assert (row.bytes, row.iterations, row.printed_peak, row.printed_average) == (8388608, 5000, 23326.82, 23317.65)


def test_rdma_cm_roce_with_a_warning_between_header_and_row() -> None:
    result = parse(capture("roce100-cx5-ib_write_bw-client-rdmacm-deepops.txt"))
    setup = result.setup
    assert (setup.link_type, setup.gid_index, setup.rdma_cm_qps, setup.data_exchange) == (
        "Ethernet",
        3,
        True,
        "rdma_cm",
    )
    assert setup.uses_rdma_cm
    assert result.warnings == (
        Message(
            20,
            "Conflicting CPU frequency values detected: 1200.535000 != 1251.336000. CPU Frequency is not max.",
            "warning",
        ),
    )
    (row,) = result.bandwidth
    assert (row.bytes, row.iterations, row.bw_peak_gbps, row.bw_average_gbps, row.line_no) == (
        65536,
        5000,
        92.42,
        92.40,
        21,
    )
    assert result.ok  # a warning does not spoil the run


def test_roce_10g_send_in_megabytes() -> None:
    result = parse(capture("roce10g-cx4lx-ib_send_bw-a-client.txt"))
    assert (result.setup.link_type, result.setup.mtu, result.setup.gid_index) == ("Ethernet", 1024, 3)
    assert result.bandwidth[-1].bw_average_gbps == pytest.approx(mib(1100.71))
    assert result.bandwidth[-1].bw_average_gbps == pytest.approx(9.2334, abs=1e-4)


def test_edr_read_client_outstanding_reads() -> None:
    result = parse(capture("edr100-ib_read_bw-client.txt"))
    assert (result.setup.test, result.setup.outstanding_reads, result.setup.max_inline) == (
        "RDMA_Read BW Test",
        16,
        None,
    )
    (row,) = result.bandwidth
    assert row.bw_average_gbps == pytest.approx(98.2164, abs=1e-4)
    assert result.messages == (Message(1, "[root@ct1pt-tnode001 benchmarks]# ib_read_bw ct1pt-tnode002", "note"),)


def test_merged_loopback_log_of_server_and_client() -> None:
    result = parse(capture("hdr-ib_write_bw-all-sizes-loopback-interleaved-superbench.txt"))
    assert (result.side, result.tables, result.complete) == ("both", 2, True)
    # 23 client rows, then the server's copy of the last one (write servers print the client's final report)
    assert len(result.bandwidth) == 24
    assert result.bandwidth[-1] == result.bandwidth[-2]
    assert result.bandwidth[-1].line_no == result.bandwidth[-2].line_no + 2
    assert (result.setup.tx_depth, result.setup.cq_moderation, result.setup.device) == (128, 100, "ib0")
    assert result.messages == ()


def test_loopback_log_client_then_server() -> None:
    result = parse(capture("hdr-ib_write_bw-8M-loopback-superbench.txt"))
    assert (result.side, result.tables) == ("both", 2)
    first, second = result.bandwidth
    assert first == second
    assert (first.iterations, first.printed_average, first.line_no) == (20000, 24056.72, 18)


# --------------------------------------------------------------------------------------------------- aborted runs


def test_run_aborted_mid_table_is_incomplete_with_its_errors() -> None:
    text = capture("hdr-cx6-ib_send_bw-a-client.txt").split("\n")
    cut = next(i for i, line in enumerate(text) if line.startswith(" 4096 "))
    aborted = "\n".join(
        [
            *text[: cut + 1],
            " Completion with error at client",
            " Failed status 12: wr_id 0 syndrom 0x81",
            "scnt=128, ccnt=0",
            " Failed to complete run_iter_bw function successfully",
        ]
    )
    result = parse(aborted)
    assert (result.complete, result.ok, len(result.bandwidth)) == (False, False, 12)
    assert [(m.line_no, m.text) for m in result.errors] == [
        (cut + 2, "Completion with error at client"),
        (cut + 3, "Failed status 12: wr_id 0 syndrom 0x81"),
        (cut + 5, "Failed to complete run_iter_bw function successfully"),
    ]
    assert Message(cut + 4, "scnt=128, ccnt=0", "note") in result.messages


def test_client_that_cannot_connect() -> None:
    # perftest_communication.c prints the first line without a newline, so write_bw.c's message joins it.
    text = (
        "Couldn't connect to 10.0.0.2:18515\n"
        "Unable to open file descriptor for socket connection Unable to init the socket connection\n"
    )
    result = parse(text)
    assert (result.complete, result.side, result.kind, result.bandwidth) == (False, "unknown", None, ())
    assert [m.line_no for m in result.errors] == [1, 2]


def test_header_printed_then_failure_before_any_row() -> None:
    text = (
        "---------------------------------------------------------------------------------------\n"
        "                    RDMA_Write BW Test\n"
        " Link type       : IB\n"
        "---------------------------------------------------------------------------------------\n"
        "Failed to modify QP 1234 to RTR\n"
        " Unable to Connect the HCA's through the link\n"
    )
    result = parse(text)
    assert (result.complete, result.kind, result.side, len(result.errors)) == (False, "bw", "client", 2)


# --------------------------------------------------------------------------------------------------- versions

NEW_HEADER = """\
---------------------------------------------------------------------------------------
                    RDMA_Write Bidirectional BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_0
 Number of qps   : 2\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 PCIe relax order: ON\t\tLock-free      : OFF
 ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF
 TX depth        : 128
 CQ Moderation   : 100
 CQE Poll Batch  : Dynamic
 Mtu             : 4096[B]
 Link type       : IB
 Max inline data : 0[B]
 rdma_cm QPs\t : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0x6c QPN 0x0050 PSN 0xddd611 RKey 0x1fff00 VAddr 0x007e6f4ed11000
 remote address: LID 0x28 QPN 0x0050 PSN 0xa3c746 RKey 0x1fff00 VAddr 0x007e6f4ed11000
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]
 65536      5000             46752.26            46750.12\t\t     0.748002
---------------------------------------------------------------------------------------
"""


def test_mib_header_and_the_header_lines_of_24_10_to_25_10() -> None:
    result = parse(NEW_HEADER)
    (row,) = result.bandwidth
    assert (row.unit, row.printed_average, row.bw_average_gbps) == ("MiB/sec", 46750.12, mib(46750.12))
    setup = result.setup
    assert (setup.test, setup.bidirectional, setup.qps, setup.tx_depth) == (
        "RDMA_Write Bidirectional BW Test",
        True,
        2,
        128,
    )
    assert {key: setup.fields[key] for key in ("lock_free", "using_enhanced_reorder", "cqe_poll_batch")} == {
        "lock_free": "OFF",
        "using_enhanced_reorder": "OFF",
        "cqe_poll_batch": "Dynamic",
    }
    assert result.side == "client"  # no banner; -b prints TX depth on both sides, so only the banner tells
    assert parse(NEW_HEADER.replace("MiB/sec", "MB/sec")).bandwidth[0].bw_average_gbps == row.bw_average_gbps


def test_pre_2016_latency_table_and_header() -> None:
    text = (
        "------------------------------------------------------------------\n"
        "                    RDMA_Write Latency Test\n"
        " Dual-port       : OFF\t\tDevice         : mlx4_0\n"
        " Number of qps   : 1\t\tTransport type : IB\n"
        " Connection type : RC\n"
        " TX depth        : 1\n"
        " Mtu             : 2048B\n"
        " Link type       : IB\n"
        " Gid index       : 0\n"
        " Max inline data : 400B\n"
        " rdma_cm QPs\t : OFF\n"
        " Data ex. method : Ethernet\n"
        "------------------------------------------------------------------\n"
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n"
        " 2       1000          0.87           5.49         0.90   \n"
        "------------------------------------------------------------------\n"
    )
    result = parse(text)
    assert result.latency == (LatRow(bytes=2, iterations=1000, unit="usec", t_min=0.87, t_max=5.49, t_typical=0.90),)
    assert (result.setup.mtu, result.setup.gid_index, result.setup.max_inline) == (2048, 0, 400)
    assert result.ok


def test_duration_runs() -> None:
    lat = parse(
        " #bytes        #iterations       t_avg[usec]    tps average\n"
        " 2             3407716            0.88           1135897.52\n"
        "---------------------------------------------------------------------------------------\n"
    )
    assert lat.latency == (LatRow(bytes=2, iterations=3407716, unit="usec", t_avg=0.88, tps_average=1135897.52),)
    bw = parse(
        " WARNING: BW peak won't be measured in this run.\n"
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]    CPU_Util[%]\n"
        " 65536      1784346          0.00               194.87   \t\t   0.371688\t    3.52\n"
        "---------------------------------------------------------------------------------------\n"
    )
    (row,) = bw.bandwidth
    assert (row.bw_peak_gbps, row.bw_average_gbps, row.cpu_util) == (0.0, 194.87, 3.52)
    assert bw.warnings == (Message(1, "WARNING: BW peak won't be measured in this run.", "warning"),)


def test_qos_and_per_port_tables() -> None:
    qos = parse(
        " #bytes    #sl      #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 65536    3           5000           11000.00            10990.00                  0.175840\n"
    )
    assert (qos.bandwidth[0].sl, qos.bandwidth[0].iterations, qos.complete) == (3, 5000, False)
    per_port = parse(
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   BW Port1[Gb/sec]"
        "   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]\n"
        " 65536      100000     0.00               190.00\t\t   0.362396        95.00"
        "            0.181198              95.00            0.181198\n"
    )
    row = per_port.bandwidth[0]
    assert (row.port_bw_gbps, row.port_msg_rate_mpps) == ((95.0, 95.0), (0.181198, 0.181198))


def test_histogram_samples_say_cycles() -> None:
    text = (
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
        "   99% percentile[usec]   99.9% percentile[usec] \n"
        "#, cycles\n"
        "1, 2310\n"
        "2, 2402\n"
        "---------------------------------------------------------------------------------------\n"
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
        "   99% percentile[usec]   99.9% percentile[usec] \n"
        " 2       1000          2310.00        9120.00      2402.00     \t       2420.13     \t80.01"
        "\t\t2650.00 \t\t9120.00\n"
        "---------------------------------------------------------------------------------------\n"
    )
    result = parse(text)
    (row,) = result.latency
    assert (row.unit, row.t_typical, row.p99_9, result.tables) == ("cycles", 2402.0, 9120.0, 2)


# --------------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("", 0, "no perftest output"),
        ("hello\nworld\n", 0, "no perftest output"),
        (" #bytes  #iterations  BW[KB/sec]\n", 1, "unknown result table header"),
        (" 65536   5000   1.0   2.0   0.1\n", 1, "a result row before any '#bytes' table header"),
        (NEW_HEADER.replace("0.748002", "0.748002  9"), 21, "6 columns where the table has 5"),
        (NEW_HEADER.replace("46750.12", "46750,12"), 21, "average '46750,12' is not a number"),
        (NEW_HEADER.replace("4096[B]", "4096[KB]"), 11, "mtu is not a size in bytes"),
        (NEW_HEADER.replace("Dual-port       : OFF", "Dual-port       : MAYBE"), 3, "dual_port is neither ON nor OFF"),
        (
            NEW_HEADER + "                    Send BW Test\n",
            23,
            "a second test ('RDMA_Write Bidirectional BW Test' before)",
        ),
        (NEW_HEADER.replace("BW peak[MiB", "t_avg[usec] tps average XX[MiB"), 20, "unknown result table header"),
        (
            NEW_HEADER + " #bytes        #iterations       t_avg[usec]    tps average\n",
            23,
            "a lat table in a bw test",
        ),
    ],
)
def test_parse_errors_name_the_line(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text, tool="ib_write_bw")
    assert (caught.value.tool, caught.value.line_no) == ("ib_write_bw", line_no)
    assert caught.value.reason.startswith(reason)
    if line_no:
        assert caught.value.line == text.split("\n")[line_no - 1]


FRAGMENTS = [
    *NEW_HEADER.split("\n"),
    "************************************",
    "* Waiting for client to connect... *",
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
    "   99% percentile[usec]   99.9% percentile[usec] ",
    " 2       1000          0.96           3.45         1.00     \t       1.01        \t0.09   \t\t1.06    \t\t3.45",
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    " 2          5000           0.045656            0.045526            2.845402",
    " #bytes        #iterations       t_avg[usec]    tps average",
    "#, usec",
    "1, 1.5",
    " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:10:11:12",
    " Mtu             : 2048B",
    "Conflicting CPU frequency values detected: 1200.535000 != 1251.336000. CPU Frequency is not max.",
    " Completion with error at client",
    "                    Send Latency Test",
]
_line = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.sampled_from(FRAGMENTS).flatmap(lambda s: st.integers(0, len(s)).map(lambda i: s[:i] + s[i + 1 :])),
    st.text(max_size=60),
)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(st.text(), st.lists(_line, max_size=14).map("\n".join)))
def test_any_text_gives_a_result_or_a_parse_error(text: str) -> None:
    error = result = None
    try:
        result = parse(text)
    except ParseError as caught:
        error = caught
    if error is not None:
        assert error.tool == "perftest"
        assert 0 <= error.line_no <= text.count("\n") + 1
    else:
        assert result is not None
        assert not result.complete or result.bandwidth or result.latency
        assert all(0 < message.line_no <= text.count("\n") + 1 for message in result.messages)


# --------------------------------------------------------------------------------------------------- --out_json

# write_test_info_to_file + write_bw_report_to_file, perftest 24.01 on (keys quoted)
JSON_BW = """\
{
"test_info": {
"test": "RDMA_Write_BW_Test",
"Dual_port": "OFF",
"Device": "mlx5_0",
"Number_of_qps": 1,
"Transport_type": "IB",
"Connection_type": "RC",
"Using_SRQ": "OFF",
"PCIe_relax_order": "ON",
"ibv_wr_API": "ON",
"TX_depth": 128,
"CQ_Moderation": 100,
"Mtu": 4096,
"Link_type": "IB",
"Max_inline_data": 0,
"rdma_cm_QPs": "OFF",
"Data_ex_method": "Ethernet"
},
"results": {
"MsgSize": 65536,
"n_iterations": 5000,
"BW_peak": 23326.82,
"BW_average": 23317.65,
"MsgRate": 0.373082
}
}
"""

# the same run as perftest 4.5-0.17 (Debian 12's 6.06) writes it: bare keys and values, a comma after everything
JSON_BW_6_06 = """\
{
test_info: {
test: RDMA_Write_BW_Test,
Dual_port: OFF,
Device: "mlx5_0",
Number_of_qps: 1,
Transport_type: IB,
Connection_type: RC,
Using_SRQ: OFF,
PCIe_relax_order: ON,
ibv_wr_API: ON,
TX_depth : 128,
CQ_Moderation: 100,
Mtu: 4096,
Link_type: IB,
Max_inline_data: 0,
rdma_cm_QPs: OFF,
Data_ex_method: Ethernet,
},
results: {
MsgSize: 65536,
n_iterations: 5000,
BW_peak: 23326.82,
BW_average: 23317.65,
MsgRate: 0.373082,
},
}
"""

JSON_LAT_6_06 = """\
{
test_info: {
test: Send_Latency_Test,
Dual_port: OFF,
Device: "mlx5_0",
Number_of_qps: 1,
Transport_type: IB,
Connection_type: RC,
Using_SRQ: OFF,
PCIe_relax_order: ON,
WARNING1: "CPU is not PCIe relaxed ordering compliant",
WARNING2: "You should disable PCIe RO with --disable_pcie_relaxed for both server and client",
ibv_wr_API: ON,
RX_depth: 512,
Mtu: 4096,
Link_type: IB,
Max_inline_data: 236,
rdma_cm_QPs: OFF,
Data_ex_method: Ethernet,
},
results: {
MsgSize: 2,
n_iterations: 1000,
t_min: 0.96,
t_max: 3.45,
t_typical: 1.00,
t_avg: 1.01,
t_stdev: 0.09,
percentile_99: 1.06,
percentile_99.9: 3.45,
},
}
"""


def test_json_report() -> None:
    result = parse_json(JSON_BW)
    assert result.bandwidth == (
        BwRow(
            bytes=65536,
            iterations=5000,
            bw_peak_gbps=mib(23326.82),
            bw_average_gbps=mib(23317.65),
            msg_rate_mpps=0.373082,
            unit="MiB/sec",
            printed_peak=23326.82,
            printed_average=23317.65,
        ),
    )
    setup = result.setup
    assert (setup.test, setup.kind, setup.device, setup.mtu, setup.qps, setup.tx_depth) == (
        "RDMA_Write BW Test",
        "bw",
        "mlx5_0",
        4096,
        1,
        128,
    )
    assert (result.side, result.complete, result.messages) == ("client", True, ())


def test_json_of_6_06_is_repaired_to_the_same_report() -> None:
    assert parse_json(JSON_BW_6_06) == parse_json(JSON_BW)


def test_json_in_gbits_is_not_converted() -> None:
    row = parse_json(JSON_BW.replace("23317.65", "195.60"), report_gbits=True).bandwidth[0]
    assert (row.unit, row.bw_average_gbps) == ("Gb/sec", 195.60)


def test_json_latency_of_6_06_with_warnings() -> None:
    result = parse_json(JSON_LAT_6_06)
    assert result.latency == (
        LatRow(
            bytes=2,
            iterations=1000,
            unit="usec",
            t_min=0.96,
            t_max=3.45,
            t_typical=1.00,
            t_avg=1.01,
            t_stdev=0.09,
            p99=1.06,
            p99_9=3.45,
        ),
    )
    assert result.warnings == (
        Message(11, "CPU is not PCIe relaxed ordering compliant", "warning"),
        Message(12, "You should disable PCIe RO with --disable_pcie_relaxed for both server and client", "warning"),
    )
    assert (result.side, result.setup.test, result.setup.rx_depth) == ("server", "Send Latency Test", 512)


def test_json_without_its_closing_braces() -> None:
    truncated = JSON_BW.rstrip().removesuffix("}").rstrip().removesuffix("}")
    assert parse_json(truncated) == parse_json(JSON_BW)


def test_json_qos_member_sl_is_unquoted_also_after_24_01() -> None:
    text = JSON_BW.replace('"MsgSize": 65536,\n', '"MsgSize": 65536,\nsl: 3,\n')
    assert parse_json(text).bandwidth[0].sl == 3


@pytest.mark.parametrize(
    ("text", "line_no", "reason"),
    [
        ("", 0, "an empty JSON file"),
        ("[1, 2]", 0, "not a perftest JSON report"),
        (JSON_BW.replace("23317.65", "nan"), 24, "invalid JSON"),
        (JSON_BW.replace("23317.65", "NaN"), 24, "BW_average is not a number >= 0"),
        (JSON_BW.replace('"MsgSize": 65536', '"MsgSize": "big"'), 21, "MsgSize is not an integer >= 0"),
        (JSON_BW.replace('"Mtu": 4096', '"Mtu": "huge"'), 14, "mtu is not a size in bytes"),
        (JSON_BW.replace("RDMA_Write_BW_Test", "Foo_Test"), 3, "unknown test 'Foo_Test'"),
        (JSON_BW.replace("RDMA_Write_BW_Test", "Send_Latency_Test"), 20, "bw results in a lat test"),
        # --output=bandwidth: one number and a trailing comma (still so in 6.29)
        (
            '{\n"test_info": {\n"test": "Send_BW_Test"\n},\n"results": {\n"bw_avg": 23317.650000,\n\n}\n}\n',
            5,
            "results lack",
        ),
        ('{"results": {"MsgSize": 2}}}', 1, "invalid JSON"),
    ],
)
def test_json_errors(text: str, line_no: int, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_json(text)
    assert (caught.value.tool, caught.value.line_no) == ("perftest", line_no)
    assert caught.value.reason.startswith(reason)


_json_line = st.one_of(
    st.sampled_from(JSON_BW_6_06.split("\n") + JSON_BW.split("\n") + ["{", "}", ",", "},"]),
    st.text(max_size=30),
)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(), st.lists(_json_line, max_size=20).map("\n".join)))
def test_any_json_text_gives_a_result_or_a_parse_error(text: str) -> None:
    error = None
    try:
        parse_json(text)
    except ParseError as caught:
        error = caught
    if error is not None:
        assert 0 <= error.line_no <= text.count("\n") + 1


# --------------------------------------------------------------------------------------------------- argv


def test_argv_server_and_client() -> None:
    run = PerftestRun(
        "ib_write_bw", device="mlx5_0", ib_port=1, all_sizes=True, report_gbits=True, ignore_cpu_freq=True
    )
    assert argv(run) == ("ib_write_bw", "-d", "mlx5_0", "-i", "1", "-a", "-F", "--report_gbits")
    assert argv(run, server="node01")[-1] == "node01"


def test_argv_every_option() -> None:
    run = PerftestRun(
        "ib_send_bw",
        size=65536,
        iterations=5000,
        port=18516,
        device="mlx5_1",
        ib_port=2,
        gid_index=3,
        bidirectional=True,
        qps=4,
        connection="UD",
        mtu=2048,
        rdma_cm=True,
        out_json_file="/tmp/bw.json",
    )
    assert argv(run, server="10.0.0.1") == (
        "ib_send_bw",
        "-d", "mlx5_1", "-i", "2", "-x", "3", "-p", "18516", "-c", "UD", "-m", "2048", "-q", "4",
        "-s", "65536", "-n", "5000",
        "-b", "-R", "--out_json", "--out_json_file", "/tmp/bw.json",
        "10.0.0.1",
    )  # fmt: skip
    assert argv(PerftestRun("ib_read_lat", duration=10, cpu_util=True, out_json=True)) == (
        "ib_read_lat",
        "-D",
        "10",
        "--cpu_util",
        "--out_json",
    )
    assert TOOLS == ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat", "ib_send_lat")


# Each option of a run, alone but for what perftest needs with it, and what it adds to the command line.
OPTION_FLAGS: list[tuple[str, object, dict[str, object], tuple[str, ...]]] = [
    ("size", 4096, {}, ("-s", "4096")),
    ("iterations", 1000, {}, ("-n", "1000")),
    ("port", 18515, {}, ("-p", "18515")),
    ("device", "mlx5_2", {}, ("-d", "mlx5_2")),
    ("ib_port", 2, {}, ("-i", "2")),
    ("gid_index", 0, {}, ("-x", "0")),
    ("bidirectional", True, {}, ("-b",)),
    ("all_sizes", True, {}, ("-a",)),
    ("report_gbits", True, {}, ("--report_gbits",)),
    ("out_json", True, {}, ("--out_json",)),
    ("out_json_file", "/tmp/r.json", {}, ("--out_json", "--out_json_file", "/tmp/r.json")),
    ("duration", 5, {}, ("-D", "5")),
    ("ignore_cpu_freq", True, {}, ("-F",)),
    ("cpu_util", True, {"duration": 5}, ("-D", "5", "--cpu_util")),
    ("qps", 4, {}, ("-q", "4")),
    ("connection", "UD", {}, ("-c", "UD")),
    ("mtu", 4096, {}, ("-m", "4096")),
    ("rdma_cm", True, {}, ("-R",)),
]


@pytest.mark.parametrize(("name", "value", "needs", "flags"), OPTION_FLAGS, ids=[case[0] for case in OPTION_FLAGS])
def test_each_option_of_a_run_adds_its_flag(
    name: str, value: object, needs: dict[str, object], flags: tuple[str, ...]
) -> None:
    run = PerftestRun("ib_write_bw", **{**needs, name: value})  # type: ignore[arg-type]
    assert getattr(run, name) == value
    assert argv(run) == ("ib_write_bw", *flags)
    assert argv(run, server="10.0.0.2") == ("ib_write_bw", *flags, "10.0.0.2")


def test_every_option_of_a_run_has_its_flag_case_and_a_default_adds_nothing() -> None:
    assert {f.name for f in fields(PerftestRun)} - {"test"} == {case[0] for case in OPTION_FLAGS}
    assert argv(PerftestRun("ib_write_bw")) == ("ib_write_bw",)


@pytest.mark.parametrize(
    ("test", "options", "message"),
    [
        ("ib_atomic_bw", {}, "unknown perftest test 'ib_atomic_bw'"),
        ("ib_write_bw", {"size": 8, "all_sizes": True}, "size and all_sizes exclude each other"),
        ("ib_write_bw", {"duration": 5, "iterations": 100}, "duration (-D) and iterations (-n) exclude each other"),
        ("ib_write_bw", {"duration": 5, "all_sizes": True}, "perftest does not run all sizes (-a) in duration mode"),
        ("ib_write_bw", {"cpu_util": True}, "perftest reports CPU utilisation (--cpu_util) only with -D"),
        ("ib_send_lat", {"bidirectional": True}, "bidirectional (-b) is for bandwidth tests only"),
        ("ib_send_lat", {"qps": 2}, "several QPs (-q) are for bandwidth tests only"),
        ("ib_write_bw", {"iterations": 4}, "perftest needs at least 5 iterations, not 4"),
        ("ib_write_bw", {"gid_index": 65}, "gid_index must be 0..64, not 65"),
        ("ib_write_bw", {"mtu": 9000}, "mtu must be one of (256, 512, 1024, 2048, 4096), not 9000"),
        ("ib_write_bw", {"connection": "RD"}, "connection must be one of"),
        ("ib_write_bw", {"size": 0}, "size must be positive, not 0"),
        ("ib_write_bw", {"device": " mlx5_0"}, "device ' mlx5_0' is not a usable argument"),
        ("ib_write_bw", {"server": "-x"}, "server '-x' is not a usable argument"),
    ],
)
def test_argv_refuses_what_perftest_refuses(test: str, options: dict[str, object], message: str) -> None:
    server = options.get("server")
    settings = {name: value for name, value in options.items() if name != "server"}
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        argv(PerftestRun(test, **settings), server=server)  # type: ignore[arg-type]


def test_a_run_is_checked_whenever_it_is_built_also_by_replace() -> None:
    run = PerftestRun("ib_write_bw", iterations=1000)
    with pytest.raises(ValueError, match="duration"):
        replace(run, duration=5)
    with pytest.raises(FrozenInstanceError):
        run.iterations = 4  # type: ignore[misc]
