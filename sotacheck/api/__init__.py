"""sotacheck's public Python API: what each command of the ``sotacheck`` CLI does, callable from Python.

Every function takes its first argument by position and the others by keyword only, validates them, and
raises :class:`sotacheck.core.errors.SotacheckError` (or a subclass) with a one-line message that names the
parameter in backticks ("`format` must be one of latex, markdown, csv"); the CLI prints that line with the
parameter's flag ("--format must be ..."). Heavy modules are imported inside the functions, and the
functions' modules on first use, so that ``import sotacheck`` and ``sotacheck --help`` stay cheap. Every
function's docstring has an example that runs as a doctest on the data bundled with sotacheck
(``tests/test_public_names.py``; or ``pytest --doctest-modules sotacheck/api``).

The functions live in one module per group of commands: :mod:`.analysis` (runs, analysis, tables, the
report, the leaderboard, the gate), :mod:`.claims`, :mod:`.judging` (benchmarks and the sandboxed judge),
:mod:`.reruns` (running pipelines) and :mod:`.rundirs` (importing, migrating, checking run directories).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sotacheck.api.analysis import analyze, gate, leaderboard, load_run, report, table
    from sotacheck.api.claims import audit_claims, claims_schema, compare
    from sotacheck.api.judging import audit_tests, datasets, flaky_problems, judge
    from sotacheck.api.reruns import rerun, resume, sweep_spec
    from sotacheck.api.rundirs import check_leakage, import_logs, migrate

_HOME = {"analyze": "analysis", "gate": "analysis", "leaderboard": "analysis", "load_run": "analysis",
         "report": "analysis", "table": "analysis", "audit_claims": "claims", "claims_schema": "claims",
         "compare": "claims", "audit_tests": "judging", "datasets": "judging", "flaky_problems": "judging",
         "judge": "judging", "rerun": "reruns", "resume": "reruns", "sweep_spec": "reruns",
         "check_leakage": "rundirs", "import_logs": "rundirs", "migrate": "rundirs"}

__all__ = ["analyze", "audit_claims", "audit_tests", "check_leakage", "claims_schema", "compare", "datasets",
           "flaky_problems", "gate", "import_logs", "judge", "leaderboard", "load_run", "migrate", "report", "rerun",
           "resume", "sweep_spec", "table"]


def __getattr__(name: str) -> Any:
    """Each function is imported from its module on first use (PEP 562): the CLI imports this package to
    start, and ``sotacheck --help`` must not read the five modules."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
