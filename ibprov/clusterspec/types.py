"""Field types shared by the spec models: names, GUIDs, endpoints, secret references, QoS tables."""

from __future__ import annotations

import functools
import re
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Annotated, Any, NamedTuple

from pydantic import AfterValidator, BeforeValidator, Field, PlainSerializer, StringConstraints, WithJsonSchema

NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
# the groups discover gives CA nodes that are no hosts (no SSH, no inventory host): SHARP, UFM, gateways
NON_HOST_GROUPS = ("sharp", "ufm", "gateway")
Name = Annotated[str, StringConstraints(pattern=NAME_RE, max_length=63)]
DeviceName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=32)]
PortNum = Annotated[int, Field(ge=1, le=254)]
Sl = Annotated[int, Field(ge=0, le=15)]


def _parse_guid(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a GUID is a 64-bit number such as 0x0002c90300a1b2c3")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        text = value.strip().lower().replace(":", "")
        if not re.fullmatch(r"(0x)?[0-9a-f]{1,16}", text):
            raise ValueError(f"{value!r} is not a GUID (expected up to 16 hex digits, e.g. 0x0002c90300a1b2c3)")
        number = int(text, 16)
    else:
        raise ValueError("a GUID is a 64-bit number such as 0x0002c90300a1b2c3")
    if not 0 < number < 2**64:
        raise ValueError("a GUID must be a non-zero 64-bit number")
    return number


Guid = Annotated[
    int,
    BeforeValidator(_parse_guid),
    PlainSerializer(lambda v: f"0x{v:016x}", return_type=str),
    WithJsonSchema(
        {
            # YAML reads an unquoted 0x... GUID as an integer, so both forms are valid.
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": 2**64 - 1},
                {
                    "type": "string",
                    "pattern": r"^(0[xX])?[0-9a-fA-F]{1,16}$|^([0-9a-fA-F]{2}:){7}[0-9a-fA-F]{2}$",
                },
            ],
            "examples": ["0x0002c90300a1b2c3"],
        }
    ),
]

_SECRET_RE = re.compile(r"^(env|vault):[A-Za-z_][A-Za-z0-9_]*$")


def _parse_secret(value: Any) -> str:
    if isinstance(value, str) and _SECRET_RE.match(value):
        return value
    raise ValueError("must be a reference to the secret (env:VARIABLE or vault:variable_name), never the key itself")


def _stays_inside(value: str) -> str:
    """A path never goes up a directory: ``..`` would take a rendered file, a history or a wheelhouse out of the
    directory the spec names (and a relative one out of the spec's own directory)."""
    if ".." in value.split("/"):
        raise ValueError("must not contain '..' (it would leave the directory it names): give the path itself")
    return value


# a path on a managed node: absolute
AbsolutePath = Annotated[str, Field(pattern=r"^/[A-Za-z0-9_./+-]+$"), AfterValidator(_stays_inside)]
# a path on the machine that runs ibprov: absolute, ~/..., or relative to the directory ibprov runs in
LocalPath = Annotated[str, Field(pattern=r"^[A-Za-z0-9_./+~-]+$"), AfterValidator(_stays_inside)]


SecretRef = Annotated[
    str,
    BeforeValidator(_parse_secret),
    WithJsonSchema({"type": "string", "pattern": _SECRET_RE.pattern, "examples": ["env:IBPROV_SM_KEY"]}),
]


class Endpoint(NamedTuple):
    """One end of a cable: a switch port (``leaf01:7``) or an HCA port (``node07/mlx5_0:1``)."""

    device: str
    hca: str | None
    port: int

    def __str__(self) -> str:
        return f"{self.device}/{self.hca}:{self.port}" if self.hca else f"{self.device}:{self.port}"


_ENDPOINT_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)(?:/([a-z][a-z0-9_]*))?:(\d{1,3})$")


def parse_endpoint(text: str) -> Endpoint:
    return _parse_endpoint(text.strip())


@functools.lru_cache(maxsize=1 << 17)  # a large spec parses each of its ~10^5 ports twice (model, topology)
def _parse_endpoint(text: str) -> Endpoint:
    match = _ENDPOINT_RE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a port: write SWITCH:PORT (leaf01:7) or NODE/HCA:PORT (node07/mlx5_0:1)")
    device, hca, number = match.groups()
    port = int(number)
    if port < 1:
        raise ValueError(f"{text!r}: port numbers start at 1")
    return Endpoint(device, hca, port)


def _endpoint(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("a port is written SWITCH:PORT (leaf01:7) or NODE/HCA:PORT (node07/mlx5_0:1)")
    return str(parse_endpoint(value))


PortRef = Annotated[str, BeforeValidator(_endpoint)]


def _parse_vlarb(value: Any) -> Any:
    """``"0:4,1:4"`` (opensm.conf notation) or ``[[0, 4], [1, 4]]`` -> ``((0, 4), (1, 4))``."""
    if isinstance(value, str):
        pairs = []
        for item in value.replace(" ", "").split(","):
            vl, sep, weight = item.partition(":")
            if not sep or not vl.isdigit() or not weight.isdigit():
                raise ValueError(f'{item!r} is not VL:WEIGHT (write e.g. "0:64,1:32")')
            pairs.append((int(vl), int(weight)))
        return tuple(pairs)
    return value


VlWeight = tuple[Annotated[int, Field(ge=0, le=14)], Annotated[int, Field(ge=0, le=255)]]
VlArbTable = Annotated[
    tuple[VlWeight, ...],
    BeforeValidator(_parse_vlarb),
    Field(max_length=64),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": r"^ *[0-9]+ *: *[0-9]+ *(, *[0-9]+ *: *[0-9]+ *)*$"},
                {
                    "type": "array",
                    "maxItems": 64,
                    "items": {
                        "type": "array",
                        "prefixItems": [
                            {"type": "integer", "minimum": 0, "maximum": 14},
                            {"type": "integer", "minimum": 0, "maximum": 255},
                        ],
                        "minItems": 2,
                        "maxItems": 2,
                    },
                },
            ],
            "examples": ["0:64,1:32"],
        }
    ),
]


def _parse_sl2vl(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return tuple(int(v) for v in value.replace(" ", "").split(","))
        except ValueError:
            raise ValueError('write 16 comma-separated VLs, one per SL (e.g. "0,1,2,3,0,1,2,3,...")') from None
    return value


Sl2Vl = Annotated[
    tuple[Annotated[int, Field(ge=0, le=15)], ...],
    BeforeValidator(_parse_sl2vl),
    Field(min_length=16, max_length=16),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": r"^ *[0-9]+ *(, *[0-9]+ *){15}$"},
                {
                    "type": "array",
                    "minItems": 16,
                    "maxItems": 16,
                    "items": {"type": "integer", "minimum": 0, "maximum": 15},
                },
            ],
            "examples": ["0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7"],
        }
    ),
]


def _network(value: Any) -> IPv4Network | IPv6Network:
    if isinstance(value, (IPv4Network, IPv6Network)):
        return value
    if not isinstance(value, str):
        raise ValueError("write the subnet as ADDRESS/PREFIX, e.g. 10.10.0.0/16")
    try:
        return ip_network(value, strict=True)
    except ValueError as exc:
        if "has host bits set" in str(exc):
            raise ValueError(f"{value} has host bits set (did you mean {ip_network(value, strict=False)}?)") from None
        raise ValueError(f"{value!r} is not a subnet (write ADDRESS/PREFIX, e.g. 10.10.0.0/16)") from None


def _address(value: Any) -> IPv4Address | IPv6Address:
    if isinstance(value, (IPv4Address, IPv6Address)):
        return value
    try:
        return ip_address(value if isinstance(value, str) else "")
    except ValueError:
        raise ValueError(f"{value!r} is not an IP address") from None


IpNetwork = Annotated[
    IPv4Network | IPv6Network,
    BeforeValidator(_network),
    WithJsonSchema({"type": "string", "format": "ip-network"}),
]
IpAddress = Annotated[
    IPv4Address | IPv6Address,
    BeforeValidator(_address),
    WithJsonSchema({"type": "string", "format": "ip-address"}),
]


# ------------------------------------------------------------------------------------- rendered text
# Every string that ends up in a rendered file is checked against that file's grammar, by a rule named
# after where it is rendered. Messages say what is allowed in words.

_CHAR_NAMES = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", "\x00": "a NUL byte"}


def _char(c: str) -> str:
    if c in _CHAR_NAMES:
        return _CHAR_NAMES[c]
    if c.isprintable():
        return f"{c!r} (U+{ord(c):04X})"
    return f"the control character U+{ord(c):04X}"


def _text_check(
    value: Any,
    *,
    what: str,
    where: str,
    max_length: int,
    forbidden: dict[str, str],
) -> str:
    """``value`` if it is printable ASCII without ``forbidden`` characters (char -> why) that fits
    ``max_length``; else a ValueError naming the first offending character and the file it would break."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text")
    if not value.strip():
        raise ValueError(f"{what} cannot be empty")
    for c in value:
        if not c.isprintable() or c in "\n\r\t\x0b\x0c":
            raise ValueError(f"{what} cannot contain {_char(c)}: it would add or break a line of {where}")
        if not c.isascii():
            raise ValueError(f"{what} must be plain ASCII ({where} cannot hold {_char(c)})")
        if c in forbidden:
            raise ValueError(f"{what} cannot contain {c!r}: {forbidden[c]}")
    if value != value.strip():
        raise ValueError(f"{what} cannot start or end with a space")
    if len(value) > max_length:
        raise ValueError(f"{what} is {len(value)} characters, at most {max_length} fit")
    return value


_ANSIBLE = "Ansible would read it as a template"


def _description(value: Any) -> str:
    return _text_check(
        value,
        what="a NodeDescription",
        where="the node-name-map",
        max_length=64,  # NodeDescription is 64 bytes (IBTA NodeDescription attribute)
        forbidden={
            '"': 'the node-name-map writes the name inside "..."',
            "#": "the node-name-map and topology files start a comment there",
            "{": _ANSIBLE,
            "}": _ANSIBLE,
            "\\": "the node-name-map reads it literally but YAML and the diags do not agree on it",
        },
    )


def _policy_text(value: Any) -> str:
    return _text_check(
        value,
        what="a use text",
        where="qos-policy.conf",
        max_length=128,
        forbidden={
            "#": "qos-policy.conf starts a comment there",
            '"': "qos-policy.conf quotes nothing",
            "{": _ANSIBLE,
            "}": _ANSIBLE,
        },
    )


def _label(value: Any) -> str:
    return _text_check(
        value, what="this text", where="reports", max_length=64, forbidden={"{": _ANSIBLE, "}": _ANSIBLE}
    )


def _text_type(check: Any, pattern: str, max_length: int, example: str) -> Any:
    return Annotated[
        str,
        BeforeValidator(check),
        WithJsonSchema({"type": "string", "pattern": pattern, "maxLength": max_length, "examples": [example]}),
    ]


Description = _text_type(_description, r"^[!$-\[\]-z|~]([ !$-\[\]-z|~]*[!$-\[\]-z|~])?$", 64, "node07 HCA-1")
PolicyText = _text_type(_policy_text, r"^[!$-z|~]([ !$-z|~]*[!$-z|~])?$", 128, "MPI traffic")
Label = _text_type(_label, r"^[!-z|~]([ -z|~]*[!-z|~])?$", 64, "QM8700")

# Values Ansible and the hosts read: one token each, in the characters their own syntax allows.
PATTERN_WORDS: dict[str, str] = {}


def _token(pattern: str, words: str, max_length: int) -> Any:
    PATTERN_WORDS[pattern] = words
    return Annotated[str, StringConstraints(pattern=pattern, max_length=max_length)]


PATTERN_WORDS[NAME_RE] = "letters, digits, '_', '.' and '-', starting with a letter or digit"
PATTERN_WORDS[r"^[a-z][a-z0-9_]*$"] = "lower-case letters, digits and '_', starting with a letter"
LoginName = _token(
    r"^[a-z_][a-z0-9_-]*$", "a login name: lower-case letters, digits, '_' and '-', not starting with a digit", 32
)
HostAddress = _token(
    r"^[A-Za-z0-9][A-Za-z0-9.:_-]*$", "a host name or IP address: letters, digits, '.', ':', '_' and '-'", 253
)
VersionText = _token(
    r"^[A-Za-z0-9][A-Za-z0-9._+~:-]*$", "a version: letters, digits and '.', '_', '+', '~', ':', '-', no spaces", 64
)
UrlText = _token(
    r"^[a-z][a-z0-9+.-]*://[A-Za-z0-9._~:/?\[\]@!$&()*+,;=%-]+$",
    "a URL such as https://repo.example.com/doca/ (no spaces, quotes or braces)",
    2048,
)
Transport = _token(r"^[a-z][a-z0-9_]*$", "lower-case letters, digits and '_', starting with a letter", 32)
