"""``sotacheck leakage`` and ``sotacheck serve``: the leakage proof, and the embedded model as a server."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH
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
        click.echo(f"  call {call_id} ({problem}) contains hidden assert: {found[:100]}", err=True)
    raise InputError(f"{run_dir}: {len(report.leaks)} leak(s) of hidden tests into prompts")


@click.command()
@click.option("--port", type=int, default=8080, help="Port on 127.0.0.1.")
@click.option("--gguf", type=PATH, default=None, help="Another GGUF file (default: the embedded model).")
def serve(port: int, gguf: Path | None) -> None:
    """Serve the embedded model (or a GGUF) on an OpenAI-compatible endpoint, in the foreground."""
    from sotacheck.reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf

    path = gguf or assemble_gguf()
    server = LocalServer(path, port=port, model_alias=LOCAL_MODEL_ID if gguf is None else path.stem)
    os.execv(sys.executable, server.command())
