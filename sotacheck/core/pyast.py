"""``ast.parse`` that is safe to call from several threads of one process.

CPython (3.11 here) keeps the counter with which the AST constructor checks its recursion in per-interpreter
state, not per thread. When a collection inside one thread's ``ast.parse`` runs Python code (a ``gc``
callback, a finalizer) and another thread parses meanwhile, the first parse ends with
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905 describes the counter).
sotacheck parses in several threads at once: the judge reads prompts on its pool's threads
(``sandbox.completion``) while the event loop reads programs and the authors' checkouts; a replay of a run of
``@original`` pipelines failed so. Every parse in sotacheck's own process goes through :func:`parse`, which
holds one lock: under the GIL two parses never ran in parallel anyway, so the lock costs no throughput.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_PARSING = threading.RLock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one thread at a time."""
    with _PARSING:
        return ast.parse(source, filename)


def literal_eval(source: str | ast.AST) -> Any:
    """``ast.literal_eval(source)``, its parse one thread at a time (a node already parsed needs no lock)."""
    if isinstance(source, ast.AST):
        return ast.literal_eval(source)
    with _PARSING:
        tree = ast.parse(source.lstrip(" \t"), mode="eval")
    return ast.literal_eval(tree)
