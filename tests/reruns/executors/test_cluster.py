"""The Ray executor: the same run gives the same outcome table as the local executor (loopback endpoint,
the recorded run replayed), a two-node cluster on loopback survives losing a node mid-run with nothing lost
and no received call sent twice, and bad cluster input fails before any model call.

The loopback endpoint answers with canonical code (broken for every third seed): it drives the harness and
is not evidence about any method. The embedded-model equivalence is in ``test_cluster_real_model.py``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.model.loopback import LoopbackServer, canonical_responder
from tests.reruns.test_harness_recovery import outcomes, stored_calls
from tests.sotacheck_command import SOTACHECK

RAY = str(Path(sys.executable).parent / "ray")
# Ray puts the driver's working directory first on its workers' sys.path; in the repository root, the
# checkout's sotacheck/ folder would shadow the package the editable install lays out (docs/ray.md).
DRIVER_CWD = tempfile.gettempdir()
RECORDED = Path(__file__).resolve().parents[3] / "recordings" / "reference-qwen05b"
# A test cluster on loopback needs no token; Ray >= 2.5x turns token authentication on for `ray start --head`.
RAY_ENV = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_health_check_period_ms": "500",
           "RAY_health_check_failure_threshold": "3", "RAY_USAGE_STATS_ENABLED": "0"}
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def responder(data_dir):
    dataset = load_dataset("humaneval", data_dir)
    return canonical_responder({p.entry_point: p.prompt + (p.canonical_solution or "") for p in dataset.problems})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rerun(url: str, out: Path, executor: str, limit: int, address: str | None = None,
          pipelines: str = "direct,pycapsule", concurrency: int = 4) -> subprocess.Popen[str]:
    args = [*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", pipelines, "--model", url,
            "--model-name", "loopback", "--limit", str(limit), "--seed", "7", "--concurrency", str(concurrency),
            "--out", str(out), "--executor", executor]
    if address:
        args += ["--ray-address", address]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=RAY_ENV,
                            cwd=DRIVER_CWD)


def finish(process: subprocess.Popen[str], timeout: float = 600) -> str:
    stdout, stderr = process.communicate(timeout=timeout)
    assert process.returncode == 0, stderr[-3000:]
    return stdout


def test_local_and_ray_give_identical_outcomes(tmp_path, responder) -> None:
    with LoopbackServer(responder) as server:
        finish(rerun(server.base_url, tmp_path / "local", "local", 12))
        sent_local = len(server.log.answered())
        finish(rerun(server.base_url, tmp_path / "ray", "ray", 12))
        assert len(server.log.answered()) == 2 * sent_local  # the Ray run sent each of its calls once
    pd.testing.assert_frame_equal(outcomes(tmp_path / "local"), outcomes(tmp_path / "ray"))
    assert {state for _, state, _, _ in stored_calls(tmp_path / "ray")} == {"received"}


@pytest.mark.parametrize("limit", [1, 3])
def test_model_concurrency_limit_holds_across_the_cluster(tmp_path, responder, limit) -> None:
    """Cells run in parallel Ray workers, yet the endpoint never sees more than --concurrency requests."""
    with LoopbackServer(responder, delay_s=0.3) as server:
        finish(rerun(server.base_url, tmp_path / "run", "ray", 8, concurrency=limit))
        assert server.max_in_flight == limit  # reached (the workers do run in parallel), never exceeded


def test_recorded_run_replays_identically_on_ray(tmp_path) -> None:
    copy = tmp_path / "recorded"
    copy.mkdir()
    for name in ("store.sqlite.gz", "outcomes.csv", "run.json"):
        shutil.copy(RECORDED / name, copy / name)
    done = subprocess.run([*SOTACHECK, "resume", str(copy), "--replay", "--executor", "ray"], capture_output=True,
                          text=True, timeout=600, env=RAY_ENV, cwd=DRIVER_CWD)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "90 model calls (0 sent, 90 from the store)" in done.stdout
    before = pd.read_csv(RECORDED / "outcomes.csv").drop(columns=["wall_s"])
    after = pd.read_csv(copy / "outcomes.csv").drop(columns=["wall_s"])
    pd.testing.assert_frame_equal(before, after)
    assert json.loads((copy / "run.json").read_text())["leakage_check"]["clean"] is True


def test_judge_on_ray_matches_local(data_dir) -> None:
    results = {}
    for executor in ("local", "ray"):
        done = subprocess.run([*SOTACHECK, "judge", "--dataset", "humaneval-et", "--canonical", "--json",
                               "--executor", executor], capture_output=True, text=True, timeout=600, env=RAY_ENV,
                              cwd=DRIVER_CWD)
        assert done.returncode == 0, done.stderr[-3000:]
        results[executor] = json.loads(done.stdout)
    assert results["ray"]["results"] == results["local"]["results"]
    assert results["ray"]["passed"] == 157  # the count sandbox/test_judge_real.py explains


# --- a two-node cluster on loopback -----------------------------------------------------------------------
def _pids_of_node(node_manager_port: int) -> list[int]:
    """The raylet of the node listening on ``node_manager_port`` and every process under it."""
    raylets = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b"raylet") and f"--node_manager_port={node_manager_port}".encode() in cmdline:
            raylets.append(int(entry.name))
    assert len(raylets) == 1, raylets
    children = subprocess.run(["pgrep", "-P", str(raylets[0])], capture_output=True, text=True).stdout.split()
    return raylets + [int(pid) for pid in children]


@pytest.fixture
def two_nodes(tmp_path):
    port, second = free_port(), free_port()
    common = ["--node-ip-address=127.0.0.1", "--disable-usage-stats"]
    subprocess.run([RAY, "start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false", *common],
                   check=True, capture_output=True, env=RAY_ENV, timeout=120)
    try:
        subprocess.run([RAY, "start", f"--address=127.0.0.1:{port}", "--num-cpus=2", f"--node-manager-port={second}",
                        *common], check=True, capture_output=True, env=RAY_ENV, timeout=120)
        yield f"127.0.0.1:{port}", second
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, env=RAY_ENV, timeout=120)


def test_losing_a_node_mid_run_loses_nothing(tmp_path, responder, two_nodes) -> None:
    address, second_node = two_nodes
    limit = 16
    with LoopbackServer(responder) as reference_server:
        finish(rerun(reference_server.base_url, tmp_path / "reference", "local", limit))
    reference = outcomes(tmp_path / "reference")
    with LoopbackServer(responder, delay_s=0.4) as server:
        process = rerun(server.base_url, tmp_path / "cluster", "ray", limit, address=address, concurrency=2)
        deadline = time.monotonic() + 120
        while len(server.log.answered()) < 6:  # mid-run: cells are in flight on both nodes
            assert time.monotonic() < deadline and process.poll() is None, "the run did not get going"
            time.sleep(0.05)
        doomed = _pids_of_node(second_node)
        running = [pid for pid in doomed if _title(pid).startswith("ray::_cell_task")]
        for pid in doomed:
            os.kill(pid, signal.SIGKILL)
        finish(process)
        assert running, "no cell was running on the node when it was killed"
        pd.testing.assert_frame_equal(outcomes(tmp_path / "cluster"), reference)
        calls = stored_calls(tmp_path / "cluster")
        assert {state for _, state, _, _ in calls} == {"received"}
        saved_at = {key: finished for _, _, key, finished in calls}
        answered = server.log.answered()
        assert [key for t, key in answered if t > saved_at[key]] == []  # none sent again after it was saved
        assert len(answered) == len({key for _, key in answered})  # none reached the endpoint twice


def _title(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def test_unreachable_address_fails_before_any_model_call(tmp_path, responder) -> None:
    with LoopbackServer(responder) as server:
        process = rerun(server.base_url, tmp_path / "run", "ray", 4, address=f"127.0.0.1:{free_port()}")
        _, stderr = process.communicate(timeout=120)
        assert process.returncode != 0
        assert "cannot reach a Ray cluster there" in stderr
        assert len(stderr.strip().splitlines()) == 1
        assert server.log.entries == []
    assert not (tmp_path / "run" / "store.sqlite").exists()


@pytest.fixture
def node_without_sotacheck(tmp_path):
    """A head node from this environment plus a node whose Python has Ray but not sotacheck."""
    bare = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    site = next((bare / "lib").glob("python3*/site-packages"))
    ray_site = Path(__import__("ray").__file__).resolve().parents[1]
    (site / "borrow_ray.pth").write_text(f"{ray_site}\n")  # a plain path: Ray, but not sotacheck's editable finder
    port = free_port()
    common = ["--node-ip-address=127.0.0.1", "--disable-usage-stats", "--num-cpus=1"]
    subprocess.run([RAY, "start", "--head", f"--port={port}", "--include-dashboard=false", *common], check=True,
                   capture_output=True, env=RAY_ENV, timeout=120)
    try:
        start = "import sys; from ray.scripts.scripts import main; sys.argv[0] = 'ray'; main()"
        subprocess.run([str(bare / "bin" / "python"), "-c", start, "start", f"--address=127.0.0.1:{port}", *common],
                       check=True, capture_output=True, env=RAY_ENV, timeout=120, cwd=tmp_path)
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, env=RAY_ENV, timeout=120)


def test_node_missing_the_package_fails_before_any_model_call(tmp_path, responder, node_without_sotacheck) -> None:
    console_script = str(Path(sys.executable).parent / "sotacheck")  # not `python -m`: the repo is not on sys.path
    with LoopbackServer(responder) as server:
        done = subprocess.run([console_script, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model",
                               server.base_url, "--model-name", "loopback", "--limit", "2", "--out",
                               str(tmp_path / "run"), "--executor", "ray", "--ray-address", node_without_sotacheck],
                              capture_output=True, text=True, timeout=300, env=RAY_ENV, cwd=tmp_path)
        assert server.log.entries == []
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]
    assert "cannot import sotacheck" in done.stderr and "No module named 'sotacheck'" in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "run" / "store.sqlite").exists()
