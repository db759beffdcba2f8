"""The public Python API (``sotacheck.api``): ``import sotacheck`` exposes all of it, and it gives the numbers
the CLI prints."""

from __future__ import annotations

import inspect
import subprocess
from pathlib import Path

import sotacheck
import sotacheck.api
from tests.sotacheck_command import SOTACHECK

RUNS = Path(__file__).resolve().parents[2] / "recordings"


def test_the_public_api_matches_the_cli_on_a_recorded_run() -> None:
    """`sotacheck.analyze` gives the numbers `sotacheck analyze --json` prints."""
    import json

    result = sotacheck.analyze([RUNS / "methods-qwen05b"], baseline="direct", resamples=200)
    done = subprocess.run([*SOTACHECK, "analyze", str(RUNS / "methods-qwen05b"), "--baseline", "direct",
                           "--resamples", "200", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert [a["pass_rate"] for a in printed["arms"]] == [a.pass_rate for a in result.arms]
    assert [c["pvalue"] for c in printed["comparisons"]] == [c.pvalue for c in result.comparisons]
    run = sotacheck.load_run(RUNS / "methods-qwen05b")
    assert run.manifest.format_version == 2 and set(run.outcomes["pipeline"]) >= {"direct", "codesim"}


def test_the_package_exports_the_whole_api() -> None:
    assert set(sotacheck.__all__) - {"__version__"} == set(sotacheck.api.__all__)
    assert all(getattr(sotacheck, name) is getattr(sotacheck.api, name) for name in sotacheck.api.__all__)


def test_gate_settings_defaults_are_the_gates_own() -> None:
    """`sotacheck.gate_settings` spells out GateSettings' fields for a Python user: its defaults must stay the
    gate's (the CLI's defaults are its own options)."""
    from dataclasses import fields

    from sotacheck.audit.gate import GateSettings

    assert sotacheck.gate_settings() == GateSettings()
    assert [f.name for f in fields(GateSettings)] == list(inspect.signature(sotacheck.gate_settings).parameters)
