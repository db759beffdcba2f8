"""``sotacheck leaderboard``: many systems on one benchmark, and which cannot be separated from #1."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, as_flags, data_dir_option, deprecated_alias, write_text
from sotacheck.core.errors import UsageError

FORMATS = ("latex", "markdown", "csv")


@click.command()
@deprecated_alias("--audit-tests", "--suspect-tests", "weak_tests", is_flag=True)
@click.argument("runs", nargs=-1, required=True, type=PATH)
@click.option("--dataset", default=None, help="The benchmark, when the runs hold several.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              help="Family-wise error rate of the pairwise tests (Holm), and so the rank intervals' level.")
@click.option("--against", default=None, metavar="SYSTEM|TOP",
              help="Test only this system's pairs (TOP: the best by pass rate, chosen from these data): a smaller "
                   "Holm family than all pairs, named in the output.")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              help="Confidence level of the pass-rate intervals.")
@click.option("--canonical", is_flag=True, help="Judge the benchmark's canonical solutions and show their verdicts "
              "beside the suspect problems.")
@click.option("--suspect-tests", "weak_tests", is_flag=True, help="Run cheap wrong programs against the benchmark's "
              "tests (as `sotacheck judge --suspect-tests`) and list the problems whose tests accept one as suspect.")
@data_dir_option
@click.option("--pairs", "show_pairs", is_flag=True, help="Also list every tested pair (with --format: the pairs "
              "table instead of the systems table).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (the contract in docs/leaderboards.md).")
@click.option("--format", "fmt", default=None, metavar="latex|markdown|csv", help="Print a paper table instead.")
@click.option("--html", type=PATH, default=None, help="Also write a self-contained HTML page of the leaderboard.")
@click.option("-o", "--output", type=PATH, default=None, help="Write the text, JSON or table to a file.")
def leaderboard(runs: tuple[Path, ...], dataset: str | None, alpha: float, against: str | None, confidence: float,
                canonical: bool, weak_tests: bool, data_dir: Path | None, show_pairs: bool, as_json: bool, fmt: str | None,
                html: Path | None, output: Path | None) -> None:
    """Rank every system (arm) of RUNS on one benchmark: pass rates with intervals, every pair with the paired
    test under Holm, simultaneous rank intervals, the top group (systems no other beats significantly), what the
    benchmark can resolve, and suspect problems. Several runs (one per model, say) go on one board."""
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt is not None and as_json:
        raise UsageError("give --json or --format, not both")
    with as_flags(dataset="--dataset", alpha="--alpha", against="--against", confidence="--confidence",
                  canonical="--canonical", weak_tests="--suspect-tests", data_dir="--data-dir"):
        board = api.leaderboard(runs, dataset=dataset, alpha=alpha, against=against, confidence=confidence,
                                canonical=canonical, weak_tests=weak_tests, data_dir=data_dir)
    if as_json:
        text = json.dumps(board.to_json(), indent=2) + "\n"
    else:
        text = api.render_leaderboard(board, format=fmt or "text", pairs=show_pairs)
    if html is not None:
        write_text(html, api.render_leaderboard(board, format="html"))
    if output is None:
        click.echo(text, nl=False)
    else:
        write_text(output, text)
