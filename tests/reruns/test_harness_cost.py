"""The mechanisms that keep the harness's cost per cell down (issue #36), each with the guarantee it must keep:
the store's call index (a lookup that cannot hit reads nothing, one that can still finds its row), records
written later (committed within ``LATER_S``, a failure never lost), the light offload, the request dicts."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from sotacheck.reruns.model.base import Attempt, ChatRequest, ChatResponse, Message, SamplingParams
from sotacheck.reruns.store import writes
from sotacheck.reruns.store.group_commit import LATER_S, GroupCommitter, GroupedWrites
from sotacheck.reruns.store.run_store import CellKey, RunStore

CELL = CellKey("direct", "humaneval", "HumanEval/0", 0)


def reads(connection: sqlite3.Connection) -> list[str]:
    """The statements ``connection`` runs from now on."""
    seen: list[str] = []
    connection.set_trace_callback(seen.append)
    return seen


def test_request_dicts_are_what_asdict_gives() -> None:
    for request in (ChatRequest((Message("system", "x"), Message("user", "é ```")), SamplingParams(), 3),
                    ChatRequest((Message("user", "z"),), SamplingParams(0.8, 0.95, None, ("a", "```")), 5)):
        fast = request.as_dict()
        slow = {"messages": [dataclasses.asdict(m) for m in request.messages],
                "sampling": dataclasses.asdict(request.sampling), "seed": request.seed}
        assert fast == slow and list(fast["sampling"]) == list(slow["sampling"])
        assert type(fast["sampling"]["stop"]) is type(slow["sampling"]["stop"])
    attempt = Attempt("http 429", 0.25, "slow down")
    assert attempt.as_dict() == dataclasses.asdict(attempt)


def test_a_lookup_that_cannot_hit_reads_nothing_and_one_that_can_finds_its_row(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path, create=True)
    other = sqlite3.connect(tmp_path / "store.sqlite", isolation_level=None)  # written before the first lookup
    for statement in (writes.prepare("c0", "k0", CELL, "generate", "generate[0]", None, 1, {}),
                      writes.receive("c0", "reply", "stop", 1, 2, 0.1, [])):
        other.execute(statement.sql, statement.params)
    seen = reads(store._db)
    assert store.find_call("nope") is None and store.find_received("nope") is None
    assert [s for s in seen if "FROM calls WHERE" in s] == []  # the index was read once, the lookups read nothing
    found = store.find_received("k0")
    assert found is not None and found.response == "reply" and store.find_call("c0") is not None
    store.prepare_call("c1", "k1", CELL, "generate", "generate[1]", None, 2, {})
    assert store.find_call("c1") is not None  # prepared through the store: noted before it was written
    other.close()
    store.close()


def test_a_reused_runs_keys_are_read_once(tmp_path: Path) -> None:
    donor = RunStore.open(tmp_path / "donor", create=True)
    donor.prepare_call("d0", "shared", CELL, "generate", "generate[0]", None, 1, {})
    donor.receive_call("d0", "from the donor", "stop", 1, 2, 0.1, [])
    donor.close()
    store = RunStore.open(tmp_path / "run", create=True)
    store.attach_reuse([tmp_path / "donor"])
    seen = reads(store._reused[0][1])
    assert store.find_received("absent") is None and seen == []
    found = store.find_received("shared")
    assert found is not None and found.origin == "donor" and found.response == "from the donor"
    store.close()


class Counting:
    identity, endpoint = "m", "e"

    def __init__(self) -> None:
        self.sent = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.sent += 1
        return ChatResponse("```python\ndef f():\n    return 1\n```", "stop", 3, 4, 0.0)


def test_a_reply_received_through_the_group_committer_is_never_sent_again(tmp_path: Path) -> None:
    """Two cells with the same request, their records written by the group committer after the store's index
    was read: the second is answered from the store (the committer's writes are noted in the index)."""
    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.context import PipelineContext
    from sotacheck.reruns.sandbox import SandboxPool

    problem = load_dataset("humaneval").problems[0]
    store = RunStore.open(tmp_path, create=True)
    assert store.find_received("anything") is None  # the index is read now, while the store is empty
    model = Counting()

    async def both() -> None:
        committer = GroupCommitter(store.path)
        try:
            for arm in ("direct", "direct-again"):
                ctx = PipelineContext(problem, CellKey(arm, "humaneval", problem.id, 0), model, store, pool,
                                      SamplingParams(), 7, writes=GroupedWrites(committer, store.note_prepared))
                await ctx.chat([("user", "hi")], stage="generate")
        finally:
            committer.close()

    with SandboxPool(1) as pool:
        asyncio.run(both())
    assert model.sent == 1 and store.counts() == {"received": 2}
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        served = dict(db.execute("SELECT arm, served_from FROM calls").fetchall())
    assert served["direct"] == "model" and served["direct-again"].startswith("cache:")
    store.close()


def committed(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def outcome(problem: str) -> list[writes.Statement]:
    cell = CellKey("direct", "humaneval", problem, 0)
    return writes.outcome(cell, "failed", False, 1, 1, 1, None, 0.1, {},
                          writes.Observation(10_000, None, "hidden_tests", {"status": "failed"}))


def test_records_written_later_are_committed_within_later_s_and_with_the_next_awaited_commit(tmp_path: Path) -> None:
    RunStore.open(tmp_path, create=True).close()
    path = tmp_path / "store.sqlite"
    committer = GroupCommitter(path)
    try:
        committer.commit_later(outcome("HumanEval/0"))
        deadline = time.monotonic() + 10
        while committed(path, "cells") < 1:
            assert time.monotonic() < deadline, "a record written later was never committed"
            time.sleep(LATER_S / 5)
        assert committed(path, "observations") == 1  # the cell's judge record with its outcome
        committer.commit_later(outcome("HumanEval/1"))
        asyncio.run(committer.commit([writes.prepare("c", "k", CELL, "generate", "generate[0]", None, 1, {})]))
        assert committed(path, "cells") == 2  # held until a record someone waits for: committed with it
    finally:
        committer.close()


def test_a_record_written_later_that_fails_is_raised_not_lost(tmp_path: Path) -> None:
    RunStore.open(tmp_path, create=True).close()
    committer = GroupCommitter(tmp_path / "store.sqlite")
    committer.commit_later([writes.Statement("INSERT INTO no_such_table VALUES (1)", ())])
    committer.commit_later(outcome("HumanEval/0"))  # the same batch: still written
    time.sleep(4 * LATER_S)
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        asyncio.run(committer.commit([]))
    committer.commit_later([writes.Statement("INSERT INTO no_such_table VALUES (2)", ())])
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        committer.close()
    assert committed(tmp_path / "store.sqlite", "cells") == 1


def test_offloaded_work_runs_on_the_pools_own_threads() -> None:
    from sotacheck.reruns.sandbox.offload import Offloader

    # A name of the test's own: other pools (a module's fixture, Ray's per-worker pools in local mode) may hold
    # threads named after the pool's offloader while this test runs.
    offloader = Offloader(2, "offload-under-test")

    def fail() -> None:
        raise ValueError("from a thread")

    async def main() -> list[str]:
        names = await asyncio.gather(*(offloader.run(lambda: threading.current_thread().name) for _ in range(20)))
        with pytest.raises(ValueError, match="from a thread"):
            await offloader.run(fail)
        return list(names)

    names = asyncio.run(main())
    assert set(names) <= {"offload-under-test-0", "offload-under-test-1"}
    offloader.close()
    assert not any(t.name.startswith("offload-under-test") for t in threading.enumerate())
