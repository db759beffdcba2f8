"""``sotacheck import``: other tools' per-problem logs as a run directory."""

from __future__ import annotations

from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, as_flags, deprecated_alias

_HELP = """Import another tool's per-problem logs as a run directory that every other command reads like a
rerun (written atomically: nothing is written when PATH cannot be read).

KIND says which tool wrote PATH (see docs/importing.md):

\b
{kinds}
"""


class _ImportCommand(click.Command):
    """Lists the kinds registered when help is shown (an importer registered after start-up included)."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        kinds = "\n".join(f"  {name:<18} {reads}" for name, reads in api.import_kinds().items())
        self.help = _HELP.format(kinds=kinds)
        super().format_help_text(ctx, formatter)


@click.command("import", cls=_ImportCommand, help=_HELP.format(kinds=""))
@deprecated_alias("--samples", "--sample-count", "sample_count", type=click.IntRange(min=1))
@click.argument("kind", metavar="KIND")
@click.argument("path", type=PATH)
@click.option("--out", type=PATH, required=True, help="Run directory to write, e.g. runs/NAME.")
@click.option("--arm", default=None, help="Arm name, for a file of one arm (default: from the file or the log).")
@click.option("--dataset", default=None, help="Dataset name (default: from the folder, file or task; evalplus: "
              "the base name, e.g. humaneval).")
@click.option("--sample-count", "sample_count", type=click.IntRange(min=1), default=None,
              help="Long tables: the number of samples behind each fraction (without a `samples` column).")
@click.option("--instances", type=PATH, default=None,
              help="swebench: the benchmark's instance ids (one a line, a JSON list, or SWE-bench's instances).")
@click.option("--force", is_flag=True, help="Replace an existing run directory.")
def import_(kind: str, path: Path, out: Path, arm: str | None, dataset: str | None, sample_count: int | None,
            instances: Path | None, force: bool) -> None:
    with as_flags(arm="--arm", dataset="--dataset", sample_count="--sample-count N", instances="--instances FILE",
                  force="--force"):
        run, repairs = api.import_logs(kind, path=path, out=out, arm=arm, dataset=dataset, force=force,
                                       sample_count=sample_count, instances=instances)
    table = run.outcomes
    click.echo(f"wrote {out}: {len(table)} cells")
    groups = table.assign(errors=table["status"] == "error").groupby(["arm", "dataset"])["errors"]
    for (arm_name, data), errors in groups:
        count = int(errors.sum())
        click.echo(f"  {arm_name} on {data}: {len(errors)} cells" + (
            f", {count} without a verdict (an empty or error result: counted as errors, not failures)" if count else ""))
    for repair in repairs:
        click.echo(f"  note: {repair}")


@click.command()
@click.argument("runs", nargs=-1, required=True, type=PATH)
def migrate(runs: tuple[Path, ...]) -> None:
    """Rewrite run directories of an older format in the current one (tables and run.json)."""
    from sotacheck.core.rundir import FORMAT_VERSION

    for path in runs:
        run = api.migrate(path)
        click.echo(f"{path}: format version {FORMAT_VERSION}, {len(run.outcomes)} cells")
