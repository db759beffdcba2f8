"""Orchestration: a run spec, its cells (arm × problem × repeat) handed to an executor, the model opened
once, resume and replay, and the run directory written at the end.

    open the store (new, or resume: the same spec)       → record spec, model and dataset identity
    cells ← every (arm, problem, repeat) not yet finished → executor.run_cells(cells)   (see cell.py)
    leakage check over every stored request               → outcome table + manifest (core.rundir)
"""

from __future__ import annotations

import sys
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from sotacheck.core.errors import SotacheckError
from sotacheck.core.provenance import git_revision, versions
from sotacheck.core.rundir import DatasetInfo, Manifest, ModelIdentity, export_into
from sotacheck.reruns.benchmarks.problem import Dataset
from sotacheck.reruns.benchmarks.registry import load_dataset
from sotacheck.reruns.executors import make_executor
from sotacheck.reruns.executors.base import CellBatch, Executor
from sotacheck.reruns.leakage import check_leakage
from sotacheck.reruns.model import registry as backends
from sotacheck.reruns.model.base import ChatModel
from sotacheck.reruns.model.retry import RetryPolicy
from sotacheck.reruns.pipelines import get_pipeline
from sotacheck.reruns.progress import progress_bar
from sotacheck.reruns.sandbox.submission import judge_description
from sotacheck.reruns.spec import PipelineSpec, RunSpec, load_spec, validate_spec
from sotacheck.reruns.store.export import calls_frame, outcome_frame
from sotacheck.reruns.store.run_store import RunStore

__all__ = ["PipelineSpec", "RunSpec", "RunSummary", "execute_run", "load_spec", "open_model", "validate_spec"]


def open_model(spec: RunSpec, stored_identity: tuple[str, str] | None, replay: bool,
               server_log: Path | None = None) -> AbstractAsyncContextManager[ChatModel]:
    """``async with open_model(...) as model:`` the model a spec names, through the back-end registry
    (``reruns.model.registry``): the embedded local server, any GGUF, an OpenAI-compatible URL, the
    loopback test endpoint, or, in replay, the recorded identity serving nothing."""
    retry = RetryPolicy(max_tries=spec.max_tries, timeout_s=spec.request_timeout_s,
                        budget_s=max(120.0, 2 * spec.request_timeout_s))
    prefix_reuse, native = spec.server_settings
    return backends.open_model(backends.ModelTarget(
        "replay" if replay else spec.model, spec.model_name, spec.api_key_env, retry, server_log, stored_identity,
        spec.dataset, spec.data_dir, prefix_reuse, native, spec.hub_id))


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


async def execute_run(run_dir: Path, spec: RunSpec | None = None, replay: bool = False, progress: bool = True,
                      server_log: Path | None = None, executor: str = "local",
                      ray_address: str | None = None, reuse: list[Path] | None = None) -> RunSummary:
    """Start (with ``spec``) or resume (without) the run in ``run_dir``; replay serves every call from the store.

    ``reuse`` lists other runs whose received replies answer this run's identical requests (see
    ``RunStore.attach_reuse``); it is remembered, so a resume reuses the same runs.

    ``executor`` is ``local`` (this process) or ``ray`` (cells as Ray tasks, see ``reruns.executors``); it is
    not part of the spec, because it never changes a result: a run started on one resumes on the other."""
    if spec is not None and not RunStore.exists(run_dir) and run_dir.is_dir() and any(run_dir.iterdir()):
        # an imported or judged run (or any other folder): its outcome tables would be replaced
        raise SotacheckError(f"{run_dir} already exists and holds no rerun (no run store) that this run could "
                             f"resume; nothing was written: choose another --out, or remove it first")
    runner = make_executor(executor, ray_address)
    runner.connect()  # an unreachable cluster or a node without sotacheck: before any model call
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
        _check_revisions(run_dir, spec, store, replay)
        dataset = load_dataset(spec.dataset, spec.data_dir, spec.hub_id).head(spec.limit)
        identity = store.get_meta("model_identity")
        async with open_model(spec, tuple(identity) if identity else None, replay, server_log) as model:
            if stored_spec is None:
                store.set_meta("spec", spec.model_dump())
                store.set_meta("created", time.time())
            _freeze_sampling(run_dir, spec, store)
            store.set_meta("model_identity", [model.identity, model.endpoint])
            if not replay:  # a replay answers from this run's own store only
                _attach_reuse(store, reuse)
            store.set_meta("dataset", {"name": dataset.name, "content_hash": dataset.content_hash,
                                       "sources": list(dataset.sources), "problems": len(dataset)})
            _record_checkouts(run_dir, spec, store)
            if not (replay and store.get_meta("versions")):  # a replay keeps the provenance of the run it replays
                store.set_meta("versions", versions())
                store.set_meta("git_revision", git_revision())
            summary = await _execute(run_dir, spec, dataset, model, store, replay, progress, runner)
        return summary
    finally:
        store.close()
        runner.close()


def _freeze_sampling(run_dir: Path, spec: RunSpec, store: RunStore) -> None:
    """Each arm's sampling, as resolved when the run started (a method's default where the spec sets none), is
    stored once; a resume that would resolve it otherwise (a sotacheck whose defaults changed) is an error,
    never a run whose calls were sampled two ways."""
    now, before = spec.arm_sampling(), store.get_meta("arm_sampling")
    if before is None:
        store.set_meta("arm_sampling", now)
        return
    changed = [arm for arm in now if arm in before and {k: v for k, v in before[arm].items() if k != "source"}
               != {k: v for k, v in now[arm].items() if k != "source"}]
    if changed:
        raise SotacheckError(f"{run_dir}: arm {changed[0]} started with sampling {before[changed[0]]} but would now get "
                             f"{now[changed[0]]} (the methods' defaults changed); resume with the sotacheck that "
                             f"started it, or start a run that sets --temperature, --top-p and --max-tokens")


def _check_revisions(run_dir: Path, spec: RunSpec, store: RunStore, replay: bool) -> None:
    """The revision of each pipeline the run runs (``Pipeline.revision``), stored when the run starts. A resume
    or replay under a sotacheck whose pipeline has another revision is a one-line error before the model starts:
    the stored calls were made by the other revision and would not answer. A store from before revisions were
    kept, with calls in it, was made by each pipeline's first revision."""
    now, before = spec.pipeline_revisions(), store.get_meta("pipeline_revisions")
    if before is None and not store.counts():
        store.set_meta("pipeline_revisions", now)
        return
    recorded = before or dict.fromkeys(now, 1)
    stale = [name for name in now if recorded.get(name, 1) != now[name]]
    if stale:
        listed = ", ".join(f"{name} (recorded with revision {recorded.get(name, 1)}, this sotacheck has {now[name]})"
                           for name in stale)
        revision = store.get_meta("git_revision")
        noun = "pipelines" if len(stale) > 1 else "pipeline"
        raise SotacheckError(f"{run_dir}: {noun} {listed} changed since this run was recorded, so its calls "
                             f"would not {'replay' if replay else 'resume'}; record the run again, or use the "
                             f"sotacheck it was recorded with{f' (git revision {revision[:12]})' if revision else ''}")
    if before is None and not replay:  # a replay leaves the store's meta as it found it
        store.set_meta("pipeline_revisions", now)


def _record_checkouts(run_dir: Path, spec: RunSpec, store: RunStore) -> None:
    """The authors' code the ``@original`` arms run (path, commit or content hash, class per arm), stored once;
    a resume whose checkout no longer holds the same code is an error, not a run of two codes."""
    from sotacheck.reruns.original.checkout import open_checkout

    if not spec.original_code:
        return
    described = {}
    for repository, path in spec.original_code.items():
        classes = {arm.name: original.qualified_name for arm in spec.arms()
                   if (original := get_pipeline(arm.pipeline).original) and original.repository == repository}
        described[repository] = {**open_checkout(repository, path).describe(), "classes": classes}
    stored = store.get_meta("original_code")
    for repository, now in described.items():
        before = (stored or {}).get(repository)
        if before and before["content_hash"] != now["content_hash"]:
            raise SotacheckError(f"{run_dir}: the {repository} checkout at {now['path']} changed since the run "
                                 f"started (content hash {before['content_hash'][:12]} → {now['content_hash'][:12]})")
    store.set_meta("original_code", described)


def _attach_reuse(store: RunStore, reuse: list[Path] | None) -> None:
    remembered = [Path(p) for p in store.get_meta("reuse_from", [])]
    if reuse is None:
        reuse = [p for p in remembered if p.is_dir()]
        for gone in set(remembered) - set(reuse):
            print(f"note: reused run {gone} is gone; requests it would have answered are sent", file=sys.stderr)
    store.attach_reuse(reuse)
    store.set_meta("reuse_from", [str(p.resolve()) for p in reuse])


async def _execute(run_dir: Path, spec: RunSpec, dataset: Dataset, model: ChatModel, store: RunStore, replay: bool,
                   progress: bool, executor: Executor) -> RunSummary:
    finished = set() if replay else store.finished_cells()  # replay re-derives every cell from the store
    arms = spec.arms()
    # One task per (problem, repeat) running its arms in order: arms that share a prefix of calls (a sweep's
    # settings) then find the earlier arm's responses in the store instead of racing it to the endpoint.
    groups = [[(arm, problem, repeat) for arm in arms if (arm.name, dataset.name, problem.id, repeat) not in finished]
              for problem in dataset.problems for repeat in range(spec.repeats)]
    groups = [g for g in groups if g]
    total = len(arms) * len(dataset) * spec.repeats
    started = time.monotonic()
    bar = progress_bar(run_dir.name, total, total - sum(len(g) for g in groups), progress)
    totals = {"calls": 0, "sent": 0, "tokens": 0}

    def cell_done(made: int, sent: int, used: int) -> None:
        totals["calls"] += made
        totals["sent"] += sent
        totals["tokens"] += used
        bar.set_postfix(totals, refresh=False)  # drawn by update() at tqdm's own pace, not once a cell (50 µs)
        bar.update(1)

    try:
        calls, sent = await executor.run_cells(CellBatch(run_dir, spec, dataset, model, store, replay, groups),
                                               cell_done)
    finally:
        bar.close()  # the plain lines' ticker stops with the run, however it ends
    return _finish(run_dir, spec, dataset, store, total, calls, sent, started)


def _finish(run_dir: Path, spec: RunSpec, dataset: Dataset, store: RunStore, total: int, calls: int, sent: int,
            started: float) -> RunSummary:
    """After the cells: the leakage check over every stored request, then the run directory's tables and
    manifest (written by ``sotacheck.core.rundir``, the format's one owner)."""
    leakage = check_leakage(store, dataset)
    leakage_check = {"requests_checked": leakage.requests_checked, "clean": leakage.clean,
                     "leaks": [list(leak) for leak in leakage.leaks[:20]]}
    store.set_meta("leakage_check", leakage_check)
    identity = store.get_meta("model_identity")
    arms = spec.arms()
    checkouts = store.get_meta("original_code")
    manifest = Manifest(
        name=run_dir.name, source="sotacheck rerun", spec=spec.model_dump(),
        model_identity=ModelIdentity(model=identity[0], endpoint=identity[1]) if identity else None,
        dataset=DatasetInfo.model_validate(store.get_meta("dataset")), versions=store.get_meta("versions") or {},
        git_revision=store.get_meta("git_revision"), reuse_from=store.get_meta("reuse_from", []),
        leakage_check=leakage_check, created=_created_iso(store.get_meta("created")),
        pipeline_defaults={arm.pipeline: get_pipeline(arm.pipeline).defaults().model_dump() for arm in arms},
        arm_sampling=store.get_meta("arm_sampling") or spec.arm_sampling(),
        pipeline_revisions=store.get_meta("pipeline_revisions") or spec.pipeline_revisions(),
        judge=judge_description(dataset, spec.test_timeout_s),
        **({"original_code": checkouts} if checkouts else {}))
    frame = export_into(run_dir, outcome_frame(store, {arm.name: arm.columns() for arm in arms}), manifest,
                        calls_frame(store))
    return RunSummary(total, len(frame), int((frame["status"] == "error").sum()), calls, sent,
                      time.monotonic() - started, leakage.clean, len(leakage.leaks))


def _created_iso(created: float | None) -> str:
    """When the run was started (the store keeps a Unix time), as ISO 8601 in UTC."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(created or time.time(), UTC).isoformat()
