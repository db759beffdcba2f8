"""The recorded run under data/runs/ (Direct, CoT and PyCapsule with the embedded model on the first 20
HumanEval problems) replays from its compressed store, with no model, to the same outcome table."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

RECORDED = Path(__file__).resolve().parents[2] / "data" / "runs" / "reference-qwen05b"
SOTACHECK = [sys.executable, "-m", "reruns.cli"]


def test_recorded_run_replays_exactly(tmp_path) -> None:
    copy = tmp_path / "reference-qwen05b"
    copy.mkdir()
    for name in ("store.sqlite.gz", "outcomes.csv", "run.json"):
        shutil.copy(RECORDED / name, copy / name)
    done = subprocess.run([*SOTACHECK, "resume", str(copy), "--replay"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "90 model calls (0 sent, 90 from the store)" in done.stdout
    before = pd.read_csv(RECORDED / "outcomes.csv").drop(columns=["wall_s"])
    after = pd.read_csv(copy / "outcomes.csv").drop(columns=["wall_s"])
    pd.testing.assert_frame_equal(before, after)
    meta = json.loads((copy / "run.json").read_text())
    assert meta["leakage_check"]["clean"] is True
    assert meta["dataset"]["content_hash"] == json.loads((RECORDED / "run.json").read_text())["dataset"]["content_hash"]
