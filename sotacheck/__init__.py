"""sotacheck: rerun LLM code-generation methods under one harness and audit their claimed margins.

The public Python API (each documented in :mod:`sotacheck.api`)::

    import sotacheck
    run = sotacheck.load_run("runs/methods")
    result = sotacheck.analyze([run], baseline="direct")
    board = sotacheck.leaderboard(["runs/a", "runs/b"])   # rank claims: who is tied with #1
    sotacheck.report([run], output="report.html")
    verdict = sotacheck.gate("runs/main", candidate="runs/branch")
    judged = sotacheck.judge("humaneval", canonical=True)
    summary = sotacheck.rerun(spec, out="runs/new")

The names are loaded on first use, so that importing one part of sotacheck (the judge's sandbox, say)
does not import the statistics and the report renderer as well.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# The editable install is a tree of links laid out as the package (Makefile, setup-core). A Python started in
# the checkout's root (`python -m`, `python -c`, Ray's workers) finds this folder first on sys.path instead,
# where audit/, reruns/, reports/ and data/ are not below it: the package's search path then takes the
# other `sotacheck` folders on sys.path too (the link tree's), so that `sotacheck.audit` is still found.
if not os.path.isdir(os.path.join(os.path.dirname(__file__), "audit")):
    from pkgutil import extend_path

    __path__ = extend_path(__path__, __name__)

if TYPE_CHECKING:
    from sotacheck.api import (
        analyze,
        check_claims,
        check_leakage,
        claims_schema,
        compare,
        dataset_card,
        datasets,
        default_workers,
        engine_choice,
        find_suspect_tests,
        flaky_problems,
        gate,
        gate_settings,
        import_kinds,
        import_logs,
        judge,
        leaderboard,
        load_run,
        load_spec,
        local_server,
        migrate,
        parse_original_code,
        pipeline_params,
        render_comparison,
        render_gate,
        render_gate_error,
        render_leaderboard,
        render_verdicts,
        report,
        rerun,
        resume,
        run_spec,
        sweep_spec,
        table,
        warm_up_sandbox,
    )

# The names of sotacheck.api (tests/api/test_public_api.py checks that the two lists agree).
__all__ = [
    "__version__",
    "analyze",
    "check_claims",
    "check_leakage",
    "claims_schema",
    "compare",
    "dataset_card",
    "datasets",
    "default_workers",
    "engine_choice",
    "find_suspect_tests",
    "flaky_problems",
    "gate",
    "gate_settings",
    "import_kinds",
    "import_logs",
    "judge",
    "leaderboard",
    "load_run",
    "load_spec",
    "local_server",
    "migrate",
    "parse_original_code",
    "pipeline_params",
    "render_comparison",
    "render_gate",
    "render_gate_error",
    "render_leaderboard",
    "render_verdicts",
    "report",
    "rerun",
    "resume",
    "run_spec",
    "sweep_spec",
    "table",
    "warm_up_sandbox",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from sotacheck.core.version import version

        return version()
    if name in __all__:
        from sotacheck import api

        return getattr(api, name)
    from sotacheck.api import RENAMED

    if name in RENAMED:  # an old name of #47's renames, for one release
        from sotacheck.core.deprecation import warn_renamed

        warn_renamed(f"sotacheck.{name}", f"sotacheck.{RENAMED[name]}")
        return __getattr__(RENAMED[name])
    raise AttributeError(f"module 'sotacheck' has no attribute {name!r}")
