"""Lines that MPI launchers and the libraries under the benchmarks print into their output (stderr merged into
stdout by the runs), for the property tests of the performance and MPI readers (osu, mpi4py ringtest, iperf3,
perftest): inserted between the lines of a real capture they must change nothing but the notes.

Imported as ``from mpinoise import ...`` (tests/ is on sys.path). The shapes are those of real lines: UCX's log
line, Open MPI's help banner (its rule is 74 dashes) and ``[host:pid]`` messages, the loader's and the
OpenFabrics warnings. :data:`MPI_NOISE` adds them to the diags' lines of ``noiselines.FIXED``.
"""

from __future__ import annotations

from hypothesis import strategies as st
from noiselines import FIXED

__all__ = ["MPI_NOISE", "UCX_LOG"]

_HOST = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
_WORDS = st.from_regex(r"[A-Za-z][A-Za-z0-9 .,;()/=_'-]{0,58}", fullmatch=True)
UCX_LOG = st.builds(
    "[{}.{:06d}] [{}:{} :{}] {:>20}:{:<4} UCX  {:<5} {}".format,
    st.integers(1_500_000_000, 1_900_000_000),
    st.integers(0, 999_999),
    _HOST,
    st.integers(1, 4_000_000),
    st.integers(0, 64),
    st.sampled_from(["ucp_context.c", "ib_device.c", "tcp_iface.c", "parser.c", "topo.c", "sock.c"]),
    st.integers(1, 3000),
    st.sampled_from(["WARN", "ERROR", "DIAG", "INFO"]),
    _WORDS,
)
_OMPI = st.builds("[{}:{:05d}] {}".format, _HOST, st.integers(1, 99_999), _WORDS)
_MPI_FIXED = [
    "-" * 74,  # Open MPI's show_help banner rule
    "WARNING: There was an error initializing an OpenFabrics device.",
    "No components were able to be opened in the pml framework.",
    '[vm:07222] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages',
    "osu_latency: /usr/lib64/libnl-3.so.200: no version information available (required by /usr/lib64/libcxi.so.1)",
    "[ 3420.098285] infiniband mlx5_1: create_qp:3323:(pid 300371): Create QP type 2 failed",
    "Warning: Permanently added 'node02,10.0.0.2' (ECDSA) to the list of known hosts.",
]
MPI_NOISE = st.one_of(UCX_LOG, _OMPI, st.sampled_from(_MPI_FIXED + FIXED))
