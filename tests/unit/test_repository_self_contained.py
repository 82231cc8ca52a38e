"""A clone of the repository alone runs every test: no file under tests/ reads (or points at) captures outside
the repository, and every capture kept in tests/fixtures still says where it comes from."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures"
THIS = Path(__file__).resolve()

# the captures used to be read from the workplace's shared directory beside the checkout; the needles are
# spelled in two parts so that this file does not match itself (nor the hook that looks for the same)
OUTSIDE = (b"../" + b"shared", b"shared/" + b"fixtures")
# made by running the tests or the tools, never committed
GENERATED = {"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache"}


def files_under(root: Path) -> list[Path]:
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and not GENERATED.intersection(path.relative_to(root).parts) and path.suffix != ".pyc"
    )


def test_no_file_under_tests_reads_captures_from_outside_the_repository() -> None:
    offending = [
        f"{path.relative_to(TESTS)}: {needle.decode()}"
        for path in files_under(TESTS)
        if path.resolve() != THIS
        for needle in OUTSIDE
        if needle in path.read_bytes()
    ]
    assert offending == [], "read captures from tests/fixtures (captures.read_capture), not from outside the repository"


def test_every_capture_in_tests_fixtures_starts_with_its_source_line() -> None:
    # proven/ holds the manifests naming which captures prove each reader: not captures themselves
    captures = [
        path
        for path in files_under(FIXTURES)
        if not path.name.startswith("README") and path.relative_to(FIXTURES).parts[0] != "proven"
    ]
    assert captures, f"no captures in {FIXTURES}"
    without_source = [
        str(path.relative_to(FIXTURES)) for path in captures if not path.read_bytes().startswith(b"# source:")
    ]
    assert without_source == [], "each capture's first line is '# source: ...' (where it was captured)"
