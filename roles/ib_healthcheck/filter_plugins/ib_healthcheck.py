"""Filters of the ib_healthcheck role: input problems (validate.yml) and the ports as the script reads them.

Standard library only (a role runs without ibprov)."""

import re

_DEVICE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_PKEY = re.compile(r"^0x[0-9a-fA-F]{1,4}$")
BASE_MASK = 0x7FFF
PREFIX_MAX = 40  # leaves room in a 64-character drain reason for the problem itself


def _port_problems(i, port):
    where = f"ib_healthcheck_ports[{i}]"
    if not isinstance(port, dict):
        return [f"{where}: not a mapping"]
    out = []
    device, number = port.get("device"), port.get("port")
    if not isinstance(device, str) or not _DEVICE.match(device):
        out.append(f"{where}.device: {device!r} is no device name (mlx5_0)")
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 254:
        out.append(f"{where}.port: {number!r} is not a port number 1-254")
    rate = port.get("rate_gbps")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate <= 0):
        out.append(f"{where}.rate_gbps: {rate!r} is not a positive number of Gb/s")
    for j, text in enumerate(port.get("pkeys") or []):
        if not isinstance(text, str) or not _PKEY.match(text) or not int(text, 16) & BASE_MASK:
            out.append(f"{where}.pkeys[{j}]: {text!r} is no P_Key entry (0x0001-0xffff, e.g. 0x8010)")
    return out


def ib_healthcheck_problems(settings):
    """Every problem with the role's input, at once (empty: fine)."""
    out = []
    seen = set()
    for i, port in enumerate(settings.get("ports") or []):
        out += _port_problems(i, port)
        if isinstance(port, dict):
            key = (port.get("device"), port.get("port"))
            if key in seen:
                out.append(f"ib_healthcheck_ports[{i}]: {key[0]} port {key[1]} is listed twice")
            seen.add(key)
    memlock = settings.get("memlock")
    if (
        memlock is not None
        and memlock != "unlimited"
        and (isinstance(memlock, bool) or not isinstance(memlock, int) or memlock < 0)
    ):
        out.append(f"ib_healthcheck_memlock: {memlock!r} is neither 'unlimited' nor a number of KiB")
    prefix = settings.get("reason_prefix")
    if not isinstance(prefix, str) or not prefix.strip() or len(prefix) > PREFIX_MAX:
        out.append(f"ib_healthcheck_reason_prefix: {prefix!r} must be 1-{PREFIX_MAX} characters")
    elif '"' in prefix or not prefix.isprintable():
        out.append(f"ib_healthcheck_reason_prefix: {prefix!r} must be printable, without a double quote")
    return out


def ib_healthcheck_ports(ports):
    """The ports as the script reads them: port an int, rate a float, P_Keys as 0x%04x (lower case)."""
    out = []
    for port in ports:
        entry = {"device": port["device"], "port": int(port["port"])}
        if port.get("rate_gbps") is not None:
            entry["rate_gbps"] = float(port["rate_gbps"])
        if port.get("pkeys"):
            entry["pkeys"] = [f"0x{int(p, 16):04x}" for p in port["pkeys"]]
        out.append(entry)
    return out


class FilterModule:
    def filters(self):
        return {"ib_healthcheck_problems": ib_healthcheck_problems, "ib_healthcheck_ports": ib_healthcheck_ports}
