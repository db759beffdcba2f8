"""The embedded model's server (``sotacheck.reruns.model.local``): a GGUF file with the wrong hash is refused, and
the server process ends with its parent."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.model.local import verify_gguf
from tests.sotacheck_command import SOTACHECK


def test_gguf_with_the_wrong_hash_is_refused(tmp_path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 1000)
    with pytest.raises(SotacheckError, match="does not match the expected"):
        verify_gguf(fake)


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
