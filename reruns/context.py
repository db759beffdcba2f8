"""What a pipeline sees: ``await ctx.chat(messages, stage=...)``, ``await ctx.run_visible_tests(code)``,
``ctx.submit(code)``. The context does the recording, seeding, caching and accounting, so a pipeline file
reads like its paper's algorithm box and nothing else."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from sotacheck.reruns.benchmarks.problem import Problem, ProblemView
from sotacheck.reruns.crashpoints import crash_point
from sotacheck.reruns.model.base import ChatModel, ChatRequest, Message, ModelCallFailed, SamplingParams, cache_key
from sotacheck.reruns.sandbox.pool import SandboxPool
from sotacheck.reruns.sandbox.result import ExecutionResult
from sotacheck.reruns.sandbox.submission import judge_hidden, run_visible
from sotacheck.reruns.seeds import derive_seed
from sotacheck.reruns.store.group_commit import CellWrites, DirectWrites
from sotacheck.reruns.store.run_store import CellKey, CellStore


class CellError(Exception):
    """The cell has no valid result (a failed model call, a replay miss): its outcome is ``error``."""


class ReplayMiss(CellError):
    """Replay found no stored response for a call."""


@dataclass
class Accounting:
    calls: int = 0                 # calls the pipeline made (served by the model, the store or the cache)
    sent: int = 0                  # calls actually sent to the model endpoint
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class CellState:
    submitted: str | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)


class PipelineContext:
    """``problem`` is what the pipeline may see (a :class:`ProblemView`: no hidden tests, no canonical
    solution); the whole problem stays private to the context, which judges with it. A pipeline's
    parameters are not here: ``run(ctx, params)`` receives them, typed. ``checkouts`` are the authors' code
    checkouts the run names (repository → path), which the ``@original`` pipelines run from."""

    def __init__(self, problem: Problem, cell: CellKey, model: ChatModel, store: CellStore, pool: SandboxPool,
                 sampling: SamplingParams, base_seed: int, replay: bool = False,
                 model_semaphore: asyncio.Semaphore | None = None, checkouts: Mapping[str, str] | None = None,
                 writes: CellWrites | None = None) -> None:
        self._problem = problem
        self.problem = ProblemView.of(problem)
        self.cell = cell
        self._model = model
        self._store = store  # read here; written through ``_writes`` (each record durable when awaited)
        self._writes = writes or DirectWrites(store)
        self._pool = pool
        self._sampling = sampling
        self._base_seed = base_seed
        self._replay = replay
        self._semaphore = model_semaphore or asyncio.Semaphore(64)
        self.checkouts: Mapping[str, str] = dict(checkouts or {})
        self._scopes: list[str] = []
        self._counters: Counter[str] = Counter()
        self._observations = 0
        self.executions: dict[str, ExecutionResult] = {}  # code → its visible-test result (evidence for the gate)
        self.last_call_id: str | None = None
        self.accounting = Accounting()
        self.state = CellState()

    # --- paths -------------------------------------------------------------------------------------
    @contextmanager
    def scope(self, name: str, index: int) -> Iterator[None]:
        """Nest call paths, e.g. ``with ctx.scope("plan", 2):`` gives ``plan[2]/debug[0]``."""
        self._scopes.append(f"{name}[{index}]")
        try:
            yield
        finally:
            self._scopes.pop()

    def _next_path(self, stage: str) -> str:
        prefix = "/".join(self._scopes)
        key = f"{prefix}/{stage}" if prefix else stage
        index = self._counters[key]
        self._counters[key] += 1
        return f"{key}[{index}]"

    # --- the model ---------------------------------------------------------------------------------
    async def chat(self, messages: Sequence[tuple[str, str]], stage: str) -> str:
        """Send one chat request (or replay it from the store) and return the reply text."""
        call_path = self._next_path(stage)
        seed = derive_seed(self._base_seed, self._problem.id, self.cell.repeat, call_path)
        request = ChatRequest(tuple(Message(role, content) for role, content in messages), self._sampling, seed)
        key = cache_key(self._model.identity, self._model.endpoint, request, self.cell.repeat)
        call_id = hashlib.sha256(f"{self.cell.as_tuple()}|{call_path}".encode()).hexdigest()[:32]
        parent = self.last_call_id
        self.last_call_id = call_id
        self.accounting.calls += 1
        own = self._store.find_call(call_id)
        if own is not None and own.state == "received" and own.cache_key == key:
            return self._account(own.response or "", own.prompt_tokens, own.completion_tokens)
        stored = self._store.find_received(key)
        await self._writes.prepare_call(call_id, key, self.cell, stage, call_path, parent, seed, request.as_dict())
        if stored is not None:
            await self._writes.receive_call(call_id, stored.response or "", stored.finish_reason, stored.prompt_tokens or 0,
                                     stored.completion_tokens or 0, 0.0, [], served_from=stored.served_label)
            return self._account(stored.response or "", stored.prompt_tokens, stored.completion_tokens)
        if self._replay:
            message = f"replay: no stored response for call {call_path} of {self.cell.arm}/{self._problem.id}/" \
                      f"repeat {self.cell.repeat} (call id {call_id})"
            await self._writes.fail_call(call_id, message, [])
            raise ReplayMiss(message)
        async with self._semaphore:
            self.accounting.sent += 1
            crash_point("before_send")
            try:
                response = await self._model.complete(request)
            except ModelCallFailed as exc:
                await self._writes.fail_call(call_id, str(exc), [asdict(a) for a in exc.attempts])
                raise CellError(f"model call {call_path} failed: {exc}") from None
        crash_point("after_send")
        await self._writes.receive_call(call_id, response.text, response.finish_reason, response.prompt_tokens,
                                 response.completion_tokens, response.latency_s, [a.as_dict() for a in response.attempts])
        crash_point("after_receive")
        return self._account(response.text, response.prompt_tokens, response.completion_tokens)

    def _account(self, text: str, prompt_tokens: int | None, completion_tokens: int | None) -> str:
        self.accounting.prompt_tokens += prompt_tokens or 0
        self.accounting.completion_tokens += completion_tokens or 0
        return text

    # --- execution ---------------------------------------------------------------------------------
    async def run_visible_tests(self, code: str) -> ExecutionResult:
        """Run the visible tests on ``code``; the observation is bound to the call that produced it."""
        started = time.monotonic()
        result = await self._pool.offload(run_visible, self._pool, self._problem, code)
        self.executions[code] = result
        await self._writes.observe(self.cell, self._observations, self.last_call_id, "visible_tests",
                            {"status": result.status, "tests": [asdict(t) for t in result.tests],
                             "feedback": result.feedback, "wall_s": time.monotonic() - started})
        self._observations += 1
        return result

    async def record_hidden_pass(self, code: str, attempt: int) -> None:
        """Judge ``code`` on the hidden tests for the record only (per-attempt data for the decay analysis).
        Returns nothing: the pipeline never learns the result, so it cannot steer by hidden tests."""
        if self.state.record.get("first_pass_attempt") is not None:
            return
        result = await self._pool.offload(judge_hidden, self._pool, self._problem, code)
        await self._writes.observe(self.cell, 5_000 + attempt, self.last_call_id, "hidden_measure",
                            {"attempt": attempt, "status": result.status})
        if result.passed:
            self.state.record["first_pass_attempt"] = attempt

    def submit(self, code: str | None, note: str | None = None) -> None:
        """The pipeline's final answer (None when it produced no code); judged once, on the hidden tests.
        A wrapper (the gate) may hold it and submit again; the last submission counts."""
        self.state.submitted = code
        if note:
            self.state.notes.append(note)
