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
SOTACHECK = [sys.executable, "-m", "reruns.cli"]


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
    meta = json.loads((copy / "run.json").read_text())
    assert meta["leakage_check"]["clean"] is True
    assert meta["dataset"]["content_hash"] == json.loads((recorded / "run.json").read_text())["dataset"]["content_hash"]


def test_reference_run_has_its_90_calls(tmp_path) -> None:
    copy = tmp_path / "reference-qwen05b"
    shutil.copytree(RUNS / "reference-qwen05b", copy, ignore=shutil.ignore_patterns("store.sqlite", "server.log"))
    done = subprocess.run([*SOTACHECK, "resume", str(copy), "--replay"], capture_output=True, text=True, timeout=600)
    assert "90 model calls (0 sent, 90 from the store)" in done.stdout, done.stderr
