"""One cell (arm × problem × repeat): the pipeline runs in its context, its submission is judged once on
the hidden tests, and the outcome is stored. Every executor (local or Ray) runs cells through this; the
local one runs the two halves (:func:`run_pipeline`, :func:`judge_and_store`) apart, so that a cell waiting
for its verdict does not keep another cell from its model calls."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.context import Accounting, CellError, PipelineContext
from sotacheck.reruns.crashpoints import crash_point
from sotacheck.reruns.model.base import ChatModel
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.sandbox.pool import SandboxPool
from sotacheck.reruns.sandbox.submission import judge_hidden
from sotacheck.reruns.spec import RunSpec
from sotacheck.reruns.store.group_commit import CellWrites, DirectWrites
from sotacheck.reruns.store.run_store import CellKey, CellStore, Observation


@dataclass(frozen=True)
class PipelineOutcome:
    """A cell whose pipeline has ended and whose submission (if any) is not judged yet: what judging it
    and storing its outcome needs, and nothing of the pipeline's context, so that many can wait for the
    judge at once."""

    cell: CellKey
    problem: Problem
    submitted: str | None
    error: str | None
    notes: tuple[str, ...]
    record: dict[str, Any]
    last_call_id: str | None
    accounting: Accounting
    started: float


async def run_cell(arm: Arm, problem: Problem, repeat: int, spec: RunSpec, dataset: Dataset, model: ChatModel,
                    store: CellStore, pool: SandboxPool, replay: bool, semaphore: asyncio.Semaphore,
                    writes: CellWrites | None = None) -> tuple[int, int, int]:
    """Run one cell: its pipeline, then the judge; its records go through ``writes`` (the local executor's
    group commits), else the store's own methods. Returns (calls, calls sent, tokens)."""
    writes = writes or DirectWrites(store)
    outcome = await run_pipeline(arm, problem, repeat, spec, dataset, model, store, pool, replay, semaphore, writes)
    return await judge_and_store(outcome, pool, writes)


async def run_pipeline(arm: Arm, problem: Problem, repeat: int, spec: RunSpec, dataset: Dataset, model: ChatModel,
                       store: CellStore, pool: SandboxPool, replay: bool, semaphore: asyncio.Semaphore,
                       writes: CellWrites) -> PipelineOutcome:
    """The cell's pipeline, every model call and visible-test run of it; a :class:`CellError` is the cell's
    ``error``, kept for :func:`judge_and_store` to record."""
    cell = CellKey(arm.name, dataset.name, problem.id, repeat)
    ctx = PipelineContext(problem, cell, model, store, pool, spec.sampling(arm), spec.seed, replay, semaphore,
                          checkouts=spec.original_code, writes=writes)
    started = time.monotonic()
    error: str | None = None
    try:
        await arm.run(ctx)
    except CellError as exc:
        error = str(exc)
    return PipelineOutcome(cell, problem, ctx.state.submitted, error, tuple(ctx.state.notes), ctx.state.record,
                           ctx.last_call_id, ctx.accounting, started)


async def judge_and_store(outcome: PipelineOutcome, pool: SandboxPool, writes: CellWrites) -> tuple[int, int, int]:
    """The submission judged once on the hidden tests, then the cell's outcome stored; (calls, sent, tokens)."""
    status: str = "failed"
    passed: bool | None = False
    detail: dict[str, Any]
    judged: Observation | None = None
    if outcome.error is not None:
        status, passed, detail = "error", None, {"error": outcome.error}
    elif outcome.submitted is None:
        detail = {"reason": "; ".join(outcome.notes) or "no code submitted"}
    else:
        crash_point("during_execution")
        result = await pool.offload(judge_hidden, pool, outcome.problem, outcome.submitted)
        judged = Observation(10_000, outcome.last_call_id, "hidden_tests", {
            "status": result.status, "exception_type": result.exception_type, "message": result.message})
        passed = result.passed
        status = "passed" if passed else "failed"
        detail = {"judge_status": result.status, "notes": list(outcome.notes), **outcome.record}
    first = outcome.record.get("first_pass_attempt")
    used = outcome.accounting
    # the hidden tests' observation and the outcome in one commit
    await writes.finish_cell(outcome.cell, status, passed, used.calls, used.prompt_tokens, used.completion_tokens,
                             first, time.monotonic() - outcome.started, detail, judged)
    return used.calls, used.sent, used.prompt_tokens + used.completion_tokens
