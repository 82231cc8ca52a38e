"""The house: each floor of ibprov imports only the floors below it, nothing forms a cycle, and an import
inside a function says why it is there. The floors are declared once, in scripts/import_graph.py, which
also draws them into docs/architecture.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from scriptload import load_script

REPO = Path(__file__).resolve().parents[2]


graph = load_script("import_graph")


@pytest.fixture(scope="module")
def imports() -> list:
    return graph.all_imports()


def test_every_package_of_ibprov_has_a_floor(imports: list) -> None:
    assert graph.unknown_packages(imports) == set()


def test_no_import_runs_up_a_floor_or_across_one(imports: list) -> None:
    assert graph.violations(imports) == []


def test_no_modules_import_each_other_in_a_cycle(imports: list) -> None:
    assert graph.module_cycles(imports) == []


def test_every_import_inside_a_function_says_why() -> None:
    assert graph.unexplained_inner_imports(graph.every_import()) == []


def test_the_checker_sees_an_upward_import_a_cycle_and_an_unexplained_lazy_import(tmp_path: Path) -> None:
    """The checks above cannot pass by reading nothing: the same functions find each kind of problem."""
    imp = graph.Import
    up = imp("ibprov.render.x", "ibprov.verify.fabric", 3, False, False, "from ibprov.verify import fabric")
    across = imp("ibprov.verify.x", "ibprov.discover.hosts", 4, False, False, "import ibprov.discover.hosts")
    down = imp("ibprov.verify.x", "ibprov.render", 5, False, False, "import ibprov.render")
    assert graph.violations([up, across, down]) == [
        "ibprov.render.x:3 imports ibprov.verify.fabric (up: render -> verify)",
        "ibprov.verify.x:4 imports ibprov.discover.hosts (across: verify -> discover)",
    ]
    lazy = imp("ibprov.cli", "ibprov.twin.rack", 9, True, False, "    from ibprov.twin.rack import up")
    told = imp("ibprov.cli", "ibprov.twin.rack", 9, True, False, "    # lazy: podman\n    from ibprov.twin import rack")
    assert graph.unexplained_inner_imports([lazy, told]) == [
        "ibprov.cli:9 imports ibprov.twin.rack inside a function without a reason"
    ]
    a = imp("ibprov.render", "ibprov.run", 1, True, False, "")
    b = imp("ibprov.run", "ibprov.render", 1, False, False, "")
    assert graph.module_cycles([a, b]) == [["ibprov.render", "ibprov.run"]]


def test_the_drawing_in_the_architecture_doc_is_the_code_s() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert graph.drawing(graph.all_imports()) in doc, "run scripts/import_graph.py"
