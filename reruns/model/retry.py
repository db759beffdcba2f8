"""Retries, in one place: a policy (tries, backoff, a time budget) and ``with_retries``, which runs one try
at a time and records every try as an :class:`Attempt`, so a retried call is visible in the store.

A try that fails raises :class:`TryFailed` saying what happened and whether another try may help (HTTP 429
and 5xx, connection errors, timeouts, malformed responses may; HTTP 4xx does not). Backoff is exponential
with full jitter, drawn from the caller's ``random.Random`` (a model client seeds its own).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from sotacheck.reruns.model.base import Attempt, ModelCallFailed

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_tries: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    budget_s: float = 120.0
    timeout_s: float = 300.0
    jitter: bool = True           # full jitter; without it the delay is the exponential step itself

    def delay_s(self, attempt: int, rng: random.Random) -> float:
        """The pause after failed try number ``attempt`` (0-based)."""
        step = min(self.max_delay_s, self.base_delay_s * 2 ** attempt)
        return rng.uniform(0, step) if self.jitter else step


class TryFailed(Exception):
    """One try failed: ``outcome`` as recorded (``http 429``, ``timeout``, ...), a short ``detail``, and
    whether another try may succeed."""

    def __init__(self, outcome: str, detail: str, retryable: bool) -> None:
        super().__init__(f"{outcome}: {detail}")
        self.outcome, self.detail, self.retryable = outcome, detail, retryable


@dataclass(frozen=True)
class Retried(Generic[T]):
    value: T
    attempts: tuple[Attempt, ...]
    elapsed_s: float              # from the first try to the successful one's end


async def with_retries(try_once: Callable[[], Awaitable[T]], policy: RetryPolicy, rng: random.Random,
                       where: str) -> Retried[T]:
    """Call ``try_once`` until it returns, a failure is not retryable, the tries or the time budget are
    spent. Raises :class:`ModelCallFailed` (every try attached) naming ``where`` and the last failure."""
    attempts: list[Attempt] = []
    started = time.monotonic()
    for attempt in range(policy.max_tries):
        t0 = time.monotonic()
        try:
            value = await try_once()
        except TryFailed as failure:
            attempts.append(Attempt(failure.outcome, time.monotonic() - t0, failure.detail))
            elapsed = time.monotonic() - started
            if not failure.retryable or attempt == policy.max_tries - 1 or elapsed >= policy.budget_s:
                break
            await asyncio.sleep(min(policy.delay_s(attempt, rng), max(0.0, policy.budget_s - elapsed)))
        else:
            attempts.append(Attempt("ok", time.monotonic() - t0))
            return Retried(value, tuple(attempts), time.monotonic() - started)
    last = attempts[-1]
    raise ModelCallFailed(f"{where}: {last.outcome} after {len(attempts)} tr{'y' if len(attempts) == 1 else 'ies'}: "
                          f"{last.detail[:200]}", tuple(attempts))
