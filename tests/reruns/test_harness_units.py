"""The seed schedule, the cache key, the store, pipeline parameters and bad input to the harness."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys

import pytest

from sotacheck.core.errors import SotacheckError, UsageError
from sotacheck.reruns.model.base import ChatRequest, Message, SamplingParams, cache_key
from sotacheck.reruns.model.local import verify_gguf
from sotacheck.reruns.pipelines import Arm, get_pipeline, names
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.run import validate_spec
from sotacheck.reruns.seeds import derive_seed
from sotacheck.reruns.store.run_store import RunStore
from tests.sotacheck_command import SOTACHECK


def test_same_problem_repeat_and_path_give_the_same_seed_in_every_pipeline() -> None:
    # the pipeline is not an input: direct's generate[0] and cot's generate[0] share a seed
    assert derive_seed(7, "HumanEval/3", 0, "generate[0]") == derive_seed(7, "HumanEval/3", 0, "generate[0]")
    seeds_by_repeat = {derive_seed(7, "HumanEval/3", r, "generate[0]") for r in range(20)}
    assert len(seeds_by_repeat) == 20  # repeats differ
    assert derive_seed(7, "HumanEval/3", 0, "plan[1]/debug[0]") != derive_seed(7, "HumanEval/3", 0, "plan[0]/debug[1]")
    assert derive_seed(8, "HumanEval/3", 0, "generate[0]") != derive_seed(7, "HumanEval/3", 0, "generate[0]")
    assert all(0 <= s < 2**31 for s in seeds_by_repeat)


def test_cache_key_covers_sampling_seed_repeat_model_and_endpoint() -> None:
    messages = (Message("user", "write f"),)
    base = ChatRequest(messages, SamplingParams(temperature=0.0), 1)
    key = cache_key("m", "e", base, 0)
    assert key == cache_key("m", "e", ChatRequest(messages, SamplingParams(temperature=0.0), 1), 0)
    assert key != cache_key("m", "e", ChatRequest(messages, SamplingParams(temperature=0.7), 1), 0)
    assert key != cache_key("m", "e", ChatRequest(messages, SamplingParams(temperature=0.0), 2), 0)
    assert key != cache_key("m", "e", base, 1)
    assert key != cache_key("m2", "e", base, 0) and key != cache_key("m", "e2", base, 0)


def test_last_code_block() -> None:
    assert last_code_block("x\n```python\ndef f():\n    return 1\n```\nthen\n```\ndef g(): pass\n```") == "def g(): pass"
    assert last_code_block("no code here") is None
    assert last_code_block("```python\n\n```") is None


def test_unknown_pipeline_or_parameter_is_an_error() -> None:
    with pytest.raises(UsageError, match="unknown pipeline 'codesimm'; choose one of direct, cot, pycapsule, codesim"):
        Arm.of("codesimm")
    with pytest.raises(UsageError, match="pipeline 'direct': parameter p: not a parameter of this pipeline"):
        Arm.of("direct", {"p": 3})
    with pytest.raises(SotacheckError, match=r"spec.yaml: unknown pipeline 'nope'"):
        validate_spec({"dataset": "humaneval", "pipelines": [{"name": "nope"}]}, "spec.yaml")
    with pytest.raises(SotacheckError, match=r"^spec.yaml: pipeline 'codesim': parameter p: Input should be greater than "
                                             r"or equal to 1$"):
        validate_spec({"dataset": "humaneval", "pipelines": [{"name": "codesim", "params": {"p": -1}}]}, "spec.yaml")


def test_arm_labels_and_columns_come_from_the_typed_parameters() -> None:
    labels = {name: Arm.of(name).name for name in names()}
    assert {n: label for n, label in labels.items() if not n.endswith("@original")} == {
        "direct": "direct", "cot": "cot", "cot-fewshot": "cot-fewshot", "pycapsule": "pycapsule[max_attempts=5]",
        "codesim": "codesim[d=5,p=5]",
        "mapcoder": "mapcoder[k=3,t=5]", "gate": "gate[base=direct,hold_budget=3]"}
    # the authors' own classes (reruns/pipelines/original.py) carry the same typed parameters
    assert labels["mapcoder@original"] == "mapcoder@original[k=3,t=5]"
    assert labels["codesim@original"] == "codesim@original[d=5,p=5]" and labels["direct@original"] == "direct@original"
    arm = Arm.of("codesim", {"p": 3, "d": 2})
    assert arm.name == "codesim[d=2,p=3]" and arm.params.p == 3 and arm.param_dict() == {"p": 3, "d": 2}
    assert arm.columns() == {"arm": "codesim[d=2,p=3]", "pipeline": "codesim", "param.p": 3, "param.d": 2}
    assert arm == Arm.of("codesim", {"d": 2, "p": 3}) and hash(arm) == hash(Arm.of("codesim", {"d": 2, "p": 3}))
    with pytest.raises(ValueError, match="frozen"):
        arm.params.p = 4  # type: ignore[misc]
    spec = validate_spec({"dataset": "humaneval", "pipelines": [{"name": "gate", "params": {"hold_budget": 0}},
                                                                {"name": "direct"}]}, "spec.yaml")
    assert [a.name for a in spec.arms()] == ["gate[base=direct,hold_budget=0]", "direct"]
    assert spec.model_dump()["pipelines"][0] == {"name": "gate", "params": {"hold_budget": 0}}  # stored as written
    for name in names():
        assert get_pipeline(name).name == name and get_pipeline(name).defaults() == Arm.of(name).params


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


def test_corrupted_store_is_a_clear_error(tmp_path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "store.sqlite").write_bytes(b"this is not a database" * 100)
    done = subprocess.run([*SOTACHECK, "resume", str(run_dir)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "not a readable sotacheck run store" in done.stderr
    assert (run_dir / "store.sqlite").read_bytes().startswith(b"this is not a database")  # left as it was


def test_gguf_with_the_wrong_hash_is_refused(tmp_path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 1000)
    with pytest.raises(SotacheckError, match="does not match the expected"):
        verify_gguf(fake)


def test_store_prepare_is_idempotent(tmp_path) -> None:
    from sotacheck.reruns.store.run_store import CellKey

    store = RunStore.open(tmp_path, create=True)
    cell = CellKey("direct", "humaneval", "HumanEval/0", 0)
    store.prepare_call("c1", "k1", cell, "generate", "generate[0]", None, 5, {"messages": []})
    store.prepare_call("c1", "k1", cell, "generate", "generate[0]", None, 5, {"messages": []})
    store.receive_call("c1", "reply", "stop", 3, 4, 0.1, [])
    store.prepare_call("c1", "k1", cell, "generate", "generate[0]", None, 5, {"messages": []})
    assert store.counts() == {"received": 1}
    assert store.find_received("k1") is not None
    store.close()


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


def test_a_tampered_cached_gguf_is_refused_by_the_cli(tmp_path) -> None:
    import os

    models = tmp_path / "cache" / "models"
    models.mkdir(parents=True)
    (models / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").write_bytes(b"GGUF" + b"\0" * 4096)
    env = {**os.environ, "SOTACHECK_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model", "local",
                           "--limit", "1", "--out", str(tmp_path / "r")], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 2
    assert "does not match the expected 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" in done.stderr
    assert "refusing it" in done.stderr


def test_embedded_server_process_exits_when_its_parent_is_killed(tmp_path) -> None:
    """A run killed with SIGKILL cannot stop its llama server; the server's parent watch ends it instead.
    The parent here starts the watch exactly as the server's ``__main__`` does, without loading a model."""
    import os
    import signal
    import time

    pid_file = tmp_path / "child.pid"
    child = ("import os, threading, time; from sotacheck.reruns.model.parent_watch import exit_with_parent; "
             f"open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
             "threading.Thread(target=exit_with_parent, args=(os.getppid(), 0.1), daemon=True).start(); "
             "time.sleep(120)")
    parent = subprocess.Popen([sys.executable, "-P", "-c", f"import subprocess, sys, time; "
                               f"subprocess.Popen([sys.executable, '-P', '-c', {child!r}]); time.sleep(120)"])
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.1)
    child_pid = int(pid_file.read_text())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child_pid}") and "Z" not in _proc_state(child_pid):
        assert time.monotonic() < deadline, "the server process outlived its killed parent"
        time.sleep(0.1)


def _proc_state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


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
        assert stderr.strip().splitlines() == ["sotacheck: stopped by signal 15; `sotacheck resume` continues a run"]
        with sqlite3.connect(out / "store.sqlite") as db:
            assert db.execute("SELECT COUNT(*) FROM cells").fetchone()[0] < 30
        done = subprocess.run([*SOTACHECK, "resume", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == 30
