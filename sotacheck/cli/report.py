"""``sotacheck report``: the self-contained HTML audit report."""

from __future__ import annotations

from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, baseline_option, compare_option, data_dir_option
from sotacheck.core.errors import UsageError


@click.command()
@click.argument("runs", nargs=-1, required=True, type=PATH)
@click.option("-o", "--output", type=PATH, default=Path("report.html"), help="The HTML file to write.")
@click.option("--claims", "claims_files", type=PATH, multiple=True, metavar="FILE",
              help="A claims registry file; repeat it for each file (--claims a.yaml --claims b.yaml).")
@baseline_option
@compare_option
@click.option("--leaderboard", "leaderboards", multiple=True, metavar="DATASET",
              help="Add a leaderboard section for DATASET: every arm of the runs on it ranked, with rank intervals "
                   "and the top group (as `sotacheck leaderboard`); repeatable.")
@data_dir_option
def report(runs: tuple[Path, ...], output: Path, claims_files: tuple[Path, ...], baseline: str | None,
           compare: tuple[tuple[str, str], ...], leaderboards: tuple[str, ...], data_dir: Path | None) -> None:
    """A self-contained HTML audit report (no network needed to open it), one section per study."""
    for path in runs:
        if path.is_file() and path.suffix.lower() in (".yaml", ".yml", ".json"):  # `--claims a.yaml b.yaml`
            given = " ".join(f"--claims {file}" for file in (*claims_files, path))
            raise UsageError(f"{path} is a file where a run directory is expected; a claims file goes after --claims, "
                             f"repeated for each ({given})")
    path = api.report(runs, output=output, claims=claims_files, baseline=baseline, data_dir=data_dir, compare=compare,
                      leaderboard=leaderboards)
    click.echo(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
