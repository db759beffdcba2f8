"""``sotacheck leakage`` and ``sotacheck serve``: the leakage proof, and the embedded model as a server."""

from __future__ import annotations

import os
from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, prefix_reuse_option
from sotacheck.core.errors import InputError


@click.command()
@click.argument("run_dir", type=PATH)
def leakage(run_dir: Path) -> None:
    """Prove from the stored requests that no hidden-test assert reached any prompt."""
    report = api.check_leakage(run_dir)
    if report.clean:
        click.echo(f"{run_dir}: clean: no hidden-test assert in any of {report.requests_checked} requests")
        return
    for call_id, problem, found in report.leaks[:20]:
        click.echo(f"  call {call_id} ({problem}) contains hidden assert: {found[:100]}")  # the finding: stdout
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
@prefix_reuse_option("Prefix reuse, as in `rerun`: A|off|auto.")
def serve(port: int, gguf: Path | None, engine: str, slots: int, speculative: str, prefix_reuse: int | None) -> None:
    """Serve the embedded model (or a GGUF) on an OpenAI-compatible endpoint, in the foreground.

    The engine and its modes are ``rerun``'s (the same options). llama-server's aligned prefix reuse is probed
    first, on a server started for the probe alone, and dropped where it is not exact here."""
    choice = api.engine_choice("local", engine=engine, speculative=speculative, slots=slots, prefix_reuse=prefix_reuse)
    click.echo(choice.line, err=True)
    server = api.local_server(choice, gguf=gguf, port=port, slots=slots, probe=True)
    if server.probe_result is not None and server.probe_result.exact:
        click.echo(f"aligned prefix reuse is exact here: {server.probe_result.detail}", err=True)
    command = server.command()
    os.execve(command[0], command, server.environment())
