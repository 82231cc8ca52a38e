# Test helpers for the molecule verify playbooks (not part of the roles).
"""ibprov_test_expected_pkeys(partitions, port_guid, default_membership) -> PKey table entries the port must have.

Full members carry the 0x8000 bit, limited members not; `both` yields both entries.
ibprov_test_sminfo(text) -> {lid, guid (0x + 16 hex), priority, state} from `sminfo` output.
"""

from __future__ import annotations

import re


def _guid(value):
    return int(str(value), 16)


def ibprov_test_expected_pkeys(partitions, port_guid, default_membership="full"):
    expected = ["0xffff" if default_membership == "full" else "0x7fff"]
    me = _guid(port_guid)
    for part in partitions or []:
        for member in part.get("members") or []:
            if _guid(member["guid"]) != me:
                continue
            membership = member.get("membership") or part.get("defmember") or "limited"
            base = int(part["pkey"]) & 0x7FFF
            if membership in ("full", "both"):
                expected.append(f"0x{base | 0x8000:04x}")
            if membership in ("limited", "both"):
                expected.append(f"0x{base:04x}")
    return expected


def ibprov_test_sminfo(text):
    m = re.search(r"sm lid (\d+) sm guid (0x[0-9a-fA-F]+), activity count \d+ priority (\d+) state \d+ (\S+)", text)
    if not m:
        return {}
    return {
        "lid": int(m.group(1)),
        "guid": f"0x{int(m.group(2), 16):016x}",
        "priority": int(m.group(3)),
        "state": m.group(4),
    }


class FilterModule:
    def filters(self):
        return {
            "ibprov_test_expected_pkeys": ibprov_test_expected_pkeys,
            "ibprov_test_sminfo": ibprov_test_sminfo,
        }
