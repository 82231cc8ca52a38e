"""Unit prices for a bill of materials, from a small YAML file the user writes (``--prices FILE``).

ibprov never invents a price: a price the design needs and the file does not give is a problem, located
like a spec problem (FILE:LINE:COL: path: message), and no cost is printed.

    currency: EUR          # optional: printed with the costs
    switches:              # unit price of a switch, by its port count
      40: 9000
    cables:                # unit price of one cable, by medium
      copper: 90           # direct-attach copper (DAC)
      optical: 250         # an optical cable without its transceivers (or an AOC)
    transceiver: 700       # one optical transceiver; an optical cable needs two
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ibprov.clusterspec.positions import SourceMap, decode, load_yaml
from ibprov.errors import Problem, SpecError

__all__ = ["Prices", "load_prices", "parse_prices"]

MEDIA = ("copper", "optical")
KEYS = ("currency", "switches", "cables", "transceiver")


@dataclass(frozen=True)
class Prices:
    file: str
    source: SourceMap
    currency: str = ""
    switches: dict[int, Decimal] = field(default_factory=dict)
    cables: dict[str, Decimal] = field(default_factory=dict)
    transceiver: Decimal | None = None

    def problem(self, path: tuple[str | int, ...], message: str) -> Problem:
        return self.source.problem(path, message)


def load_prices(path: Path) -> Prices:
    name = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SpecError([Problem(name, 1, 1, "", "no such file")]) from None
    except OSError as exc:
        raise SpecError([Problem(name, 1, 1, "", f"cannot read: {exc.strerror or exc}")]) from None
    return parse_prices(decode(data, name), name)


def _price(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return Decimal(str(value))


def parse_prices(text: str, name: str = "prices.yaml") -> Prices:
    """Parse and check a prices file; raise :class:`SpecError` with every problem found."""
    raw, smap = load_yaml(text, name)
    if not isinstance(raw, dict):
        raise SpecError([smap.problem((), "a prices file is a mapping: currency, switches, cables, transceiver")])
    problems: list[Problem] = []
    for key in raw:
        if key not in KEYS:
            problems.append(smap.problem((key,), f"unknown key {key!r} (known: {', '.join(KEYS)})", prefer_key=True))
    currency = raw.get("currency", "")
    if not isinstance(currency, str) or len(currency) > 8:
        problems.append(smap.problem(("currency",), "a currency is a short label, e.g. EUR or USD"))
        currency = ""
    switches: dict[int, Decimal] = {}
    for ports, value in _mapping(raw, "switches", problems, smap).items():
        if isinstance(ports, bool) or not isinstance(ports, int) or not 1 <= ports <= 254:
            problems.append(
                smap.problem(
                    ("switches", ports),
                    "a switch is priced by its port count, 1..254",
                    prefer_key=True,
                )
            )
        elif (price := _price(value)) is None:
            problems.append(smap.problem(("switches", ports), f"a price is a number >= 0 (got {value!r})"))
        else:
            switches[ports] = price
    cables: dict[str, Decimal] = {}
    for medium, value in _mapping(raw, "cables", problems, smap).items():
        if medium not in MEDIA:
            problems.append(
                smap.problem(
                    ("cables", medium),
                    f"unknown medium {medium!r}: copper or optical",
                    prefer_key=True,
                )
            )
        elif (price := _price(value)) is None:
            problems.append(smap.problem(("cables", medium), f"a price is a number >= 0 (got {value!r})"))
        else:
            cables[medium] = price
    transceiver = None
    if "transceiver" in raw:
        transceiver = _price(raw["transceiver"])
        if transceiver is None:
            problems.append(smap.problem(("transceiver",), f"a price is a number >= 0 (got {raw['transceiver']!r})"))
    if problems:
        raise SpecError(problems)
    return Prices(name, smap, currency, switches, cables, transceiver)


def _mapping(raw: dict[str, Any], key: str, problems: list[Problem], smap: SourceMap) -> dict[Any, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        problems.append(
            smap.problem((key,), f"{key} is a mapping ({'PORTS: PRICE' if key == 'switches' else 'MEDIUM: PRICE'})")
        )
        return {}
    return value
