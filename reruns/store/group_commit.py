"""Group commits: the records of concurrent cells written by one writer thread, committed together.

With a commit per record, 64 cells in flight make 64 commits where one would do, each on the event loop's
thread. Here a cell hands its statements to the :class:`GroupCommitter` and awaits the commit: the writer
thread takes everything queued since its last commit, runs it in one transaction, commits once, then
wakes the waiting cells (one wake-up of the event loop per commit). A cell never moves on before its own
record is durable, so the guarantees stay those of a commit per record: a prepared record exists before
its request is sent, a received one before the cell goes on, and a run killed at any point
(``during_group_commit`` included: several cells' records in one open transaction) resumes from the last
commit with no received call sent again. Only the commit is shared, and the SQLite work leaves the event
loop's thread (``sqlite3`` releases the GIL while it runs a statement).

A cell's outcome (its verdict, with the hidden tests' observation) and its observations are written *later*
(:meth:`GroupCommitter.commit_later`): the cell does not wait for them, and the writer holds such records
until a record someone waits for is committed, :data:`LATER_S` has passed, or :data:`MAX_BATCH` are held;
they are committed in the order written, so an outcome never precedes the cell's observations. No call is
lost by it: a run killed before an outcome is committed resumes that cell from its stored calls (received
ones are replayed, never sent again), runs its tests again and judges it again, as it does a cell killed
while judged.
Outcomes come at the judge's pace, one verdict at a time: committed as they came, they were a commit each
(3,280 commits, about 0.2 ms of the writer's CPU a cell, on a run whose judging is cheap).

:class:`GroupedWrites` is what a cell writes through a committer; :class:`DirectWrites` the same calls on
any :class:`~sotacheck.reruns.store.run_store.CellStore` (a Ray worker's gateway client), one at a time.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sotacheck.reruns.crashpoints import armed, crash_point
from sotacheck.reruns.store import writes
from sotacheck.reruns.store.writes import CellKey, Observation, Statement

if TYPE_CHECKING:
    from sotacheck.reruns.store.run_store import CellStore

MAX_BATCH = 1024
LATER_S = 0.05
"""The longest a record written later (:meth:`GroupCommitter.commit_later`) is held before its commit."""


@dataclass
class _Pending:
    statements: list[Statement]
    loop: asyncio.AbstractEventLoop | None  # None, and no ``done``: written later, nobody waits
    done: asyncio.Future[None] | None


def _settle(settled: list[tuple[asyncio.Future[None], BaseException | None]]) -> None:
    for done, error in settled:
        if done.cancelled():
            continue
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)


class GroupCommitter:
    """The writer thread and its own connection to the store at ``path`` (WAL: readers are not blocked)."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        # Only when a test is to kill a commit holding several cells' records: a moment for other cells'
        # records to join the first, so that such commits occur however fast the run's cells are.
        self._gather_s = 0.005 if armed("during_group_commit") else 0.0
        self.batches = 0  # commits made
        self.writes = 0   # cells' writes they held
        self._failed_later: BaseException | None = None  # what a record written later raised, not yet told
        self._thread = threading.Thread(target=self._run, name="sotacheck-group-commit", daemon=True)
        self._thread.start()

    async def commit(self, statements: list[Statement]) -> None:
        """Returns once ``statements`` are committed (raises what running them raised)."""
        self._raise_failed_later()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._queue.put(_Pending(statements, loop, done))
        await done

    def commit_later(self, statements: list[Statement]) -> None:
        """Queue ``statements`` for a commit within :data:`LATER_S`, and return at once. What running them
        raises is raised by the next :meth:`commit` or by :meth:`close`."""
        self._raise_failed_later()
        self._queue.put(_Pending(statements, None, None))

    def close(self) -> None:
        """Commit what is queued, then stop the writer and close its connection; raises a failure of a
        record written later that nobody has been told of."""
        self._queue.put(None)
        self._thread.join()
        self._db.close()
        self._raise_failed_later()

    def _raise_failed_later(self) -> None:
        failed, self._failed_later = self._failed_later, None
        if failed is not None:
            raise failed

    def _run(self) -> None:
        held: list[_Pending] = []  # records written later, not committed yet
        deadline = 0.0
        stopping = False
        while not stopping:
            try:
                first = self._queue.get(timeout=max(0.0, deadline - time.monotonic())) if held else self._queue.get()
            except queue.Empty:
                self._commit(held)
                held = []
                continue
            batch = []
            if first is None:
                stopping = True
            else:
                if self._gather_s:
                    time.sleep(self._gather_s)
                batch.append(first)
            while not stopping and len(held) + len(batch) < MAX_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                    break
                batch.append(item)
            if not held:
                deadline = time.monotonic() + LATER_S
            held += batch
            if (stopping or len(held) >= MAX_BATCH or time.monotonic() >= deadline
                    or any(pending.done is not None for pending in batch)):  # someone waits: commit now
                if held:
                    self._commit(held)
                held = []

    def _commit(self, batch: list[_Pending]) -> None:
        try:
            self._transaction([statement for pending in batch for statement in pending.statements],
                              grouped=len(batch) > 1)
            outcomes: list[BaseException | None] = [None] * len(batch)
        except Exception:
            # One cell's bad write must not fail the others: each again, in a transaction of its own.
            outcomes = [self._alone(pending) for pending in batch]
        self.batches += 1
        self.writes += len(batch)
        # One wake-up of each waiting event loop for the whole commit, not one per cell.
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[None], BaseException | None]]] = {}
        for pending, error in zip(batch, outcomes, strict=True):
            if pending.loop is None or pending.done is None:
                self._failed_later = self._failed_later or error
            else:
                by_loop.setdefault(pending.loop, []).append((pending.done, error))
        for loop, settled in by_loop.items():
            loop.call_soon_threadsafe(_settle, settled)

    def _alone(self, pending: _Pending) -> BaseException | None:
        try:
            self._transaction(pending.statements, grouped=False)
        except Exception as exc:
            return exc
        return None

    def _transaction(self, statements: list[Statement], grouped: bool) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                self._db.execute(statement.sql, statement.params)
                if statement.crash_point:
                    crash_point(statement.crash_point)
            if grouped:
                crash_point("during_group_commit")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


class CellWrites(Protocol):
    """What a running cell records, each call returning once the record is durable."""

    async def prepare_call(self, call_id: str, cache_key: str, cell: CellKey, stage: str, call_path: str,
                           parent: str | None, seed: int, request: dict[str, Any]) -> None: ...
    async def receive_call(self, call_id: str, text: str, finish_reason: str | None, prompt_tokens: int,
                           completion_tokens: int, latency_s: float, attempts: list[dict[str, Any]],
                           served_from: str = "model") -> None: ...
    async def fail_call(self, call_id: str, error: str, attempts: list[dict[str, Any]]) -> None: ...
    async def observe(self, cell: CellKey, seq: int, call_id: str | None, kind: str, result: dict[str, Any]) -> None: ...
    async def finish_cell(self, cell: CellKey, status: str, passed: bool | None, calls: int, prompt_tokens: int,
                          completion_tokens: int, first_pass_attempt: int | None, wall_s: float,
                          detail: dict[str, Any], observation: Observation | None = None) -> None:
        """The cell's outcome, and the observation it was judged by (when given) in the same transaction."""


class GroupedWrites:
    """A cell's records through a :class:`GroupCommitter`; ``note_prepared`` is the store's
    (``RunStore.note_prepared``), told of each call before its record is written, so that the store's
    lookups see what the committer writes (``call_index``)."""

    def __init__(self, committer: GroupCommitter, note_prepared: Callable[[str, str], None]) -> None:
        self._commit = committer.commit
        self._commit_later = committer.commit_later
        self._note_prepared = note_prepared

    async def prepare_call(self, call_id: str, cache_key: str, cell: CellKey, stage: str, call_path: str,
                           parent: str | None, seed: int, request: dict[str, Any]) -> None:
        self._note_prepared(call_id, cache_key)
        await self._commit([writes.prepare(call_id, cache_key, cell, stage, call_path, parent, seed, request)])

    async def receive_call(self, call_id: str, text: str, finish_reason: str | None, prompt_tokens: int,
                           completion_tokens: int, latency_s: float, attempts: list[dict[str, Any]],
                           served_from: str = "model") -> None:
        await self._commit([writes.receive(call_id, text, finish_reason, prompt_tokens, completion_tokens, latency_s,
                                           attempts, served_from)])

    async def fail_call(self, call_id: str, error: str, attempts: list[dict[str, Any]]) -> None:
        await self._commit([writes.fail(call_id, error, attempts)])

    async def observe(self, cell: CellKey, seq: int, call_id: str | None, kind: str, result: dict[str, Any]) -> None:
        # later, as an outcome: a resumed cell runs its tests again and records the same observations
        self._commit_later([writes.observe(cell, seq, call_id, kind, result)])

    async def finish_cell(self, cell: CellKey, status: str, passed: bool | None, calls: int, prompt_tokens: int,
                          completion_tokens: int, first_pass_attempt: int | None, wall_s: float,
                          detail: dict[str, Any], observation: Observation | None = None) -> None:
        # later: a cell killed before its outcome is committed is judged again on resume (see the module's notes)
        self._commit_later(writes.outcome(cell, status, passed, calls, prompt_tokens, completion_tokens,
                                          first_pass_attempt, wall_s, detail, observation))


class DirectWrites:
    """A cell's records through a store's own methods, one commit each (a Ray worker's gateway client)."""

    def __init__(self, store: CellStore) -> None:
        self._store = store

    async def prepare_call(self, call_id: str, cache_key: str, cell: CellKey, stage: str, call_path: str,
                           parent: str | None, seed: int, request: dict[str, Any]) -> None:
        self._store.prepare_call(call_id, cache_key, cell, stage, call_path, parent, seed, request)

    async def receive_call(self, call_id: str, text: str, finish_reason: str | None, prompt_tokens: int,
                           completion_tokens: int, latency_s: float, attempts: list[dict[str, Any]],
                           served_from: str = "model") -> None:
        self._store.receive_call(call_id, text, finish_reason, prompt_tokens, completion_tokens, latency_s, attempts,
                                 served_from)

    async def fail_call(self, call_id: str, error: str, attempts: list[dict[str, Any]]) -> None:
        self._store.fail_call(call_id, error, attempts)

    async def observe(self, cell: CellKey, seq: int, call_id: str | None, kind: str, result: dict[str, Any]) -> None:
        self._store.observe(cell, seq, call_id, kind, result)

    async def finish_cell(self, cell: CellKey, status: str, passed: bool | None, calls: int, prompt_tokens: int,
                          completion_tokens: int, first_pass_attempt: int | None, wall_s: float,
                          detail: dict[str, Any], observation: Observation | None = None) -> None:
        self._store.finish_cell(cell, status, passed, calls, prompt_tokens, completion_tokens, first_pass_attempt,
                                wall_s, detail, observation)
