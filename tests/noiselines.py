"""Lines that are not a tool's, to insert between the lines of a real capture (the readers' property tests:
inserting them changes nothing but the notes, and each one shows up in the notes).

Imported as ``from noiselines import ...`` (tests/ is on sys.path, like ``captures``).
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["NOISE", "insert", "noted", "shown"]

# Messages the diags and the system print around a tool's output (stderr merged into stdout by the probe).
FIXED = [
    "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 5)",
    'ibwarn: [14139] sim_connect: attached as client 1 at node "Sw1"',
    "src/query_smp.c:228; umad (DR path slid 0; dlid 0; 0,1,3) Attribute (NodeInfo) bad status 110",
    "Dec  5 10:32:07 node01 kernel: mlx5_core 0000:3b:00.0: mlx5_cmd_out_err:838: QUERY_VPORT_COUNTER(0x770) failed",
    "bash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)",
    "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': cannot open shared object file",
    "WARNING: this node is reserved for maintenance",
    "Last login: Fri Dec  4 09:12:44 2026 from 10.0.0.1",
    "   ",
    "",
]
_HOST = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
_SYSLOG = st.builds(
    "{} {:2d} {:02d}:{:02d}:{:02d} {} {}[{}]: {}".format,
    st.sampled_from(["Jan", "Feb", "Mar", "Jun", "Sep", "Dec"]),
    st.integers(1, 31),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    _HOST,
    st.sampled_from(["kernel", "opensm", "systemd", "sshd"]),
    st.integers(1, 4_000_000),
    st.from_regex(r"[a-z][a-z0-9 .,:;()/=_-]{0,50}", fullmatch=True),
)
_IBWARN = st.builds(
    "ibwarn: [{}] {}: {}".format,
    st.integers(1, 4_000_000),
    st.sampled_from(["mad_rpc", "_do_madrpc", "smp_query_status_via", "resolve_self", "sim_connect"]),
    st.from_regex(r"[a-z][a-z0-9 .,;()/=_-]{0,50}", fullmatch=True),
)
# Free text starting with a letter and without the characters the tools' own lines are made of ('|', '[', '*', '#').
_TEXT = st.from_regex(r"[A-Za-z][A-Za-z0-9 .,:;()/=_'-]{0,58}", fullmatch=True).filter(
    lambda t: not t.lower().startswith(("iberror", "ibpanic"))
)
NOISE = st.one_of(st.sampled_from(FIXED), _SYSLOG, _IBWARN, _TEXT)


def insert(lines: list[str], inserts: list[tuple[int, str]]) -> list[str]:
    """``lines`` with each ``(at, text)`` inserted before line ``at`` (``len(lines)``: at the end)."""
    noisy = list(lines)
    for at, text in sorted(inserts, key=lambda i: i[0], reverse=True):
        noisy.insert(at, text)
    return noisy


def shown(inserts: list[tuple[int, str]]) -> list[str]:
    """The inserted lines a reader must keep as notes (blank ones are skipped), sorted."""
    return sorted(t.strip() for _, t in inserts if t.strip())


def noted(notes: tuple[str, ...]) -> list[str]:
    """The texts of ``line N: TEXT`` notes, sorted."""
    return sorted(n.split(": ", 1)[1] for n in notes)
