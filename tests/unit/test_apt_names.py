"""The Debian packages `make demo` and `make test` install exist in Debian 12 and in Debian 13: every name the
Makefile and scripts/molecule.sh ask apt for is in each release's package index as scripts/apt_names.py recorded
it (tests/fixtures/debian, with its source line). A name added without re-recording fails here."""

from __future__ import annotations

from pathlib import Path

import pytest
from scriptload import load_script

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "debian"
apt_names = load_script("apt_names")


def recorded(suite: str) -> tuple[str, dict[str, str]]:
    lines = (FIXTURES / f"apt-names-{suite}.txt").read_text().splitlines()
    return lines[0], dict(line.split(" ", 1) for line in lines[1:])


@pytest.mark.parametrize("suite", ["bookworm", "trixie"])
def test_every_package_make_installs_is_in_the_release_as_recorded(suite: str) -> None:
    source, versions = recorded(suite)
    assert source.startswith(f"# source: http://deb.debian.org/debian/dists/{suite}/main/binary-amd64/Packages.xz")
    assert sorted(versions) == apt_names.wanted(), "a package name changed: run scripts/apt_names.py bookworm trixie"
    assert [name for name, version in versions.items() if version == "MISSING"] == []


def test_the_releases_carry_the_simulators_and_diags_the_issue_names() -> None:
    _, bookworm = recorded("bookworm")
    _, trixie = recorded("trixie")
    assert (bookworm["ibsim-utils"], bookworm["infiniband-diags"], bookworm["opensm"]) == (
        "0.10-2",
        "44.0-2",
        "3.3.23-2+b1",
    )
    assert (trixie["ibsim-utils"], trixie["libumad2sim0"], trixie["infiniband-diags"]) == ("0.12-1", "0.12-1", "56.1-1")
    assert trixie["opensm"].startswith("3.3.23-3")
    assert trixie["python3-venv"].startswith("3.13")


def test_the_names_are_read_from_the_makefile_and_the_molecule_script(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "Makefile").write_text(
        "APT_SIM := opensm infiniband-diags\n"
        "venv:\n\t@$(PY) -c 'import ensurepip' 2>/dev/null || scripts/apt-ensure.sh python3-venv\n"
        "apt-browser:\n\t@scripts/apt-ensure.sh chromium\n"
        "apt-sim:\n\t@scripts/apt-ensure.sh $(APT_SIM)\n"
    )
    (tmp_path / "scripts" / "molecule.sh").write_text("APT_PKGS=(podman zstd)\n")
    assert apt_names.wanted(tmp_path) == ["chromium", "infiniband-diags", "opensm", "podman", "python3-venv", "zstd"]
