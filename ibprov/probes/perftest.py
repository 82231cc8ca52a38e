"""perftest (``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_*_lat``): the command line, and pure readers
of its text output (:func:`parse`) and of its ``--out_json`` file (:func:`parse_json`).

Facts below were read in linux-rdma/perftest at tag ``v4.5-0.17`` (the Debian 12 package, ``Version: 6.06``),
tag ``24.07.0-0.44`` (6.22) and master (6.29); line numbers are those of the files at those tags.

**Bandwidth units.** Every version divides the same byte count by one constant::

    format_factor = (user_param->report_fmt == MBS) ? 0x100000 : 125000000;

(``src/perftest_parameters.c:3377`` in v4.5-0.17, ``:4766`` in master, the same line since 2013; before that
each test divided by ``0x100000`` inline). So ``BW ...[MB/sec]`` and ``[MiB/sec]`` are both **2^20 bytes/s**,
and ``[Gb/sec]`` (``--report_gbits``) is 125,000,000 bytes/s = **10^9 bit/s**; the ``--report_gbits`` help says
the same ("Note: MiB=2^20 byte, while Gb=10^9 bits ... Factor=10^9/(2^20*8)=119.2", ``perftest_parameters.c:512``
in v4.5-0.17, ``:720`` in master). Only the label changed: ``RESULT_FMT`` reads ``BW peak[MB/sec]`` up to 24.04
(``src/perftest_parameters.h:200`` in v4.5-0.17) and ``BW peak[MiB/sec]`` from 24.07 (``:195`` in 24.07.0-0.44,
``:197`` in master; commit 1d202bb "Display proper unit for MiB/sec results", 2024-03-19). Rows here carry the
label as printed and both bandwidths normalised to Gb/s (10^9 bit/s): ``MB``/``MiB`` × 2^20 × 8 / 10^9.
``MsgRate[Mpps]`` is ``iters * cycles_to_units / (cycles * 1000000)`` (``:3382`` / ``:4771``): decimal millions
of messages per second in every unit mode. With ``--report_gbits``, averages below 0.1 Gb/s are printed with
six decimals (``inc_accuracy``, ``:3566`` / ``:4960``).

**Text layout.** A ``-`` rule (87 dashes; 163 with ``--report-per-port``), the title
(``<Send|Send_imm|RDMA_Write|RDMA_Write_imm|RDMA_Read|Atomic> [Bidirectional ][Post List ](BW|Latency) Test``),
``Key : value`` lines (one or two per line, tab separated; keys added over time: ``Using SRQ`` 2013-07,
``PCIe relax order``/``ibv_wr* API`` 2020, ``Lock-free`` 24.10, ``CQE Poll Batch`` 25.04, ``Using Enhanced
Reorder`` 25.10; ``Mtu : 2048B`` until 2013-07, then ``2048[B]``; ``Gid index`` until 2015-11, then ``GID
index``; 25.10 may print ``Disabling dynamic polling`` before the header, a note here), a rule,
the ``local address``/``remote address``/``GID`` lines, a rule, the table header, the rows, a closing rule. The
client prints ``TX depth``, a send-test server ``RX depth`` (both with ``-b``); a server prints the
``* Waiting for client to connect... *`` banner first. A half-duplex ``ib_write_bw`` server prints one row, the
client's last one (``write_bw.c``); a send server prints ``BW peak`` 0.00 (it does not measure the peak, nor
does any ``-D`` run). Latency tables have 3 value columns before 2016-07 (``t_min t_max t_typical``), 7 since, and
``t_avg tps average`` with ``-D``. With ``-C`` the values are CPU cycles although the header still says
``[usec]`` (``RESULT_FMT_LAT`` is constant); only ``-H``/``-U`` runs say so (``#, cycles``), which is the unit
recorded then. ``Conflicting CPU frequency values detected ...`` (``get_clock.c``, stderr, silenced by ``-F``)
and other warnings or errors can sit anywhere, also between rows; logs of a server and a client on one host
can be merged line by line (superbench loopback logs).

**Reading.** Structure (title, ``Key : value`` lines, address lines, table headers, rows, rules, banner) is
parsed strictly: an unknown table header, a row that does not fit the table, a known key with a malformed value,
a row before any table header or a second, different test raise :class:`ParseError`. Any other line is kept as
a :class:`Message` (``error``/``warning``/``note``): perftest and the libraries under it print hundreds of
different diagnostics, and a capture may carry shell prompts. :attr:`PerftestResult.notes` shows them as every
reader's notes (``line N: TEXT``); a line inserted anywhere (a UCX log line, an Open MPI banner and its 74-dash
rule, a driver warning) changes the messages and notes only. Text with neither structure nor an error or
warning raises ParseError. ``complete`` means rows were printed and a rule followed the last one; an aborted run
stops without it.

**``--out_json``** (since 2021-05): one object ``{"test_info": {...}, "results": {...}}``, rewritten
(``O_TRUNC``) for every size, so it holds the last size only. Before 24.01 (commit f9e82f7 "Make output JSON
standard") keys and most string values are unquoted and every member ends with a comma (``MsgSize: 65536,``);
24.01 onwards still writes the ``-S`` QoS member as ``sl: 0`` and ``--output=bandwidth`` as ``"bw_avg": 1.0,``
before ``}``. :func:`parse_json` tries strict JSON first, then quotes bare keys (and, on those lines, bare
values), drops stray and trailing commas and closes unclosed braces; anything still invalid raises ParseError.
The file records no unit: ``BW_*`` is in MiB/s unless the run had ``--report_gbits`` (say so with
``report_gbits=True``).

Proven on (tests/fixtures/perftest and perftest-errors, tests/fixtures/proven/perftest.yaml): 18 real text
reports whose layouts span 2013-07 to 25.10 (ConnectX-3 FDR to ConnectX-7 NDR, MLNX_OFED 5.4, DOCA-OFED 3.3,
SuperBench and DeepOps logs; most posts do not name the version) and perftest 6.06's own error without an RDMA
device.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from ibprov.probes._text import ParseError, lines, note

__all__ = [
    "TOOLS",
    "BwRow",
    "LatRow",
    "Message",
    "PerftestResult",
    "PerftestRun",
    "Setup",
    "argv",
    "parse",
    "parse_json",
    "to_gbps",
]

TOOL = "perftest"
TOOLS = ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat", "ib_send_lat")

Side = Literal["client", "server", "both", "unknown"]
Kind = Literal["bw", "lat"]
Level = Literal["error", "warning", "note"]

_BYTES_PER_SECOND = {"MB/sec": 0x100000, "MiB/sec": 0x100000, "Gb/sec": 125_000_000}
_MTUS = (256, 512, 1024, 2048, 4096)
_CONNECTIONS = ("RC", "UC", "UD", "XRC", "DC", "SRD")
_MIN_ITERATIONS = 5  # MIN_ITER
_MAX_GID_INDEX = 64  # MAX_GID_IX


def to_gbps(value: float, unit: str) -> float:
    """A bandwidth as perftest printed it (``MB/sec``, ``MiB/sec`` = 2^20 B/s; ``Gb/sec``) in 10^9 bit/s."""
    if unit == "Gb/sec":
        return value
    return value * _BYTES_PER_SECOND[unit] * 8 / 1e9


# --------------------------------------------------------------------------------------------------- model


@dataclass(frozen=True)
class BwRow:
    """One row of a bandwidth table. ``printed_*`` are the numbers as printed, in ``unit``."""

    bytes: int
    iterations: int
    bw_peak_gbps: float  # 0.0 when not measured (send server, -D, -N, > 20000 iterations)
    bw_average_gbps: float
    msg_rate_mpps: float
    unit: str  # "MB/sec", "MiB/sec" or "Gb/sec"
    printed_peak: float
    printed_average: float
    sl: int | None = None  # -S QoS tables
    cpu_util: float | None = None  # --cpu_util, percent
    port_bw_gbps: tuple[float, ...] = ()  # --report-per-port: port 1, port 2
    port_msg_rate_mpps: tuple[float, ...] = ()
    line_no: int = field(default=0, compare=False)  # 0 for --out_json


@dataclass(frozen=True)
class LatRow:
    """One row of a latency table, in ``unit`` (microseconds unless a -H/-U run said cycles)."""

    bytes: int
    iterations: int
    unit: str  # "usec" or "cycles"
    t_min: float | None = None
    t_max: float | None = None
    t_typical: float | None = None  # the median
    t_avg: float | None = None  # absent before 2016-07
    t_stdev: float | None = None
    p99: float | None = None
    p99_9: float | None = None
    tps_average: float | None = None  # -D runs: transactions per second
    cpu_util: float | None = None
    line_no: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Message:
    """A line that is not part of the report: a warning, an error, or anything else (a note)."""

    line_no: int
    text: str
    level: Level


def _no_fields() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Setup:
    """What the report header says. ``fields`` holds every ``Key : value`` as printed, keyed by the key in
    snake case (``Number of qps`` and the JSON ``Number_of_qps`` are both ``number_of_qps``)."""

    test: str | None = None  # the title: "RDMA_Write BW Test", "Send Latency Test", ...
    verb: str | None = None  # Send, Send_imm, RDMA_Write, RDMA_Write_imm, RDMA_Read, Atomic
    kind: Kind | None = None
    bidirectional: bool | None = None  # -b (None: no title seen)
    device: str | None = None
    link_type: str | None = None  # "IB" or "Ethernet"
    mtu: int | None = None  # bytes
    gid_index: int | None = None  # printed only when set (-x, RoCE)
    transport: str | None = None  # "IB" (verbs transport; "IW" for iWARP)
    connection: str | None = None  # RC, UC, UD, XRC, DC, SRD
    qps: int | None = None
    dual_port: bool | None = None
    rdma_cm_qps: bool | None = None  # -R
    data_exchange: str | None = None  # "Ethernet" (TCP socket) or "rdma_cm" (-R, -z)
    tx_depth: int | None = None
    rx_depth: int | None = None
    cq_moderation: int | None = None
    max_inline: int | None = None
    outstanding_reads: int | None = None
    fields: Mapping[str, str] = field(default_factory=_no_fields, hash=False)

    @property
    def uses_rdma_cm(self) -> bool:
        return bool(self.rdma_cm_qps) or self.data_exchange == "rdma_cm"


@dataclass(frozen=True)
class PerftestResult:
    setup: Setup
    side: Side  # "both": a server's and a client's output merged into one log
    bandwidth: tuple[BwRow, ...] = ()
    latency: tuple[LatRow, ...] = ()
    messages: tuple[Message, ...] = ()
    complete: bool = False  # rows were printed and a closing rule followed the last one
    tables: int = 0  # table headers seen (2 for merged server + client logs)

    @property
    def kind(self) -> Kind | None:
        if self.bandwidth:
            return "bw"
        if self.latency:
            return "lat"
        return self.setup.kind

    @property
    def notes(self) -> tuple[str, ...]:
        """Every line that is not part of the report, as ``line N: TEXT`` (the convention of every reader):
        :attr:`messages` without their level."""
        return tuple(note(message.line_no, message.text) for message in self.messages)

    @property
    def errors(self) -> tuple[Message, ...]:
        return tuple(message for message in self.messages if message.level == "error")

    @property
    def warnings(self) -> tuple[Message, ...]:
        return tuple(message for message in self.messages if message.level == "warning")

    @property
    def ok(self) -> bool:
        return self.complete and not self.errors


# --------------------------------------------------------------------------------------------------- argv


@dataclass(frozen=True)
class PerftestRun:
    """One perftest run as its command line gives it. Both sides take the same symmetric options (size,
    iterations, ``all_sizes``, ``bidirectional``, ``report_gbits``, ``qps``, ``connection``, ``rdma_cm``,
    ``port``); ``device``, ``ib_port`` and ``gid_index`` are each side's own. Building one with a combination
    perftest refuses or ignores raises ValueError."""

    test: str  # one of TOOLS
    size: int | None = None  # -s: bytes per message
    iterations: int | None = None  # -n
    port: int | None = None  # -p: the TCP port of the connection setup
    device: str | None = None  # -d: the RDMA device (mlx5_0)
    ib_port: int | None = None  # -i: the device's port
    gid_index: int | None = None  # -x (RoCE needs it, IB does not)
    bidirectional: bool = False  # -b: bandwidth tests only
    all_sizes: bool = False  # -a: every size from 2 bytes to 8 MiB
    report_gbits: bool = False  # --report_gbits: Gb/s instead of MiB/s
    out_json: bool = False  # --out_json
    out_json_file: str | None = None  # --out_json_file, with --out_json (perftest writes the file only with both)
    duration: int | None = None  # -D: seconds, instead of iterations
    ignore_cpu_freq: bool = False  # -F: no "Conflicting CPU frequency" warning
    cpu_util: bool = False  # --cpu_util: only with -D
    qps: int | None = None  # -q
    connection: str | None = None  # -c: one of _CONNECTIONS
    mtu: int | None = None  # -m: bytes, one of _MTUS
    rdma_cm: bool = False  # -R: connect the QPs through rdma_cm

    def __post_init__(self) -> None:
        problems = self._problems()
        if problems:
            raise ValueError("; ".join(problems))

    def _problems(self) -> list[str]:
        latency, timed = self.test.endswith("_lat"), self.duration is not None
        conflicts = [
            (self.size is not None and self.all_sizes, "size and all_sizes exclude each other"),
            (timed and self.iterations is not None, "duration (-D) and iterations (-n) exclude each other"),
            (timed and self.all_sizes, "perftest does not run all sizes (-a) in duration mode (-D)"),
            (self.cpu_util and not timed, "perftest reports CPU utilisation (--cpu_util) only with -D"),
            (self.bidirectional and latency, "bidirectional (-b) is for bandwidth tests only"),
            (self.qps is not None and self.qps > 1 and latency, "several QPs (-q) are for bandwidth tests only"),
        ]
        problems = [message for wrong, message in conflicts if wrong]
        if self.test not in TOOLS:
            problems.append(f"unknown perftest test {self.test!r} (one of {', '.join(TOOLS)})")
        texts = (("device", self.device), ("out_json_file", self.out_json_file))
        problems += [problem for name, text in texts if (problem := _unusable(name, text))]
        counts = {
            "size": self.size,
            "port": self.port,
            "ib_port": self.ib_port,
            "qps": self.qps,
            "duration": self.duration,
        }
        problems += [f"{name} must be positive, not {n}" for name, n in counts.items() if n is not None and n < 1]
        if self.iterations is not None and self.iterations < _MIN_ITERATIONS:
            problems.append(f"perftest needs at least {_MIN_ITERATIONS} iterations, not {self.iterations}")
        if self.gid_index is not None and not 0 <= self.gid_index <= _MAX_GID_INDEX:
            problems.append(f"gid_index must be 0..{_MAX_GID_INDEX}, not {self.gid_index}")
        if self.mtu is not None and self.mtu not in _MTUS:
            problems.append(f"mtu must be one of {_MTUS}, not {self.mtu}")
        if self.connection is not None and self.connection not in _CONNECTIONS:
            problems.append(f"connection must be one of {_CONNECTIONS}, not {self.connection!r}")
        return problems


def _unusable(name: str, text: str | None) -> str | None:
    """Why ``text`` cannot be one argument of the command line (empty, an option, padded), or None."""
    if text is not None and (not text or text.startswith("-") or text != text.strip()):
        return f"{name} {text!r} is not a usable argument"
    return None


def argv(run: PerftestRun, *, server: str | None = None) -> tuple[str, ...]:
    """The command line of one side of ``run``: the server without ``server``, the client with the server's
    address last. Raises ValueError when ``server`` cannot be an argument."""
    if problem := _unusable("server", server):
        raise ValueError(problem)
    valued: list[tuple[str, object]] = [
        ("-d", run.device),
        ("-i", run.ib_port),
        ("-x", run.gid_index),
        ("-p", run.port),
        ("-c", run.connection),
        ("-m", run.mtu),
        ("-q", run.qps),
        ("-s", run.size),
        ("-n", run.iterations),
        ("-D", run.duration),
    ]
    switches = [
        ("-a", run.all_sizes),
        ("-b", run.bidirectional),
        ("-R", run.rdma_cm),
        ("-F", run.ignore_cpu_freq),
        ("--report_gbits", run.report_gbits),
        ("--cpu_util", run.cpu_util),
        ("--out_json", run.out_json or run.out_json_file is not None),
    ]
    args = [run.test, *(part for flag, value in valued if value is not None for part in (flag, str(value)))]
    args += [flag for flag, on in switches if on]
    if run.out_json_file is not None:
        args += ["--out_json_file", run.out_json_file]
    if server is not None:
        args.append(server)
    return tuple(args)


# --------------------------------------------------------------------------------------------------- text

_VERBS = r"Send_imm|Send|RDMA_Write_imm|RDMA_Write|RDMA_Read|Atomic"


def _title_pattern(sep: str) -> re.Pattern[str]:
    """The title (``sep`` = " ") or the JSON ``test`` value (``sep`` = "_"), both built from the same parts."""
    return re.compile(
        rf"^(?P<verb>{_VERBS})(?:{sep}(?P<atomic>CMP_AND_SWAP|FETCH_AND_ADD))?(?P<bidir>{sep}Bidirectional)?"
        rf"(?P<post>{sep}Post{sep}List)?(?:{sep}(?P<kind>BW|Latency))?(?P<fwd>{sep}forwarding)?"
        rf"(?P<mcast>{sep}Multicast)?{sep}Test$",
        re.ASCII,
    )


_TITLE = _title_pattern(" ")
_JSON_TITLE = _title_pattern("_")
# 87 dashes (163 per port), 66 in old releases; Open MPI's banner rule (74 dashes) is not one of perftest's
_RULE = re.compile(r"^(?:-{60,70}|-{80,})$")
_STARS = re.compile(r"^\*+$")
_BANNER = re.compile(r"^\* Waiting for client to connect\.\.\. \*$")
_RDMA_CM_WAIT = re.compile(r"^Waiting for client rdma_cm QP to connect$")
_ADDRESS = re.compile(r"^(?:local|remote) address: ", re.IGNORECASE)
_GID = re.compile(r"^GID: ")
_SAMPLES_HEAD = re.compile(r"^#, (usec|cycles)$")  # -H / -U
_SAMPLE = re.compile(r"^\d+, \S+$")
_ROW_START = re.compile(r"^\d")
_INT = re.compile(r"^\d{1,19}$", re.ASCII)
_NUMBER = re.compile(r"^-?\d{1,30}(?:\.\d{1,30})?$", re.ASCII)
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.*/ -]*$", re.ASCII)
_PAIR_SPLIT = re.compile(r"\s*:\s*")
_SIZE_VALUE = re.compile(r"^(\d{1,9})(?:\[B\]|B)?$", re.ASCII)

_BW_HEADER = re.compile(
    r"^#bytes (?P<sl>#sl )?#iterations BW peak\[(?P<unit>MB/sec|MiB/sec|Gb/sec)\] BW average\[(?P=unit)\]"
    r" MsgRate\[Mpps\](?P<ports> BW Port1\[(?P=unit)\] MsgRate Port1\[Mpps\] BW Port2\[(?P=unit)\]"
    r" MsgRate Port2\[Mpps\])?(?P<cpu> CPU_Util\[%\])?$"
)
_LAT_HEADER = re.compile(
    r"^#bytes #iterations t_min\[(?P<unit>usec|cycles)\] t_max\[(?P=unit)\] t_typical\[(?P=unit)\]"
    r"(?P<full> t_avg\[(?P=unit)\] t_stdev\[(?P=unit)\] 99% percentile\[(?P=unit)\]"
    r" 99\.9% percentile\[(?P=unit)\])?(?P<cpu> CPU_Util\[%\])?$"
)
_LAT_DURATION_HEADER = re.compile(
    r"^#bytes #iterations t_avg\[(?P<unit>usec|cycles)\](?P<tps> tps average)?(?P<cpu> CPU_Util\[%\])?$"
)

_WARNING = re.compile(r"warning|conflicting cpu frequency|cpu frequency is not max|falling back", re.IGNORECASE)
_ERROR = re.compile(
    r"\b(?:fail(?:ed|ure|s)?|couldn'?t|could not|unable|invalid|errors?|cannot|can'?t|not supported|unsupported"
    r"|problems?|abort(?:ed|ing)?|refused|timed? ?out|denied)\b",
    re.IGNORECASE,
)

# Keys of the report header (snake case), from ctx_print_test_info across versions.
_KNOWN_KEYS = frozenset(
    {
        "dual_port", "device", "number_of_qps", "transport_type", "connection_type", "using_srq",
        "pcie_relax_order", "lock_free", "ibv_wr_api", "using_enhanced_reorder", "tx_depth", "post_list",
        "recv_post_list", "rx_depth", "dcs_num_streams", "dcs_active_num_streams",
        "number_of_data_encryption_keys", "block_size", "cq_moderation", "cqe_poll_batch", "mtu", "link_type",
        "buffer_size", "gid_index", "gid_index2", "max_inline_data", "outstand_reads", "rdma_cm_qps",
        "use_rocm_memory", "use_musa_memory", "data_ex_method", "tos", "numa_node",
    }
)  # fmt: skip
_INT_KEYS = frozenset(
    {"number_of_qps", "tx_depth", "rx_depth", "cq_moderation", "gid_index", "gid_index2", "outstand_reads",
     "post_list", "recv_post_list", "tos", "numa_node"}
)  # fmt: skip
_SIZE_KEYS = frozenset({"mtu", "max_inline_data", "buffer_size"})  # "4096[B]" (since 2013-07), "4096B" before
_ON_OFF_KEYS = frozenset({"dual_port", "using_srq", "rdma_cm_qps"})


def _snake(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


def _field_problem(key: str, value: str) -> str | None:
    """Why ``value`` cannot be the value of header field ``key`` (snake case), or None."""
    if key in _INT_KEYS and not _INT.match(value):
        return f"{key} is not a number"
    if key in _SIZE_KEYS and not _SIZE_VALUE.match(value):
        return f"{key} is not a size in bytes"
    if key in _ON_OFF_KEYS and value not in ("ON", "OFF"):
        return f"{key} is neither ON nor OFF"
    return None


def _pairs(line: str) -> list[tuple[str, str]] | None:
    """``Key : value`` pairs of a header line (one or two, tab separated), or None when it is not one."""
    parts = _PAIR_SPLIT.split(line.replace("\t", " ").strip())
    if len(parts) < 2:
        return None
    keys = [parts[0]]
    values: list[str] = []
    for middle in parts[1:-1]:
        value, _, key = middle.partition(" ")
        keys.append(key.strip())
        values.append(value)
    values.append(parts[-1])
    if any(not _KEY.match(key) for key in keys) or any(not value or " " in value for value in values):
        return None
    return list(zip(keys, values, strict=True))


def _level(text: str) -> Level:
    if _WARNING.search(text):
        return "warning"
    if _ERROR.search(text):
        return "error"
    return "note"


@dataclass(frozen=True)
class _Layout:
    kind: Kind
    unit: str
    columns: tuple[str, ...]


def _layout(header: str) -> _Layout | None:
    if match := _BW_HEADER.match(header):
        columns = ["bytes", *(["sl"] if match["sl"] else []), "iterations", "peak", "average", "msg_rate"]
        columns += ["port1_bw", "port1_rate", "port2_bw", "port2_rate"] if match["ports"] else []
        return _Layout("bw", match["unit"], (*columns, *(["cpu_util"] if match["cpu"] else [])))
    if match := _LAT_HEADER.match(header):
        columns = ["bytes", "iterations", "t_min", "t_max", "t_typical"]
        columns += ["t_avg", "t_stdev", "p99", "p99_9"] if match["full"] else []
        return _Layout("lat", match["unit"], (*columns, *(["cpu_util"] if match["cpu"] else [])))
    if match := _LAT_DURATION_HEADER.match(header):
        columns = ["bytes", "iterations", "t_avg", *(["tps_average"] if match["tps"] else [])]
        return _Layout("lat", match["unit"], (*columns, *(["cpu_util"] if match["cpu"] else [])))
    return None


class _Reader:
    """The state of one pass over the text; each ``_on_*`` handles one kind of line."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.title: re.Match[str] | None = None
        self.titles = 0
        self.banners = 0
        self.server_waits = False
        self.fields: dict[str, str] = {}
        self.in_header = False
        self.layout: _Layout | None = None
        self.tables = 0
        self.samples_unit: str | None = None  # inside -H/-U sample lists
        self.cycles = False
        self.bandwidth: list[BwRow] = []
        self.latency: list[LatRow] = []
        self.messages: list[Message] = []
        self.last_row = 0
        self.last_rule = 0
        self.structure = False

    def feed(self, line_no: int, line: str) -> None:
        text = line.strip()
        if _RULE.match(text):
            self.last_rule, self.in_header, self.samples_unit = line_no, False, None
            return
        if self.samples_unit is not None and _SAMPLE.match(text):
            return
        if match := _SAMPLES_HEAD.match(text):
            self.samples_unit = match[1]
            self.cycles = self.cycles or match[1] == "cycles"
            return
        if text.startswith("#bytes"):
            self._on_table(line_no, line, " ".join(text.split()))
        elif _ROW_START.match(text):
            self._on_row(line_no, line, text.split())
        elif _STARS.match(text) or _ADDRESS.match(text) or _GID.match(text):
            self.structure = True
        elif _BANNER.match(text):
            self.banners += 1
        elif match := _TITLE.match(" ".join(text.split())):
            self._on_title(line_no, line, match)
        elif not self._on_fields(line_no, line, text):
            self.server_waits = self.server_waits or bool(_RDMA_CM_WAIT.match(text))
            self.messages.append(Message(line_no, text, _level(text)))

    def _on_title(self, line_no: int, line: str, match: re.Match[str]) -> None:
        if self.title is not None and self.title[0] != match[0]:
            raise ParseError(self.tool, line_no, line, f"a second test ({self.title[0]!r} before)")
        self.title = match
        self.titles += 1
        self.in_header = True

    def _on_fields(self, line_no: int, line: str, text: str) -> bool:
        pairs = _pairs(text)
        if pairs is None:
            return False
        named = [(_snake(key), value) for key, value in pairs]
        if not all(key in _KNOWN_KEYS for key, _ in named) and (not self.in_header or _level(text) != "note"):
            return False
        for key, value in named:
            if problem := _field_problem(key, value):
                raise ParseError(self.tool, line_no, line, problem)
            self.fields.setdefault(key, value)
        self.structure = True
        return True

    def _on_table(self, line_no: int, line: str, header: str) -> None:
        layout = _layout(header)
        if layout is None:
            raise ParseError(self.tool, line_no, line, "unknown result table header")
        kind = self._title_kind()
        if kind is not None and kind != layout.kind:
            raise ParseError(self.tool, line_no, line, f"a {layout.kind} table in a {kind} test")
        if (layout.kind == "bw" and self.latency) or (layout.kind == "lat" and self.bandwidth):
            raise ParseError(self.tool, line_no, line, "bandwidth and latency tables in one output")
        self.layout, self.in_header = layout, False
        self.tables += 1

    def _title_kind(self) -> Kind | None:
        if self.title is None or self.title["kind"] is None:
            return None
        return "bw" if self.title["kind"] == "BW" else "lat"

    def _on_row(self, line_no: int, line: str, tokens: Sequence[str]) -> None:
        layout = self.layout
        if layout is None:
            raise ParseError(self.tool, line_no, line, "a result row before any '#bytes' table header")
        if len(tokens) != len(layout.columns):
            raise ParseError(
                self.tool, line_no, line, f"{len(tokens)} columns where the table has {len(layout.columns)}"
            )
        values: dict[str, float] = {}
        for column, token in zip(layout.columns, tokens, strict=True):
            integral = column in ("bytes", "iterations", "sl")
            if not (_INT if integral else _NUMBER).match(token):
                raise ParseError(self.tool, line_no, line, f"{column} {token!r} is not a number")
            values[column] = int(token) if integral else float(token)
        if layout.kind == "bw":
            self.bandwidth.append(_bw_row(values, layout.unit, line_no))
        else:
            unit = "cycles" if self.cycles else layout.unit
            self.latency.append(_lat_row(values, unit, line_no))
        self.last_row = line_no

    def side(self) -> Side:
        duplex = self.title is not None and self.title["bidir"] is not None
        server = self.banners > 0 or self.server_waits or (not duplex and "rx_depth" in self.fields)
        client = self.titles > self.banners or (not duplex and "tx_depth" in self.fields)
        return _side(server=server, client=client)

    def result(self) -> PerftestResult:
        rows = self.bandwidth or self.latency
        seen = self.structure or self.title is not None or self.tables > 0 or self.banners > 0
        if not seen and not any(message.level != "note" for message in self.messages):
            raise ParseError(self.tool, 0, "", "no perftest output (no test title, result table or server banner)")
        return PerftestResult(
            setup=_setup(self.title, self.fields),
            side=self.side(),
            bandwidth=tuple(self.bandwidth),
            latency=tuple(self.latency),
            messages=tuple(self.messages),
            complete=bool(rows) and self.last_rule > self.last_row,
            tables=self.tables,
        )


def _side(*, server: bool, client: bool) -> Side:
    if server and client:
        return "both"
    if server:
        return "server"
    return "client" if client else "unknown"


def _bw_row(values: Mapping[str, float], unit: str, line_no: int) -> BwRow:
    ports = [values[name] for name in ("port1_bw", "port1_rate", "port2_bw", "port2_rate") if name in values]
    return BwRow(
        bytes=int(values["bytes"]),
        iterations=int(values["iterations"]),
        bw_peak_gbps=to_gbps(values["peak"], unit),
        bw_average_gbps=to_gbps(values["average"], unit),
        msg_rate_mpps=values["msg_rate"],
        unit=unit,
        printed_peak=values["peak"],
        printed_average=values["average"],
        sl=int(values["sl"]) if "sl" in values else None,
        cpu_util=values.get("cpu_util"),
        port_bw_gbps=tuple(to_gbps(value, unit) for value in ports[0::2]),
        port_msg_rate_mpps=tuple(ports[1::2]),
        line_no=line_no,
    )


def _lat_row(values: Mapping[str, float], unit: str, line_no: int) -> LatRow:
    return LatRow(
        bytes=int(values["bytes"]),
        iterations=int(values["iterations"]),
        unit=unit,
        t_min=values.get("t_min"),
        t_max=values.get("t_max"),
        t_typical=values.get("t_typical"),
        t_avg=values.get("t_avg"),
        t_stdev=values.get("t_stdev"),
        p99=values.get("p99"),
        p99_9=values.get("p99_9"),
        tps_average=values.get("tps_average"),
        cpu_util=values.get("cpu_util"),
        line_no=line_no,
    )


def _title_text(title: re.Match[str]) -> str:
    """The title as the text report prints it, also for the JSON ``test`` value (``RDMA_Write_BW_Test``)."""
    flags = [("bidir", "Bidirectional"), ("post", "Post List")]
    parts = [title["verb"], title["atomic"], *(word for group, word in flags if title[group]), title["kind"]]
    parts += [word for group, word in (("fwd", "forwarding"), ("mcast", "Multicast")) if title[group]]
    return " ".join(part for part in [*parts, "Test"] if part)


def _setup(title: re.Match[str] | None, fields: Mapping[str, str]) -> Setup:
    def number(key: str) -> int | None:
        value = fields.get(key)
        match = _SIZE_VALUE.match(value) if value is not None else None
        return int(match[1]) if match else None

    def on_off(key: str) -> bool | None:
        value = fields.get(key)
        return None if value is None else value == "ON"

    kind: Kind | None = None
    if title is not None and title["kind"] is not None:
        kind = "bw" if title["kind"] == "BW" else "lat"
    return Setup(
        test=_title_text(title) if title else None,
        verb=title["verb"] if title else None,
        kind=kind,
        bidirectional=(title["bidir"] is not None) if title else None,
        device=fields.get("device"),
        link_type=fields.get("link_type"),
        mtu=number("mtu"),
        gid_index=number("gid_index"),
        transport=fields.get("transport_type"),
        connection=fields.get("connection_type"),
        qps=number("number_of_qps"),
        dual_port=on_off("dual_port"),
        rdma_cm_qps=on_off("rdma_cm_qps"),
        data_exchange=fields.get("data_ex_method"),
        tx_depth=number("tx_depth"),
        rx_depth=number("rx_depth"),
        cq_moderation=number("cq_moderation"),
        max_inline=number("max_inline_data"),
        outstanding_reads=number("outstand_reads"),
        fields=MappingProxyType(dict(fields)),
    )


def parse(text: str, *, tool: str = TOOL) -> PerftestResult:
    """Read the text output (stdout, or stdout and stderr merged) of one perftest run, or of a server's and a
    client's merged. ``tool`` names the tool in a ParseError (a collector registers one per executable)."""
    reader = _Reader(tool)
    skipped: list[str] = []  # "WARN: ..." / "ibwarn: ..." lines: warnings
    for line_no, line in lines(tool, text, skipped):
        reader.feed(line_no, line)
    for shown in skipped:
        where, _, rest = shown.partition(": ")
        reader.messages.append(Message(int(where.removeprefix("line ")), rest, "warning"))
    reader.messages.sort(key=lambda message: message.line_no)
    return reader.result()


# --------------------------------------------------------------------------------------------------- JSON

_BARE_KEY = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_ .*-]*?)\s*:(\s*)(.*)$")
_BARE_VALUE = re.compile(r"^([^\"{}\[\],\s][^\"{}\[\],]*?)\s*(,?)\s*$")
_JSON_LITERAL = re.compile(r"^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)$")
_TRAILING_COMMA = re.compile(r",(\s*})")
_WARNING_KEY = re.compile(r"^WARNING\d*$")

# JSON member -> row column; the first ones of each are required.
_JSON_BW = {"MsgSize": "bytes", "n_iterations": "iterations", "BW_peak": "peak", "BW_average": "average",
            "MsgRate": "msg_rate", "sl": "sl", "CPU_util": "cpu_util"}  # fmt: skip
_JSON_LAT = {"MsgSize": "bytes", "n_iterations": "iterations", "t_min": "t_min", "t_max": "t_max",
             "t_typical": "t_typical", "t_avg": "t_avg", "t_stdev": "t_stdev", "percentile_99": "p99",
             "percentile_99.9": "p99_9", "tps_average": "tps_average", "CPU_util": "cpu_util"}  # fmt: skip
_JSON_INTEGRAL = frozenset({"bytes", "iterations", "sl"})


def _repair_line(line: str) -> str:
    """Quote a bare key (and a bare value on the same line); drop a line that is a lone comma."""
    if line.strip() == ",":
        return ""
    match = _BARE_KEY.match(line)
    if match is None:
        return line
    indent, key, space, rest = match.groups()
    value = _BARE_VALUE.match(rest)
    if value is not None and not _JSON_LITERAL.match(value[1]):
        rest = f'"{value[1]}"{value[2]}'
    return f'{indent}"{key}":{space}{rest}'


def _unclosed_braces(text: str) -> int:
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "{}":
            depth += 1 if char == "{" else -1
    return depth


def _repair_json(text: str) -> str:
    repaired = "\n".join(_repair_line(line) for line in text.split("\n"))
    missing = _unclosed_braces(repaired)
    if missing > 0:
        repaired += "\n" + "}" * missing
    return _TRAILING_COMMA.sub(r"\1", repaired)


def _line_of(text: str, key: str) -> tuple[int, str]:
    """The first line naming ``key`` (for a ParseError), or ``(0, "")``."""
    for line_no, line in enumerate(text.split("\n"), start=1):
        if re.match(rf'^\s*"?{re.escape(key)}"?\s*:', line):
            return line_no, line.rstrip()
    return 0, ""


def _load_json(text: str, tool: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return json.loads(_repair_json(text))
    except RecursionError:
        raise ParseError(tool, 0, "", "the JSON is nested too deeply") from None
    except ValueError as error:
        line_no = error.lineno if isinstance(error, json.JSONDecodeError) else 0
        shown = text.split("\n")
        if not 0 < line_no <= len(shown):
            line_no = 0
        reason = f"invalid JSON, also after repair ({error.msg if isinstance(error, json.JSONDecodeError) else error})"
        raise ParseError(tool, line_no, shown[line_no - 1].rstrip() if line_no else "", reason) from None


def _json_info(
    info: Mapping[str, object], text: str, tool: str
) -> tuple[re.Match[str] | None, dict[str, str], list[Message]]:
    title: re.Match[str] | None = None
    fields: dict[str, str] = {}
    messages: list[Message] = []
    for key, value in info.items():
        line_no, line = _line_of(text, key)
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ParseError(tool, line_no, line, f"test_info {key!r} is not a string or number")
        if key == "test":
            title = _JSON_TITLE.match(str(value))
            if title is None:
                raise ParseError(tool, line_no, line, f"unknown test {value!r}")
        elif _WARNING_KEY.match(key):
            messages.append(Message(line_no, str(value), "warning"))
        elif problem := _field_problem(_snake(key), str(value)):
            raise ParseError(tool, line_no, line, problem)
        else:
            fields.setdefault(_snake(key), str(value))
    return title, fields, messages


def _json_values(results: Mapping[str, object], members: Mapping[str, str], text: str, tool: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for key, column in members.items():
        if key not in results:
            continue
        value = results[key]
        integral = column in _JSON_INTEGRAL
        wrong = isinstance(value, bool) or not isinstance(value, int if integral else int | float)
        if wrong or (isinstance(value, int | float) and not 0 <= value < float("inf")):
            line_no, line = _line_of(text, key)
            raise ParseError(tool, line_no, line, f"{key} is not a{'n integer' if integral else ' number'} >= 0")
        assert isinstance(value, int | float)  # for mypy; checked above
        values[column] = value
    return values


def _json_row(results: Mapping[str, object], unit: str, text: str, tool: str) -> BwRow | LatRow:
    if "BW_average" in results:
        values = _json_values(results, _JSON_BW, text, tool)
        required: tuple[str, ...] = ("bytes", "iterations", "peak", "average", "msg_rate")
    else:
        values = _json_values(results, _JSON_LAT, text, tool)
        required = ("bytes", "iterations", "t_typical" if "t_typical" in values else "t_avg")
    missing = [column for column in required if column not in values]
    if missing:
        line_no, line = _line_of(text, "results")
        raise ParseError(tool, line_no, line, f"results lack {', '.join(missing)} (an --output=<one number> run?)")
    return _bw_row(values, unit, 0) if "peak" in values else _lat_row(values, "usec", 0)


def parse_json(text: str, *, report_gbits: bool = False, tool: str = TOOL) -> PerftestResult:
    """Read an ``--out_json`` file (the last message size of the run). The file does not say its bandwidth unit:
    pass ``report_gbits=True`` when the run had ``--report_gbits`` (else MiB/s, perftest's default)."""
    if not text.strip():
        raise ParseError(tool, 0, "", "an empty JSON file (perftest writes it after the last message size)")
    document = _load_json(text, tool)
    info = document.get("test_info", {}) if isinstance(document, dict) else None
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(info, dict) or not isinstance(results, dict):
        raise ParseError(tool, 0, "", "not a perftest JSON report (no 'results' object)")
    title, fields, messages = _json_info(info, text, tool)
    row = _json_row(results, "Gb/sec" if report_gbits else "MiB/sec", text, tool)
    setup = _setup(title, fields)
    row_kind: Kind = "bw" if isinstance(row, BwRow) else "lat"
    if setup.kind is not None and setup.kind != row_kind:
        line_no, line = _line_of(text, "results")
        raise ParseError(tool, line_no, line, f"{row_kind} results in a {setup.kind} test")
    client = setup.bidirectional is False and "tx_depth" in fields
    side: Side = "unknown" if setup.bidirectional is not False else _side(server=not client, client=client)
    return PerftestResult(
        setup=setup,
        side=side,
        bandwidth=(row,) if isinstance(row, BwRow) else (),
        latency=(row,) if isinstance(row, LatRow) else (),
        messages=tuple(messages),
        complete=True,
    )
