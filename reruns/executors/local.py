"""The local executor: every cell in this process's event loop, model calls limited to the spec's
concurrency, executions in one sandbox pool."""

from __future__ import annotations

import asyncio

from sotacheck.reruns.cell import run_cell
from sotacheck.reruns.executors import CellBatch, CellItem, OnCell
from sotacheck.reruns.sandbox.pool import SandboxPool
from sotacheck.reruns.sandbox.result import SandboxLimits
from sotacheck.reruns.store.group_commit import GroupCommitter, GroupedWrites


class LocalExecutor:
    """Cells as asyncio tasks, one per (problem, repeat) group, at most twice the concurrency at once."""

    def connect(self) -> None:
        return None

    async def run_cells(self, batch: CellBatch, on_cell: OnCell) -> tuple[int, int]:
        spec = batch.spec
        semaphore = asyncio.Semaphore(spec.concurrency)
        group_slots = asyncio.Semaphore(max(spec.concurrency * 2, 2))
        calls = sent = 0
        committer = GroupCommitter(batch.store.path)  # the cells' records, committed together
        writes = GroupedWrites(committer)
        with SandboxPool(limits=SandboxLimits(test_timeout_s=spec.test_timeout_s)) as pool:

            async def one_group(group: list[CellItem]) -> None:
                nonlocal calls, sent
                async with group_slots:
                    for arm, problem, repeat in group:
                        made, really, used = await run_cell(arm, problem, repeat, spec, batch.dataset, batch.model,
                                                            batch.store, pool, batch.replay, semaphore, writes)
                        calls += made
                        sent += really
                        on_cell(made, really, used)

            try:
                await asyncio.gather(*(one_group(group) for group in batch.groups))
            finally:
                committer.close()
        return calls, sent

    def close(self) -> None:
        return None
