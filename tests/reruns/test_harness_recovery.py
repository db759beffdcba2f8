"""Crash recovery, replay and faults, with the run driven as a user drives it (the CLI, in a subprocess).

A loopback OpenAI-compatible endpoint answers instantly with a scripted reply (canonical code, broken for
every third seed): it drives the harness, it is not evidence about any method. The real-model variants
put the same loopback, as a proxy, in front of the embedded llama.cpp server.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.crashpoints import POINTS
from sotacheck.reruns.model.loopback import LoopbackServer, canonical_responder, request_key
from tests.sotacheck_command import SOTACHECK

LIMIT = 8
# 24 kill points: up to the 14th hit of each point, but only the 5th of a group commit holding several cells'
# records. How many such commits a run makes depends on timing; with that point armed the committer waits
# 5 ms for other cells' records to join, and this scenario then makes 14-20 (3-12 without the wait).
TRIALS = [(point, k) for point in POINTS for k in ((1, 2, 3, 5) if point == "during_group_commit" else (1, 4, 9, 14))]
FAST_TRIALS = {("after_send", 4), ("during_group_commit", 3)}


@pytest.fixture(scope="module")
def responder(data_dir):
    dataset = load_dataset("humaneval", data_dir)
    return canonical_responder({p.entry_point: p.prompt + (p.canonical_solution or "") for p in dataset.problems})


def rerun_args(url: str, out: Path, limit: int = LIMIT, pipelines: str = "direct,cot") -> list[str]:
    return ["rerun", "--dataset", "humaneval", "--pipelines", pipelines, "--model", url, "--model-name", "loopback",
            "--limit", str(limit), "--seed", "7", "--concurrency", "4", "--out", str(out)]


def cli(args: list[str], crash_at: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SOTACHECK_CRASH_AT"}
    if crash_at:
        env["SOTACHECK_CRASH_AT"] = crash_at
    return subprocess.run([*SOTACHECK, *args], capture_output=True, text=True, timeout=timeout, env=env)


def outcomes(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "outcomes.csv").drop(columns=["wall_s"]).sort_values(
        ["arm", "problem", "repeat"]).reset_index(drop=True)


def stored_calls(run_dir: Path) -> list[tuple[str, str, str, float | None]]:
    """(call id, state, server-side request key, time the response was saved)."""
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        rows = db.execute("SELECT call_id, state, request, finished_at FROM calls").fetchall()
    calls = []
    for call_id, state, request, finished in rows:
        body = json.loads(request)
        calls.append((call_id, state, request_key({"messages": body["messages"], "seed": body["seed"]}), finished))
    return calls


def assert_nothing_lost_or_duplicated(run_dir: Path, reference: pd.DataFrame, server: LoopbackServer) -> None:
    pd.testing.assert_frame_equal(outcomes(run_dir), reference)
    calls = stored_calls(run_dir)
    assert len(calls) == len(reference)  # one call per cell for direct and cot, no duplicate records
    assert {state for _, state, _, _ in calls} == {"received"}
    received_at = {key: finished for _, _, key, finished in calls}
    # no call was sent again after its response had been saved
    late = [(t, key) for t, key in server.log.answered() if t > received_at[key]]
    assert late == []


@pytest.fixture(scope="module")
def reference(tmp_path_factory, responder) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("ref") / "run"
    with LoopbackServer(responder) as server:
        done = cli(rerun_args(server.base_url, out))
        assert done.returncode == 0, done.stderr
        assert len(server.log.answered()) == 2 * LIMIT
    frame = outcomes(out)
    assert 0 < frame["passed"].sum() < len(frame)  # both verdicts occur
    return frame


# make test kills at two points (one inside a group commit); make test-all at all of them.
@pytest.mark.parametrize(("point", "k"), [pytest.param(point, k, marks=[] if (point, k) in FAST_TRIALS else pytest.mark.slow)
                                          for point, k in TRIALS])
def test_sigkill_then_resume_gives_the_uninterrupted_outcomes(tmp_path, responder, reference, point, k) -> None:
    out = tmp_path / "run"
    with LoopbackServer(responder) as server:
        crashed = cli(rerun_args(server.base_url, out), crash_at=f"{point}:{k}")
        assert crashed.returncode == -9, (crashed.returncode, crashed.stderr[-500:])
        assert not (out / "outcomes.csv").exists()
        resumed = cli(["resume", str(out)])
        assert resumed.returncode == 0, resumed.stderr
        assert_nothing_lost_or_duplicated(out, reference, server)


def judged_and_finished(run_dir: Path) -> tuple[set[tuple[str, str, int]], set[tuple[str, str, int]]]:
    """The cells with a hidden-test observation, and the cells with an outcome judged on the hidden tests."""
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        judged = set(db.execute("SELECT arm, problem, repeat FROM observations WHERE kind = 'hidden_tests'"))
        finished = {(arm, problem, repeat) for arm, problem, repeat, detail in
                    db.execute("SELECT arm, problem, repeat, detail FROM cells") if "judge_status" in json.loads(detail)}
    return judged, finished


def test_a_verdict_and_its_judge_record_are_written_together(tmp_path, responder, reference) -> None:
    """Outcomes are committed later, grouped (``group_commit.commit_later``): a kill inside such a commit loses
    the verdicts and their hidden-test observations together, and the resume judges those cells again."""
    out = tmp_path / "run"
    with LoopbackServer(responder) as server:
        crashed = cli(rerun_args(server.base_url, out), crash_at="during_outcome_write:3")
        assert crashed.returncode == -9, (crashed.returncode, crashed.stderr[-500:])
        judged, finished = judged_and_finished(out)
        assert judged == finished and len(finished) < 2 * LIMIT
        resumed = cli(["resume", str(out)])
        assert resumed.returncode == 0, resumed.stderr
        assert_nothing_lost_or_duplicated(out, reference, server)
    judged, finished = judged_and_finished(out)
    assert judged == finished and len(finished) == 2 * LIMIT


def test_replay_with_the_server_stopped_reproduces_the_outcomes(tmp_path, responder, reference) -> None:
    out = tmp_path / "run"
    with LoopbackServer(responder) as server:
        assert cli(rerun_args(server.base_url, out)).returncode == 0
    replayed = cli(["resume", str(out), "--replay"])  # the endpoint is gone now
    assert replayed.returncode == 0, replayed.stderr
    assert "0 sent" in replayed.stdout
    pd.testing.assert_frame_equal(outcomes(out), reference)


def test_replay_miss_is_an_error_naming_the_call(tmp_path, responder) -> None:
    out = tmp_path / "run"
    with LoopbackServer(responder) as server:
        assert cli(rerun_args(server.base_url, out, limit=2, pipelines="direct")).returncode == 0
    with sqlite3.connect(out / "store.sqlite") as db:
        db.execute("DELETE FROM calls WHERE problem = 'HumanEval/1'")
    replayed = cli(["resume", str(out), "--replay"])
    assert replayed.returncode == 0
    table = pd.read_csv(out / "outcomes.csv")
    row = table[table["problem"] == "HumanEval/1"].iloc[0]
    assert row["status"] == "error" and pd.isna(row["passed"])
    with sqlite3.connect(out / "store.sqlite") as db:
        error = db.execute("SELECT error FROM calls WHERE problem = 'HumanEval/1'").fetchone()[0]
    assert "replay: no stored response for call generate[0] of direct/HumanEval/1/repeat 0" in error


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
def test_faults_are_retried_recorded_and_nothing_is_lost(tmp_path, responder) -> None:
    out = tmp_path / "run"
    faults: list[str | None] = ["429", None, "500", "reset", None, "malformed", "stall", None, None]
    with LoopbackServer(responder, faults=faults, stall_s=4) as server:
        args = [*rerun_args(server.base_url, out, limit=6), "--request-timeout", "2", "--max-tries", "3"]
        done = cli(args)
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out / "outcomes.csv")
    assert len(table) == 12 and set(table["status"]) <= {"passed", "failed", "error"}
    with sqlite3.connect(out / "store.sqlite") as db:
        attempts = [json.loads(a) for (a,) in db.execute("SELECT attempts FROM calls")]
    outcomes_seen = {a["outcome"] for call in attempts for a in call}
    assert {"http 429", "http 500", "connection error", "malformed response", "timeout", "ok"} <= outcomes_seen
    assert any(len(call) > 1 for call in attempts)  # retries are recorded with the call
