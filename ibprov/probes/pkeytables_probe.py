"""Stand-alone probe (Python standard library + libibmad.so.5 only): PKey tables of many ports in one process.

Sent as ``python3 -c <this file> LID:PORT[:CAP] ...`` to the host that collects (locally or through Ansible),
where ibprov is not installed: its one import of ibprov, the P_Key (ibprov/pkey.py, standard
library only), is replaced by that module's source when it is sent (ibprov.probes.pkeytables.probe_source),
so the host reads table entries with verify's own definition. It issues the SubnGet(NodeInfo) and
SubnGet(P_KeyTable) SMPs `smpquery pkeys` would, through infiniband-diags' own libibmad; with CAP (the
PartitionCap of a CA port, known from the fabric cache) it skips the NodeInfo. One line per port on stdout::

    <lid> <port> <capacity> <pkey> <pkey> ...      (every entry that is not empty, membership bit kept)
    <lid> <port> error <reason>
"""

import ctypes
import sys

from ibprov.pkey import PKey

IB_SMI_CLASS = 0x01
IB_SMI_DIRECT_CLASS = 0x81
IB_ATTR_NODE_INFO = 0x11
IB_ATTR_PKEY_TBL = 0x16
CA = 1
SWITCH = 2


class _DrPath(ctypes.Structure):
    _fields_ = [
        ("cnt", ctypes.c_int),
        ("p", ctypes.c_uint8 * 64),
        ("drslid", ctypes.c_uint16),
        ("drdlid", ctypes.c_uint16),
    ]


class _PortId(ctypes.Structure):
    """ib_portid_t of libibmad (rdma-core mad.h)."""

    _fields_ = [
        ("lid", ctypes.c_int),
        ("drpath", _DrPath),
        ("grh_present", ctypes.c_int),
        ("gid", ctypes.c_uint8 * 16),
        ("qp", ctypes.c_uint32),
        ("qkey", ctypes.c_uint32),
        ("sl", ctypes.c_uint8),
        ("pkey_idx", ctypes.c_uint),
    ]


class _Mad:
    def __init__(self):
        lib = ctypes.CDLL("libibmad.so.5")
        lib.mad_rpc_open_port.restype = ctypes.c_void_p
        lib.mad_rpc_open_port.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        lib.smp_query_via.restype = ctypes.c_void_p
        lib.smp_query_via.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(_PortId),
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
        ]
        classes = (ctypes.c_int * 2)(IB_SMI_CLASS, IB_SMI_DIRECT_CLASS)
        self.port = lib.mad_rpc_open_port(None, 0, classes, 2)
        if not self.port:
            raise OSError("cannot open a MAD port (no RDMA device, or no permission for /dev/infiniband/umad*)")
        self.lib = lib

    def get(self, lid, attr, mod):
        portid = _PortId()
        portid.lid = lid
        buf = ctypes.create_string_buffer(256)
        data = self.lib.smp_query_via(buf, ctypes.byref(portid), attr, mod, 0, self.port)
        return ctypes.string_at(data, 64) if data else None


def _query(mad, lid, port, capacity):
    node_type = CA  # the caller knows the capacity of CA ports only
    if capacity is None:
        info = mad.get(lid, IB_ATTR_NODE_INFO, 0)
        if info is None:
            return f"{lid} {port} error NodeInfo query failed"
        node_type, capacity = info[2], int.from_bytes(info[28:30], "big")
    keys = []
    for block in range((capacity + 31) // 32):
        mod = block | (port << 16) if node_type == SWITCH else block
        data = mad.get(lid, IB_ATTR_PKEY_TBL, mod)
        if data is None:
            return f"{lid} {port} error P_KeyTable block {block} query failed"
        entries = [int.from_bytes(data[i : i + 2], "big") for i in range(0, 64, 2)]
        keys += [k for k in map(PKey.from_wire, entries[: capacity - 32 * block]) if not k.is_empty]
    return " ".join([str(lid), str(port), str(capacity), *(k.hex for k in keys)])


def main(args):
    targets = []
    for arg in args:
        lid, _, rest = arg.partition(":")
        port, _, cap = rest.partition(":")
        targets.append((int(lid, 0), int(port or "1"), int(cap) if cap else None))
    try:
        mad = _Mad()
    except OSError as exc:
        print(f"pkeytables: {exc}", file=sys.stderr)
        return 3
    for lid, port, capacity in targets:
        print(_query(mad, lid, port, capacity), flush=False)
    return 0


sys.exit(main(sys.argv[1:]))
