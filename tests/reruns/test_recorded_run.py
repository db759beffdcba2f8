"""The recorded runs under recordings/ (the reference run: Direct, CoT and PyCapsule on the first 20 HumanEval
problems; the methods compared; the sweeps: CodeSim p×d, the gate's hold budget, PyCapsule's max_attempts;
APPS; the authors' released code) replay from their compressed stores, with no model, to the same outcome
tables; a run recorded with an earlier revision of a pipeline refuses to, in one line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.bigcodebench_environment import MISSING
from tests.bigcodebench_environment import PYTHON as BIGCODEBENCH_PYTHON
from tests.sotacheck_command import SOTACHECK

RUNS = Path(__file__).resolve().parents[2] / "recordings"


RECORDED = sorted(p.name for p in RUNS.iterdir() if (p / "store.sqlite.gz").is_file())
# Recorded before #19 gave MapCoder and CodeSim the released code's structure (pipeline revision 2): their
# stored calls are revision 1's, kept as the evidence they are (docs/fidelity.md, "Pipeline revisions").
RECORDED_WITH_EARLIER_REVISIONS = {"methods-qwen05b": ["codesim", "mapcoder"], "sweep-codesim-pd-qwen05b": ["codesim"]}


def stale_pipelines(name: str) -> list[str]:
    """The pipelines a recorded run ran at another revision than this sotacheck's (absent: revision 1)."""
    from sotacheck.reruns.spec import RunSpec

    meta = json.loads((RUNS / name / "run.json").read_text())
    recorded = meta.get("pipeline_revisions") or {}
    now = RunSpec.model_validate(meta["spec"]).pipeline_revisions()
    return sorted(p for p in now if recorded.get(p, 1) != now[p])


def _copy(name: str, tmp_path: Path) -> Path:
    copy = tmp_path / name
    copy.mkdir()
    for file in ("store.sqlite.gz", "outcomes.csv", "run.json"):
        shutil.copy(RUNS / name / file, copy / file)
    return copy


def _checkouts_missing(name: str) -> bool:
    """A run of the authors' code names their checkouts; its spec validates only where they are."""
    spec = json.loads((RUNS / name / "run.json").read_text())["spec"]
    return any(not Path(path).is_dir() for path in (spec.get("original_code") or {}).values())


def test_which_recorded_runs_predate_a_pipeline_revision() -> None:
    checkable = [name for name in RECORDED if not _checkouts_missing(name)]  # all of them beside ../shared
    assert {name: stale_pipelines(name) for name in checkable if stale_pipelines(name)} == RECORDED_WITH_EARLIER_REVISIONS


@pytest.mark.parametrize("name", sorted(RECORDED_WITH_EARLIER_REVISIONS))
def test_a_run_of_an_earlier_revision_refuses_to_replay_in_one_line(tmp_path, name) -> None:
    copy = _copy(name, tmp_path)
    done = subprocess.run([*SOTACHECK, "resume", str(copy), "--replay"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "changed since this run was recorded" in lines[0]
    for pipeline in RECORDED_WITH_EARLIER_REVISIONS[name]:
        assert f"{pipeline} (recorded with revision 1, this sotacheck has 2)" in lines[0]
    assert (copy / "outcomes.csv").read_bytes() == (RUNS / name / "outcomes.csv").read_bytes()  # nothing rewritten


# make test replays the smallest HumanEval run and the BigCodeBench slice (about 40 s: re-judging it needs the
# benchmark's environment, `make setup` builds it); make test-all every one (the decay sweep takes minutes).
FAST_REPLAYS = ("reference-qwen05b", "bigcodebench-methods-qwen05b")


def _replay_marks(name: str) -> list[pytest.MarkDecorator]:
    marks = [] if name in FAST_REPLAYS else [pytest.mark.slow]
    if json.loads((RUNS / name / "run.json").read_text())["dataset"]["name"].startswith("bigcodebench"):
        marks.append(pytest.mark.skipif(not BIGCODEBENCH_PYTHON, reason=MISSING))
    return marks


@pytest.mark.parametrize("name", [pytest.param(name, marks=_replay_marks(name))
                                  for name in RECORDED if name not in RECORDED_WITH_EARLIER_REVISIONS])
def test_recorded_run_replays_exactly(tmp_path, name) -> None:
    recorded = RUNS / name
    copy = _copy(name, tmp_path)
    done = subprocess.run([*SOTACHECK, "resume", str(copy), "--replay"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    calls = re.search(r"(\d+) model calls \((\d+) sent, (\d+) from the store\)", done.stdout)
    assert calls is not None and int(calls.group(2)) == 0 and int(calls.group(1)) == int(calls.group(3)) > 0
    before = pd.read_csv(recorded / "outcomes.csv").drop(columns=["wall_s"])
    after = pd.read_csv(copy / "outcomes.csv").drop(columns=["wall_s"])
    pd.testing.assert_frame_equal(before, after)
    # The call table the replay exports from the store is the one committed beside it.
    pd.testing.assert_frame_equal(pd.read_parquet(recorded / "calls.parquet"), pd.read_parquet(copy / "calls.parquet"))
    meta = json.loads((copy / "run.json").read_text())
    assert meta["leakage_check"]["clean"] is True
    assert meta["dataset"]["content_hash"] == json.loads((recorded / "run.json").read_text())["dataset"]["content_hash"]


def test_reference_run_has_its_90_calls(tmp_path) -> None:
    copy = tmp_path / "reference-qwen05b"
    shutil.copytree(RUNS / "reference-qwen05b", copy, ignore=shutil.ignore_patterns("store.sqlite", "server.log"))
    done = subprocess.run([*SOTACHECK, "resume", str(copy), "--replay"], capture_output=True, text=True, timeout=600)
    assert "90 model calls (0 sent, 90 from the store)" in done.stdout, done.stderr


def call_bound(pipeline: str, params: dict[str, object], exemplars: int | None = None) -> int:
    """The most calls a method may make on one problem, from the issue's and the papers' formulas (not from the
    code): Direct/CoT (ours and theirs) and Analogical 1; SelfPlanning 2 (plan, code); PyCapsule
    1 + max_attempts; CodeSim p·(4 + d); MapCoder 1 + 2m + m·(1 + t) with m the exemplars retrieval gave back
    (k asked for; the released code uses every one returned); the gate its base's bound plus one call per
    hold."""
    number = {name: int(value) for name, value in params.items() if isinstance(value, int)}
    arm = f"{pipeline} {params}"
    method = pipeline.removesuffix("@original")
    if method in ("direct", "cot", "analogical"):
        return 1
    if method == "selfplanning":
        return 2
    if method == "pycapsule":
        return 1 + number["max_attempts"]
    if method == "codesim":
        return number["p"] * (4 + number["d"])
    if method == "mapcoder":
        m = number["k"] if exemplars is None else exemplars
        return 1 + 2 * m + m * (1 + number["t"])
    if pipeline == "gate" and params["base"] in ("direct", "cot"):
        return 1 + number["hold_budget"]
    raise AssertionError(f"no call bound known for arm {arm!r}")


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if (p / "outcomes.csv").is_file()))
def test_recorded_calls_stay_within_each_methods_bound(name) -> None:
    from sotacheck.core.arms import parameters_of
    from sotacheck.core.rundir import load_run

    table = load_run(RUNS / name).outcomes
    exemplars: dict[tuple[str, str, int], int] = {}
    if (RUNS / name / "calls.parquet").is_file():  # MapCoder: one planning call per exemplar returned
        calls = pd.read_parquet(RUNS / name / "calls.parquet")
        planning = calls[calls["stage"].isin(["plan", "input_for_problem_planning"])]
        exemplars = planning.groupby(["arm", "problem", "repeat"]).size().to_dict()
    bounds = pd.Series([call_bound(row["pipeline"], parameters_of(row),
                                   exemplars.get((row["arm"], row["problem"], row["repeat"])))
                        if row["pipeline"].startswith("mapcoder") else call_bound(row["pipeline"], parameters_of(row))
                        for row in table.to_dict("records")], index=table.index)
    over = table[table["calls"] > bounds]
    assert over.empty, over[["arm", "problem", "calls"]].to_string()
    assert (table["calls"] >= 1).all()
