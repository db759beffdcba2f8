"""sotacheck's public Python API: what each command of the ``sotacheck`` CLI does, callable from Python.

Every function takes its first argument by position and the others by keyword only, validates them, and
raises :class:`sotacheck.core.errors.SotacheckError` (or a subclass) with a one-line message that names the
parameter in backticks ("`format` must be one of latex, markdown, csv"); the CLI prints that line with the
parameter's flag ("--format must be ..."). Heavy modules are imported inside the functions, and the
functions' modules on first use, so that ``import sotacheck`` and ``sotacheck --help`` stay cheap. Every
function's docstring has an example that runs as a doctest on the data bundled with sotacheck
(``tests/test_public_names.py``; or ``pytest --doctest-modules sotacheck/api``).

The functions live in one module per group of commands: :mod:`.analysis` (runs, analysis, tables, the
report, the leaderboard), :mod:`.gating` (the CI gate), :mod:`.claims`, :mod:`.judging` (benchmarks and the
sandboxed judge), :mod:`.sandbox` (its default size and early start, for the launcher), :mod:`.reruns` (run
specs and running pipelines), :mod:`.serving` (the embedded model's engine and server), :mod:`.rundirs`
(importing, migrating, checking run directories) and :mod:`.rendering` (results as the text the CLI prints).
The CLI reaches the rest of sotacheck only through these (and :mod:`sotacheck.core`): an import contract in
pyproject.toml and ``tests/test_import_contract.py`` keep it so.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sotacheck.core.deprecation import renamed_names

if TYPE_CHECKING:
    from sotacheck.api.analysis import analyze, leaderboard, load_run, report, table
    from sotacheck.api.claims import check_claims, claims_schema, compare
    from sotacheck.api.gating import gate, gate_settings
    from sotacheck.api.judging import dataset_card, datasets, find_suspect_tests, flaky_problems, judge
    from sotacheck.api.rendering import render_comparison, render_gate, render_gate_error, render_leaderboard, render_verdicts
    from sotacheck.api.reruns import load_spec, parse_original_code, pipeline_params, rerun, resume, run_spec, sweep_spec
    from sotacheck.api.rundirs import check_leakage, import_kinds, import_logs, migrate
    from sotacheck.api.sandbox import default_workers, warm_up_sandbox
    from sotacheck.api.serving import engine_choice, local_server

_MODULES = {"analysis": ("analyze", "leaderboard", "load_run", "report", "table"),
            "claims": ("check_claims", "claims_schema", "compare"),
            "gating": ("gate", "gate_settings"),
            "judging": ("find_suspect_tests", "dataset_card", "datasets", "flaky_problems", "judge"),
            "rendering": ("render_comparison", "render_gate", "render_gate_error", "render_leaderboard", "render_verdicts"),
            "reruns": ("load_spec", "parse_original_code", "pipeline_params", "rerun", "resume", "run_spec", "sweep_spec"),
            "rundirs": ("check_leakage", "import_kinds", "import_logs", "migrate"),
            "sandbox": ("default_workers", "warm_up_sandbox"),
            "serving": ("engine_choice", "local_server")}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
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


def _lazy(name: str) -> Any:
    """Each function is imported from its module on first use (PEP 562): the CLI imports this package to
    start, and ``sotacheck --help`` must not read its modules."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value


RENAMED = {"audit_claims": "check_claims", "audit_tests": "find_suspect_tests"}  # old → new (#47), for one release
__getattr__ = renamed_names(__name__, RENAMED, globals(), fallback=_lazy)
