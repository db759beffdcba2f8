"""The store's writes as statements: what a cell records (a call prepared, received or failed, an
observation, its outcome), built once and run either on the store's own connection (``RunStore.execute``)
or, grouped with other cells' writes, by the group committer (``group_commit.py``)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CellKey:
    arm: str
    dataset: str
    problem: str
    repeat: int

    def as_tuple(self) -> tuple[str, str, str, int]:
        return (self.arm, self.dataset, self.problem, self.repeat)


@dataclass(frozen=True)
class Observation:
    """An execution result bound to the call that produced the code, ``seq`` its place in the cell's order."""

    seq: int
    call_id: str | None
    kind: str
    result: dict[str, Any]


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its parameters; ``crash_point``: the crash point reached right after it, inside
    its transaction (crash-recovery tests)."""

    sql: str
    params: tuple[Any, ...]
    crash_point: str | None = None


_PREPARE = ("INSERT INTO calls (call_id, cache_key, arm, dataset, problem, repeat, stage, call_path, parent, seed, "
            "request, state, prepared_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'prepared', ?) "
            "ON CONFLICT(call_id) DO UPDATE SET state = CASE WHEN calls.state = 'received' THEN 'received' "
            "ELSE 'prepared' END")
_RECEIVE = ("UPDATE calls SET state = 'received', response = ?, finish_reason = ?, prompt_tokens = ?, "
            "completion_tokens = ?, latency_s = ?, attempts = ?, error = NULL, served_from = ?, "
            "finished_at = ? WHERE call_id = ?")
_FAIL = "UPDATE calls SET state = 'error', error = ?, attempts = ?, finished_at = ? WHERE call_id = ?"
_OBSERVE = "INSERT OR REPLACE INTO observations VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_FINISH = "INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def prepare(call_id: str, cache_key: str, cell: CellKey, stage: str, call_path: str, parent: str | None, seed: int,
            request: dict[str, Any]) -> Statement:
    """Write-ahead: re-preparing after a crash updates the same row (the call id is deterministic)."""
    return Statement(_PREPARE, (call_id, cache_key, *cell.as_tuple(), stage, call_path, parent, seed,
                                json.dumps(request, ensure_ascii=False), time.time()))


def receive(call_id: str, text: str, finish_reason: str | None, prompt_tokens: int, completion_tokens: int,
            latency_s: float, attempts: list[dict[str, Any]], served_from: str = "model") -> Statement:
    return Statement(_RECEIVE, (text, finish_reason, prompt_tokens, completion_tokens, latency_s, json.dumps(attempts),
                                served_from, time.time(), call_id))


def fail(call_id: str, error: str, attempts: list[dict[str, Any]]) -> Statement:
    return Statement(_FAIL, (error, json.dumps(attempts), time.time(), call_id))


def observe(cell: CellKey, seq: int, call_id: str | None, kind: str, result: dict[str, Any]) -> Statement:
    return Statement(_OBSERVE, (*cell.as_tuple(), seq, call_id, kind, json.dumps(result, default=str)))


def outcome(cell: CellKey, status: str, passed: bool | None, calls: int, prompt_tokens: int, completion_tokens: int,
            first_pass_attempt: int | None, wall_s: float, detail: dict[str, Any],
            observation: Observation | None = None) -> list[Statement]:
    """A cell's outcome, after the observation it was judged by (the hidden tests' result) when given: one
    transaction, so the judge's record and the verdict are written together or not at all."""
    first = [] if observation is None else [observe(cell, observation.seq, observation.call_id, observation.kind,
                                                    observation.result)]
    return [*first, finish(cell, status, passed, calls, prompt_tokens, completion_tokens, first_pass_attempt,
                           wall_s, detail)]


def finish(cell: CellKey, status: str, passed: bool | None, calls: int, prompt_tokens: int, completion_tokens: int,
           first_pass_attempt: int | None, wall_s: float, detail: dict[str, Any]) -> Statement:
    return Statement(_FINISH, (*cell.as_tuple(), status, None if passed is None else int(passed), calls, prompt_tokens,
                               completion_tokens, first_pass_attempt, wall_s, json.dumps(detail, default=str),
                               time.time()), crash_point="during_outcome_write")
