"""``sotacheck analyze`` and ``sotacheck table``: the numbers, for reading and for papers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sotacheck import api
from sotacheck.cli.options import PATH, as_flags, baseline_option, compare_option, json_default, write_text

if TYPE_CHECKING:
    from sotacheck.api.analysis import Comparison


@click.command()
@click.argument("runs", nargs=-1, required=True, type=PATH)
@baseline_option
@compare_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              help="Confidence level of the intervals.")
@click.option("--resamples", type=click.IntRange(min=1), default=10_000, help="Bootstrap / permutation resamples.")
@click.option("--seed", type=int, default=0, help="Seed of the resampling.")
def analyze(runs: tuple[Path, ...], baseline: str | None, compare: tuple[tuple[str, str], ...], as_json: bool,
            confidence: float, resamples: int, seed: int) -> None:
    """Pass rates with CIs per arm, grouped into studies (same problems, model, endpoint, sampling and
    judge), and within each study paired comparisons against its baseline with Holm."""
    result = api.analyze(runs, baseline=baseline, confidence=confidence, resamples=resamples, seed=seed, compare=compare)
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, default=json_default))
        return
    for study in result.studies:
        arms, comparisons = result.in_study(study.study.id)
        click.echo(f"{study.study.id}: {study.study.describe()}")
        unscored = [u for u in result.unscored if u.study == study.study.id]
        width = max([28, *(len(a.arm) for a in arms), *(len(u.arm) for u in unscored)])
        click.echo(f"  {'arm':{width}s} {'n':>4s} {'pass %':>6s}  two-sided {100 * confidence:g} % CI (points)")
        for a in arms:
            click.echo(f"  {a.arm:{width}s} {a.n:4d} {100 * a.pass_rate:6.1f}  [{100 * a.ci_low:.1f}, "
                       f"{100 * a.ci_high:.1f}] {a.ci_method}" + (f"  ({'; '.join(a.notes)})" if a.notes else ""))
        for u in unscored:
            click.echo(f"  {u.arm:{width}s} {0:4d} {'–':>6s}  no result: {u.cause}")
        for note in study.notes:
            click.echo(f"  note: {note}")
        for n in result.not_compared:
            if n.family == study.study.id:
                click.echo(f"  note: {n.describe()}")
        if comparisons:
            click.echo(f"  against baseline {study.baseline} (Holm across the {len(comparisons)} comparisons of "
                       f"{study.study.id}):")
            _comparison_lines(comparisons)
        click.echo("")
    if len(result.studies) > 1 and not result.requested:
        click.echo(f"nothing was compared across these {len(result.studies)} studies (they differ in problems, model, "
                   f"sampling or judge); to rank systems across runs: `sotacheck leaderboard RUN...`; to compare two "
                   f"arms by name: `--compare ARM AGAINST`")
    if result.requested:
        click.echo(f"asked for by name (Holm across these {len(result.requested)}):")
        _comparison_lines(result.requested, with_study=True)
    for n in result.not_compared:
        if n.asked_for:
            click.echo(f"asked for by name, {n.describe()}")


def _comparison_lines(comparisons: list[Comparison], with_study: bool = False) -> None:
    """One line per comparison; the columns as wide as the longest arm names (a name is never cut)."""
    arm_width = max([28, *(len(c.a) for c in comparisons)])
    vs_width = max([10, *(len(c.b) for c in comparisons)])
    click.echo(f"  {'arm':{arm_width}s} {'vs':{vs_width}s} {'diff pt':>7s} {'b':>4s} {'c':>4s} {'p':>9s} "
               f"{'p (Holm)':>9s}  test (two-sided); MDD")
    for c in comparisons:
        click.echo(f"  {c.a:{arm_width}s} {c.b:{vs_width}s} {100 * c.diff:+7.1f} {c.b_count:4d} {c.c_count:4d} {c.pvalue:9.2e} "
                   f"{c.pvalue_adjusted:9.2e}  {c.test}; {_mdd_text(c)}" + (f" [{c.study}]" if with_study else "")
                   + (f"  ({'; '.join(c.notes)})" if c.notes else ""))


def _mdd_text(c: Comparison) -> str:
    if math.isfinite(c.mdd):
        return f"smallest difference detectable with 80 % power: {100 * c.mdd:.1f} points"
    return (f"no difference detectable at 80 % power: {c.b_count + c.c_count} discordant of {c.n} shared "
            f"problems")


@click.command()
@click.argument("runs", nargs=-1, required=True, type=PATH)
@click.option("--format", "fmt", default="markdown", help="latex | markdown | csv")
@click.option("--kind", default="pass-rates",
              help="pass-rates | comparisons | fidelity (calls, tokens and cut replies per arm) | calls-by-problem")
@click.option("--ci", default="bracket", help="bracket ([low, high]) | pm (±)")
@baseline_option
@compare_option
@click.option("-o", "--output", type=PATH, default=None, help="Write to a file instead of stdout.")
def table(runs: tuple[Path, ...], fmt: str, kind: str, ci: str, baseline: str | None,
          compare: tuple[tuple[str, str], ...], output: Path | None) -> None:
    """Paper-ready tables (LaTeX booktabs, Markdown, CSV) from the same numbers as `analyze`."""
    with as_flags(format="--format", kind="--kind", ci="--ci"):
        text = api.table(runs, format=fmt, kind=kind, ci=ci, baseline=baseline, compare=compare)
    if output is None:
        click.echo(text, nl=False)
    else:
        write_text(output, text)
