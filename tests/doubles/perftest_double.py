#!/usr/bin/env python3
"""TEST DOUBLE of perftest (ib_*_lat, ib_*_bw) and ibv_devices, for the twin's containers in tests only.

The twin has no RDMA device, so real perftest cannot run there. Installed (by tests/twin/test_twin_perf.py)
under each perftest tool's name, this script does what perftest does on the wire that ``verify --perf``
orchestrates -- a server that listens on its TCP port (``-p``, default 18515) until a client connects, a
client that connects to the server's address -- and prints a REAL perftest capture from
tests/fixtures/perftest instead of measuring anything. Which capture, and whether the client hangs,
comes from /etc/ibprov-perftest-double.json: {"lat": FILE, "bw": FILE, "slow_lat": FILE, "slow_bw": FILE,
"slow": false, "hang": false}: a "slow" node (a bad HCA or cable) makes every pair it is in replay the slow
captures, whichever side it is on (its server tells the client on connect).
As ``ibv_devices`` it lists the devices of the config's "devices" (default one, mlx5_0), in ibv_devices' layout.

Never installed by ibprov, never reachable from the CLI or ``make demo``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

CONFIG = "/etc/ibprov-perftest-double.json"
VALUED = {"-d", "-i", "-x", "-p", "-c", "-m", "-q", "-s", "-n", "-D", "--out_json_file"}


def capture(kind: str) -> str:
    with open(CONFIG, encoding="utf-8") as f:
        config = json.load(f)
    with open(config[kind], encoding="utf-8") as f:
        lines = f.read().split("\n")
    body = [ln for ln in lines[1:] if not ln.startswith("[exit=")]  # the `# source:` line and the exit marker
    return "\n".join(body).rstrip("\n") + "\n"


def flag(name: str) -> bool:
    with open(CONFIG, encoding="utf-8") as f:
        return bool(json.load(f).get(name))


def main(argv: list[str]) -> int:
    tool = os.path.basename(argv[0])
    if tool == "ibv_devices":
        with open(CONFIG, encoding="utf-8") as f:
            devices = json.load(f).get("devices", ["mlx5_0"])
        print("    device          \t   node GUID")
        print("    ------          \t----------------")
        for k, device in enumerate(devices):
            print(f"    {device:<16}\t0002c90300a1b2{0xC3 + k:02x}")
        return 0
    port, server, args = 18515, None, argv[1:]
    i = 0
    while i < len(args):
        if args[i] in VALUED:
            if args[i] == "-p":
                port = int(args[i + 1])
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            server = args[i]
            i += 1
    kind = "lat" if tool.endswith("_lat") else "bw"
    if server is None:  # the server: listen, wait for one client, then end
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind(("0.0.0.0", port))
        except OSError as err:
            print(f" Couldn't bind to port {port}: {err.strerror}", file=sys.stderr)
            return 1
        listener.listen(1)
        print(
            "\n************************************\n* Waiting for client to connect... *\n"
            "************************************",
            flush=True,
        )
        conn, _ = listener.accept()
        conn.sendall(b"slow\n" if flag("slow") else b"ok\n")
        while conn.recv(4096):
            pass
        conn.close()
        return 0
    deadline = time.monotonic() + 3
    while True:
        try:
            conn = socket.create_connection((server, port), timeout=3)
            break
        except OSError:
            if time.monotonic() > deadline:
                print(f" Couldn't connect to {server}:{port}", file=sys.stderr)
                print(
                    "Unable to open file descriptor for socket connection Unable to init the socket connection",
                    file=sys.stderr,
                )
                return 1
            time.sleep(0.1)
    slow_server = conn.makefile("rb").readline().strip() == b"slow"
    if flag("hang"):
        time.sleep(3600)
    sys.stdout.write(capture(("slow_" if slow_server or flag("slow") else "") + kind))
    sys.stdout.flush()
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
