"""sotacheck's public Python API: what each command of the ``sotacheck`` CLI does, callable from Python.

Every function takes its first argument by position and the others by keyword only, validates them, and
raises :class:`sotacheck.core.errors.SotacheckError` (or a subclass) with a one-line message that names the
parameter in backticks (``\\`format\\` must be one of ...``); the CLI prints that line with the parameter's
flag. Heavy modules are imported inside the functions, so that ``import sotacheck`` stays cheap. Every
function's docstring has an example that runs as a doctest on the data bundled with sotacheck
(``tests/test_public_names.py``; or ``pytest --doctest-modules sotacheck/api``).

The functions live in one module per group of commands: :mod:`.analysis` (runs, analysis, tables, the
report, the leaderboard, the gate), :mod:`.claims`, :mod:`.judging` (benchmarks and the sandboxed judge),
:mod:`.reruns` (running pipelines) and :mod:`.rundirs` (importing, migrating, checking run directories).
"""

from __future__ import annotations

from sotacheck.api.analysis import analyze, gate, leaderboard, load_run, report, table
from sotacheck.api.claims import audit_claims, claims_schema, compare
from sotacheck.api.judging import audit_tests, datasets, flaky_problems, judge
from sotacheck.api.reruns import rerun, resume, sweep_spec
from sotacheck.api.rundirs import check_leakage, import_logs, migrate

__all__ = ["analyze", "audit_claims", "audit_tests", "check_leakage", "claims_schema", "compare", "datasets",
           "flaky_problems", "gate", "import_logs", "judge", "leaderboard", "load_run", "migrate", "report", "rerun",
           "resume", "sweep_spec", "table"]

