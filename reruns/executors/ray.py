"""Scale-out on Ray: cells (arm × problem × repeat) and judge batches become Ray tasks.

The driver stays the single writer of the run store. One *gateway* actor, pinned to the driver's node,
owns the store's connection and the model client; a cell running on any node reaches both only through
it. Write-ahead holds unchanged: the cell prepares each call through the gateway before the gateway
sends it, and the gateway records the reply itself as soon as it arrives, so a reply is never lost with
the worker that asked for it. The gateway also bounds how many requests are in flight (one limit for the
whole cluster) and coalesces identical requests (same cache key) in flight at once.

Worker failure: a cell task lost with its node is retried by Ray (``max_retries``). The retried cell
re-derives its calls; every call already received is found in the store (or joins the one still in
flight at the gateway) and is never sent again.

Judge executions run inside the Ray worker process with the same sandbox limits (its own
``SandboxPool`` of one slot, leased machine-wide like every pool).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sotacheck.core.errors import SotacheckError
from sotacheck.core.version import version
from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.executors.base import CellBatch, OnCell
from sotacheck.reruns.model.base import Attempt, ChatRequest, ChatResponse, ModelCallFailed
from sotacheck.reruns.model.recipe import ModelRecipe
from sotacheck.reruns.sandbox.result import SandboxLimits

CELL_RETRIES = 3
# A cell spends nearly all its time waiting on the model, and its judge executions take milliseconds:
# four cells share a CPU, so a cluster keeps the endpoint busy without a CPU per waiting cell.
CELL_CPUS = 0.25

_PROBE_SOURCE = '''
def probe():
    """Runs on one node: can this node's Python import sotacheck, and which version?"""
    try:
        from sotacheck.core.version import version
        return version(), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"
'''


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise SotacheckError("`--executor ray` needs Ray on this machine: pip install 'sotacheck[ray]'") from None
    return ray


def _check_reachable(address: str) -> None:
    """Fail fast (one line) when a ``host:port`` cluster address does not accept connections."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise SotacheckError(f"--ray-address {address!r}: expected HOST:PORT, 'auto' or 'local'")
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            pass
    except OSError as exc:
        raise SotacheckError(f"--ray-address {address}: cannot reach a Ray cluster there ({exc})") from None


def connect(address: str | None = None, num_cpus: int | None = None) -> None:
    """Join the cluster at ``address`` (HOST:PORT, ``auto`` for one already started on this machine) or,
    without one, start a private Ray instance; then check every node can import this sotacheck version.
    Everything here runs before any model call."""
    ray = _ray()
    if ray.is_initialized():
        return
    if address not in (None, "auto", "local"):
        _check_reachable(address)
    try:
        if address is None:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                     configure_logging=True)
        else:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR", configure_logging=True)
    except ConnectionError as exc:
        raise SotacheckError(f"--ray-address {address}: cannot connect to the Ray cluster ({exc})") from None
    check_nodes()


def check_nodes() -> None:
    """Run a probe pinned to each alive node; any node lacking sotacheck (or with another version) is a
    one-line error naming the node."""
    ray = _ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    namespace: dict[str, Any] = {"__name__": "sotacheck_ray_probe"}  # not importable: pickled by value
    exec(_PROBE_SOURCE, namespace)
    probe = ray.remote(num_cpus=0)(namespace["probe"])
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    refs = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
            for n in nodes]
    for node, (node_version, problem) in zip(nodes, ray.get(refs, timeout=120), strict=True):
        where = f"Ray node {node.get('NodeManagerAddress')} ({node['NodeID'][:12]})"
        if problem is not None:
            raise SotacheckError(f"{where} cannot import sotacheck ({problem}); install sotacheck[ray] on every node")
        if node_version != version():
            raise SotacheckError(f"{where} has sotacheck {node_version}, the driver {version()}; install the same "
                                 f"version on every node")


def shutdown() -> None:
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()


class Gateway:
    """The Ray actor (on the driver's node) that owns the store connection and the model client."""

    def __init__(self, run_dir: str, recipe: ModelRecipe, concurrency: int) -> None:
        from sotacheck.reruns.store.run_store import RunStore

        self._store = RunStore.open(Path(run_dir))
        # the driver has checked and recorded them; one gone since (a replay elsewhere) is simply not reused
        self._store.attach_reuse([Path(p) for p in self._store.get_meta("reuse_from", []) if Path(p).is_dir()])
        self._recipe = recipe
        self._model: Any = None
        self._limit = asyncio.Semaphore(concurrency)
        self._in_flight: dict[str, tuple[str, asyncio.Future[ChatResponse]]] = {}
        self.sent = 0

    def _open_model(self) -> Any:
        if self._model is None:
            self._model = self._recipe.open()
        return self._model

    async def store(self, method: str, *args: Any) -> Any:
        if method not in _STORE_METHODS:
            raise ValueError(f"`method` {method!r} is not a store operation the gateway forwards")
        if method in ("receive_call", "fail_call"):
            current = self._store.find_call(args[0])
            if current is not None and current.state == "received":
                return None  # the gateway recorded it when it arrived
        return getattr(self._store, method)(*args)

    async def complete(self, call_id: str, key: str, request: ChatRequest) -> tuple[str, Any]:
        """Send (or join, or find) one prepared call; record the reply before answering."""
        stored = self._store.find_received(key)
        if stored is not None:
            self._record(call_id, _response_of(stored), stored.served_label)
            return "ok", _response_of(stored)
        if key in self._in_flight:
            leader, shared = self._in_flight[key]
            try:
                response = await asyncio.shield(shared)
            except ModelCallFailed as exc:
                return "failed", (str(exc), [asdict(a) for a in exc.attempts])
            self._record(call_id, response, f"cache:{leader}")
            return "ok", response
        future: asyncio.Future[ChatResponse] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = (call_id, future)
        try:
            async with self._limit:
                self.sent += 1
                response = await self._open_model().complete(request)
        except ModelCallFailed as exc:
            self._store.fail_call(call_id, str(exc), [asdict(a) for a in exc.attempts])
            future.set_exception(exc)
            future.exception()  # mark retrieved: followers may not exist
            return "failed", (str(exc), [asdict(a) for a in exc.attempts])
        except BaseException as exc:  # cancelled, or a bug: followers must not wait for ever
            future.set_exception(exc if isinstance(exc, Exception) else RuntimeError("the call was cancelled"))
            future.exception()
            raise
        finally:
            self._in_flight.pop(key, None)
        self._record(call_id, response, "model")
        future.set_result(response)
        return "ok", response

    def _record(self, call_id: str, response: ChatResponse, served_from: str) -> None:
        current = self._store.find_call(call_id)
        if current is not None and current.state == "received":
            return
        latency = response.latency_s if served_from == "model" else 0.0
        self._store.receive_call(call_id, response.text, response.finish_reason, response.prompt_tokens,
                                 response.completion_tokens, latency, [asdict(a) for a in response.attempts],
                                 served_from=served_from)

    async def sent_count(self) -> int:
        return self.sent

    async def close(self) -> None:
        if self._model is not None:
            await self._model.close()
        self._store.close()


_STORE_METHODS = frozenset({"find_call", "find_received", "prepare_call", "receive_call", "fail_call", "observe",
                            "finish_cell"})


def _response_of(stored: Any) -> ChatResponse:
    return ChatResponse(stored.response or "", stored.finish_reason, stored.prompt_tokens or 0,
                        stored.completion_tokens or 0, 0.0, ())


# --- what a cell on a worker sees ---------------------------------------------------------------------------
class GatewayClient:
    """Store and model for one cell on a worker: every operation goes through the gateway actor."""

    def __init__(self, gateway: Any, identity: str, endpoint: str) -> None:
        self._gateway = gateway
        self._identity, self._endpoint = identity, endpoint
        self._prepared: tuple[str, str] | None = None
        self._recorded_by_gateway: str | None = None  # the last call complete() sent: the gateway saved its reply

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def endpoint(self) -> str:
        return self._endpoint

    def _store(self, method: str, *args: Any) -> Any:
        return _ray().get(self._gateway.store.remote(method, *args))

    def find_call(self, call_id: str) -> Any:
        return self._store("find_call", call_id)

    def find_received(self, key: str) -> Any:
        return self._store("find_received", key)

    def prepare_call(self, call_id: str, key: str, *args: Any) -> None:
        self._store("prepare_call", call_id, key, *args)
        self._prepared = (call_id, key)  # a cell's calls are sequential: the next complete() is this call

    def receive_call(self, call_id: str, text: str, finish_reason: str | None, prompt_tokens: int,
                     completion_tokens: int, latency_s: float, attempts: list[dict[str, Any]],
                     served_from: str = "model") -> None:
        if call_id == self._recorded_by_gateway:
            return  # saved by the gateway when it arrived: no second round trip
        self._store("receive_call", call_id, text, finish_reason, prompt_tokens, completion_tokens, latency_s,
                    attempts, served_from)

    def fail_call(self, *args: Any) -> None:
        self._store("fail_call", *args)

    def observe(self, *args: Any) -> None:
        self._store("observe", *args)

    def finish_cell(self, *args: Any) -> None:
        self._store("finish_cell", *args)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if self._prepared is None:
            raise RuntimeError("complete() before prepare_call(): the write-ahead record must exist first")
        call_id, key = self._prepared
        self._prepared = None
        outcome, value = await self._gateway.complete.remote(call_id, key, request)
        self._recorded_by_gateway = call_id
        if outcome == "failed":
            message, attempts = value
            raise ModelCallFailed(message, tuple(Attempt(**a) for a in attempts))
        return value


_WORKER_POOLS: dict[SandboxLimits, Any] = {}


def _worker_pool(limits: SandboxLimits) -> Any:
    """One sandbox slot per Ray worker process, kept for the life of the process."""
    from sotacheck.reruns.sandbox.pool import SandboxPool

    if limits not in _WORKER_POOLS:
        _WORKER_POOLS[limits] = SandboxPool(workers=1, limits=limits)
    return _WORKER_POOLS[limits]


def _cell_task(arm_name: str, params: dict[str, Any], dataset: Dataset, index: int, repeat: int, spec: Any,
               gateway: Any, identity: str, endpoint: str, replay: bool, concurrency: int) -> tuple[int, int, int]:
    from sotacheck.reruns.cell import run_cell
    from sotacheck.reruns.pipelines import Arm

    client = GatewayClient(gateway, identity, endpoint)
    pool = _worker_pool(SandboxLimits(test_timeout_s=spec.test_timeout_s))
    arm = Arm.of(arm_name, params)

    async def run() -> tuple[int, int, int]:
        return await run_cell(arm, dataset.problems[index], repeat, spec, dataset, client, client, pool,
                               replay, asyncio.Semaphore(concurrency))

    return asyncio.run(run())


async def run_cells(run_dir: Path, spec: Any, dataset: Dataset, model: Any, cells: Sequence[tuple[Any, Problem, int]],
                    replay: bool, on_done: Any) -> tuple[int, int, int]:
    """Run ``cells`` as Ray tasks through one gateway; ``on_done(calls, sent, tokens)`` after each.
    Returns the totals (calls, calls sent by the gateway, tokens)."""
    ray = _ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    gateway_class = ray.remote(num_cpus=0, max_restarts=0)(Gateway)
    gateway = gateway_class.options(scheduling_strategy=here, max_concurrency=1000).remote(
        str(run_dir), ModelRecipe.of(model), spec.concurrency)
    task = ray.remote(num_cpus=CELL_CPUS, max_retries=CELL_RETRIES, retry_exceptions=False)(_cell_task)
    dataset_ref = ray.put(dataset)
    index = {p.id: i for i, p in enumerate(dataset.problems)}
    refs = [task.options(scheduling_strategy="SPREAD").remote(
        arm.pipeline, arm.param_dict(), dataset_ref, index[problem.id],
        repeat, spec, gateway, model.identity, model.endpoint, replay, spec.concurrency)
        for arm, problem, repeat in cells]
    calls = tokens = 0
    try:
        pending = list(refs)
        while pending:
            done, pending = await asyncio.to_thread(ray.wait, pending, num_returns=1)
            made, _, used = ray.get(done[0])
            calls += made
            tokens += used
            on_done(made, used)
        sent = int(ray.get(gateway.sent_count.remote()))
    finally:
        ray.get(gateway.close.remote())
        ray.kill(gateway)
    return calls, sent, tokens


class RayExecutor:
    """The :class:`~sotacheck.reruns.executors.Executor` for a Ray cluster: cells as Ray tasks, every store
    write and model call through one gateway actor on the driver's node."""

    def __init__(self, address: str | None) -> None:
        self._address = address

    def connect(self) -> None:
        connect(self._address)  # an unreachable cluster or a node without sotacheck: before any model call

    async def run_cells(self, batch: CellBatch, on_cell: OnCell) -> tuple[int, int]:
        cells = [item for group in batch.groups for item in group]
        calls, sent, _ = await run_cells(batch.run_dir, batch.spec, batch.dataset, batch.model, cells, batch.replay,
                                         lambda made, used: on_cell(made, 0, used))
        return calls, sent

    def close(self) -> None:
        shutdown()


# --- judging ---------------------------------------------------------------------------------------------
def _judge_batch(dataset_hash: str, items: list[tuple[Problem, str]], limits: SandboxLimits) -> list[Any]:
    from sotacheck.reruns.sandbox.submission import judge_many

    return list(judge_many(_worker_pool(limits), dataset_hash, items))


def judge_pairs(dataset_hash: str, pairs: Sequence[tuple[Problem, str]], limits: SandboxLimits,
                batch: int = 16, on_done: Any = None) -> list[Any]:
    """Judge (problem, code) pairs as Ray tasks of ``batch`` executions each; verdicts in input order."""
    if batch < 1:
        raise ValueError(f"`batch` must be at least 1, got {batch}")
    ray = _ray()
    task = ray.remote(num_cpus=1, max_retries=CELL_RETRIES)(_judge_batch)
    chunks = [list(pairs[i:i + batch]) for i in range(0, len(pairs), batch)]
    refs = [task.remote(dataset_hash, chunk, limits) for chunk in chunks]
    order = {ref: i for i, ref in enumerate(refs)}
    results: list[list[Any]] = [[] for _ in refs]
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        results[order[done[0]]] = ray.get(done[0])
        if on_done is not None:
            on_done(len(results[order[done[0]]]))
    return [verdict for chunk in results for verdict in chunk]
