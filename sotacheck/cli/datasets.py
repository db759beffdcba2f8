"""``sotacheck datasets``: the benchmarks, their sizes, content hashes, sources and licences."""

from __future__ import annotations

from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import data_dir_option
from sotacheck.core.errors import UsageError


@click.command()
@data_dir_option
@click.option("--hub-id", "hub_ids", multiple=True, metavar="[DATASET=]ID",
              help="Read DATASET (one not bundled: mbpp-et, mbpp-et-rows, humaneval-plus, mbpp-plus) from the hub "
                   "dataset ID; a bare ID is MBPP-ET's (both readings); repeatable.")
def datasets(data_dir: Path | None, hub_ids: tuple[str, ...]) -> None:
    """List the benchmarks with their problem counts, content hashes, sources and licences."""
    for name, dataset in api.datasets(data_dir, hub_id=_hub_ids(hub_ids)):
        if isinstance(dataset, str):
            click.echo(f"{name:15s} unavailable: {dataset}")
        else:
            click.echo(f"{name:15s} {len(dataset):5d} problems  sha256:{dataset.content_hash}")
        about = api.dataset_card(name)
        click.echo(f"{'':15s} source: {about.source}")
        click.echo(f"{'':15s} licence: {about.licence}")


def _hub_ids(given: tuple[str, ...]) -> dict[str, str]:
    """``--hub-id`` values as dataset → hub id; a bare id names MBPP-ET's hub copy, as it always did."""
    mapped: dict[str, str] = {}
    for value in given:
        name, sep, hub_id = value.partition("=")
        pairs = [(name.strip(), hub_id.strip())] if sep else [("mbpp-et", value), ("mbpp-et-rows", value)]
        for dataset, one in pairs:
            if not dataset or not one:
                raise UsageError(f"--hub-id {value!r}: expected DATASET=ID or a bare ID (MBPP-ET's)")
            mapped[dataset] = one
    return mapped
