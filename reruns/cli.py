"""The ``sotacheck`` command line: one entry point, a subcommand per job."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from reports.files import write_atomically
from reruns import __version__
from reruns.errors import SotacheckError

if TYPE_CHECKING:
    from audit.analysis import Comparison


@click.group(context_settings={"show_default": True}, no_args_is_help=True)
@click.version_option(__version__, prog_name="sotacheck")
def app() -> None:
    """sotacheck: rerun LLM code-generation methods and audit their claimed margins."""


PATH = click.Path(path_type=Path)
F = TypeVar("F", bound=Callable[..., Any])
data_dir_option = click.option("--data-dir", type=PATH, default=None,
                               help="Local benchmark files (else $SOTACHECK_DATA, ../shared/data).")


@app.command()
@data_dir_option
@click.option("--hub-id", default=None, help="Hub id for mbpp-et.")
def datasets(data_dir: Path | None, hub_id: str | None) -> None:
    """List the benchmarks with their problem counts and content hashes."""
    from reruns.benchmarks.loaders import LOADERS, load_dataset

    for name in LOADERS:
        try:
            dataset = load_dataset(name, data_dir, hub_id)
        except SotacheckError as exc:
            click.echo(f"{name:15s} unavailable: {exc}")
            continue
        click.echo(f"{name:15s} {len(dataset):5d} problems  sha256:{dataset.content_hash}")


baseline_option = click.option("--baseline", default=None,
                               help="Baseline arm (default: the first pipeline the first run lists, else the first arm).")
executor_option = click.option("--executor", default="local",
                               help="'local' (this machine) or 'ray' (cells as Ray tasks; pip install 'sotacheck[ray]').")
ray_address_option = click.option("--ray-address", default=None,
                                  help="Ray cluster HOST:PORT, or 'auto' for one started on this machine "
                                       "(default: a private local Ray).")
reuse_option = click.option("--reuse", type=PATH, multiple=True,
                            help="Another run (directory) whose replies answer identical requests here instead of "
                                 "the model; repeatable.")


def _has_store(run_dir: Path) -> bool:
    """A run directory with its store, live (store.sqlite) or packed (store.sqlite.gz)."""
    return (run_dir / "store.sqlite").is_file() or (run_dir / "store.sqlite.gz").is_file()


def _reuse_dirs(reuse: Sequence[Path]) -> list[Path] | None:
    """The --reuse runs, each checked to hold a run store before anything is written or sent."""
    for run_dir in reuse:
        if not _has_store(run_dir):
            raise SotacheckError(f"--reuse {run_dir}: no run store (store.sqlite or store.sqlite.gz) there")
    return list(reuse) if reuse else None


@app.command()
@click.option("--dataset", required=True, help="Benchmark name, e.g. humaneval, humaneval-et, mbpp.")
@click.option("--canonical", is_flag=True, help="Judge the dataset's canonical solutions.")
@click.option("--samples", type=PATH, default=None, help="JSONL of {task_id, completion|solution}.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--out", type=PATH, default=None, help="Also write the JSON result to this file.")
@click.option("--workers", type=click.IntRange(min=1), default=None, show_default=False,
              help="Sandbox workers (default: CPU count).")
@click.option("--test-timeout", type=click.FloatRange(min=0, min_open=True), default=5.0, help="Wall seconds per test.")
@click.option("--run-out", type=PATH, default=None, help="Also write the verdicts as a run directory.")
@click.option("--arm", default=None, help="Arm name for --run-out (default: samples file name).")
@data_dir_option
@executor_option
@ray_address_option
def judge(dataset: str, canonical: bool, samples: Path | None, as_json: bool, out: Path | None, workers: int | None,
          test_timeout: float, run_out: Path | None, arm: str | None, data_dir: Path | None, executor: str,
          ray_address: str | None) -> None:
    """Judge code against a benchmark's hidden tests in the sandbox.

    A completion whose first code line starts at column 0 is a whole program (judged after the
    prompt's imports and helpers); an indented one continues the prompt and is appended to it.
    """
    from reruns.benchmarks.loaders import load_dataset
    from reruns.samples import read_samples
    from reruns.sandbox import SandboxLimits, SandboxPool, judge_many

    if canonical == (samples is not None):
        raise SotacheckError("give exactly one of --canonical and --samples FILE")
    if executor not in ("local", "ray"):
        raise SotacheckError(f"--executor {executor!r}: expected 'local' or 'ray'")
    limits = SandboxLimits(test_timeout_s=test_timeout)
    # A local pool starts its sandbox supervisors now: they import while the dataset loads.
    with SandboxPool(workers, limits) if executor == "local" else contextlib.nullcontext() as pool:
        data = load_dataset(dataset, data_dir)
        problems = data.by_id()
        if canonical:
            pairs = [(p, p.canonical_solution or "") for p in data.problems]
        else:
            assert samples is not None
            pairs = [(problems[s.task_id], s.code) for s in read_samples(samples, data)]
        show_progress = not as_json and sys.stderr.isatty()
        if pool is not None:
            judged = judge_many(pool, data.content_hash, pairs)
            if show_progress:  # tqdm is imported only then: it is a sixtieth of a second of start-up
                from tqdm import tqdm

                judged = tqdm(judged, total=len(pairs), desc=f"judging {dataset}", unit="problem", file=sys.stderr)
            verdicts = list(judged)
        else:
            from tqdm import tqdm

            from reruns import cluster

            cluster.connect(ray_address)
            try:
                with tqdm(total=len(pairs), desc=f"judging {dataset} on Ray", unit="problem", file=sys.stderr,
                          disable=not show_progress) as bar:
                    verdicts = cluster.judge_pairs(data.content_hash, pairs, limits, on_done=bar.update)
            finally:
                cluster.shutdown()
    counts = Counter(v.status for v in verdicts)
    passed = counts.get("passed", 0)
    report: dict[str, Any] = {
        "dataset": data.name, "dataset_hash": data.content_hash, "sotacheck_version": __version__,
        "n": len(verdicts), "passed": passed, "pass_rate": passed / len(verdicts),
        "counts": dict(sorted(counts.items())),
        "results": [{"task_id": v.problem_id, "status": v.status,
                     "exception_type": v.result.exception_type, "message": v.result.message}
                    for v in verdicts],
    }
    text = json.dumps(report, indent=2)
    if run_out is not None:
        _write_judged_run(run_out, arm or (samples.stem if samples else "canonical"), data, verdicts, samples)
    if out is not None:
        write_atomically(out, text + "\n")
    if as_json:
        click.echo(text)
        return
    click.echo(f"{data.name}: {passed}/{len(verdicts)} passed ({100 * passed / len(verdicts):.1f} %)  "
               f"dataset sha256:{data.content_hash[:16]}")
    click.echo("  " + "  ".join(f"{status}={count}" for status, count in sorted(counts.items())))
    for verdict in verdicts:
        if not verdict.passed:
            click.echo(f"  {verdict.problem_id}: {verdict.status}: {verdict.result.exception_type}: "
                       f"{(verdict.result.message or '')[:120]}")


def _write_judged_run(out: Path, arm: str, data: Any, verdicts: list[Any], samples: Path | None) -> None:
    """Verdicts as an outcome table (repeat = the sample's occurrence index for its task)."""
    import pandas as pd

    from audit.outcomes import OutcomeError, file_sha256, write_run

    seen: Counter[str] = Counter()
    rows = []
    for verdict in verdicts:
        sandbox_failed = verdict.result.exception_type == "SandboxFailure"
        rows.append({"arm": arm, "dataset": data.name, "problem": verdict.problem_id,
                     "repeat": seen[verdict.problem_id], "passed": None if sandbox_failed else verdict.passed,
                     "status": "error" if sandbox_failed else None, "judge_status": verdict.status})
        seen[verdict.problem_id] += 1
    meta = {"name": out.name, "source": "sotacheck judge", "dataset": data.name, "dataset_hash": data.content_hash,
            "files": [{"file": str(samples), "sha256": file_sha256(samples)}] if samples else []}
    try:
        write_run(out, pd.DataFrame(rows), meta, overwrite=True)
    except OutcomeError as exc:
        raise SotacheckError(str(exc)) from None


@app.command("import")
@click.argument("kind", metavar="KIND")
@click.argument("path", type=PATH)
@click.option("--out", type=PATH, required=True, help="Run directory to write, e.g. runs/NAME.")
@click.option("--arm", default=None, help="Arm name (humaneval-results; default: file name).")
@click.option("--dataset", default=None, help="Dataset name (default: from the folder/file).")
@click.option("--force", is_flag=True, help="Replace an existing run directory.")
def import_(kind: str, path: Path, out: Path, arm: str | None, dataset: str | None, force: bool) -> None:
    """Import published per-problem logs as a run directory every other command reads like a rerun.

    KIND is mapcoder, humaneval-results or csv; PATH the file (for mapcoder, a folder of .jsonl files).
    """
    from audit.outcomes import (
        IMPORTERS,
        OutcomeError,
        import_csv,
        import_humaneval_results,
        import_mapcoder,
        normalise,
        write_run,
    )

    if kind not in IMPORTERS:
        raise SotacheckError(f"unknown import kind {kind!r}; choose one of {', '.join(IMPORTERS)}")
    try:
        if kind == "mapcoder":
            frame, meta = import_mapcoder(path, dataset=dataset)
        elif kind == "humaneval-results":
            frame, meta = import_humaneval_results(path, arm=arm, dataset=dataset or "humaneval")
        else:
            frame, meta = import_csv(path)
        table = normalise(frame, str(path))
        write_run(out, table, {"name": out.name, **meta}, overwrite=force)
    except OutcomeError as exc:
        raise SotacheckError(str(exc)) from None
    click.echo(f"wrote {out}: {len(table)} cells")
    for row in table.groupby(["arm", "dataset"]).size().reset_index(name="cells").itertuples(index=False):
        click.echo(f"  {row.arm} on {row.dataset}: {row.cells} cells")
    for repair in meta.get("repairs", []):
        click.echo(f"  note: {repair}")


@app.command()
@click.argument("runs", nargs=-1, required=True, type=PATH)
@baseline_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--confidence", type=float, default=0.95, help="Confidence level of the intervals.")
@click.option("--resamples", type=int, default=10_000, help="Bootstrap / permutation resamples.")
@click.option("--seed", type=int, default=0, help="Seed of the resampling.")
def analyze(runs: tuple[Path, ...], baseline: str | None, as_json: bool, confidence: float, resamples: int,
            seed: int) -> None:
    """Pass rates with CIs per arm, and paired comparisons against the baseline with Holm."""
    from audit.analysis import analyze as run_analysis
    from audit.outcomes import OutcomeError, load_run

    try:
        result = run_analysis([load_run(r) for r in runs], baseline, confidence, resamples, seed)
    except (OutcomeError, ValueError) as exc:
        raise SotacheckError(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, default=_json_default))
        return
    click.echo(f"{'arm':28s} {'dataset':13s} {'n':>4s} {'pass':>6s}  {int(confidence * 100)}% CI")
    for a in result.arms:
        click.echo(f"{a.arm:28s} {a.dataset:13s} {a.n:4d} {a.pass_rate:6.3f}  [{a.ci_low:.3f}, {a.ci_high:.3f}]"
                   + (f"  ({'; '.join(a.notes)})" if a.notes else ""))
    click.echo(f"\nagainst baseline {result.baseline} (Holm across {len(result.comparisons)} comparisons):")
    click.echo(f"{'arm':28s} {'diff':>7s} {'b':>4s} {'c':>4s} {'p':>9s} {'p_holm':>9s}  test; MDD")
    for c in result.comparisons:
        click.echo(f"{c.a:28s} {c.diff:+7.3f} {c.b_count:4d} {c.c_count:4d} {c.pvalue:9.2e} {c.pvalue_holm:9.2e}"
                   f"  {c.test}; {_mdd_text(c)}"
                   + (f"  ({'; '.join(c.notes)})" if c.notes else ""))


def _mdd_text(c: Comparison) -> str:
    if math.isfinite(c.mdd):
        return f"smallest detectable difference {c.mdd:.3f}"
    return (f"no difference detectable at 80 % power: {c.b_count + c.c_count} discordant of {c.n} shared "
            f"problems")


def _run_and_arm(spec: str) -> tuple[Path, str | None]:
    """``runs/A`` or ``runs/A:ARM`` (an arm name may itself contain colons only after the first)."""
    if Path(spec).is_dir() or ":" not in spec:
        return Path(spec), None
    path, arm = spec.split(":", 1)
    return Path(path), arm


@app.command("gate")
@click.option("--baseline", required=True, help="Baseline run, runs/A or runs/A:ARM.")
@click.option("--candidate", required=True, help="Candidate run, runs/B or runs/B:ARM.")
@click.option("--dataset", default=None, help="Only this dataset (default: every shared one).")
@click.option("--alpha", type=float, default=0.05, help="One-sided significance level.")
@click.option("--max-drop", type=float, default=0.0, help="Allowed drop (noninferiority mode), as a fraction.")
@click.option("--min-n", type=int, default=30, help="Fewest shared problems the gate will decide on.")
@click.option("--mode", default="significance", help="significance | noninferiority")
@click.option("--max-error-rate", type=float, default=0.05, help="Most errored cells tolerated, as a fraction.")
@click.option("--junit", type=PATH, default=None, help="Write JUnit XML here.")
@click.option("--markdown", type=PATH, default=None, help="Write a Markdown summary here.")
def gate_command(baseline: str, candidate: str, dataset: str | None, alpha: float, max_drop: float, min_n: int,
                 mode: str, max_error_rate: float, junit: Path | None, markdown: Path | None) -> None:
    """Fail CI on a real drop in pass rate: exit 0 pass, 1 regression, 2 unusable input."""
    from audit.gate import GateInputError, GateSettings, gate
    from audit.outcomes import OutcomeError, load_run
    from reports.gate import explanation, junit_xml
    from reports.gate import markdown as render_markdown

    try:
        settings = GateSettings(alpha=alpha, max_drop=max_drop, min_n=min_n, mode=mode,  # type: ignore[arg-type]
                                max_error_rate=max_error_rate)
        base_path, base_arm = _run_and_arm(baseline)
        cand_path, cand_arm = _run_and_arm(candidate)
        result = gate(load_run(base_path), load_run(cand_path), base_arm, cand_arm, dataset, settings)
    except (GateInputError, OutcomeError) as exc:
        click.echo(f"sotacheck gate: UNUSABLE INPUT (exit 2): {exc}. The gate exits 2 rather than 0 or 1 so that "
                   "CI does not mistake input it cannot judge for a pass or a regression.", err=True)
        raise click.exceptions.Exit(2) from None
    if junit is not None:
        write_atomically(junit, junit_xml(result))
    if markdown is not None:
        write_atomically(markdown, render_markdown(result))
    click.echo(explanation(result), err=True)
    raise click.exceptions.Exit(result.exit_code)


@app.command()
@click.argument("files", nargs=-1, type=PATH)
@click.option("--runs", type=PATH, multiple=True, help="Run directories for rerun-backed claims.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as JSON.")
@data_dir_option
def claims(files: tuple[Path, ...], runs: tuple[Path, ...], as_json: bool, data_dir: Path | None) -> None:
    """Audit published claims: a verdict and a one-sentence reason for every claim in the registry.

    FILES are registry files (default: data/claims/*.yaml).
    """
    from audit.claims import ClaimsError, audit_claims
    from audit.outcomes import OutcomeError, load_run

    paths = list(files or sorted(Path("data/claims").glob("*.yaml")))
    if not paths:
        raise SotacheckError("no claims files given and none found under data/claims/")
    try:
        loaded_runs = [load_run(r) for r in runs or []]
        verdicts = audit_claims(paths, loaded_runs, _dataset_sizes(paths, data_dir))
    except (ClaimsError, OutcomeError) as exc:
        raise SotacheckError(str(exc)) from None
    if as_json:
        click.echo(json.dumps([v.as_dict() for v in verdicts], indent=2, default=_json_default))
        return
    counts = Counter(v.verdict for v in verdicts)
    click.echo(f"{len(verdicts)} claims: " + ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common()))
    for v in verdicts:
        p = "" if v.pvalue is None else f" (p = {v.pvalue:.3g})"
        click.echo(f"\n[{v.verdict}] {v.paper}/{v.id}{p}\n  {v.statement}\n  {v.reason}")
        for note in v.notes:
            click.echo(f"  note: {note}")


_MODEL_OPTIONS = (
    click.option("--model", default="local", help="'local', 'gguf:PATH', or an OpenAI-compatible base URL."),
    click.option("--model-name", default=None, help="Model name at an OpenAI-compatible URL."),
    click.option("--repeats", type=int, default=1, help="Repeats per problem."),
    click.option("--limit", type=int, default=None, help="Only the first N problems."),
    click.option("--seed", type=int, default=0, help="Base seed of the seed schedule."),
    click.option("--temperature", type=float, default=0.0, help="Sampling temperature."),
    click.option("--concurrency", type=int, default=4, help="Model calls in flight at once."),
)


def model_options(function: F) -> F:
    """The model and sampling options ``rerun`` and ``sweep`` share, in this order."""
    for option in reversed(_MODEL_OPTIONS):
        function = option(function)
    return function


def _parse_param(text: str) -> tuple[str, Any]:
    import yaml

    if "=" not in text:
        raise SotacheckError(f"--param {text!r}: expected PIPELINE.NAME=VALUE")
    key, value = text.split("=", 1)
    return key.strip(), yaml.safe_load(value)


@app.command()
@click.option("--out", type=PATH, required=True, help="Run directory to create, e.g. runs/NAME.")
@click.option("--dataset", default=None, help="Benchmark name.")
@click.option("--pipelines", default=None, help="Comma-separated pipelines, e.g. direct,cot.")
@click.option("--param", multiple=True, help="PIPELINE.NAME=VALUE, repeatable.")
@model_options
@click.option("--max-tokens", type=int, default=768, help="Max tokens per reply.")
@click.option("--request-timeout", type=float, default=300.0, help="Seconds before a model request times out.")
@click.option("--max-tries", type=int, default=6, help="Tries per model call (429/5xx/timeouts are retried).")
@click.option("--spec", type=PATH, default=None, help="A YAML run spec instead of the options above.")
@data_dir_option
@executor_option
@ray_address_option
@reuse_option
def rerun(out: Path, dataset: str | None, pipelines: str | None, param: tuple[str, ...], model: str,
          model_name: str | None, repeats: int, limit: int | None, seed: int, temperature: float, max_tokens: int,
          concurrency: int, request_timeout: float, max_tries: int, spec: Path | None, data_dir: Path | None,
          executor: str, ray_address: str | None, reuse: tuple[Path, ...]) -> None:
    """Re-execute pipelines on a benchmark under one harness and one seed schedule."""
    from reruns.run import execute_run, load_spec, validate_spec

    reuse_runs = _reuse_dirs(reuse)
    if spec is not None:
        run_spec = load_spec(spec)
    else:
        if dataset is None or pipelines is None:
            raise SotacheckError("give --dataset and --pipelines, or --spec FILE")
        params: dict[str, dict[str, Any]] = {}
        for item in param or []:
            key, value = _parse_param(item)
            if "." not in key:
                raise SotacheckError(f"--param {item!r}: expected PIPELINE.NAME=VALUE")
            pipe, name = key.split(".", 1)
            params.setdefault(pipe, {})[name] = value
        names = [p.strip() for p in pipelines.split(",") if p.strip()]
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise SotacheckError(f"--param names pipeline(s) not in --pipelines: {', '.join(unknown)}")
        run_spec = validate_spec({"dataset": dataset, "pipelines": [{"name": n, "params": params.get(n, {})}
                                                                     for n in names],
                                  "model": model, "model_name": model_name, "repeats": repeats, "limit": limit,
                                  "seed": seed, "temperature": temperature, "max_tokens": max_tokens,
                                  "concurrency": concurrency, "request_timeout_s": request_timeout,
                                  "max_tries": max_tries, "data_dir": str(data_dir) if data_dir else None},
                                 "command line")
    _finish_run(out, asyncio_run(execute_run(out, run_spec, server_log=out / "server.log", executor=executor,
                                             ray_address=ray_address, reuse=reuse_runs)))


def parse_grid(items: Sequence[str]) -> list[dict[str, Any]]:
    """``p=1,2,3 d=1,3`` or ``max_attempts=0..8`` → every combination, in order."""
    import itertools

    axes: dict[str, list[Any]] = {}
    for item in items:
        if "=" not in item:
            raise SotacheckError(f"--grid {item!r}: expected NAME=V1,V2,... or NAME=LOW..HIGH")
        name, values = item.split("=", 1)
        if ".." in values:
            low, high = values.split("..", 1)
            try:
                axes[name.strip()] = list(range(int(low), int(high) + 1))
            except ValueError:
                raise SotacheckError(f"--grid {item!r}: a range needs integers, e.g. max_attempts=0..8") from None
        else:
            import yaml

            axes[name.strip()] = [yaml.safe_load(v) for v in values.split(",") if v.strip()]
        if not axes[name.strip()]:
            raise SotacheckError(f"--grid {item!r}: no values")
    if not axes:
        raise SotacheckError("--grid is empty: give at least one NAME=VALUES")
    names = list(axes)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(axes[n] for n in names))]


@app.command()
@click.option("--pipeline", required=True, help="The pipeline to sweep, e.g. codesim.")
@click.option("--grid", required=True, multiple=True, help="NAME=V1,V2 or NAME=LOW..HIGH; repeat for more axes.")
@click.option("--out", type=PATH, required=True, help="Run directory to create.")
@click.option("--dataset", default="humaneval", help="Benchmark name.")
@click.option("--param", "fixed", multiple=True, help="NAME=VALUE held fixed, e.g. base=cot.")
@model_options
@click.option("--yes", is_flag=True, help="Allow a grid of more than 500 settings.")
@data_dir_option
@executor_option
@ray_address_option
@reuse_option
def sweep(pipeline: str, grid: tuple[str, ...], out: Path, dataset: str, fixed: tuple[str, ...], model: str,
          model_name: str | None, repeats: int, limit: int | None, seed: int, temperature: float, concurrency: int,
          yes: bool, data_dir: Path | None, executor: str, ray_address: str | None, reuse: tuple[Path, ...]) -> None:
    """Run a pipeline at every setting of a grid in one store: settings that share a prefix of calls
    (same seeds, same messages) share them through the response cache."""
    from reruns.run import execute_run, validate_spec

    reuse_runs = _reuse_dirs(reuse)
    settings = parse_grid(grid)
    if len(settings) > 500 and not yes:
        raise SotacheckError(f"the grid has {len(settings)} settings (> 500); pass --yes to run it anyway")
    constant = dict(_parse_param(item) for item in fixed or [])
    run_spec = validate_spec({"dataset": dataset, "pipelines": [{"name": pipeline, "params": {**constant, **s}}
                                                                 for s in settings],
                              "model": model, "model_name": model_name, "repeats": repeats, "limit": limit,
                              "seed": seed, "temperature": temperature, "concurrency": concurrency,
                              "data_dir": str(data_dir) if data_dir else None}, "sweep")
    summary = asyncio_run(execute_run(out, run_spec, server_log=out / "server.log", executor=executor,
                                      ray_address=ray_address, reuse=reuse_runs))
    click.echo(f"sweep of {len(settings)} settings: {summary.calls} calls requested, {summary.sent} made "
               f"({100 * summary.sent / max(summary.calls, 1):.0f} %), the rest shared through the response cache")
    _finish_run(out, summary)


@app.command()
@click.argument("run_dir", type=PATH)
@click.option("--replay", is_flag=True, help="Serve every call from the store; a miss is an error.")
@executor_option
@ray_address_option
@reuse_option
def resume(run_dir: Path, replay: bool, executor: str, ray_address: str | None, reuse: tuple[Path, ...]) -> None:
    """Continue a stopped run (received calls are replayed from the store, never re-sent)."""
    from reruns.run import execute_run

    if not _has_store(run_dir):
        raise SotacheckError(f"{run_dir}: no run store (store.sqlite or store.sqlite.gz) to resume")
    reuse_runs = _reuse_dirs(reuse)
    _finish_run(run_dir, asyncio_run(execute_run(run_dir, None, replay=replay, server_log=run_dir / "server.log",
                                                 executor=executor, ray_address=ray_address, reuse=reuse_runs)))


def asyncio_run(coroutine: Any) -> Any:
    import asyncio

    return asyncio.run(coroutine)


def _finish_run(run_dir: Path, summary: Any) -> None:
    click.echo(f"{run_dir}: {summary.finished}/{summary.cells} cells, {summary.errors} error(s); "
               f"{summary.calls} model calls ({summary.sent} sent, {summary.calls - summary.sent} from the store); "
               f"{summary.wall_s:.0f} s")
    if not summary.leakage_clean:
        raise SotacheckError(f"LEAKAGE: {summary.leaks} request(s) in {run_dir} contain hidden-test asserts; "
                             f"see run.json (leakage_check)")
    click.echo(f"leakage check: clean; outcomes in {run_dir}/outcomes.parquet and outcomes.csv")


@app.command()
@click.argument("run_dir", type=PATH)
def leakage(run_dir: Path) -> None:
    """Prove from the stored requests that no hidden-test assert reached any prompt."""
    from reruns.benchmarks.loaders import load_dataset
    from reruns.leakage import check_leakage
    from reruns.store.run_store import RunStore

    store = RunStore.open(run_dir)
    try:
        spec = store.get_meta("spec") or {}
        info = store.get_meta("dataset") or {}
        name = info.get("name") or spec.get("dataset")
        if not name:
            raise SotacheckError(f"{run_dir}: the store does not say which dataset it ran")
        data = load_dataset(str(name), spec.get("data_dir"))
        report = check_leakage(store, data)
    finally:
        store.close()
    if report.clean:
        click.echo(f"{run_dir}: clean: no hidden-test assert in any of {report.requests_checked} requests")
        return
    for call_id, problem, found in report.leaks[:20]:
        click.echo(f"  call {call_id} ({problem}) contains hidden assert: {found[:100]}", err=True)
    raise SotacheckError(f"{run_dir}: {len(report.leaks)} leak(s) of hidden tests into prompts")


@app.command()
@click.option("--port", type=int, default=8080, help="Port on 127.0.0.1.")
@click.option("--gguf", type=PATH, default=None, help="Another GGUF file (default: the embedded model).")
def serve(port: int, gguf: Path | None) -> None:
    """Serve the embedded model (or a GGUF) on an OpenAI-compatible endpoint, in the foreground."""

    from reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf

    path = gguf or assemble_gguf()
    server = LocalServer(path, port=port, model_alias=LOCAL_MODEL_ID if gguf is None else path.stem)
    os.execv(sys.executable, server.command())


def _dataset_sizes(claim_files: list[Path], data_dir: Path | None) -> dict[str, int]:
    """Problem counts of the datasets that benchmark-size claims name (loaded here, in reruns)."""
    from audit.claims import load_registry
    from reruns.benchmarks.loaders import load_dataset

    sizes = {}
    for name in {c.dataset for p in claim_files for c in load_registry(p).claims if c.dataset}:
        try:
            sizes[name] = len(load_dataset(name, data_dir))
        except SotacheckError:
            continue  # the claim then says the shipped copy could not be counted
    return sizes


@app.command()
@click.argument("runs", nargs=-1, required=True, type=PATH)
@click.option("-o", "--output", type=PATH, default=Path("report.html"), help="The HTML file to write.")
@click.option("--claims", "claims_files", type=PATH, multiple=True, help="Claims registry files.")
@baseline_option
@data_dir_option
def report(runs: tuple[Path, ...], output: Path, claims_files: tuple[Path, ...], baseline: str | None,
           data_dir: Path | None) -> None:
    """A self-contained HTML audit report (no network needed to open it)."""
    from audit.claims import ClaimsError
    from audit.outcomes import OutcomeError, load_run
    from reports.html import write_report

    try:
        loaded = [load_run(r) for r in runs]
        for run in loaded:
            if run.outcomes.empty:
                raise OutcomeError(f"{run.path}: the run has no outcomes")
        files = list(claims_files or [])
        path = write_report(loaded, files, output, baseline, _dataset_sizes(files, data_dir))
    except (OutcomeError, ClaimsError, ValueError) as exc:
        raise SotacheckError(str(exc)) from None
    click.echo(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


@app.command()
@click.argument("runs", nargs=-1, required=True, type=PATH)
@click.option("--format", "fmt", default="markdown", help="latex | markdown | csv")
@click.option("--kind", default="pass-rates", help="pass-rates | comparisons")
@click.option("--ci", default="bracket", help="bracket ([low, high]) | pm (±)")
@baseline_option
@click.option("-o", "--output", type=PATH, default=None, help="Write to a file instead of stdout.")
def table(runs: tuple[Path, ...], fmt: str, kind: str, ci: str, baseline: str | None, output: Path | None) -> None:
    """Paper-ready tables (LaTeX booktabs, Markdown, CSV) from the same numbers as `analyze`."""
    from audit.analysis import analyze as run_analysis
    from audit.outcomes import OutcomeError, load_run
    from reports.tables import RENDERERS, comparison_table, pass_rate_table

    if fmt not in RENDERERS:
        raise SotacheckError(f"--format must be one of {', '.join(RENDERERS)}, got {fmt!r}")
    if ci not in ("bracket", "pm"):
        raise SotacheckError(f"--ci must be 'bracket' or 'pm', got {ci!r}")
    if kind not in ("pass-rates", "comparisons"):
        raise SotacheckError(f"--kind must be 'pass-rates' or 'comparisons', got {kind!r}")
    try:
        result = run_analysis([load_run(r) for r in runs], baseline)
    except (OutcomeError, ValueError) as exc:
        raise SotacheckError(str(exc)) from None
    built = pass_rate_table(result, ci) if kind == "pass-rates" else comparison_table(result)  # type: ignore[arg-type]
    text = RENDERERS[fmt](built)
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomically(output, text)


def _json_default(value: object) -> object:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds, so `finally` blocks stop the model server and close the store


def main() -> None:
    """Console entry point: user errors become one line on stderr and exit code 2."""
    import signal

    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        code = app.main(standalone_mode=False)  # returns the code of a click Exit instead of raising it
    except SotacheckError as exc:
        click.echo(f"sotacheck: error: {exc}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:  # usage errors arrive here in non-standalone mode
        exc.show()
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
