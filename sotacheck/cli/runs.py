"""``sotacheck rerun``, ``sweep`` and ``resume``: running pipelines under the harness."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from sotacheck import api
from sotacheck.cli.options import (
    PATH,
    as_flags,
    data_dir_option,
    executor_option,
    hub_id_option,
    prefix_reuse_option,
    ray_address_option,
    reuse_option,
)
from sotacheck.core.errors import InputError, UsageError

F = TypeVar("F", bound=Callable[..., Any])
_MODEL_OPTIONS = (
    click.option("--model", default="local", help="'local', 'gguf:PATH', or an OpenAI-compatible base URL."),
    click.option("--model-name", default=None, help="Model name at an OpenAI-compatible URL."),
    click.option("--repeats", type=int, default=1, help="Repeats per problem."),
    click.option("--limit", type=int, default=None, help="Only the first N problems."),
    click.option("--seed", type=int, default=0, help="Base seed of the seed schedule."),
    click.option("--temperature", type=float, default=None,
                 help="Sampling temperature for every arm (default: each method's paper default, 0 for all so far)."),
    click.option("--top-p", "top_p", type=float, default=None,
                 help="Nucleus sampling for every arm (default: each method's paper default, 0.95 for all so far)."),
    click.option("--max-tokens", "max_tokens", type=str, default=None, metavar="N|none",
                 help="Reply cap for every arm; 'none' for no cap (default: each method's paper default: no cap, "
                      "i.e. the model's own limit, the embedded model's 4096-token context)."),
    click.option("--concurrency", type=int, default=4, help="Model calls in flight at once."),
    prefix_reuse_option("The embedded model only: reuse a cached prompt prefix up to a multiple of A tokens; off "
                        "evaluates every prompt afresh. llama-cpp-python's server takes any A (64 was exact on every "
                        "call compared, bench/RESULTS.md), llama-server 512 only, used where a probe at its start "
                        "finds it exact, else off (said in the server log and the endpoint identity). auto: 512 on "
                        "llama-server, off on llama-cpp-python's server."),
    click.option("--engine", type=click.Choice(["auto", "llama-cpp-python", "llama-server"]), default="auto",
                 help="The embedded model only: the server that runs it: llama-cpp-python's, or llama.cpp's own "
                      "llama-server (built by `make setup-local`), which has --slots and --speculative. auto: "
                      "llama-server with one slot, ngram-simple drafting and aligned prefix reuse where it is built, the "
                      "fastest mode whose replies depend on their request alone (docs/embedded-model.md); the choice "
                      "goes into run.json."),
    click.option("--slots", type=click.IntRange(min=1), default=1, metavar="S",
                 help="--engine llama-server: sequences in flight at once. Above 1 a reply depends on what else "
                      "was in flight (docs/embedded-model.md)."),
    click.option("--speculative", type=click.Choice(["auto", "off", "ngram-simple"]), default="auto",
                 help="--engine llama-server: speculative decoding with drafts looked up in the request's own "
                      "prompt and reply (its replies differ from plain decoding's on some requests); auto: "
                      "ngram-simple on llama-server, off elsewhere."),
)


original_code_option = click.option(
    "--original-code", "original_code", multiple=True, metavar="REPOSITORY=PATH",
    help="A checkout of the authors' code for the @original pipelines: mapcoder=PATH (Md-Ashraful-Pramanik/MapCoder), "
         "codegenerator=PATH (kagnlp/CodeGenerator, CodeSim); repeatable.")


def model_options(function: F) -> F:
    """The model and sampling options ``rerun`` and ``sweep`` share, in this order."""
    for option in reversed(_MODEL_OPTIONS):
        function = option(function)
    return function


def _max_tokens(text: str | None) -> int | str | None:
    """``--max-tokens``: a whole number, or ``none`` for no cap."""
    if text is None or text.strip().lower() == "none":
        return None if text is None else "none"
    if not text.strip().isdigit() or int(text) < 1:
        raise UsageError(f"--max-tokens {text!r}: expected a whole number of at least 1, or 'none' (no cap)")
    return int(text)


def _spec_fields(model: str, model_name: str | None, repeats: int, limit: int | None, seed: int,
                 temperature: float | None, top_p: float | None, max_tokens: str | None, concurrency: int,
                 prefix_reuse: int | None, data_dir: Path | None, hub_id: str | None, *, engine: str, slots: int,
                 speculative: str, **more: Any) -> dict[str, Any]:
    choice = api.engine_choice(model, engine=engine, speculative=speculative, slots=slots, prefix_reuse=prefix_reuse,
                               check=False)  # the spec checks them, naming where they came from
    if choice.line:
        click.echo(choice.line, err=True)
    return {"model": model, "model_name": model_name, "repeats": repeats, "limit": limit, "seed": seed,
            "engine": choice.engine, "slots": slots, "speculative": choice.speculative,
            "temperature": temperature, "top_p": top_p, "max_tokens": _max_tokens(max_tokens),
            "concurrency": concurrency, "prefix_reuse": choice.prefix_reuse,
            "data_dir": str(data_dir) if data_dir else None,
            "hub_id": hub_id, **more}


@click.command()
@click.option("--out", type=PATH, required=True, help="Run directory to create, e.g. runs/NAME.")
@click.option("--dataset", default=None, help="Benchmark name.")
@click.option("--pipelines", default=None, help="Comma-separated pipelines, e.g. direct,cot.")
@click.option("--param", multiple=True, help="PIPELINE.NAME=VALUE, repeatable.")
@model_options
@click.option("--request-timeout", type=float, default=300.0, help="Seconds before a model request times out.")
@click.option("--max-tries", type=int, default=6, help="Tries per model call (429/5xx/timeouts are retried).")
@click.option("--spec", type=PATH, default=None, help="A YAML run spec instead of the options above.")
@original_code_option
@data_dir_option
@hub_id_option
@executor_option
@ray_address_option
@reuse_option
def rerun(out: Path, dataset: str | None, pipelines: str | None, param: tuple[str, ...], model: str,
          model_name: str | None, repeats: int, limit: int | None, seed: int, temperature: float | None,
          top_p: float | None, max_tokens: str | None, concurrency: int, prefix_reuse: int | None, engine: str, slots: int,
          speculative: str, request_timeout: float, max_tries: int, spec: Path | None, original_code: tuple[str, ...],
          data_dir: Path | None, hub_id: str | None, executor: str, ray_address: str | None, reuse: tuple[Path, ...]) -> None:
    """Re-execute pipelines on a benchmark under one harness and one seed schedule."""
    checkouts = api.parse_original_code(original_code)
    if spec is not None:  # the command line names (or overrides) the checkouts of a spec file
        run_spec = api.load_spec(spec, original_code=checkouts)
    else:
        if dataset is None or pipelines is None:
            raise UsageError("give --dataset and --pipelines, or --spec FILE")
        names = [p.strip() for p in pipelines.split(",") if p.strip()]
        params = api.pipeline_params(param, pipelines=names)
        fields = _spec_fields(model, model_name, repeats, limit, seed, temperature, top_p, max_tokens, concurrency,
                              prefix_reuse, data_dir, hub_id, dataset=dataset, engine=engine, slots=slots,
                              speculative=speculative, request_timeout_s=request_timeout,
                              max_tries=max_tries, original_code=checkouts)
        run_spec = api.run_spec(names, fields=fields, params=params, source="command line")
    with as_flags(reuse="--reuse", executor="--executor"):
        summary = api.rerun(run_spec, out=out, executor=executor, ray_address=ray_address, reuse=reuse)
    _print_summary(out, summary)


@click.command()
@click.option("--pipeline", required=True, help="The pipeline to sweep, e.g. codesim.")
@click.option("--grid", required=True, multiple=True, help="NAME=V1,V2 or NAME=LOW..HIGH; repeat for more axes.")
@click.option("--out", type=PATH, required=True, help="Run directory to create.")
@click.option("--dataset", default="humaneval", help="Benchmark name.")
@click.option("--param", "fixed", multiple=True, help="NAME=VALUE held fixed, e.g. base=cot.")
@model_options
@click.option("--yes", is_flag=True, help="Allow a grid of more than 500 settings.")
@original_code_option
@data_dir_option
@hub_id_option
@executor_option
@ray_address_option
@reuse_option
def sweep(pipeline: str, grid: tuple[str, ...], out: Path, dataset: str, fixed: tuple[str, ...], model: str,
          model_name: str | None, repeats: int, limit: int | None, seed: int, temperature: float | None,
          top_p: float | None, max_tokens: str | None, concurrency: int, prefix_reuse: int | None, engine: str, slots: int,
          speculative: str, yes: bool,
          original_code: tuple[str, ...],
          data_dir: Path | None, hub_id: str | None, executor: str, ray_address: str | None,
          reuse: tuple[Path, ...]) -> None:
    """Run a pipeline at every setting of a grid in one store: settings that share a prefix of calls
    (same seeds, same messages) share them through the response cache."""
    fields = _spec_fields(model, model_name, repeats, limit, seed, temperature, top_p, max_tokens, concurrency,
                          prefix_reuse, data_dir, hub_id, dataset=dataset, engine=engine, slots=slots,
                          speculative=speculative, original_code=api.parse_original_code(original_code))
    with as_flags(allow_large="--yes", reuse="--reuse", executor="--executor"):
        run_spec = api.sweep_spec(pipeline, grid=grid, fields=fields, fixed=fixed, allow_large=yes)
        summary = api.rerun(run_spec, out=out, executor=executor, ray_address=ray_address, reuse=reuse)
    click.echo(f"sweep of {len(run_spec.pipelines)} settings: {summary.calls} calls requested, {summary.sent} made "
               f"({100 * summary.sent / max(summary.calls, 1):.0f} %), the rest shared through the response cache")
    _print_summary(out, summary)


@click.command()
@click.argument("run_dir", type=PATH)
@click.option("--replay", is_flag=True, help="Serve every call from the store; a miss is an error.")
@executor_option
@ray_address_option
@reuse_option
def resume(run_dir: Path, replay: bool, executor: str, ray_address: str | None, reuse: tuple[Path, ...]) -> None:
    """Continue a stopped run (received calls are replayed from the store, never re-sent)."""
    with as_flags(reuse="--reuse", executor="--executor"):
        summary = api.resume(run_dir, replay=replay, executor=executor, ray_address=ray_address, reuse=reuse)
    _print_summary(run_dir, summary)


def _print_summary(run_dir: Path, summary: Any) -> None:
    click.echo(f"{run_dir}: {summary.finished}/{summary.cells} cells, {summary.errors} error(s); "
               f"{summary.calls} model calls ({summary.sent} sent, {summary.calls - summary.sent} from the store); "
               f"{summary.wall_s:.0f} s")
    if not summary.leakage_clean:
        raise InputError(f"LEAKAGE: {summary.leaks} request(s) in {run_dir} contain hidden-test asserts; "
                         f"see run.json (leakage_check)")
    click.echo(f"leakage check: clean; outcomes in {run_dir}/outcomes.parquet and outcomes.csv")
