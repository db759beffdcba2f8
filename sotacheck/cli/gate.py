"""``sotacheck gate``: the CI regression gate (exit 0 pass, 1 regression, 2 unusable input)."""

from __future__ import annotations

from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, write_text


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
@click.option("--max-drop", type=float, default=0.0, help="Allowed drop (noninferiority mode), as a fraction.")
@click.option("--min-n", type=int, default=30, help="Fewest shared problems the gate will decide on.")
@click.option("--mode", default="significance", help="significance | noninferiority")
@click.option("--max-error-rate", type=float, default=0.05, help="Most errored cells tolerated, as a fraction.")
@click.option("--junit", type=PATH, default=None, help="Write JUnit XML here.")
@click.option("--markdown", type=PATH, default=None, help="Write a Markdown summary here.")
def gate_command(baseline: str, candidate: str, dataset: str | None, alpha: float, max_drop: float, min_n: int,
                 mode: str, max_error_rate: float, junit: Path | None, markdown: Path | None) -> None:
    """Fail CI on a real drop in pass rate: exit 0 pass, 1 regression, 2 unusable input."""
    from sotacheck.audit.gate import GateSettings
    from sotacheck.core.errors import InputError
    from sotacheck.reports.gate import explanation, junit_xml
    from sotacheck.reports.gate import markdown as render_markdown

    try:
        settings = GateSettings(alpha=alpha, max_drop=max_drop, min_n=min_n, mode=mode,  # type: ignore[arg-type]
                                max_error_rate=max_error_rate)
        base_path, base_arm = _run_and_arm(baseline)
        cand_path, cand_arm = _run_and_arm(candidate)
        result = api.gate(base_path, cand_path, base_arm, cand_arm, dataset, settings)
    except InputError as exc:
        click.echo(f"sotacheck gate: UNUSABLE INPUT (exit 2): {exc}. The gate exits 2 rather than 0 or 1 so that "
                   "CI does not mistake input it cannot judge for a pass or a regression.", err=True)
        raise click.exceptions.Exit(2) from None
    if junit is not None:
        write_text(junit, junit_xml(result))
    if markdown is not None:
        write_text(markdown, render_markdown(result))
    click.echo(explanation(result), err=True)
    raise click.exceptions.Exit(result.exit_code)
