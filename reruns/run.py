"""Orchestration: a run spec, its cells (arm × problem × repeat), many in flight at once against the
endpoint, the judge's pool for execution, resume and replay, and the export at the end."""

from __future__ import annotations

import asyncio
import sys
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sotacheck.core.errors import SotacheckError
from sotacheck.core.provenance import git_revision, versions
from sotacheck.core.rundir import DatasetInfo, Manifest, ModelIdentity, export_into
from sotacheck.reruns.benchmarks.loaders import load_dataset
from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.context import CellError, PipelineContext
from sotacheck.reruns.crashpoints import crash_point
from sotacheck.reruns.leakage import check_leakage
from sotacheck.reruns.model import registry as backends
from sotacheck.reruns.model.base import ChatModel, SamplingParams
from sotacheck.reruns.model.retry import RetryPolicy
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.sandbox.judge import judge_hidden
from sotacheck.reruns.sandbox.pool import SandboxPool
from sotacheck.reruns.sandbox.result import SandboxLimits
from sotacheck.reruns.store.export import outcome_frame
from sotacheck.reruns.store.run_store import CellKey, CellStore, RunStore


class PipelineSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class RunSpec(BaseModel):
    """Everything that defines a run; frozen into the store at the start and checked on resume."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    dataset: str
    pipelines: list[PipelineSpec]
    model: str = "local"
    model_name: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = Field(default=0.0, ge=0, le=2)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_tokens: int = Field(default=768, ge=1)
    repeats: int = Field(default=1, ge=1)
    limit: int | None = Field(default=None, ge=1)
    seed: int = 0
    concurrency: int = Field(default=4, ge=1)
    request_timeout_s: float = Field(default=300.0, gt=0)
    max_tries: int = Field(default=6, ge=1)
    test_timeout_s: float = Field(default=5.0, gt=0)
    data_dir: str | None = None

    @field_validator("pipelines")
    @classmethod
    def _known(cls, value: list[PipelineSpec]) -> list[PipelineSpec]:
        if not value:
            raise ValueError("at least one pipeline is needed")
        for spec in value:
            Arm.of(spec.name, spec.params)  # the registry's one check: an unknown pipeline or a bad parameter
        return value

    def arms(self) -> list[Arm]:
        return [Arm.of(p.name, p.params) for p in self.pipelines]

    def sampling(self) -> SamplingParams:
        return SamplingParams(self.temperature, self.top_p, self.max_tokens)


def load_spec(path: Path) -> RunSpec:
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SotacheckError(f"{path}: cannot read the run spec ({exc})") from None
    return validate_spec(raw, str(path))


def validate_spec(raw: Any, where: str) -> RunSpec:
    try:
        return RunSpec.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field_name = ".".join(str(p) for p in error["loc"]) or "(spec)"
        raise SotacheckError(f"{where}: field `{field_name}`: {error['msg']}") from None
    except SotacheckError as exc:
        raise SotacheckError(f"{where}: {exc}") from None


def open_model(spec: RunSpec, stored_identity: tuple[str, str] | None, replay: bool,
               server_log: Path | None = None) -> AbstractAsyncContextManager[ChatModel]:
    """``async with open_model(...) as model:`` the model a spec names, through the back-end registry
    (``reruns.model.registry``): the embedded local server, any GGUF, an OpenAI-compatible URL, the
    loopback test endpoint, or, in replay, the recorded identity serving nothing."""
    retry = RetryPolicy(max_tries=spec.max_tries, timeout_s=spec.request_timeout_s,
                        budget_s=max(120.0, 2 * spec.request_timeout_s))
    return backends.open_model(backends.ModelTarget(
        "replay" if replay else spec.model, spec.model_name, spec.api_key_env, retry, server_log, stored_identity,
        spec.dataset, spec.data_dir))


@dataclass
class RunSummary:
    cells: int
    finished: int
    errors: int
    calls: int
    sent: int
    wall_s: float
    leakage_clean: bool
    leaks: int


async def run_cell(arm: Arm, problem: Problem, repeat: int, spec: RunSpec, dataset: Dataset, model: ChatModel,
                    store: CellStore, pool: SandboxPool, replay: bool, semaphore: asyncio.Semaphore
                    ) -> tuple[int, int, int]:
    cell = CellKey(arm.name, dataset.name, problem.id, repeat)
    ctx = PipelineContext(problem, cell, model, store, pool, spec.sampling(), spec.seed, replay, semaphore)
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
            store.observe(cell, 10_000, ctx.last_call_id, "hidden_tests",
                          {"status": result.status, "exception_type": result.exception_type,
                           "message": result.message})
            passed = result.passed
            status = "passed" if passed else "failed"
            detail = {"judge_status": result.status, "notes": ctx.state.notes, **ctx.state.record}
    first = ctx.state.record.get("first_pass_attempt")
    store.finish_cell(cell, status, passed, ctx.accounting.calls, ctx.accounting.prompt_tokens,
                      ctx.accounting.completion_tokens, first, time.monotonic() - started, detail)
    return ctx.accounting.calls, ctx.accounting.sent, ctx.accounting.prompt_tokens + ctx.accounting.completion_tokens


async def execute_run(run_dir: Path, spec: RunSpec | None = None, replay: bool = False, progress: bool = True,
                      server_log: Path | None = None, executor: str = "local",
                      ray_address: str | None = None, reuse: list[Path] | None = None) -> RunSummary:
    """Start (with ``spec``) or resume (without) the run in ``run_dir``; replay serves every call from the store.

    ``reuse`` lists other runs whose received replies answer this run's identical requests (see
    ``RunStore.attach_reuse``); it is remembered, so a resume reuses the same runs.

    ``executor`` is ``local`` (this process) or ``ray`` (cells as Ray tasks, see ``reruns.cluster``); it is
    not part of the spec, because it never changes a result: a run started on one resumes on the other."""
    if executor not in ("local", "ray"):
        raise SotacheckError(f"--executor {executor!r}: expected 'local' or 'ray'")
    if executor == "ray":
        from sotacheck.reruns import cluster

        cluster.connect(ray_address)  # an unreachable cluster or a node without sotacheck: before any model call
    creating = spec is not None and not (run_dir / "store.sqlite").exists()
    store = RunStore.open(run_dir, create=creating)
    try:
        stored_spec = store.get_meta("spec")
        if spec is None:
            if stored_spec is None:
                raise SotacheckError(f"{run_dir}: the store has no run spec to resume")
            spec = validate_spec(stored_spec, f"{run_dir}/store.sqlite")
        elif stored_spec is not None and RunSpec.model_validate(stored_spec) != spec:
            raise SotacheckError(f"{run_dir} already holds a run with a different spec; use `sotacheck resume` or "
                                 f"another --out")
        dataset = load_dataset(spec.dataset, spec.data_dir).head(spec.limit)
        identity = store.get_meta("model_identity")
        async with open_model(spec, tuple(identity) if identity else None, replay, server_log) as model:
            if stored_spec is None:
                store.set_meta("spec", spec.model_dump())
                store.set_meta("created", time.time())
            store.set_meta("model_identity", [model.identity, model.endpoint])
            if not replay:  # a replay answers from this run's own store only
                _attach_reuse(store, reuse)
            store.set_meta("dataset", {"name": dataset.name, "content_hash": dataset.content_hash,
                                       "sources": list(dataset.sources), "problems": len(dataset)})
            store.set_meta("versions", versions())
            store.set_meta("git_revision", git_revision())
            summary = await _execute(run_dir, spec, dataset, model, store, replay, progress, executor)
        return summary
    finally:
        store.close()
        if executor == "ray":
            from sotacheck.reruns import cluster

            cluster.shutdown()


def _attach_reuse(store: RunStore, reuse: list[Path] | None) -> None:
    remembered = [Path(p) for p in store.get_meta("reuse_from", [])]
    if reuse is None:
        reuse = [p for p in remembered if p.is_dir()]
        for gone in set(remembered) - set(reuse):
            print(f"note: reused run {gone} is gone; requests it would have answered are sent", file=sys.stderr)
    store.attach_reuse(reuse)
    store.set_meta("reuse_from", [str(p.resolve()) for p in reuse])


async def _execute(run_dir: Path, spec: RunSpec, dataset: Dataset, model: ChatModel, store: RunStore, replay: bool,
                   progress: bool, executor: str = "local") -> RunSummary:
    from tqdm import tqdm

    finished = set() if replay else store.finished_cells()  # replay re-derives every cell from the store
    arms = spec.arms()
    # One task per (problem, repeat) running its arms in order: arms that share a prefix of calls (a sweep's
    # settings) then find the earlier arm's responses in the store instead of racing it to the endpoint.
    groups = [[(arm, problem, repeat) for arm in arms if (arm.name, dataset.name, problem.id, repeat) not in finished]
              for problem in dataset.problems for repeat in range(spec.repeats)]
    groups = [g for g in groups if g]
    total = len(arms) * len(dataset) * spec.repeats
    remaining = sum(len(g) for g in groups)
    started = time.monotonic()

    class ProgressLines:
        """tqdm's stand-in when stderr is not a terminal (a CI log, a file): a plain line when a cell
        finishes, at most one per ``interval`` seconds (so every cell of a slow run is shown)."""

        interval = 30.0

        def __init__(self) -> None:
            self.n, self.last = total - remaining, started
            self.postfix: dict[str, Any] = {}

        def set_postfix(self, ordered_dict: dict[str, Any] | None = None, **kwargs: Any) -> None:
            self.postfix = {**(ordered_dict or {}), **kwargs}

        def update(self, n: int = 1) -> None:
            self.n += n
            now = time.monotonic()
            if now - self.last >= self.interval:
                self.last = now
                calls = (f"{self.postfix['sent']} calls sent" if "sent" in self.postfix
                         else f"{self.postfix.get('calls', 0)} calls")
                print(f"rerun {run_dir.name}: {self.n}/{total} cells, {calls}, {now - started:.0f} s",
                      file=sys.stderr, flush=True)

        def close(self) -> None:
            pass

    bar: Any = (ProgressLines() if progress and not sys.stderr.isatty() else
                tqdm(total=total, initial=total - remaining, unit="cell", desc=f"rerun {run_dir.name}",
                     disable=not progress, file=sys.stderr))
    if executor == "ray":
        from sotacheck.reruns import cluster

        totals = {"calls": 0, "tokens": 0}

        def cell_done(made: int, used: int) -> None:
            totals["calls"] += made
            totals["tokens"] += used
            bar.set_postfix(totals)
            bar.update(1)

        cells = [item for group in groups for item in group]
        calls, sent, _ = await cluster.run_cells(run_dir, spec, dataset, model, cells, replay, cell_done)
    else:
        calls, sent, _ = await _execute_local(groups, spec, dataset, model, store, replay, bar)
    bar.close()
    return _finish(run_dir, spec, dataset, store, total, calls, sent, started)


async def _execute_local(groups: list[list[tuple[Arm, Problem, int]]], spec: RunSpec, dataset: Dataset,
                         model: ChatModel, store: RunStore, replay: bool, bar: Any) -> tuple[int, int, int]:
    started = time.monotonic()
    semaphore = asyncio.Semaphore(spec.concurrency)
    group_slots = asyncio.Semaphore(max(spec.concurrency * 2, 2))
    calls = sent = tokens = 0
    with SandboxPool(limits=SandboxLimits(test_timeout_s=spec.test_timeout_s)) as pool:

        async def one_group(group: list[tuple[Arm, Problem, int]]) -> None:
            nonlocal calls, sent, tokens
            async with group_slots:
                for item in group:
                    made, really, used = await run_cell(*item, spec, dataset, model, store, pool, replay, semaphore)
                    calls += made
                    sent += really
                    tokens += used
                    elapsed = max(time.monotonic() - started, 1e-9)
                    bar.set_postfix(calls_per_s=f"{sent / elapsed:.2f}", calls=calls, sent=sent, tokens=tokens,
                                    errors=store.counts().get("error", 0))
                    bar.update(1)

        await asyncio.gather(*(one_group(group) for group in groups))
    return calls, sent, tokens


def _finish(run_dir: Path, spec: RunSpec, dataset: Dataset, store: RunStore, total: int, calls: int, sent: int,
            started: float) -> RunSummary:
    """After the cells: the leakage check over every stored request, then the run directory's tables and
    manifest (written by ``sotacheck.core.rundir``, the format's one owner)."""
    leakage = check_leakage(store, dataset)
    leakage_check = {"requests_checked": leakage.requests_checked, "clean": leakage.clean,
                     "leaks": [list(leak) for leak in leakage.leaks[:20]]}
    store.set_meta("leakage_check", leakage_check)
    identity = store.get_meta("model_identity")
    manifest = Manifest(
        name=run_dir.name, source="sotacheck rerun", spec=spec.model_dump(),
        model_identity=ModelIdentity(model=identity[0], endpoint=identity[1]) if identity else None,
        dataset=DatasetInfo.model_validate(store.get_meta("dataset")), versions=store.get_meta("versions") or {},
        git_revision=store.get_meta("git_revision"), reuse_from=store.get_meta("reuse_from", []),
        leakage_check=leakage_check, created=_created_iso(store.get_meta("created")))
    arms = {arm.name: arm.columns() for arm in spec.arms()}
    frame = export_into(run_dir, outcome_frame(store, arms), manifest)
    return RunSummary(total, len(frame), int((frame["status"] == "error").sum()), calls, sent,
                      time.monotonic() - started, leakage.clean, len(leakage.leaks))


def _created_iso(created: float | None) -> str:
    """When the run was started (the store keeps a Unix time), as ISO 8601 in UTC."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(created or time.time(), UTC).isoformat()
