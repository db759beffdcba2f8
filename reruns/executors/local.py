"""The local executor: every cell in this process's event loop, model calls limited to the spec's
concurrency, executions in one sandbox pool."""

from __future__ import annotations

import asyncio

from sotacheck.reruns.cell import PipelineOutcome, judge_and_store, run_pipeline
from sotacheck.reruns.executors.base import CellBatch, OnCell
from sotacheck.reruns.sandbox.pool import SandboxPool
from sotacheck.reruns.sandbox.result import SandboxLimits
from sotacheck.reruns.store.group_commit import GroupCommitter, GroupedWrites

JUDGE_BACKLOG = 8192
"""The most cells whose pipelines have ended that may wait for the judge at once. A cell waiting for its
verdict no longer holds one of the places of the cells in flight, so the model is kept busy while the
judge works through a stretch of slow programs (one that loops until its timeout holds a sandbox slot for
seconds); past this many, new cells wait. A waiting cell holds its submission and its record: about 4 KB
(bench/RESULTS.md, "Harness": the process's peak grew by 13 MB with about 3,000 waiting)."""


class LocalExecutor:
    """Cells in this process's event loop: twice the concurrency of workers, each running one (problem,
    repeat) group's pipelines at a time, and up to :data:`JUDGE_BACKLOG` cells waiting for the judge, each
    judged by a task of its own. Workers, not a task per group: a run of 3,280 groups made 3,280 tasks at its
    start (about 0.1 s before the first call), nearly all of them waiting for a place."""

    def __init__(self, address: str | None = None) -> None:
        """``address``, a cluster's, is not used: this machine is the only place it runs (every executor of
        :data:`~sotacheck.reruns.executors.EXECUTORS` is made with one)."""

    def connect(self) -> None:
        return None

    async def run_cells(self, batch: CellBatch, on_cell: OnCell) -> tuple[int, int]:
        spec = batch.spec
        semaphore = asyncio.Semaphore(spec.concurrency)
        backlog = asyncio.Semaphore(JUDGE_BACKLOG)
        calls = sent = 0
        committer = GroupCommitter(batch.store.path)  # the cells' records, committed together
        writes = GroupedWrites(committer, batch.store.note_prepared)
        groups = iter(batch.groups)  # shared by the workers: each takes the next group not yet taken
        judging: set[asyncio.Task[None]] = set()
        with SandboxPool(limits=SandboxLimits(test_timeout_s=spec.test_timeout_s)) as pool:

            async def judged(outcome: PipelineOutcome) -> None:
                nonlocal calls, sent
                try:
                    made, really, used = await judge_and_store(outcome, pool, writes)
                finally:
                    backlog.release()
                calls += made
                sent += really
                on_cell(made, really, used)

            async def worker() -> None:
                for group in groups:
                    for arm, problem, repeat in group:  # in order: a later arm finds an earlier one's replies
                        outcome = await run_pipeline(arm, problem, repeat, spec, batch.dataset, batch.model,
                                                     batch.store, pool, batch.replay, semaphore, writes)
                        await backlog.acquire()
                        task = asyncio.create_task(judged(outcome))
                        judging.add(task)
                        task.add_done_callback(judging.discard)

            workers = [asyncio.create_task(worker()) for _ in range(max(spec.concurrency * 2, 2))]
            try:
                try:
                    await asyncio.gather(*workers)
                except BaseException:
                    for running in workers:
                        running.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)
                    raise
                finally:
                    await asyncio.gather(*judging)
            finally:
                committer.close()
        return calls, sent

    def close(self) -> None:
        return None
