"""Sweeps share their work through the response cache, and give the same outcomes as separate runs.
Driven by the scripted loopback endpoint (harness mechanics, not evidence about a method)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from sotacheck.reruns.model.loopback import LoopbackServer
from tests.sotacheck_command import SOTACHECK

from .test_harness_recovery import responder  # noqa: F401  (the scripted-model fixture)

COMMON = ["--dataset", "humaneval", "--limit", "6", "--seed", "3", "--model-name", "loopback"]


def table(run: Path) -> pd.DataFrame:
    return pd.read_csv(run / "outcomes.csv").drop(columns=["wall_s"]).sort_values(["arm", "problem"]).reset_index(drop=True)


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
def test_sweep_shares_calls_and_matches_separate_runs(tmp_path, responder) -> None:  # noqa: F811
    with LoopbackServer(responder) as server:
        swept = subprocess.run([*SOTACHECK, "sweep", "--pipeline", "pycapsule", "--grid", "max_attempts=0..3",
                                "--model", server.base_url, *COMMON, "--out", str(tmp_path / "sweep")],
                               capture_output=True, text=True, timeout=300)
        assert swept.returncode == 0, swept.stderr
        requested, made = map(int, re.search(r"(\d+) calls requested, (\d+) made", swept.stdout).groups())
        assert made < requested and made == len(server.log.answered())
        separate = {}
        for attempts in (0, 3):
            out = tmp_path / f"alone-{attempts}"
            done = subprocess.run([*SOTACHECK, "rerun", "--pipelines", "pycapsule", "--param",
                                   f"pycapsule.max_attempts={attempts}", "--model", server.base_url, *COMMON,
                                   "--out", str(out)], capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
            separate[attempts] = table(out)
    sweep = table(tmp_path / "sweep")
    assert sorted(sweep["arm"].unique()) == [f"pycapsule[max_attempts={n}]" for n in range(4)]
    for attempts, alone in separate.items():
        part = sweep[sweep["arm"] == f"pycapsule[max_attempts={attempts}]"].reset_index(drop=True)
        pd.testing.assert_frame_equal(part, alone, check_dtype=False)


def test_bad_grids_fail_before_any_model_call(tmp_path, responder) -> None:  # noqa: F811
    cases = {
        ("p=",): "no values",
        ("",): "expected NAME=V1,V2",
        ("p=1,2", "q=3"): "q",
        ("p=1..30", "d=1..20"): "600 settings (> 500); pass --yes",
    }
    with LoopbackServer(responder) as server:
        for grid, message in cases.items():
            args = [arg for axis in grid for arg in ("--grid", axis)]
            done = subprocess.run([*SOTACHECK, "sweep", "--pipeline", "codesim", *args, "--model", server.base_url,
                                   *COMMON, "--out", str(tmp_path / "sweep")], capture_output=True, text=True,
                                  timeout=120)
            assert done.returncode == 2, (grid, done.stderr)
            assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, (grid, done.stderr)
        assert server.log.entries == []
    assert not (tmp_path / "sweep").exists()
