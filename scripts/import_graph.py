#!/usr/bin/env python3
"""The floors of ibprov and the imports between its packages, read from the source (every import
statement: module level, inside functions and under ``TYPE_CHECKING``).

Each floor may import only the floors below it; packages that share a floor do not import each other.
``tests/unit/test_layers.py`` proves that with :func:`violations`, :func:`module_cycles` and
:func:`unexplained_inner_imports`; this script draws the graph into docs/architecture.md (between
``<!-- imports:begin -->`` and ``<!-- imports:end -->``), so that the drawing is the code's, not a wish.

Usage:
    scripts/import_graph.py [--check]

--check writes nothing and exits 1 when the drawing in docs/architecture.md is out of date.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

from docblock import replace_block, update_doc  # noqa: E402

PACKAGE = REPO / "ibprov"
DOC = REPO / "docs" / "architecture.md"

# Bottom to top. A name is a top-level module or package of ibprov ("ibprov" itself: the version).
FLOORS: tuple[tuple[str, ...], ...] = (
    ("ibprov", "errors", "hostlist", "pkey", "resources"),
    ("clusterspec",),
    ("identity",),
    ("twinnet", "smbackend"),
    ("render",),
    ("run",),
    ("probes",),
    ("routing",),
    ("report",),
    ("design", "discover", "history", "verify"),
    ("twin",),
    ("cli",),
    ("__main__",),
)
FLOOR = {name: level for level, names in enumerate(FLOORS) for name in names}

# An import inside a function must say why, on its line or in a comment above it (or above the run of imports it
# belongs to), with one of these.
INNER_REASON_MARKERS = ("# lazy:", "# optional:")


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted ("ibprov.verify.fabric.section")
    target: str  # imported module, dotted
    line: int
    inner: bool  # inside a function
    type_only: bool  # under `if TYPE_CHECKING:`
    text: str  # the source line(s) of the statement and the line above it


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = frozenset(module_name(p) for p in PACKAGE.rglob("*.py"))


def _resolve(source: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = source.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(path: Path) -> Iterator[Import]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text, str(path))
    source = module_name(path)

    def walk(node: ast.AST, inner: bool, type_only: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                names = (
                    [a.name for a in child.names]
                    if isinstance(child, ast.Import)
                    else [_resolve(source, path.name == "__init__.py", child)]
                )
                if isinstance(child, ast.ImportFrom):  # `from pkg import module`: the module, not the package
                    names = [
                        f"{names[0]}.{a.name}" if f"{names[0]}.{a.name}" in MODULES else names[0] for a in child.names
                    ]
                end = child.end_lineno or child.lineno
                start = child.lineno - 1  # a reason above a run of imports covers the run
                while start > 0 and lines[start - 1].strip().startswith(("from ", "import ", "#")):
                    start -= 1
                snippet = "\n".join(lines[start:end])
                for name in names:
                    yield Import(source, name, child.lineno, inner, type_only, snippet)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from walk(child, True, type_only)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), inner, True)
                for stmt in child.orelse:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), inner, type_only)
            else:
                yield from walk(child, inner, type_only)

    yield from walk(tree, False, False)


def every_import() -> list[Import]:
    """Every import statement of ibprov, of its own modules, the standard library's and third parties'."""
    return [imp for path in sorted(PACKAGE.rglob("*.py")) for imp in _imports(path)]


def all_imports() -> list[Import]:
    """The imports of ibprov's own modules: the graph of the floors."""
    return [imp for imp in every_import() if imp.target == "ibprov" or imp.target.startswith("ibprov.")]


def package_of(module: str) -> str:
    """The floor name of a dotted module: its first part below ``ibprov``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "ibprov"


def package_edges(imports: list[Import]) -> dict[tuple[str, str], int]:
    edges: dict[tuple[str, str], int] = defaultdict(int)
    for imp in imports:
        a, b = package_of(imp.source), package_of(imp.target)
        if a != b:
            edges[(a, b)] += 1
    return dict(edges)


def unknown_packages(imports: list[Import]) -> set[str]:
    names = {package_of(i.source) for i in imports} | {package_of(i.target) for i in imports}
    names |= {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    return {n for n in names if n not in FLOOR and n != "__init__"}


def violations(imports: list[Import]) -> list[str]:
    """Every import that runs up a floor or across one (between packages that share a floor)."""
    out = []
    for imp in imports:
        a, b = package_of(imp.source), package_of(imp.target)
        if a == b or a not in FLOOR or b not in FLOOR:
            continue
        if FLOOR[b] >= FLOOR[a]:
            way = "up" if FLOOR[b] > FLOOR[a] else "across"
            out.append(f"{imp.source}:{imp.line} imports {imp.target} ({way}: {a} -> {b})")
    return out


def module_cycles(imports: list[Import]) -> list[list[str]]:
    """Cycles in the module graph (every import counts, a package's ``__init__`` being its own module),
    as strongly connected components of more than one module."""
    graph: dict[str, set[str]] = defaultdict(set)
    modules = MODULES
    for imp in imports:
        target = imp.target
        while target not in modules and "." in target:  # `from pkg.mod import name`: the module
            target = target.rsplit(".", 1)[0]
        if target != imp.source:
            graph[imp.source].add(target)
    # Tarjan's strongly connected components (the graph has a few hundred modules: recursion is fine)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for child in sorted(graph[node]):
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                components.append(sorted(component))

    for root in sorted(graph):
        if root not in index:
            visit(root)
    return components


def unexplained_inner_imports(imports: list[Import]) -> list[str]:
    """Imports inside functions (of any module: ibprov's, the standard library's, a third party's) whose
    statement, or the comment above it or above its run of imports, gives no reason."""
    return [
        f"{i.source}:{i.line} imports {i.target} inside a function without a reason"
        for i in imports
        if i.inner and not any(marker in i.text for marker in INNER_REASON_MARKERS)
    ]


def drawing(imports: list[Import]) -> str:
    """The floors top to bottom, each package with the packages it imports (a Markdown block)."""
    edges = package_edges(imports)
    inner = {(package_of(i.source), package_of(i.target)) for i in imports if i.inner}
    rows = ["```text", "floor  package        imports (every arrow points down; * only inside a function)"]
    for level in range(len(FLOORS) - 1, -1, -1):
        for name in FLOORS[level]:
            targets = sorted((b for (a, b) in edges if a == name), key=lambda b: (-FLOOR[b], b))
            marked = [f"{b}{'*' if (name, b) in inner and not _top_level(imports, name, b) else ''}" for b in targets]
            rows.append(f"{level:>5}  {name:<14} {', '.join(marked) or '-'}")
    rows.append("```")
    return "\n".join(rows) + "\n"


def _top_level(imports: list[Import], a: str, b: str) -> bool:
    return any(package_of(i.source) == a and package_of(i.target) == b and not i.inner for i in imports)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/architecture.md is out of date")
    args = parser.parse_args()
    body = drawing(all_imports())
    return update_doc(
        DOC,
        lambda text: replace_block(text, "<!-- imports:begin -->", "<!-- imports:end -->", body, where=DOC),
        check=args.check,
        script="scripts/import_graph.py",
    )


if __name__ == "__main__":
    sys.exit(main())
