"""The architecture, checked: one import name, layers that point one way, no import cycles, small modules.

The layers (``docs/design.md``) are import-linter contracts in pyproject.toml (``[tool.importlinter]``):
``make check`` runs ``lint-imports`` and ``test_the_import_contracts_are_kept`` runs it for ``make test``.
Here is what import-linter cannot say: that no two modules import each other (its ``acyclic_siblings``
contract is about packages), that pyproject.toml packages every folder, and the size limit of a module.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 400


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """``sotacheck...`` package name → its folder, as pyproject.toml maps them."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return {name: root / folder for name, folder in mapping.items()}


def modules(root: Path = ROOT) -> Iterator[tuple[str, Path]]:
    """Every product module in the repository: (dotted name, file). Mapped folders are not walked twice."""
    dirs = package_dirs(root)
    for package, folder in dirs.items():
        for file in sorted(folder.rglob("*.py")):
            relative = file.relative_to(folder).with_suffix("")
            parts = [p for p in relative.parts if p != "__init__"]
            if package == "sotacheck" and parts and f"sotacheck.{parts[0]}" in dirs:
                continue
            yield ".".join([package, *parts]), file


def test_the_import_contracts_are_kept(tmp_path: Path) -> None:
    """import-linter puts its working directory first on sys.path: run it outside the checkout, whose own
    ``sotacheck/`` folder would shadow the installed package."""
    done = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), str(ROOT / "pyproject.toml"),
                           "--no-cache", "--no-logo"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("module", "imported", "broken"), [
    ("audit/paired.py", "sotacheck.reports.tables", "sotacheck.audit is not allowed to import sotacheck.reports"),
    ("reruns/spec.py", "sotacheck.audit.paired", "sotacheck.reruns is not allowed to import sotacheck.audit"),
    ("cli/datasets.py", "sotacheck.reruns.benchmarks", "sotacheck.cli is not allowed to import sotacheck.reruns"),
])
def test_the_import_contracts_catch_a_backwards_import(tmp_path: Path, module: str, imported: str, broken: str) -> None:
    """The same contracts on a copy of the package with one backwards import added fail, naming it."""
    import shutil

    import sotacheck

    package = tmp_path / "sotacheck"
    shutil.copytree(Path(sotacheck.__file__).parent, package, symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = package / module
    target.write_text(target.read_text() + f"\nimport {imported}  # a backwards import, on purpose\n")
    done = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), str(ROOT / "pyproject.toml"),
                           "--no-cache", "--no-logo"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 1 and "BROKEN" in done.stdout, done.stdout + done.stderr
    dotted = "sotacheck." + module.removesuffix(".py").replace("/", ".")
    assert broken in done.stdout and f"{dotted} -> {imported}" in done.stdout, done.stdout


@pytest.mark.parametrize("folder", ["audit", "reruns", "reports", "data"])
def test_a_layer_is_not_importable_by_its_folder_name(folder: str) -> None:
    """The repository root is not on sys.path under pytest (``--import-mode=importlib``, pyproject.toml), so a
    stray ``import audit`` fails instead of loading a second copy of the code beside ``sotacheck.audit``."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(folder)
    assert importlib.import_module(f"sotacheck.{folder}")


def test_a_python_started_in_the_checkout_root_finds_every_layer() -> None:
    """``python -m sotacheck.cli`` or ``python -c`` in the repository root put the checkout's own ``sotacheck/``
    folder (core, api, cli) first on sys.path; the package's ``__init__`` extends its search path to the
    editable install's link tree, so the layers mapped from other folders are still found."""
    code = "import sotacheck.audit.paired, sotacheck.reruns.spec, sotacheck.reports.tables, sotacheck.data; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    done = subprocess.run([sys.executable, "-m", "sotacheck.cli", "--version"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr


def import_cycles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """Every loop of imports between modules, as the chain from a module back to itself. A package's
    ``__init__`` re-exporting its own submodules is not a cycle of the architecture and is left out."""
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if module.startswith(imported + "."):
                graph.remove_import(importer=module, imported=imported)
    loops = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                loops.append((module, *back))
    return loops


def test_no_import_cycles() -> None:
    """No two modules import each other, directly or around a loop (the run ↔ cluster cycle is gone: both
    executors implement ``reruns.executors.Executor``, which the orchestration calls)."""
    assert import_cycles(grimp.build_graph("sotacheck", cache_dir=None)) == []


def test_a_cycle_is_found() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in (("a.run", "a.cluster"), ("a.cluster", "a.run"), ("a.run", "a.core"), ("a.run", "a")):
        graph.add_import(importer=importer, imported=imported)
    graph.add_import(importer="a", imported="a.run")
    assert import_cycles(graph) == [("a.cluster", "a.run", "a.cluster"), ("a.run", "a.cluster", "a.run")]


def test_every_folder_is_packaged() -> None:
    """pyproject.toml's package list names every package folder of the product (else a wheel lacks it); the
    other names it lists are folders of data files, each with its own package-data entry."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = {module for module, file in modules() if file.name == "__init__.py"}
    data_folders = listed - found
    assert found <= listed and data_folders <= set(setuptools["package-data"]), (found - listed, data_folders)


@pytest.mark.parametrize("module,file", list(modules()), ids=lambda value: str(value))
def test_no_module_over_400_lines(module: str, file: Path) -> None:
    assert len(file.read_text().splitlines()) <= MAX_LINES, f"{module} has more than {MAX_LINES} lines"
