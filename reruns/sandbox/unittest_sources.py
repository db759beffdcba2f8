"""What the unittest judge's trusted side reads from a BigCodeBench task's sources, with ``ast`` and before any
program runs: the test methods ``unittest`` would run (:func:`defined_test_methods`: the program cannot add, hide or
rename one), the libraries and names the tests use (:func:`watched_libraries`: the seal watches them), and the
prompt's own imports (:func:`prompt_imports`: run again between the program and the test module)."""

from __future__ import annotations

import ast
import functools

from sotacheck.core import pyast
from sotacheck.core.errors import InputError
from sotacheck.reruns.benchmarks.problem import Problem

__all__ = ["defined_test_methods", "prompt_imports", "watched_libraries"]


@functools.lru_cache(maxsize=2048)  # read once per task, not on every sample and repeat judged
def defined_test_methods(source: str, class_name: str = "TestCases") -> tuple[str, ...]:
    """The test methods ``unittest``'s loader would run for ``class_name`` of ``source``, sorted as it sorts them:
    every function whose name starts with ``test`` defined in the class or in a base class the module defines.

    Raises
    ------
    InputError
        The source does not parse, or defines no such class, or the class has no test method.
    """
    try:
        tree = pyast.parse(source)
    except SyntaxError as exc:
        raise InputError(f"the test module does not parse: line {exc.lineno}: {exc.msg}") from exc
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if class_name not in classes:
        raise InputError(f"the test module defines no class {class_name}")
    names: set[str] = set()
    pending, seen = [classes[class_name]], set()
    while pending:
        node = pending.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        names.update(item.name for item in node.body
                     if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"))
        pending.extend(classes[base.id] for base in node.bases if isinstance(base, ast.Name) and base.id in classes)
    if not names:
        raise InputError(f"{class_name} has no test method")
    return tuple(sorted(names))


@functools.lru_cache(maxsize=2048)  # read once per task, not on every sample and repeat judged
def watched_libraries(test_source: str, imports: str = "") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The modules the test module and the prompt's ``imports`` import (every dotted prefix of each, and for
    ``from X import Y`` also ``X.Y``, which the runner keeps only where it is a module), and every name the test
    module uses (identifiers and attribute names): what the seal watches in those libraries' namespaces, so that
    a program cannot rebind a library function the tests compare with (``_unittest_libraries.track``). Both sorted;
    empty for a source that does not parse (it then fails as a test module anyway)."""
    modules: set[str] = set()
    names: set[str] = set()
    for source, keep_names in ((test_source, True), (imports, False)):
        try:
            tree = pyast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    modules.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                parts = node.module.split(".")
                modules.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
                modules.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
            if not keep_names:
                continue
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.update(part for part in (node.name.split(".")[-1], node.asname) if part)
    return tuple(sorted(modules)), tuple(sorted(names))


def prompt_imports(problem: Problem) -> str:
    """The import statements at the top level of the task's ``code_prompt`` (``import pandas as pd``), one per
    line; empty where it does not parse (it ends with the signature: parsed with a ``pass`` body, as BigCodeBench's
    calibration completes it)."""
    try:
        tree = pyast.parse(f"{problem.starter_code or ''}\n    pass\n")
    except SyntaxError:
        return ""
    return "".join(ast.unparse(node) + "\n" for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))
