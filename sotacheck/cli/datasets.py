"""``sotacheck datasets``: the benchmarks, their sizes, content hashes, sources and licences."""

from __future__ import annotations

from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import data_dir_option


@click.command()
@data_dir_option
@click.option("--hub-id", default=None, help="Hub id for mbpp-et.")
def datasets(data_dir: Path | None, hub_id: str | None) -> None:
    """List the benchmarks with their problem counts, content hashes, sources and licences."""
    from sotacheck.reruns.benchmarks.catalog import card

    for name, dataset in api.datasets(data_dir, hub_id):
        if isinstance(dataset, str):
            click.echo(f"{name:15s} unavailable: {dataset}")
        else:
            click.echo(f"{name:15s} {len(dataset):5d} problems  sha256:{dataset.content_hash}")
        about = card(name)
        click.echo(f"{'':15s} source: {about.source}")
        click.echo(f"{'':15s} licence: {about.licence}")
