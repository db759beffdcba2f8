"""``sotacheck claims``: a verdict for every published claim in claims files (``-``: standard input)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, data_dir_option, json_default
from sotacheck.core.errors import UsageError


@click.command()
@click.argument("files", nargs=-1, type=PATH)
@click.option("--runs", type=PATH, multiple=True, metavar="RUN_DIR",
              help="A run directory with the per-problem data some claims name; repeat it for each run "
                   "(--runs runs/A --runs runs/B): a second path after one --runs is read as a claims file.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts, with every check, as JSON.")
@click.option("--schema", is_flag=True, help="Print the JSON Schema of a claims file and exit.")
@data_dir_option
def claims(files: tuple[Path, ...], runs: tuple[Path, ...], as_json: bool, schema: bool, data_dir: Path | None) -> None:
    """Audit published claims: every check that what was published allows, and one verdict by a documented rule
    (docs/claims.md).

    FILES are claims files, `-` for standard input (default: the registries shipped with sotacheck).
    """
    if schema:
        click.echo(json.dumps(api.claims_schema(), indent=2))
        return
    _no_run_among(files, runs)
    verdicts = api.check_claims(files, runs=runs, data_dir=data_dir)
    if as_json:
        click.echo(json.dumps([v.as_dict() for v in verdicts], indent=2, default=json_default))
        return
    click.echo(api.render_verdicts(verdicts))


def _no_run_among(files: tuple[Path, ...], runs: tuple[Path, ...]) -> None:
    """A run directory given where FILES go (``--runs A B`` reads B as a claims file): say how to give it."""
    for path in files:
        if path.is_dir():
            given = " ".join(f"--runs {run}" for run in (*runs, path))
            raise UsageError(f"{path} is a directory, not a claims file; to give several run directories, repeat "
                             f"--runs for each ({given})")
