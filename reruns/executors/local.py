"""The local executor: every cell in this process's event loop, model calls limited to the spec's
concurrency, executions in one sandbox pool."""

from __future__ import annotations

import asyncio

from sotacheck.reruns.cell import PipelineOutcome, judge_and_store, run_pipeline
from sotacheck.reruns.executors import CellBatch, CellItem, OnCell
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
    """Cells as asyncio tasks, one per (problem, repeat) group, at most twice the concurrency running their
    pipelines at once, and up to :data:`JUDGE_BACKLOG` more waiting for the judge."""

    def connect(self) -> None:
        return None

    async def run_cells(self, batch: CellBatch, on_cell: OnCell) -> tuple[int, int]:
        spec = batch.spec
        semaphore = asyncio.Semaphore(spec.concurrency)
        group_slots = asyncio.Semaphore(max(spec.concurrency * 2, 2))
        backlog = asyncio.Semaphore(JUDGE_BACKLOG)
        calls = sent = 0
        committer = GroupCommitter(batch.store.path)  # the cells' records, committed together
        writes = GroupedWrites(committer)
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

            async def one_group(group: list[CellItem]) -> None:
                judging: list[asyncio.Task[None]] = []
                try:
                    async with group_slots:  # released once the group's last pipeline has ended
                        for arm, problem, repeat in group:
                            outcome = await run_pipeline(arm, problem, repeat, spec, batch.dataset, batch.model,
                                                         batch.store, pool, batch.replay, semaphore, writes)
                            await backlog.acquire()
                            judging.append(asyncio.create_task(judged(outcome)))
                finally:
                    await asyncio.gather(*judging)

            try:
                await asyncio.gather(*(one_group(group) for group in batch.groups))
            finally:
                committer.close()
        return calls, sent

    def close(self) -> None:
        return None
