"""The run store (``sotacheck.reruns.store.run_store``): preparing a call twice, and a store that is not one."""

from __future__ import annotations

import subprocess

from sotacheck.reruns.store.run_store import RunStore
from tests.sotacheck_command import SOTACHECK


def test_corrupted_store_is_a_clear_error(tmp_path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "store.sqlite").write_bytes(b"this is not a database" * 100)
    done = subprocess.run([*SOTACHECK, "resume", str(run_dir)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "not a readable sotacheck run store" in done.stderr
    assert (run_dir / "store.sqlite").read_bytes().startswith(b"this is not a database")  # left as it was


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
