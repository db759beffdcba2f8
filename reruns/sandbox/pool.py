"""A pool of sandbox workers sized to the machine; each worker owns one slot (one sandbox uid), leased
machine-wide so that concurrent processes never share a uid."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sotacheck.reruns.sandbox.execution import execute
from sotacheck.reruns.sandbox.result import ExecutionResult, SandboxLimits
from sotacheck.reruns.sandbox.slots import SlotLease
from sotacheck.reruns.sandbox.supervisor import default_workers, start_supervisor, take_warm_lease

T = TypeVar("T")
R = TypeVar("R")


class SandboxPool:
    """Runs many executions concurrently. Threads only wait on child processes, so the GIL is no
    bottleneck, and the parent survives whatever a child does."""

    def __init__(self, workers: int | None = None, limits: SandboxLimits | None = None) -> None:
        self.workers = default_workers() if workers is None else workers
        if self.workers < 1:
            raise ValueError(f"`workers` must be at least 1, got {self.workers}")
        self.limits = limits or SandboxLimits()
        # Slots leased (and supervisors started) by the launcher before the CLI was imported, if it did.
        self._lease = take_warm_lease(self.workers, self.limits.isolate_network) or SlotLease(self.workers)
        self._slots: queue.Queue[int] = queue.Queue()
        for slot in self._lease.slots:
            self._slots.put(slot)
        self._threads = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="sandbox")
        self._offloader: Any = None  # ``offload``'s threads (``sandbox/offload.py``), made by its first job
        for slot in self._lease.slots:  # they import in parallel with whatever the caller does next
            start_supervisor(slot, self.limits.isolate_network)

    def run(self, code: str, tests: list[str] | tuple[str, ...], *, setup: str = "",
            entry_point: str | None = None, helpers: str = "", names: tuple[str, ...] = (),
            limits: SandboxLimits | None = None) -> ExecutionResult:
        """One execution on a free slot, under ``limits`` (default: the pool's)."""
        slot = self._slots.get()
        try:
            return execute(code, tests, setup=setup, entry_point=entry_point, limits=limits or self.limits,
                           slot=slot, helpers=helpers, names=names)
        finally:
            self._slots.put(slot)

    def map(self, function: Callable[[T], ExecutionResult], items: Iterable[T]) -> Iterator[ExecutionResult]:
        """Apply ``function`` (which calls ``self.run``) to each item concurrently, results in order."""
        return self._threads.map(function, items)

    async def offload(self, function: Callable[..., R], *args: Any) -> R:
        """Await ``function(*args)`` (which calls ``self.run``) run on one of the pool's own threads, one per
        worker. Sandbox work queues for the pool alone: in the event loop's default executor it would hold
        up whatever else waits there behind a stretch of slow programs (a client's proxy and ``.netrc``
        lookups, DNS resolution), and with them the model calls."""
        if self._offloader is None:
            from sotacheck.reruns.sandbox.offload import Offloader  # asyncio: not on the judge command's start-up path

            self._offloader = Offloader(self.workers, "sandbox-offload")
        result: R = await self._offloader.run(function, *args)
        return result

    def close(self) -> None:
        if self._offloader is not None:
            self._offloader.close()
        self._threads.shutdown(wait=True)
        self._lease.release()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
