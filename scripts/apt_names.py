#!/usr/bin/env python3
"""Record which of the Debian packages `make demo` and `make test` install exist in a Debian release, and at which
version: reads the names from the Makefile and scripts/molecule.sh (tests/unit/test_apt_names.py reads them the
same way), looks each up in the release's main/binary-amd64 Packages index on Debian's registry, and writes
tests/fixtures/debian/apt-names-<suite>.txt (a source line, then `name version` per package, or `name MISSING`).

    .venv/bin/python scripts/apt_names.py bookworm trixie

The test then checks, offline, that every name the Makefile asks for is in both files: a Debian 13 host finds
every package `make test` installs (what the versions mean for the tests is in docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import lzma
import re
import sys
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "debian"
MIRROR = "http://deb.debian.org/debian"


def wanted(repo: Path = REPO) -> list[str]:
    """Every package name the Makefile's apt lines and scripts/molecule.sh's APT_PKGS install, sorted."""
    make = (repo / "Makefile").read_text()
    names: set[str] = set()
    for match in re.finditer(r"^(APT_\w+)\s*:=\s*(.+)$", make, flags=re.M):
        names.update(match[2].split())
    for match in re.finditer(r"scripts/apt-ensure\.sh\s+([a-z0-9][a-z0-9.+ -]*?)(?:\s*(?:\|\||;|$))", make, re.M):
        names.update(w for w in match[1].split() if not w.startswith("$"))
    molecule = (repo / "scripts" / "molecule.sh").read_text()
    packages = re.search(r"^APT_PKGS=\(([^)]*)\)", molecule, flags=re.M)
    if packages is not None:
        names.update(packages[1].split())
    return sorted(names)


def index(suite: str) -> tuple[str, dict[str, str]]:
    """The release's Packages index: its URL and package (and every name it Provides) -> version."""
    url = f"{MIRROR}/dists/{suite}/main/binary-amd64/Packages.xz"
    with urllib.request.urlopen(url, timeout=120) as answer:
        text = lzma.decompress(answer.read()).decode("utf-8", errors="replace")
    versions: dict[str, str] = {}
    for stanza in text.split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", stanza, flags=re.M))
        if "Package" not in fields:
            continue
        versions[fields["Package"]] = fields.get("Version", "?")
        for provided in fields.get("Provides", "").split(","):
            name = provided.strip().split(" ")[0]
            if name:
                versions.setdefault(name, f"(provided by {fields['Package']})")
    return url, versions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suites", nargs="+", help="bookworm, trixie, ...")
    args = parser.parse_args(argv)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    missing = 0
    for suite in args.suites:
        url, versions = index(suite)
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        lines = [f"# source: {url}, read {day} by scripts/apt_names.py: the packages make demo / make test install"]
        for name in wanted():
            lines.append(f"{name} {versions.get(name, 'MISSING')}")
            missing += name not in versions
        (FIXTURES / f"apt-names-{suite}.txt").write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
