#!/usr/bin/env python3
"""TEST DOUBLE of Slurm's ``sinfo`` and ``scontrol``, for the ib-healthcheck tests only (never installed by
ibprov, never reachable from the CLI).

tests/roles/test_ib_healthcheck.py links it under both names into a directory it puts first on PATH. It keeps
one node's state in the JSON file $SLURM_DOUBLE_STATE: {"node": NAME, "state": "idle", "reason": "none",
"sleep": 0}. As ``sinfo --noheader --Node --nodes NAME --format=%T<US>%E`` it prints ``state<US>reason`` (nothing
for another node); as ``scontrol update NodeName=NAME State=DRAIN|RESUME [Reason=...]`` it changes that state
the way Slurm does (DRAIN -> drained with the reason; RESUME -> idle, reason none). Every call is appended, as
a JSON list of its arguments, to $SLURM_DOUBLE_STATE.log. "sleep" makes each call hang that many seconds first.
"""

from __future__ import annotations

import json
import os
import sys
import time

SEP = "\x1f"


def main() -> int:
    path = os.environ["SLURM_DOUBLE_STATE"]
    with open(path, encoding="utf-8") as f:
        node = json.load(f)
    tool, args = os.path.basename(sys.argv[0]), sys.argv[1:]
    with open(path + ".log", "a", encoding="utf-8") as f:
        f.write(json.dumps([tool, *args]) + "\n")
    time.sleep(node.get("sleep", 0))
    if tool == "sinfo":
        wanted = args[args.index("--nodes") + 1]
        if wanted == node["node"]:
            print(f"{node['state']}{SEP}{node['reason']}")
        return 0
    if tool == "scontrol" and args[:1] == ["update"]:
        words = dict(a.split("=", 1) for a in args[1:])
        if words.get("NodeName") != node["node"]:
            print(f"scontrol: error: Invalid node name specified: {words.get('NodeName')}", file=sys.stderr)
            return 1
        if words["State"] == "DRAIN":
            node.update(state="drained", reason=words["Reason"])
        elif words["State"] == "RESUME":
            node.update(state="idle", reason="none")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(node, f)
        return 0
    print(f"{tool}: the double does not know {args}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
