"""The harness: bad input and a failing endpoint before or during a run, a run stopped by SIGTERM, and a cell's
context replaying its own calls."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess

import pytest

from sotacheck.reruns.model.base import SamplingParams
from sotacheck.reruns.store.run_store import RunStore
from tests.sotacheck_command import SOTACHECK


def test_spec_file_with_unknown_pipeline_fails_before_any_call(tmp_path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("dataset: humaneval\npipelines:\n  - name: magic\nmodel: http://127.0.0.1:9/v1\nmodel_name: x\n")
    done = subprocess.run([*SOTACHECK, "rerun", "--spec", str(spec), "--out", str(tmp_path / "r")], capture_output=True,
                          text=True)
    assert done.returncode == 2 and "unknown pipeline 'magic'" in done.stderr
    assert not (tmp_path / "r").exists()


def test_unreachable_endpoint_is_a_clear_error_before_any_call(tmp_path) -> None:
    out = tmp_path / "r"
    done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model",
                           "http://127.0.0.1:9/v1", "--model-name", "x", "--limit", "2", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "cannot reach the model endpoint http://127.0.0.1:9/v1" in done.stderr
    with sqlite3.connect(out / "store.sqlite") as db:  # the store is there and readable, with no call in it
        assert db.execute("SELECT COUNT(*) FROM calls").fetchone() == (0,)


def test_wrong_model_name_is_a_clear_error_before_any_call(tmp_path) -> None:
    from sotacheck.reruns.model.loopback import LoopbackServer

    with LoopbackServer(lambda body: "x", models=("served-model",)) as server:
        out = tmp_path / "r"
        done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model",
                               server.base_url, "--model-name", "no-such-model", "--limit", "1", "--out", str(out)],
                              capture_output=True, text=True, timeout=120)
        assert server.log.entries == []
    assert done.returncode == 2
    assert "does not serve model 'no-such-model'; it serves: served-model" in done.stderr


def test_endpoint_failing_mid_run_gives_error_cells(tmp_path) -> None:
    from sotacheck.reruns.model.loopback import LoopbackServer

    with LoopbackServer(lambda body: "x", faults=["500"]) as server:  # every request fails
        out = tmp_path / "r"
        done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model",
                               server.base_url, "--model-name", "m", "--limit", "2", "--max-tries", "2", "--out",
                               str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "2 error(s)" in done.stdout
    with sqlite3.connect(out / "store.sqlite") as db:
        errors = [e for (e,) in db.execute("SELECT error FROM calls WHERE state = 'error'")]
    assert len(errors) == 2 and all("http 500 after 2 tries" in e for e in errors)


def test_context_replays_its_own_calls(tmp_path) -> None:
    """A resumed cell finds its received call by call id and does not send it again."""
    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.context import PipelineContext
    from sotacheck.reruns.sandbox import SandboxPool
    from sotacheck.reruns.store.run_store import CellKey

    class Counting:
        identity, endpoint, sent = "m", "e", 0

        async def complete(self, request):
            from sotacheck.reruns.model.base import ChatResponse

            Counting.sent += 1
            return ChatResponse("```python\ndef f():\n    return 1\n```", "stop", 3, 4, 0.0)

    problem = load_dataset("humaneval").problems[0]
    store = RunStore.open(tmp_path, create=True)
    with SandboxPool(1) as pool:
        for _ in range(2):
            ctx = PipelineContext(problem, CellKey("direct", "humaneval", problem.id, 0), Counting(), store, pool,
                                  SamplingParams(), 7)
            asyncio.run(ctx.chat([("user", "hi")], stage="generate"))
    assert Counting.sent == 1 and store.counts() == {"received": 1}
    store.close()


@pytest.mark.slow
def test_sigterm_stops_a_run_cleanly_and_resume_finishes_it(tmp_path) -> None:
    """SIGTERM mid-run (as a CI timeout or ``kill`` sends it): the run's tasks are cancelled and unwound, so
    the process says in one line that it stopped and exits 143, with no asyncio complaint about a task left
    pending; ``sotacheck resume`` then finishes the run with every cell."""
    import signal
    import time

    from sotacheck.reruns.model.loopback import LoopbackServer

    def slow(body: dict[str, object]) -> str:
        time.sleep(0.3)
        return "```python\ndef f():\n    pass\n```"

    out = tmp_path / "r"
    with LoopbackServer(slow) as server:
        running = subprocess.Popen([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model",
                                    server.base_url, "--model-name", "m", "--limit", "30", "--concurrency", "1",
                                    "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # stop it once it has received a few calls
            try:
                with sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True) as db:
                    if db.execute("SELECT COUNT(*) FROM calls WHERE state = 'received'").fetchone()[0] >= 3:
                        break
            except sqlite3.OperationalError:  # not created yet
                pass
            time.sleep(0.1)
        running.send_signal(signal.SIGTERM)
        _, stderr = running.communicate(timeout=60)
        assert running.returncode == 143
        lines = stderr.strip().splitlines()  # the plain progress lines (stderr is a pipe), then one line on the stop
        assert lines[-1] == "sotacheck: stopped by signal 15; `sotacheck resume` continues a run", lines
        assert all(line.startswith("rerun r: ") for line in lines[:-1]), lines
        with sqlite3.connect(out / "store.sqlite") as db:
            assert db.execute("SELECT COUNT(*) FROM cells").fetchone()[0] < 30
        done = subprocess.run([*SOTACHECK, "resume", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == 30
