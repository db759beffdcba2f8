"""Local and Ray executors on the embedded model (llama.cpp server, Qwen2.5-Coder-0.5B): the same run (same
seeds) gives identical outcome tables and byte-identical replies. Needs `make setup` (the `local` and `ray`
extras). Each run starts its own server; the server evaluates every prompt from an empty cache, so the
order in which Ray's workers reach it cannot change a reply."""

from __future__ import annotations

import importlib.util
import sqlite3
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.reruns.test_harness_recovery import outcomes
from tests.sotacheck_command import SOTACHECK

from .test_cluster import DRIVER_CWD, RAY_ENV

pytestmark = [pytest.mark.slow, pytest.mark.model, pytest.mark.ray,
              pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="the embedded model needs the `local` extra (make setup)")]


def replies(run: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(run / "store.sqlite") as db:
        return db.execute("SELECT problem, response FROM calls ORDER BY problem").fetchall()


def test_local_and_ray_agree_on_the_embedded_model(tmp_path) -> None:
    for executor in ("local", "ray"):
        done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model", "local",
                               "--limit", "3", "--seed", "7", "--max-tokens", "256", "--concurrency", "1",
                               "--out", str(tmp_path / executor), "--executor", executor],
                              capture_output=True, text=True, timeout=900, env=RAY_ENV, cwd=DRIVER_CWD)
        assert done.returncode == 0, done.stderr[-2000:]
    pd.testing.assert_frame_equal(outcomes(tmp_path / "local"), outcomes(tmp_path / "ray"))
    assert replies(tmp_path / "local") == replies(tmp_path / "ray")
    assert len(replies(tmp_path / "local")) == 3
