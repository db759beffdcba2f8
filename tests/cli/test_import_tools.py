"""``sotacheck import`` for the tools' logs (evalplus, bigcodebench, lm-eval, inspect): listed in --help, written as run
directories that ``analyze`` reads, and bad input as one line naming the file, with nothing written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sotacheck import api
from sotacheck.audit.importers import kind_names
from sotacheck.core.errors import UsageError
from tests.sotacheck_command import SOTACHECK

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests/fixtures"
EVALPLUS = REPO / "data/published/mapcoder/ChatGPT/HumanEvalPlus"
INSPECT_EVAL = next((FIXTURES / "inspect/logs").glob("*.eval"))


def _sotacheck(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SOTACHECK, *args], capture_output=True, text=True, timeout=300)


def test_help_lists_every_kind() -> None:
    done = _sotacheck("import", "--help")
    assert done.returncode == 0
    for kind in kind_names():
        assert f"\n    {kind} " in done.stdout, kind
    assert {"evalplus", "bigcodebench", "lm-eval", "inspect"} <= set(kind_names())


@pytest.mark.parametrize(("kind", "path", "cells"), [
    ("evalplus", EVALPLUS, 4 * 2 * 164),
    ("bigcodebench", FIXTURES / "bigcodebench", 20 + 20 + 3 * 20),
    pytest.param("lm-eval", FIXTURES / "lmeval/logs", 5, marks=pytest.mark.slow),  # in-process: importers/test_lmeval_inspect
    pytest.param("inspect", INSPECT_EVAL, 10, marks=pytest.mark.slow),
])
def test_import_then_analyze(tmp_path: Path, kind: str, path: Path, cells: int) -> None:
    out = tmp_path / "run"
    done = _sotacheck("import", kind, str(path), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out}: {cells} cells")
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["source"] == kind
    assert all(entry["model"] for entry in manifest["files"])  # the model each log names (studies read it)
    analysed = api.analyze([out], resamples=200)
    assert analysed is not None
    if kind == "lm-eval":  # the tool's pass rate, through the whole path
        assert _sotacheck("analyze", str(out), "--json").returncode == 0
        results = json.loads(next(path.rglob("results_*.json")).read_text())
        reported = results["results"]["sotacheck_humaneval_first5"]["pass_at_1,none"]
        assert api.load_run(out).outcomes["passed"].mean() == pytest.approx(reported, abs=1e-12)


def test_dataset_and_arm_options_for_a_tool_log(tmp_path: Path) -> None:
    run, _ = api.import_logs("lm-eval", path=FIXTURES / "lmeval/logs", out=tmp_path / "run", arm="direct-lmeval",
                             dataset="humaneval")
    assert set(run.outcomes["arm"]) == {"direct-lmeval"} and set(run.outcomes["dataset"]) == {"humaneval"}
    with pytest.raises(UsageError, match="`arm` names one arm, but the folder holds 4"):
        api.import_logs("evalplus", path=EVALPLUS, out=tmp_path / "other", arm="x")


def _left_over(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir())


@pytest.mark.parametrize(("kind", "make", "message"), [
    ("inspect", lambda d: _truncated(d), r"cut\.eval: cannot read as an Inspect log"),
    ("evalplus", lambda d: next((FIXTURES / "lmeval/logs").rglob("results_*.json")),
     r"results_.*\.json: not an EvalPlus eval_results\.json .*lm-eval"),
    ("lm-eval", lambda d: INSPECT_EVAL, r"\.eval: not an lm-eval sample log .*'inspect'"),
    ("inspect", lambda d: next((FIXTURES / "lmeval/logs").rglob("samples_*.jsonl")),
     r"samples_.*\.jsonl: not an Inspect log .*lm-eval"),
])
def test_bad_input_is_one_line_and_nothing_is_written(tmp_path: Path, kind: str, make, message: str) -> None:
    import re

    source = tmp_path / "in"
    source.mkdir()
    path = make(source)
    runs = tmp_path / "runs"
    runs.mkdir()
    done = _sotacheck("import", kind, str(path), "--out", str(runs / "new"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(message, lines[0]), done.stderr
    assert lines[0].startswith("sotacheck: error: ") and str(path) in lines[0]
    assert _left_over(runs) == []  # no run directory, no staging directory


def _truncated(folder: Path) -> Path:
    data = INSPECT_EVAL.read_bytes()
    path = folder / "cut.eval"
    path.write_bytes(data[: len(data) * 2 // 3])
    return path


def test_a_failed_import_leaves_an_existing_run_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "run"
    api.import_logs("inspect", path=INSPECT_EVAL, out=out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    done = _sotacheck("import", "inspect", str(_truncated(tmp_path)), "--out", str(out), "--force")
    assert done.returncode == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.eval", "run"]
