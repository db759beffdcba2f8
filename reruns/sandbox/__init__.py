"""The execution boundary: run candidate code against tests in confined child processes.

The names below are imported on first use (PEP 562), so that importing one light submodule (the
launcher's ``reruns.sandbox.supervisor``) does not import them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sotacheck.reruns.sandbox.executor import execute
    from sotacheck.reruns.sandbox.judge import Verdict, judge_hidden, judge_many, run_visible
    from sotacheck.reruns.sandbox.pool import SandboxPool
    from sotacheck.reruns.sandbox.program import assemble_program
    from sotacheck.reruns.sandbox.result import STATUSES, ExecutionResult, SandboxLimits, TestResult

_HOME = {"execute": "executor", "Verdict": "judge", "judge_hidden": "judge", "judge_many": "judge",
         "run_visible": "judge", "SandboxPool": "pool", "assemble_program": "program", "STATUSES": "result",
         "ExecutionResult": "result", "SandboxLimits": "result", "TestResult": "result"}

__all__ = ["STATUSES", "ExecutionResult", "SandboxLimits", "SandboxPool", "TestResult", "Verdict",
           "assemble_program", "execute", "judge_hidden", "judge_many", "run_visible"]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
