"""The execution boundary: run candidate code against tests in confined child processes.

The judge's side: ``execution`` (one execution: a job to a supervisor, its reply as a result), ``submission``
(a problem's submission against its hidden or visible tests), ``completion`` (how a completion becomes the
program judged), ``stdin_programs`` (a standard-input program, test by test), ``pool``, ``slots``,
``supervisor``, ``result``. The child processes' side, the scripts the supervisor and the candidate processes
run, is ``child/`` (its README.md).

The names below are imported on first use (PEP 562), so that importing one light submodule (the
launcher's ``reruns.sandbox.supervisor``) does not import them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sotacheck.reruns.sandbox.completion import assemble_program
    from sotacheck.reruns.sandbox.execution import execute
    from sotacheck.reruns.sandbox.pool import SandboxPool
    from sotacheck.reruns.sandbox.result import STATUSES, ExecutionResult, SandboxLimits, TestResult
    from sotacheck.reruns.sandbox.submission import JudgedSubmission, judge_hidden, judge_many, run_visible

_HOME = {"execute": "execution", "JudgedSubmission": "submission", "judge_hidden": "submission", "judge_many": "submission",
         "run_visible": "submission", "SandboxPool": "pool", "assemble_program": "completion", "STATUSES": "result",
         "ExecutionResult": "result", "SandboxLimits": "result", "TestResult": "result"}

__all__ = ["STATUSES", "ExecutionResult", "JudgedSubmission", "SandboxLimits", "SandboxPool", "TestResult",
           "assemble_program", "execute", "judge_hidden", "judge_many", "run_visible"]
_RENAMED = {"Verdict": "JudgedSubmission"}  # old → new (#47), for one release


def __getattr__(name: str) -> Any:
    if name in _RENAMED:  # the deprecation module only then: a light submodule's import stays light
        from sotacheck.core.deprecation import warn_renamed

        warn_renamed(f"{__name__}.{name}", f"{__name__}.{_RENAMED[name]}")
        name = _RENAMED[name]
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
