"""``sotacheck compare A B --n N``: is a published margin significant? One verdict from the command line."""

from __future__ import annotations

import json

import click

from sotacheck import api
from sotacheck.cli.options import json_default
from sotacheck.core.errors import ArgumentError


def _discordant(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    parts = value.split(",")
    try:
        b, c = (int(part) for part in parts)
    except ValueError:
        raise ArgumentError(f"claim 'compare': field `--discordant`: expected B,C (two whole numbers: problems only A "
                            f"solved, only B solved), got {value!r}") from None
    return b, c


@click.command()
@click.argument("a", type=float)
@click.argument("b", type=float)
@click.option("--n", "n", type=int, required=True, help="Problems in the benchmark.")
@click.option("--runs", type=int, default=None, help="How many runs A averages (needs --sd, --se or --spread).")
@click.option("--sd", type=float, default=None, help="A's spread over the runs is a standard deviation.")
@click.option("--se", type=float, default=None, help="A's spread over the runs is a standard error.")
@click.option("--spread", type=float, default=None, help="A's ± over the runs, not said whether SD or SE.")
@click.option("--discordant", default=None, metavar="B,C",
              help="Problems only A solved, only B solved (per-problem results); the paired test then decides.")
@click.option("--unit", type=click.Choice(["percent", "fraction"]), default=None,
              help="How A, B and the spread are given (default percent; two rates both at most 1 are refused as "
                   "looking like fractions unless --unit says which).")
@click.option("--assume", "assumptions", type=click.Choice(["nonnegative-correlation"]), multiple=True,
              help="A named assumption that narrows the pairings the totals allow (off by default; named in the "
                   "verdict): nonnegative-correlation, the two systems' per-problem results are not negatively "
                   "correlated.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict and every check as JSON.")
def compare(a: float, b: float, n: int, runs: int | None, sd: float | None, se: float | None, spread: float | None,
            discordant: str | None, unit: str | None, assumptions: tuple[str, ...], as_json: bool) -> None:
    """Is A (a pass rate in percent) significantly above B on N problems? One verdict by the rule of claims
    files (docs/claims.md): the deciding test, the other tests and the smallest detectable difference."""
    verdict = api.compare(a, b=b, n=n, runs=runs, sd=sd, se=se, spread=spread, discordant=_discordant(discordant),
                          unit=unit, assumptions=assumptions)
    if as_json:
        click.echo(json.dumps(verdict.as_dict(), indent=2, default=json_default))
        return
    click.echo(api.render_comparison(verdict))
