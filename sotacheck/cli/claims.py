"""``sotacheck claims``: a verdict for every published claim in the registry."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, data_dir_option, json_default


@click.command()
@click.argument("files", nargs=-1, type=PATH)
@click.option("--runs", type=PATH, multiple=True, help="Run directories for rerun-backed claims.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as JSON.")
@data_dir_option
def claims(files: tuple[Path, ...], runs: tuple[Path, ...], as_json: bool, data_dir: Path | None) -> None:
    """Audit published claims: a verdict and a one-sentence reason for every claim in the registry.

    FILES are registry files (default: the registries shipped with sotacheck).
    """
    verdicts = api.audit_claims(files, runs, data_dir)
    if as_json:
        click.echo(json.dumps([v.as_dict() for v in verdicts], indent=2, default=json_default))
        return
    counts = Counter(v.verdict for v in verdicts)
    click.echo(f"{len(verdicts)} claims: " + ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common()))
    for v in verdicts:
        p = "" if v.pvalue is None else f" (p = {v.pvalue:.3g})"
        click.echo(f"\n[{v.verdict}] {v.paper}/{v.id}{p}\n  {v.statement}\n  {v.reason}")
        for note in v.notes:
            click.echo(f"  note: {note}")
