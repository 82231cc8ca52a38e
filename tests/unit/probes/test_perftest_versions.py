"""perftest's text reader and the notes convention on every real capture (tests/fixtures/perftest: 15 captures of
perftest layouts from before 2016-07 to 24.04, each with its source; their values are checked one by one in
tests/unit/verify/test_collect_perftest.py): the lines that are not the report are its messages and its notes
(``line N: TEXT``), and inserting warning or log lines anywhere changes nothing else. perftest 6.06's own
failure without an RDMA device (tests/fixtures/perftest-errors, produced here) is a result with its error."""

from __future__ import annotations

from dataclasses import replace

import pytest
from captures import capture_names, read_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpinoise import MPI_NOISE
from noiselines import insert, noted, shown

from ibprov.probes import perftest
from ibprov.probes.perftest import Message, PerftestResult

CAPTURES = capture_names("perftest/*.txt")
CPU = "Conflicting CPU frequency values detected: 1200.535000 != 1251.336000. CPU Frequency is not max."


def bare(result: PerftestResult) -> PerftestResult:
    """The result without the lines that are not the report."""
    return replace(result, messages=())


def test_the_notes_are_the_messages_as_every_reader_shows_them() -> None:
    """A RoCE ib_write_bw client over rdma_cm (NVIDIA/deepops docs; layout before 4.5: no PCIe relax order line):
    the 'Conflicting CPU frequency' warning between the table header and its row is a warning and a note."""
    result = perftest.parse(read_capture("perftest/roce100-cx5-ib_write_bw-client-rdmacm-deepops.txt"))
    assert result.notes == (f"line 20: {CPU}",)
    assert result.warnings == (Message(20, CPU, "warning"),)
    assert (result.complete, result.setup.gid_index, len(result.bandwidth)) == (True, 3, 1)


def test_an_ibwarn_line_is_a_warning_and_a_note_in_its_place() -> None:
    lines = read_capture("perftest/edr100-ib_read_bw-client.txt").split("\n")
    noisy = insert(lines, [(3, "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)")])
    result = perftest.parse("\n".join(noisy))
    assert Message(4, "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)", "warning") in result.messages
    assert "line 4: ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)" in result.notes
    assert bare(result) == bare(perftest.parse("\n".join(lines)))


def test_an_open_mpi_banner_rule_is_not_a_perftest_rule() -> None:
    """An aborted table followed by Open MPI's 74-dash rule stays incomplete (perftest's rule is 87 dashes)."""
    lines = read_capture("perftest/fdr56-mlx4-ib_send_bw-gbits-client.txt").rstrip("\n").split("\n")
    aborted = lines[: max(i for i, line in enumerate(lines) if line.strip().startswith("-"))]
    assert not perftest.parse("\n".join(aborted)).complete
    result = perftest.parse("\n".join([*aborted, "-" * 74]))
    assert not result.complete
    assert result.notes[-1] == f"line {len(aborted) + 1}: {'-' * 74}"


@pytest.mark.parametrize(
    "name",
    ["perftest6.06-debian12-ib_write_bw-no-device.txt", "perftest6.06-debian12-ib_send_lat-no-device.txt"],
)
def test_perftest_6_06_without_a_device_is_a_failed_result_with_its_error(name: str) -> None:
    """perftest 6.06 (Debian 12's 4.5+0.17) on a host without RDMA: three lines, the last one its error."""
    result = perftest.parse(read_capture(f"perftest-errors/{name}"), tool="ib_write_bw")
    assert [m.text for m in result.errors] == ["Unable to find the Infiniband/RoCE device"]
    assert result.notes == (
        "line 1: Did not detect devices",
        "line 2: If device exists, check if driver is up",
        "line 3: Unable to find the Infiniband/RoCE device",
    )
    assert (result.ok, result.complete, result.bandwidth, result.latency) == (False, False, (), ())


def test_an_all_sizes_read_bandwidth_table_whose_printed_precision_changes_between_rows() -> None:
    """ib_read_bw -a --report_gbits on HDR200 (Azure's AKS RDMA test output): 23 sizes from 2 B to 8 MiB, the
    smallest printed with six decimals and the rest with two, the script's own lines and '...' as notes."""
    result = perftest.parse(read_capture("perftest/hdr200-ib_read_bw-a-gbits-client-partial-azure-aks.txt"))
    rows = result.bandwidth
    assert [r.bytes for r in rows] == [2**i for i in range(1, 24)]
    assert {r.iterations for r in rows} == {5000}
    assert {r.unit for r in rows} == {"Gb/sec"}
    assert (rows[0].bw_peak_gbps, rows[0].bw_average_gbps, rows[0].msg_rate_mpps) == (0.045444, 0.045291, 2.830684)
    assert (rows[2].bw_average_gbps, rows[-1].bw_average_gbps, rows[-1].msg_rate_mpps) == (0.18, 197.48, 0.002943)
    assert (result.ok, result.complete) == (True, True)
    assert "line 2: Starting RDMA client 'ib_read_bw' for mlx5_0 (Port 18515)..." in result.notes


def test_the_25_10_layout_of_doca_3_3_send_bandwidth_in_mib() -> None:
    """DOCA-OFED 3.3.0's perftest (layout of 25.10: 'Disabling dynamic polling' before the header, 'Using Enhanced
    Reorder', 'CQE Poll Batch', BW in MiB/sec), ConnectX-7 NDR back to back."""
    result = perftest.parse(read_capture("perftest/ndr400-cx7-ib_send_bw-mib-doca3.3-client.txt"))
    (row,) = result.bandwidth
    assert (row.bytes, row.iterations, row.unit, row.printed_average) == (65536, 1000, "MiB/sec", 46557.03)
    assert row.bw_average_gbps == pytest.approx(46557.03 * 2**20 * 8 / 1e9)  # 390.5 Gb/s on a 400G link
    assert (result.setup.test, result.setup.device, result.setup.mtu, result.setup.tx_depth) == (
        "Send BW Test",
        "mlx5_0",
        4096,
        128,
    )
    assert (result.setup.fields["cqe_poll_batch"], result.setup.fields["using_enhanced_reorder"]) == ("16", "OFF")
    assert (result.side, result.complete) == ("client", True)
    assert result.notes[1] == "line 2: Disabling dynamic polling"
    assert [m.level for m in result.messages] == ["note", "note", "warning", "note"]


def test_the_25_10_layout_of_doca_3_3_send_latency() -> None:
    result = perftest.parse(read_capture("perftest/ndr400-cx7-ib_send_lat-doca3.3-client.txt"))
    (row,) = result.latency
    assert (row.bytes, row.t_min, row.t_typical, row.t_avg, row.p99, row.p99_9) == (2, 1.24, 1.27, 1.27, 1.37, 5.19)
    assert (result.setup.max_inline, len(result.warnings)) == (236, 2)


def test_the_25_10_layout_of_doca_3_3_write_bandwidth_with_dynamic_cqe_batching() -> None:
    result = perftest.parse(read_capture("perftest/ndr400-cx7-ib_write_bw-gbits-doca3.3-client.txt"))
    (row,) = result.bandwidth
    assert (row.unit, row.bw_peak_gbps, row.bw_average_gbps, row.msg_rate_mpps) == ("Gb/sec", 392.38, 392.34, 0.748336)
    assert result.setup.fields["cqe_poll_batch"] == "Dynamic"


def test_every_capture_is_in_the_property_test() -> None:
    assert len(CAPTURES) == 18


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(CAPTURES), data=st.data())
def test_inserted_warning_lines_change_only_the_notes(name: str, data: st.DataObject) -> None:
    lines = read_capture(name).split("\n")
    clean = perftest.parse("\n".join(lines))
    inserts = data.draw(st.lists(st.tuples(st.integers(0, len(lines)), MPI_NOISE), max_size=8), label="inserts")
    result = perftest.parse("\n".join(insert(lines, inserts)))
    assert bare(result) == bare(clean)
    assert noted(result.notes) == sorted([*noted(clean.notes), *shown(inserts)])
