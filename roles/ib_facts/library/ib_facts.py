#!/usr/bin/python
# Copyright: ibprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Ansible module: InfiniBand/RDMA facts from sysfs (and pyverbs when available)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: ib_facts
short_description: Gather InfiniBand / RDMA device facts from sysfs
description:
  - Reads C(/sys/class/infiniband/<dev>/) and its C(ports/<n>/) entries and returns them as C(ansible_facts.ib).
  - Pure Python (standard library only); never fails on a host without RDMA devices (C(devices) is then empty).
  - When the C(pyverbs) Python module (rdma-core's python3-pyverbs) imports and I(pyverbs=true), adds device and port
    attributes from ibv_query_device / ibv_query_port (firmware version, max/active MTU, port capability flags).
  - Works under the ibsim C(libumad2sim) shim (C(LD_PRELOAD)), which fakes sysfs per process in C(./sys-<pid>/).
options:
  sysfs_root:
    description: Root of the sysfs tree; tests point it at a fake tree.
    type: path
    default: /sys
  pyverbs:
    description: Add attributes from pyverbs when it is importable.
    type: bool
    default: true
author: ibprov
"""

EXAMPLES = r"""
- name: Gather InfiniBand facts
  ib_facts:

- name: Show port 1 of mlx5_0
  ansible.builtin.debug:
    var: ansible_facts.ib.devices.mlx5_0.ports['1']
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    ib:
      description: InfiniBand facts.
      type: dict
      contains:
        devices:
          description: >-
            One entry per RDMA device, keyed by device name (mlx5_0, ...). Each has node_guid, sys_image_guid
            (0x-prefixed 16 hex digits), fw_ver, hca_type, hw_rev, node_desc, node_type and ports. Ports are keyed by
            port number (as a string) with state (ACTIVE, DOWN, ...), state_code, phys_state (LinkUp, ...),
            phys_state_code, rate (Gb/s, number), rate_text, link_layer (InfiniBand when sysfs has no link_layer
            file), lid, sm_lid, sm_sl, lmc (ints), port_guid (low 64 bits of gids/0), gid_prefix, cap_mask and pkeys
            (the non-zero entries of the PKey table, 0x-prefixed 4 hex digits, in index order).
          type: dict
        port_guids:
          description: Every port GUID on the host, sorted.
          type: list
          elements: str
        active_ports:
          description: One entry per ACTIVE port, {device, port, port_guid, lid, rate, link_layer}, sorted.
          type: list
          elements: dict
        sysfs_root:
          description: The sysfs tree that was read (differs from /sys under libumad2sim).
          type: str
        pyverbs:
          description: Whether pyverbs attributes were added.
          type: bool
"""

import os
import re
import tempfile

_INT_RE = re.compile(r"^\s*(0x[0-9a-fA-F]+|\d+)")


def read_attr(path):
    """Return the stripped text content of a sysfs attribute, or None if unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def list_dir(path):
    """Sorted entries of a directory, [] if missing (listdir only: no stat, umad2sim-safe)."""
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def parse_int(text):
    """'0x1a' -> 26, '5' -> 5, '4: ACTIVE' -> 4; None if absent or not a number."""
    if text is None:
        return None
    m = _INT_RE.match(text)
    if not m:
        return None
    return int(m.group(1), 0)


def parse_guid(text):
    """'0002:c903:00a1:b2c0' (sysfs) -> '0x0002c90300a1b2c0'."""
    if not text:
        return None
    digits = text.replace(":", "").lower()
    if not re.fullmatch(r"[0-9a-f]{1,16}", digits):
        return None
    return "0x" + digits.zfill(16)


def parse_gid(text):
    """'fe80:0000:...:0002:c903:00a1:b2c1' -> ('0xfe80000000000000', '0x0002c90300a1b2c1')."""
    if not text:
        return None, None
    digits = text.replace(":", "").lower()
    if not re.fullmatch(r"[0-9a-f]{32}", digits):
        return None, None
    return "0x" + digits[:16], "0x" + digits[16:]


def parse_enum(text):
    """'4: ACTIVE' -> (4, 'ACTIVE'); '5: LinkUp' -> (5, 'LinkUp'); 'ACTIVE' -> (None, 'ACTIVE')."""
    if not text:
        return None, None
    code, sep, name = text.partition(":")
    if not sep:
        return None, text.strip()
    try:
        return int(code.strip()), name.strip()
    except ValueError:
        return None, text.strip()


def parse_rate(text):
    """'100 Gb/sec (4X EDR)' -> 100; '2.5 Gb/sec (1X SDR)' -> 2.5; None if unparsable."""
    if not text:
        return None
    m = re.match(r"^\s*([0-9.]+)\s*Gb/sec", text)
    if not m:
        return None
    value = float(m.group(1))
    return int(value) if value.is_integer() else value


def read_pkeys(port_dir):
    entries = list_dir(os.path.join(port_dir, "pkeys"))
    pkeys = []
    for index in sorted((e for e in entries if e.isdigit()), key=int):
        value = parse_int(read_attr(os.path.join(port_dir, "pkeys", index)))
        if value:  # 0x0000 is an empty slot
            pkeys.append(f"0x{value:04x}")
    return pkeys


def read_port(port_dir):
    state_code, state = parse_enum(read_attr(os.path.join(port_dir, "state")))
    phys_code, phys_state = parse_enum(read_attr(os.path.join(port_dir, "phys_state")))
    rate_text = read_attr(os.path.join(port_dir, "rate"))
    gid_prefix, port_guid = parse_gid(read_attr(os.path.join(port_dir, "gids", "0")))
    cap_mask = parse_int(read_attr(os.path.join(port_dir, "cap_mask")))
    return {
        "state": state,
        "state_code": state_code,
        "phys_state": phys_state,
        "phys_state_code": phys_code,
        "rate": parse_rate(rate_text),
        "rate_text": rate_text,
        # ports of kernels/simulators without a link_layer file are InfiniBand
        "link_layer": read_attr(os.path.join(port_dir, "link_layer")) or "InfiniBand",
        "lid": parse_int(read_attr(os.path.join(port_dir, "lid"))),
        "sm_lid": parse_int(read_attr(os.path.join(port_dir, "sm_lid"))),
        "sm_sl": parse_int(read_attr(os.path.join(port_dir, "sm_sl"))),
        "lmc": parse_int(read_attr(os.path.join(port_dir, "lid_mask_count"))),
        "port_guid": port_guid,
        "gid_prefix": gid_prefix,
        "cap_mask": None if cap_mask is None else f"0x{cap_mask:08x}",
        "pkeys": read_pkeys(port_dir),
    }


def read_device(dev_dir):
    node_type_code, node_type = parse_enum(read_attr(os.path.join(dev_dir, "node_type")))
    ports = {}
    for port in list_dir(os.path.join(dev_dir, "ports")):
        if port.isdigit():
            ports[port] = read_port(os.path.join(dev_dir, "ports", port))
    return {
        "node_guid": parse_guid(read_attr(os.path.join(dev_dir, "node_guid"))),
        "sys_image_guid": parse_guid(read_attr(os.path.join(dev_dir, "sys_image_guid"))),
        "fw_ver": read_attr(os.path.join(dev_dir, "fw_ver")),
        "hca_type": read_attr(os.path.join(dev_dir, "hca_type")),
        "hw_rev": read_attr(os.path.join(dev_dir, "hw_rev")),
        "board_id": read_attr(os.path.join(dev_dir, "board_id")),
        "node_desc": read_attr(os.path.join(dev_dir, "node_desc")),
        "node_type": node_type,
        "node_type_code": node_type_code,
        "ports": ports,
    }


def collect(sysfs_root):
    """All RDMA devices under <sysfs_root>/class/infiniband."""
    base = os.path.join(sysfs_root, "class", "infiniband")
    devices = {name: read_device(os.path.join(base, name)) for name in list_dir(base)}
    guids = sorted({p["port_guid"] for d in devices.values() for p in d["ports"].values() if p["port_guid"]})
    active = [
        {
            "device": name,
            "port": int(num),
            "port_guid": port["port_guid"],
            "lid": port["lid"],
            "rate": port["rate"],
            "link_layer": port["link_layer"],
        }
        for name, dev in sorted(devices.items())
        for num, port in sorted(dev["ports"].items(), key=lambda item: int(item[0]))
        if port["state"] == "ACTIVE"
    ]
    return {
        "devices": devices,
        "port_guids": guids,
        "active_ports": active,
        "sysfs_root": sysfs_root,
        "pyverbs": False,
    }


def umad2sim_root():
    """Under libumad2sim (LD_PRELOAD) the fake sysfs lives in ./sys-<pid>/sys of the process.

    The shim intercepts only open/opendir/scandir, builds the tree on the first
    access to /sys/class/infiniband and removes it at exit. Python's own file
    I/O is not redirected, so read the tree from where the shim wrote it.
    """
    if "umad2sim" not in os.environ.get("LD_PRELOAD", ""):
        return None
    os.chdir(tempfile.gettempdir())  # the shim writes into the current directory
    list_dir("/sys/class/infiniband")  # first access builds ./sys-<pid>
    root = os.path.join(os.getcwd(), f"sys-{os.getpid()}", "sys")
    return root if list_dir(root) else None


def add_pyverbs(facts):
    """Add ibv_query_device/ibv_query_port attributes; silently skip if pyverbs is unusable."""
    try:
        from pyverbs.device import Context  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001 - any import problem means "no pyverbs"
        return
    added = False
    for name, dev in facts["devices"].items():
        try:
            ctx = Context(name=name)
            attr = ctx.query_device()
            dev["verbs"] = {
                "fw_ver": str(attr.fw_ver),
                "max_qp": int(attr.max_qp),
                "max_mr_size": int(attr.max_mr_size),
                "phys_port_cnt": int(attr.phys_port_cnt),
            }
            for port in dev["ports"]:
                pattr = ctx.query_port(int(port))
                dev["ports"][port].update(
                    {
                        "max_mtu": 128 << int(pattr.max_mtu),  # IBV_MTU_256 = 1
                        "active_mtu": 128 << int(pattr.active_mtu),
                        "port_cap_flags": f"0x{int(pattr.port_cap_flags):08x}",
                    }
                )
            ctx.close()
            added = True
        except Exception:  # noqa: BLE001 - facts must never fail the play
            continue
    facts["pyverbs"] = added


def main():
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(
        argument_spec={
            "sysfs_root": {"type": "path", "default": "/sys"},
            "pyverbs": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    root = module.params["sysfs_root"]
    if root == "/sys":
        root = umad2sim_root() or root
    facts = collect(root)
    if module.params["pyverbs"] and facts["devices"]:
        add_pyverbs(facts)
    module.exit_json(changed=False, ansible_facts={"ib": facts})


if __name__ == "__main__":
    main()
