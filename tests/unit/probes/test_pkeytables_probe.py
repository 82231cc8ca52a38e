"""The PKey-table probe as it is sent to a host (``python3 -c``): stand-alone, with ibprov's own P_Key
definition inlined in place of its one import of ibprov, and reading table entries with it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ibprov import pkey
from ibprov.probes import pkeytables
from ibprov.probes.pkeytables import PortPkeys, probe_source

PROBE = Path(pkeytables.__file__).with_name("pkeytables_probe.py")
LAST_LINE = "sys.exit(main(sys.argv[1:]))\n"


def imports(source: str) -> list[str]:
    """The modules ``source`` imports, in order."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append(node.module or "")
    return out


@pytest.mark.reads_own_source
def test_the_sent_probe_carries_the_pkey_module_instead_of_importing_ibprov() -> None:
    assert "ibprov.pkey" in imports(PROBE.read_text())
    sent = probe_source()
    assert imports(sent) == ["ctypes", "sys"]
    assert Path(pkey.__file__).read_text() in sent
    ast.parse(sent, feature_version=(3, 6))  # a host's python3 may be old


@pytest.mark.reads_own_source
def test_the_sent_probe_runs_without_ibprov(tmp_path: Path) -> None:
    """No site-packages, no ibprov on the path: the probe starts and stops at the MAD port (exit 3 without an
    RDMA device or libibmad; 0 if it could open one), not at an import or a missing name."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe_source()], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode in (0, 3), done.stderr
    assert "Traceback" not in done.stderr


class FakeMad:
    """P_KeyTable blocks of 32 entries; NodeInfo is never asked for (the capacity is given)."""

    def __init__(self, entries: list[int]) -> None:
        self.entries = entries + [0] * (-len(entries) % 32)

    def get(self, lid: int, attr: int, mod: int) -> bytes | None:
        assert attr == 0x16
        block = self.entries[32 * mod : 32 * mod + 32]
        return b"".join(e.to_bytes(2, "big") for e in block)


@pytest.mark.reads_own_source
def test_the_probe_lists_every_entry_that_is_not_empty_with_its_membership_bit() -> None:
    source = probe_source()
    assert source.endswith(LAST_LINE)
    namespace: dict[str, Any] = {"__name__": "probe"}
    exec(compile(source.removesuffix(LAST_LINE), "probe", "exec"), namespace)
    entries = [0xFFFF, 0x8000, 0x0010, 0x0000, 0x8020] + [0] * 30 + [0x7FFF, 0x8030]
    line = namespace["_query"](FakeMad(entries), 7, 1, len(entries))
    assert line == "7 1 37 0xffff 0x0010 0x8020 0x7fff 0x8030"
    (read,) = pkeytables.parse(line).values()
    assert read == PortPkeys(7, 1, 37, (0xFFFF, 0x0010, 0x8020, 0x7FFF, 0x8030))
    assert [(k.base, k.full) for k in read.pkeys] == [
        (0x7FFF, True),
        (0x10, False),
        (0x20, True),
        (0x7FFF, False),
        (0x30, True),
    ]
