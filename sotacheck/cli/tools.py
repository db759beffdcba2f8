"""``sotacheck leakage`` and ``sotacheck serve``: the leakage proof, and the embedded model as a server."""

from __future__ import annotations

import os
from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH
from sotacheck.core.errors import InputError, UsageError


@click.command()
@click.argument("run_dir", type=PATH)
def leakage(run_dir: Path) -> None:
    """Prove from the stored requests that no hidden-test assert reached any prompt."""
    report = api.check_leakage(run_dir)
    if report.clean:
        click.echo(f"{run_dir}: clean: no hidden-test assert in any of {report.requests_checked} requests")
        return
    for call_id, problem, found in report.leaks[:20]:
        click.echo(f"  call {call_id} ({problem}) contains hidden assert: {found[:100]}", err=True)
    raise InputError(f"{run_dir}: {len(report.leaks)} leak(s) of hidden tests into prompts")


@click.command()
@click.option("--port", type=int, default=8080, help="Port on 127.0.0.1.")
@click.option("--gguf", type=PATH, default=None, help="Another GGUF file (default: the embedded model).")
@click.option("--engine", type=click.Choice(["auto", "llama-cpp-python", "llama-server"]), default="auto",
              help="llama-cpp-python's server, or llama.cpp's own llama-server (`make setup-local` builds it); "
                   "auto as in `rerun`.")
@click.option("--slots", type=click.IntRange(min=1), default=1, metavar="S",
              help="--engine llama-server: sequences in flight at once.")
@click.option("--speculative", type=click.Choice(["auto", "off", "ngram-simple"]), default="auto",
              help="--engine llama-server: speculative decoding from the request's own prompt and reply; auto as in "
                   "`rerun`.")
@click.option("--prefix-reuse", "prefix_reuse", type=click.IntRange(min=0), default=0, metavar="A",
              help="--engine llama-cpp-python: reuse a cached prompt prefix up to a multiple of A tokens.")
def serve(port: int, gguf: Path | None, engine: str, slots: int, speculative: str, prefix_reuse: int) -> None:
    """Serve the embedded model (or a GGUF) on an OpenAI-compatible endpoint, in the foreground.

    The engine and its modes are ``rerun``'s (the same options)."""
    from sotacheck.reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf
    from sotacheck.reruns.model.native_server import NativeMode, misfit, resolve

    engine, speculative, chosen = resolve(engine, speculative, slots, embedded=True, prefix_reuse=prefix_reuse)
    wrong = misfit(engine, slots, speculative, prefix_reuse, embedded=True, model="local")
    if wrong:
        raise UsageError(wrong)
    click.echo(chosen, err=True)
    native = NativeMode(slots, speculative) if engine == "llama-server" else None
    path = gguf or assemble_gguf()
    server = LocalServer(path, port=port, model_alias=LOCAL_MODEL_ID if gguf is None else path.stem,
                         prefix_reuse=prefix_reuse, native=native)
    command = server.command()
    os.execve(command[0], command, {**os.environ, "SOTACHECK_PREFIX_REUSE": str(prefix_reuse)})
