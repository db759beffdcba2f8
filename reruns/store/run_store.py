"""The state boundary: a SQLite run store (WAL) in ``runs/<name>/store.sqlite``.

Write-ahead request records: a call is saved as *prepared* (call id, cell, stage, call path, seed,
messages, every sampling parameter, cache key) before it is sent, then *received* (response, finish
reason, token usage, latency, every try) or *error*. Execution results are observations bound to the
call id that produced the code, in generation order. Then the cell's outcome. Every write commits before
the run moves on, so a run killed at any point resumes from the last saved record: a received call is
found by its cache key and replayed, never re-sent.

The response cache is the ``calls`` table itself, looked up by the cache key (model identity, endpoint
identity, full message list, every sampling parameter, seed and repeat index — never the prompt alone).
A run may also *reuse* other runs' stores (``attach_reuse``): a request whose cache key another run already
received is answered from there, read-only, and recorded here with ``served_from = reuse:<run>:<call id>``
— so a new run need not re-send what an earlier run with the same model, messages and seed already paid for.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.crashpoints import crash_point
from sotacheck.reruns.store import writes
from sotacheck.reruns.store.call_index import CallIndex, key_set
from sotacheck.reruns.store.writes import CellKey, Observation

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    call_id TEXT PRIMARY KEY,
    cache_key TEXT NOT NULL,
    arm TEXT NOT NULL, dataset TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
    stage TEXT NOT NULL, call_path TEXT NOT NULL, parent TEXT, seed INTEGER NOT NULL,
    request TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('prepared', 'received', 'error')),
    response TEXT, finish_reason TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, latency_s REAL,
    attempts TEXT, error TEXT, served_from TEXT,
    prepared_at REAL NOT NULL, finished_at REAL
);
CREATE INDEX IF NOT EXISTS calls_by_cache_key ON calls (cache_key, state);
CREATE INDEX IF NOT EXISTS calls_by_cell ON calls (arm, dataset, problem, repeat);
CREATE TABLE IF NOT EXISTS observations (
    arm TEXT NOT NULL, dataset TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
    seq INTEGER NOT NULL, call_id TEXT, kind TEXT NOT NULL, result TEXT NOT NULL,
    PRIMARY KEY (arm, dataset, problem, repeat, seq)
);
CREATE TABLE IF NOT EXISTS cells (
    arm TEXT NOT NULL, dataset TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
    status TEXT NOT NULL, passed INTEGER, calls INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER,
    first_pass_attempt INTEGER, wall_s REAL, detail TEXT, finished_at REAL NOT NULL,
    PRIMARY KEY (arm, dataset, problem, repeat)
);
"""


class CellStore(Protocol):
    """The store operations a running cell needs: the ``RunStore`` itself, or on a Ray worker a client of
    the driver's gateway (``reruns.executors.ray``)."""

    def find_call(self, call_id: str) -> StoredCall | None: ...
    def find_received(self, cache_key: str) -> StoredCall | None: ...
    def prepare_call(self, call_id: str, cache_key: str, cell: CellKey, stage: str, call_path: str,
                     parent: str | None, seed: int, request: dict[str, Any]) -> None: ...
    def receive_call(self, call_id: str, text: str, finish_reason: str | None, prompt_tokens: int,
                     completion_tokens: int, latency_s: float, attempts: list[dict[str, Any]],
                     served_from: str = "model") -> None: ...
    def fail_call(self, call_id: str, error: str, attempts: list[dict[str, Any]]) -> None: ...
    def observe(self, cell: CellKey, seq: int, call_id: str | None, kind: str, result: dict[str, Any]) -> None: ...
    def finish_cell(self, cell: CellKey, status: str, passed: bool | None, calls: int, prompt_tokens: int,
                    completion_tokens: int, first_pass_attempt: int | None, wall_s: float,
                    detail: dict[str, Any], observation: Observation | None = None) -> None: ...


@dataclass(frozen=True)
class StoredCall:
    call_id: str
    cache_key: str
    state: str
    response: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    attempts: list[dict[str, Any]]
    error: str | None
    origin: str | None = None  # the reused run's name when the response came from another run's store

    @property
    def served_label(self) -> str:
        """What ``served_from`` says of a call answered with this stored response."""
        return f"cache:{self.call_id}" if self.origin is None else f"reuse:{self.origin}:{self.call_id}"


class RunStore:
    """One run's store. Thread-safe: one connection, one lock (the harness is I/O-bound on the model)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            version = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise SotacheckError(f"{path}: not a readable sotacheck run store ({exc})") from None
        if version is None:
            self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (json.dumps(SCHEMA_VERSION),))
        elif json.loads(version[0]) != SCHEMA_VERSION:
            raise SotacheckError(f"{path}: store schema version {version[0]}, this sotacheck reads {SCHEMA_VERSION}")
        self._lock = threading.Lock()
        self._reused: list[tuple[str, sqlite3.Connection, frozenset[int]]] = []
        self._index = CallIndex(self._scan_calls)

    @staticmethod
    def exists(run_dir: Path) -> bool:
        """Whether ``run_dir`` holds a run store, live (store.sqlite) or packed (store.sqlite.gz)."""
        return (run_dir / "store.sqlite").is_file() or (run_dir / "store.sqlite.gz").is_file()

    @classmethod
    def open(cls, run_dir: Path, create: bool = False) -> RunStore:
        store_path = run_dir / "store.sqlite"
        packed = run_dir / "store.sqlite.gz"
        if not store_path.is_file() and packed.is_file():
            unpack(packed, store_path)  # a recorded run ships its store compressed
        if not store_path.is_file() and not create:
            raise SotacheckError(f"{run_dir}: no run store (store.sqlite) here")
        run_dir.mkdir(parents=True, exist_ok=True)
        return cls(store_path)

    def attach_reuse(self, run_dirs: list[Path]) -> None:
        """Answer cache misses from these runs' stores too (read-only, in the order given).

        A donor must be a run store whose model identity equals this run's (else its cache keys could never
        match and reusing it is a mistake worth saying so)."""
        own_identity = self.get_meta("model_identity")
        for run_dir in run_dirs:
            donor = RunStore.open(run_dir)  # unpacks a recorded run's store.sqlite.gz
            identity = donor.get_meta("model_identity")
            donor.close()
            if own_identity is not None and identity != own_identity:
                raise SotacheckError(f"--reuse {run_dir}: recorded with model {identity}, this run uses "
                                     f"{own_identity}; its replies can never match")
            uri = f"file:{(run_dir / 'store.sqlite').resolve()}?mode=ro"
            connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
            received = key_set(connection.execute("SELECT cache_key FROM calls WHERE state = 'received'"))
            self._reused.append((run_dir.name, connection, received))

    def close(self) -> None:
        for _, donor, _ in self._reused:
            donor.close()
        self._reused = []
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # --- metadata ---------------------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, default=str)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    # --- calls --------------------------------------------------------------------------------------
    def find_received(self, cache_key: str) -> StoredCall | None:
        """A received response for this cache key, from any cell of this run (the response cache), else
        from a run attached with ``attach_reuse``."""
        query = ("SELECT call_id, cache_key, state, response, finish_reason, prompt_tokens, completion_tokens, "
                 "latency_s, attempts, error FROM calls WHERE cache_key = ? AND state = 'received' "
                 "ORDER BY prepared_at LIMIT 1")
        own = self._index.may_hold_key(cache_key)
        if not own and not any(hash(cache_key) in received for _, _, received in self._reused):
            return None  # neither this store nor a reused one holds the key (``call_index``): nothing to read
        with self._lock:
            row = self._db.execute(query, (cache_key,)).fetchone() if own else None
            if row is not None:
                return _stored(row)
            for name, donor, _ in self._reused:
                row = donor.execute(query, (cache_key,)).fetchone()
                if row is not None:
                    return _stored(row, origin=name)
        return None

    def find_call(self, call_id: str) -> StoredCall | None:
        if not self._index.may_hold_call(call_id):
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT call_id, cache_key, state, response, finish_reason, prompt_tokens, completion_tokens, "
                "latency_s, attempts, error FROM calls WHERE call_id = ?", (call_id,)).fetchone()
        return _stored(row) if row else None

    def prepare_call(self, call_id: str, cache_key: str, cell: CellKey, stage: str, call_path: str,
                     parent: str | None, seed: int, request: dict[str, Any]) -> None:
        """Write-ahead: the record exists before the request is sent. Re-preparing after a crash updates
        the same row (the call id is deterministic), so nothing is duplicated."""
        self.note_prepared(call_id, cache_key)
        self.execute([writes.prepare(call_id, cache_key, cell, stage, call_path, parent, seed, request)])

    def receive_call(self, call_id: str, text: str, finish_reason: str | None, prompt_tokens: int,
                     completion_tokens: int, latency_s: float, attempts: list[dict[str, Any]],
                     served_from: str = "model") -> None:
        self.execute([writes.receive(call_id, text, finish_reason, prompt_tokens, completion_tokens, latency_s,
                                     attempts, served_from)])

    def fail_call(self, call_id: str, error: str, attempts: list[dict[str, Any]]) -> None:
        self.execute([writes.fail(call_id, error, attempts)])

    def note_prepared(self, call_id: str, cache_key: str) -> None:
        """A call about to be prepared through another connection to this store (the group committer's):
        its lookups then read the store (``call_index``). Called before the record is written."""
        self._index.note(call_id, cache_key)

    def _scan_calls(self) -> list[tuple[str, str]]:
        with self._lock:
            return self._db.execute("SELECT call_id, cache_key FROM calls").fetchall()

    # --- observations and cells ---------------------------------------------------------------------
    def observe(self, cell: CellKey, seq: int, call_id: str | None, kind: str, result: dict[str, Any]) -> None:
        self.execute([writes.observe(cell, seq, call_id, kind, result)])

    def finish_cell(self, cell: CellKey, status: str, passed: bool | None, calls: int, prompt_tokens: int,
                    completion_tokens: int, first_pass_attempt: int | None, wall_s: float,
                    detail: dict[str, Any], observation: Observation | None = None) -> None:
        """The cell's outcome, with the observation it was judged by (``observation``) in the same transaction."""
        self.execute(writes.outcome(cell, status, passed, calls, prompt_tokens, completion_tokens,
                                    first_pass_attempt, wall_s, detail, observation))

    def execute(self, statements: list[writes.Statement]) -> None:
        """Run ``statements`` in one transaction on this connection (each one's crash point, if any, just
        after it: inside the transaction, before the commit)."""
        with self._transaction() as db:
            for statement in statements:
                db.execute(statement.sql, statement.params)
                if statement.crash_point:
                    crash_point(statement.crash_point)

    def finished_cells(self) -> set[tuple[str, str, str, int]]:
        with self._lock:
            rows = self._db.execute("SELECT arm, dataset, problem, repeat FROM cells").fetchall()
        return {(r[0], r[1], r[2], int(r[3])) for r in rows}

    def cells(self) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._db.execute("SELECT * FROM cells ORDER BY arm, dataset, problem, repeat")
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM calls GROUP BY state").fetchall()
        return {state: int(n) for state, n in rows}

    def call_records(self) -> list[tuple[Any, ...]]:
        """Every call's cell, stage, path, state, finish reason, token counts and origin, in the order
        prepared (the run directory's ``calls.parquet``; prompts and replies stay here)."""
        with self._lock:
            return self._db.execute(
                "SELECT arm, dataset, problem, repeat, stage, call_path, state, finish_reason, prompt_tokens, "
                "completion_tokens, served_from FROM calls ORDER BY prepared_at, rowid").fetchall()

    def requests(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored request (call id, problem, request), for audits such as the leakage check."""
        with self._lock:
            rows = self._db.execute("SELECT call_id, problem, request FROM calls ORDER BY prepared_at").fetchall()
        for call_id, problem, request in rows:
            yield call_id, problem, json.loads(request)


def unpack(packed: Path, target: Path) -> None:
    tmp = target.with_suffix(".unpacking")
    with gzip.open(packed, "rb") as source, tmp.open("wb") as sink:
        shutil.copyfileobj(source, sink)
    os.replace(tmp, target)


def pack(run_dir: Path) -> Path:
    """Checkpoint the WAL and write ``store.sqlite.gz`` beside the store (for committing a recorded run)."""
    store_path = run_dir / "store.sqlite"
    db = sqlite3.connect(store_path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    db.close()
    packed = run_dir / "store.sqlite.gz"
    with store_path.open("rb") as source, gzip.open(packed, "wb", compresslevel=9) as sink:
        shutil.copyfileobj(source, sink)
    return packed


def _stored(row: tuple[Any, ...], origin: str | None = None) -> StoredCall:
    return StoredCall(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7],
                      json.loads(row[8]) if row[8] else [], row[9], origin)
