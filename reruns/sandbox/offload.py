"""Sandbox work awaited from an event loop, on threads of the pool's own (``SandboxPool.offload``).

``loop.run_in_executor`` makes two futures per job (a ``concurrent.futures.Future`` with its condition
variable, and the asyncio one chained to it): 35–45 µs of the event loop's CPU a job, where the job itself
(one execution judged on a warm supervisor) is a couple of milliseconds of other processes' work. Here a job
is a tuple on a queue and its asyncio future is settled once by the thread that ran it: 12–14 µs
(bench/RESULTS.md, "The harness's cost per cell"). The threads start with the first job and end at
:meth:`Offloader.close`.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(error)


class Offloader:
    """``threads`` threads named ``name-N`` running awaited jobs in the order queued."""

    def __init__(self, threads: int, name: str) -> None:
        self._count, self._name = threads, name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    async def run(self, function: Callable[..., R], *args: Any) -> R:
        """``function(*args)`` on one of the threads; its result, or what it raised."""
        if len(self._threads) < self._count:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        self._jobs.put((loop, future, function, args))
        return await future

    def close(self) -> None:
        """Finish the queued jobs, then end the threads."""
        with self._lock:
            for _ in self._threads:
                self._jobs.put(None)
            for thread in self._threads:
                thread.join()
            self._threads = []

    def _start(self) -> None:
        with self._lock:
            while len(self._threads) < self._count:
                thread = threading.Thread(target=self._serve, name=f"{self._name}-{len(self._threads)}", daemon=True)
                thread.start()
                self._threads.append(thread)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, future, function, args = job
            if future.cancelled():  # its caller stopped waiting before it started (as an executor's job would)
                continue
            value, error = None, None
            try:
                value = function(*args)
            except BaseException as exc:  # handed to the caller, as run_in_executor does
                error = exc
            try:
                loop.call_soon_threadsafe(_settle, future, value, error)
            except RuntimeError:
                pass  # the loop is closed: nobody waits any more
