"""The recorded runs under data/runs/ (the reference run: Direct, CoT and PyCapsule on the first 20 HumanEval
problems; the sweeps: CodeSim p×d, the gate's hold budget, PyCapsule's max_attempts) replay from their
compressed stores, with no model, to the same outcome tables."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

RUNS = Path(__file__).resolve().parents[2] / "data" / "runs"
SOTACHECK = [sys.executable, "-m", "sotacheck.cli"]


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if (p / "store.sqlite.gz").is_file()))
def test_recorded_run_replays_exactly(tmp_path, name) -> None:
    recorded = RUNS / name
    copy = tmp_path / name
    copy.mkdir()
    for file in ("store.sqlite.gz", "outcomes.csv", "run.json"):
        shutil.copy(recorded / file, copy / file)
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


def call_bound(pipeline: str, params: dict[str, object]) -> int:
    """The most calls a method may make on one problem, from the issue's formulas (not from the code):
    Direct/CoT 1; PyCapsule 1 + max_attempts; CodeSim p·(4 + d); MapCoder 1 + 2k + k·(1 + t); the gate
    its base's bound plus one call per hold."""
    number = {name: int(value) for name, value in params.items() if isinstance(value, int)}
    arm = f"{pipeline} {params}"
    if pipeline in ("direct", "cot"):
        return 1
    if pipeline == "pycapsule":
        return 1 + number["max_attempts"]
    if pipeline == "codesim":
        return number["p"] * (4 + number["d"])
    if pipeline == "mapcoder":
        return 1 + 2 * number["k"] + number["k"] * (1 + number["t"])
    if pipeline == "gate" and params["base"] in ("direct", "cot"):
        return 1 + number["hold_budget"]
    raise AssertionError(f"no call bound known for arm {arm!r}")


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if (p / "outcomes.csv").is_file()))
def test_recorded_calls_stay_within_each_methods_bound(name) -> None:
    from sotacheck.core.arms import parameters_of
    from sotacheck.core.rundir import load_run

    table = load_run(RUNS / name).outcomes
    bounds = pd.Series([call_bound(row["pipeline"], parameters_of(row)) for row in table.to_dict("records")],
                       index=table.index)
    over = table[table["calls"] > bounds]
    assert over.empty, over[["arm", "problem", "calls"]].to_string()
    assert (table["calls"] >= 1).all()
