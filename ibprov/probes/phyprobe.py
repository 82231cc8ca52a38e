"""The physical layer's host probe: one shell script run on each host (through Ansible), and its reader.

The script prints, framed by ``@@ibprov-phy`` marks: which tools the host has; per RDMA device its firmware,
board id and the PCIe path from the HCA up to its root port (sysfs, one hop a line); per port what
``mstlink`` (Debian's mstflint) or NVIDIA's ``mlxlink`` prints for ``-m -c``; the NVIDIA GPUs in PCI order
with their NUMA node (sysfs); ``nvidia-smi topo -m`` where the driver is installed. ``IBPROV_SYSFS`` moves its
sysfs root (the tests run the script itself on sysfs trees they build).

Ansible gathers, Python judges: the script reads and prints, :func:`parse_phy_probe` reads that, and verify's
physical section judges it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ibprov.probes._text import ParseError, note, probe_sections
from ibprov.probes.gputopo import GpuTopology, parse_topo
from ibprov.probes.mstlink import MstlinkReading, parse_mstlink
from ibprov.probes.pcie import PcieHop, parse_sysfs_hop

__all__ = ["MARK", "PHY_PROBE_SCRIPT", "DevicePhysical", "HostPhysical", "parse_phy_probe"]

MARK = "@@ibprov-phy "
# POSIX sh; every command bounded (timeout), every missing file or tool printed as such, never an error
PHY_PROBE_SCRIPT = r"""S=${IBPROV_SYSFS:-/sys}
M='@@ibprov-phy '
T=$(command -v mstlink || command -v mlxlink || true)
echo "${M}tools"
for t in mstlink mlxlink nvidia-smi lspci; do command -v "$t" >/dev/null 2>&1 && echo "$t"; done
for d in "$S"/class/infiniband/*; do
  [ -e "$d" ] || continue
  dev=${d##*/}
  echo "${M}device $dev"
  for f in fw_ver board_id hca_type; do [ -r "$d/$f" ] && echo "$f=$(cat "$d/$f")"; done
  p=$(readlink -f "$d/device")
  bdf=${p##*/}
  while [ -n "$p" ] && [ -e "$p/vendor" ]; do
    line="pci=${p##*/}"
    for f in current_link_speed current_link_width max_link_speed max_link_width numa_node; do
      line="$line|$(cat "$p/$f" 2>/dev/null)"
    done
    echo "$line"
    p=${p%/*}
  done
  for port in "$d"/ports/*; do
    [ -e "$port" ] || continue
    n=${port##*/}
    echo "${M}link $dev $n"
    if [ -n "$T" ]; then timeout 60 "$T" -d "$bdf" -p "$n" -m -c 2>&1; echo "rc=$?"; else echo "rc=127"; fi
  done
done
echo "${M}gpus"
for g in "$S"/bus/pci/devices/*; do
  [ -r "$g/vendor" ] || continue
  [ "$(cat "$g/vendor")" = 0x10de ] || continue
  case "$(cat "$g/class" 2>/dev/null)" in 0x0300*|0x0302*) echo "${g##*/} $(cat "$g/numa_node" 2>/dev/null)";; esac
done
echo "${M}topo"
command -v nvidia-smi >/dev/null 2>&1 && timeout 60 nvidia-smi topo -m 2>&1
exit 0"""


@dataclass(frozen=True)
class DevicePhysical:
    """One RDMA device as the probe saw it."""

    name: str  # mlx5_0
    firmware: str | None = None
    board_id: str | None = None  # PSID, e.g. MT_0000000838: devices of one kind share it
    hca_type: str | None = None  # MT4129
    path: tuple[PcieHop, ...] = ()  # the HCA first, its root port last
    links: dict[int, MstlinkReading] = field(default_factory=dict)  # port -> what mstlink read
    link_errors: dict[int, str] = field(default_factory=dict)  # port -> why mstlink gave nothing readable

    @property
    def pcie(self) -> PcieHop | None:
        return self.path[0] if self.path else None


@dataclass(frozen=True)
class HostPhysical:
    tools: frozenset[str]
    devices: dict[str, DevicePhysical]
    gpus: tuple[tuple[str, int | None], ...] = ()  # NVIDIA GPUs in PCI order (nvidia-smi's index): (bdf, numa)
    topology: GpuTopology | None = None
    notes: tuple[str, ...] = ()

    @property
    def link_tool(self) -> str | None:
        return "mstlink" if "mstlink" in self.tools else "mlxlink" if "mlxlink" in self.tools else None


def parse_phy_probe(stdout: str) -> HostPhysical:
    """Read what :data:`PHY_PROBE_SCRIPT` printed."""
    sections = _ordered_sections(stdout)
    notes: list[str] = []
    tools = frozenset(line.strip() for line in sections.get("tools", "").split("\n") if line.strip())
    devices: dict[str, dict[str, object]] = {}
    for key, body in sections.items():
        words = key.split()
        if words[0] == "device" and len(words) == 2:
            devices[words[1]] = _device(words[1], body, notes)
    for key, body in sections.items():
        words = key.split()
        if words[0] != "link" or len(words) != 3 or not words[2].isdigit():
            continue
        dev = devices.setdefault(words[1], {"name": words[1]})
        port = int(words[2])
        at = body.rfind("rc=")
        text, rc = (body[:at], body[at + 3 :]) if at >= 0 else ("", body)
        code = int(rc) if rc.strip().isdigit() else None
        if code == 127 and not text.strip():
            dev.setdefault("link_errors", {})[port] = "no mstlink or mlxlink on the host"  # type: ignore[index]
            continue
        try:
            reading = parse_mstlink(text if code is not None else body)
        except ParseError as exc:
            first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "no output")
            why = f"exit {code}: {first}" if code else str(exc)
            dev.setdefault("link_errors", {})[port] = why  # type: ignore[index]
            continue
        dev.setdefault("links", {})[port] = reading  # type: ignore[index]
    gpus = []
    for line_no, line in enumerate(sections.get("gpus", "").split("\n"), start=1):
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            gpus.append((parts[0], int(parts[1]) if int(parts[1]) >= 0 else None))
        elif len(parts) == 1:
            gpus.append((parts[0], None))
        elif line.strip():
            notes.append(f"gpus: {note(line_no, line)}")
    topo_text = sections.get("topo", "")
    topology = None
    if topo_text.strip():
        try:
            topology = parse_topo(topo_text)
        except ParseError as exc:
            notes.append(f"nvidia-smi topo -m: {exc}")
    return HostPhysical(
        tools=tools,
        devices={name: DevicePhysical(**fields) for name, fields in devices.items()},  # type: ignore[arg-type]
        gpus=tuple(sorted(gpus)),
        topology=topology,
        notes=tuple(notes),
    )


def _ordered_sections(stdout: str) -> dict[str, str]:
    return dict(probe_sections(stdout, MARK))


def _device(name: str, body: str, notes: list[str]) -> dict[str, object]:
    fields: dict[str, object] = {"name": name}
    path = []
    for line_no, line in enumerate(body.split("\n"), start=1):
        key, sep, value = line.strip().partition("=")
        if not sep:
            if line.strip():
                notes.append(f"{name}: {note(line_no, line)}")
            continue
        if key == "pci":
            try:
                path.append(parse_sysfs_hop(line.strip(), line_no))
            except ParseError as exc:
                notes.append(f"{name}: {exc}")
        elif key in ("fw_ver", "board_id", "hca_type"):
            fields[{"fw_ver": "firmware"}.get(key, key)] = value.strip() or None
    fields["path"] = tuple(path)
    return fields
