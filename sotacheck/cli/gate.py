"""``sotacheck gate``: the CI regression gate (exit 0 pass, 1 regression, 2 unusable input)."""

from __future__ import annotations

from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, as_flags, write_text
from sotacheck.core.errors import UsageError


def _run_and_arm(spec: str) -> tuple[Path, str | None]:
    """``runs/A`` or ``runs/A:ARM`` (an arm name may itself contain colons only after the first)."""
    if Path(spec).is_dir() or ":" not in spec:
        return Path(spec), None
    path, arm = spec.split(":", 1)
    return Path(path), arm


@click.command("gate")
@click.option("--baseline", required=True, help="Baseline run, runs/A or runs/A:ARM.")
@click.option("--candidate", required=True, help="Candidate run, runs/B or runs/B:ARM.")
@click.option("--dataset", default=None, help="Only this dataset (default: every shared one).")
@click.option("--alpha", type=float, default=0.05, help="One-sided significance level.")
@click.option("--max-drop", type=float, default=0.0, metavar="POINTS",
              help="Allowed drop in noninferiority mode, in percentage points, never a fraction: 2 is two points, "
                   "0.5 half a point.")
@click.option("--min-n", type=int, default=30, help="Fewest shared problems the gate will decide on.")
@click.option("--mode", default="significance", help="significance | noninferiority")
@click.option("--max-error-rate", type=float, default=0.05, help="Most errored cells tolerated, as a fraction.")
@click.option("--missing-as-failure", is_flag=True,
              help="Judge the baseline's problems the candidate has no result for as failures (default: such a "
                   "candidate is unusable input, exit 2, never a pass).")
@click.option("--candidate-problems-only", is_flag=True,
              help="Gate only the baseline's problems the candidate has (a slice, e.g. a --limit rerun): the others "
                   "are not judged, and the decision says how many of the baseline's problems it covers.")
@click.option("--junit", type=PATH, default=None, help="Write JUnit XML here.")
@click.option("--markdown", type=PATH, default=None, help="Write a Markdown summary here.")
def gate_command(baseline: str, candidate: str, dataset: str | None, alpha: float, max_drop: float, min_n: int,
                 mode: str, max_error_rate: float, missing_as_failure: bool, candidate_problems_only: bool,
                 junit: Path | None, markdown: Path | None) -> None:
    """Fail CI on a real drop in pass rate: exit 0 pass, 1 regression, 2 unusable input.

    The verdict and its explanation go to standard output; an input the gate cannot judge is one line on
    standard error. Every problem of the baseline is compared: a candidate without a result for one is exit 2
    (or, with --missing-as-failure, that problem is a failure; with --candidate-problems-only, the gate is of
    the slice the candidate ran, and says so)."""
    from sotacheck.core.errors import SotacheckError

    try:
        with as_flags(alpha="--alpha", max_drop="--max-drop", min_n="--min-n", mode="--mode",
                      max_error_rate="--max-error-rate", dataset="--dataset", missing_as_failure="--missing-as-failure",
                      candidate_problems_only="--candidate-problems-only"):
            settings = api.gate_settings(alpha=alpha, max_drop=_max_drop_fraction(max_drop), min_n=min_n, mode=mode,
                                         max_error_rate=max_error_rate, missing_as_failure=missing_as_failure,
                                         candidate_problems_only=candidate_problems_only)
            base_path, base_arm = _run_and_arm(baseline)
            cand_path, cand_arm = _run_and_arm(candidate)
            result = api.gate(base_path, candidate=cand_path, baseline_arm=base_arm, candidate_arm=cand_arm,
                              dataset=dataset, settings=settings)
    except SotacheckError as exc:
        reason = " ".join(str(exc).split())
        if junit is not None:
            write_text(junit, api.render_gate_error(reason, format="junit"))
        if markdown is not None:
            write_text(markdown, api.render_gate_error(reason, format="markdown"))
        click.echo(f"sotacheck gate: UNUSABLE INPUT (exit 2): {reason}. The gate exits 2 rather than 0 or 1 so "
                   "that CI does not mistake input it cannot judge for a pass or a regression.", err=True)
        raise click.exceptions.Exit(2) from None
    if junit is not None:
        write_text(junit, api.render_gate(result, format="junit"))
    if markdown is not None:
        write_text(markdown, api.render_gate(result, format="markdown"))
    click.echo(api.render_gate(result))
    raise click.exceptions.Exit(result.exit_code)


def _max_drop_fraction(points: float) -> float:
    """``--max-drop`` in percentage points as the fraction the gate computes with (one unit, no guessing:
    0.5 is half a point, never 50 points)."""
    if not 0 <= points < 100:
        raise UsageError(f"--max-drop must be in [0, 100) percentage points, got {points:g}")
    return points / 100
