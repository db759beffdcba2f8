"""One cell (arm × problem × repeat): the pipeline runs in its context, its submission is judged once on
the hidden tests, and the outcome is stored. Every executor (local or Ray) runs cells through this."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.context import CellError, PipelineContext
from sotacheck.reruns.crashpoints import crash_point
from sotacheck.reruns.model.base import ChatModel
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.sandbox.judge import judge_hidden
from sotacheck.reruns.sandbox.pool import SandboxPool
from sotacheck.reruns.spec import RunSpec
from sotacheck.reruns.store.group_commit import CellWrites, DirectWrites
from sotacheck.reruns.store.run_store import CellKey, CellStore


async def run_cell(arm: Arm, problem: Problem, repeat: int, spec: RunSpec, dataset: Dataset, model: ChatModel,
                    store: CellStore, pool: SandboxPool, replay: bool, semaphore: asyncio.Semaphore,
                    writes: CellWrites | None = None) -> tuple[int, int, int]:
    """Run one cell; its records go through ``writes`` (the local executor's group commits), else the
    store's own methods."""
    cell = CellKey(arm.name, dataset.name, problem.id, repeat)
    writes = writes or DirectWrites(store)
    ctx = PipelineContext(problem, cell, model, store, pool, spec.sampling(arm), spec.seed, replay, semaphore,
                          checkouts=spec.original_code, writes=writes)
    started = time.monotonic()
    status: str = "failed"
    passed: bool | None = False
    detail: dict[str, Any] = {}
    try:
        await arm.run(ctx)
    except CellError as exc:
        status, passed, detail = "error", None, {"error": str(exc)}
    else:
        code = ctx.state.submitted
        if code is None:
            detail = {"reason": "; ".join(ctx.state.notes) or "no code submitted"}
        else:
            crash_point("during_execution")
            result = await asyncio.to_thread(judge_hidden, pool, problem, code)
            await writes.observe(cell, 10_000, ctx.last_call_id, "hidden_tests",
                          {"status": result.status, "exception_type": result.exception_type,
                           "message": result.message})
            passed = result.passed
            status = "passed" if passed else "failed"
            detail = {"judge_status": result.status, "notes": ctx.state.notes, **ctx.state.record}
    first = ctx.state.record.get("first_pass_attempt")
    await writes.finish_cell(cell, status, passed, ctx.accounting.calls, ctx.accounting.prompt_tokens,
                      ctx.accounting.completion_tokens, first, time.monotonic() - started, detail)
    return ctx.accounting.calls, ctx.accounting.sent, ctx.accounting.prompt_tokens + ctx.accounting.completion_tokens
