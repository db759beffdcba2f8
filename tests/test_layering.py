"""The architecture, checked: one import name, layers that point one way, small modules.

Layers (``../shared/DESIGN.md``)::

    cli -> reports -> audit -> core          cli -> reruns -> core

``sotacheck.api`` is the public API the CLI calls: it may use every layer but the CLI. ``sotacheck`` itself
(the package's ``__init__``) re-exports the API lazily. The contract is read from the source (every
``import``, at module level or inside a function, resolved to ``sotacheck.<layer>``), so a backwards import
fails here even where it is never executed by another test. Run by ``make check`` and ``make test``.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "audit": {"audit", "core"},
    "reports": {"reports", "audit", "core"},
    "reruns": {"reruns", "core"},
    "data": set(),
    "api": {"api", "reports", "audit", "reruns", "core"},
    "cli": {"cli", "api", "root", "reports", "audit", "reruns", "core"},
    "root": {"api", "core"},
}
UNNAMESPACED = ("audit", "reruns", "reports", "core", "cli")
MAX_LINES = 400


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """``sotacheck...`` package name → its folder, as pyproject.toml maps them."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return {name: root / folder for name, folder in mapping.items()}


def modules(root: Path = ROOT) -> Iterator[tuple[str, Path]]:
    """Every product module: (dotted name, file). Mapped folders are not walked twice."""
    dirs = package_dirs(root)
    for package, folder in dirs.items():
        for file in sorted(folder.rglob("*.py")):
            relative = file.relative_to(folder).with_suffix("")
            parts = [p for p in relative.parts if p != "__init__"]
            if package == "sotacheck" and parts and f"sotacheck.{parts[0]}" in dirs:
                continue
            if "runs" in relative.parts and package == "sotacheck.data":
                continue
            yield ".".join([package, *parts]), file


def layer_of(module: str) -> str:
    parts = module.split(".")
    if parts == ["sotacheck"]:
        return "root"
    return parts[1]


@dataclass(frozen=True)
class Violation:
    module: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported} ({layer_of(self.module)} may not)"


def imports_of(module: str, file: Path) -> Iterator[tuple[str, int]]:
    """Every module ``file`` imports, absolute names, with its line."""
    tree = ast.parse(file.read_text(), str(file))
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name != "sotacheck":
                yield name, node.lineno
                continue
            for alias in node.names:  # `from sotacheck import api` imports the module sotacheck.api
                yield f"sotacheck.{alias.name}", node.lineno


def violations(root: Path = ROOT) -> list[Violation]:
    found = []
    for module, file in modules(root):
        layer = layer_of(module)
        for imported, line in imports_of(module, file):
            top = imported.split(".")[0]
            if top in UNNAMESPACED:
                found.append(Violation(module, imported, line))
            elif top == "sotacheck":
                target = layer_of(imported)
                if target in ALLOWED and target not in ALLOWED[layer]:
                    found.append(Violation(module, imported, line))
    return found


def test_layers_point_one_way() -> None:
    assert [str(v) for v in violations()] == []


def test_a_backwards_import_fails_the_contract(tmp_path: Path) -> None:
    """A copy of the tree with ``audit`` importing ``reruns`` (and ``core`` importing ``audit``) fails."""
    for name in ("pyproject.toml",):
        (tmp_path / name).write_text((ROOT / name).read_text())
    for folder in {p.relative_to(ROOT).parts[0] for p in package_dirs().values()}:
        for file in (ROOT / folder).rglob("*.py"):
            target = tmp_path / file.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(file.read_text())
    assert violations(tmp_path) == []
    (tmp_path / "audit" / "backwards.py").write_text("from sotacheck.reruns.run import RunSpec\n")
    (tmp_path / "sotacheck" / "core" / "backwards.py").write_text("def f():\n    from ..audit import paired\n")
    (tmp_path / "reports" / "plain.py").write_text("import audit.paired\n")
    found = sorted(str(v) for v in violations(tmp_path))
    assert found == ["sotacheck.audit.backwards:1 imports sotacheck.reruns.run (audit may not)",
                     "sotacheck.core.backwards:2 imports sotacheck.audit (core may not)",
                     "sotacheck.reports.plain:1 imports audit.paired (reports may not)"]


def test_every_folder_is_packaged() -> None:
    """pyproject.toml's package list names every package folder of the product (else a wheel lacks it)."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {module for module, file in modules() if file.name == "__init__.py"}
    assert found == listed


@pytest.mark.parametrize("module,file", list(modules()), ids=lambda value: str(value))
def test_no_module_over_400_lines(module: str, file: Path) -> None:
    assert len(file.read_text().splitlines()) <= MAX_LINES, f"{module} has more than {MAX_LINES} lines"


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → the product modules it imports (at module level or inside functions). A name that is a
    package's attribute rather than a module (``from pkg import name``) counts as the package."""
    known = {module for module, _ in modules(root)}
    graph: dict[str, set[str]] = {}
    for module, file in modules(root):
        targets = set()
        for imported, _ in imports_of(module, file):
            while imported and imported not in known:
                imported = imported.rpartition(".")[0]
            if imported and imported != module:
                targets.add(imported)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    """No two modules import each other, directly or around a loop (the run ↔ cluster cycle is gone: both
    executors implement ``reruns.executors.Executor``, which the orchestration calls). A package's
    ``__init__`` re-exporting its own submodules is not a cycle of the architecture and is left out."""
    graph = import_graph()
    for module, targets in graph.items():
        graph[module] = {t for t in targets if not (t != module and module.startswith(t + "."))}
    assert cycles(graph) == []


def test_a_cycle_is_found() -> None:
    graph = {"a.run": {"a.cluster", "a.core"}, "a.cluster": {"a.run"}, "a.core": set()}
    assert cycles(graph) == [["a.cluster", "a.run"]]
