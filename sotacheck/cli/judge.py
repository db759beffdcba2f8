"""``sotacheck judge``: code against a benchmark's hidden tests, in the sandbox."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import PATH, data_dir_option, executor_option, hub_id_option, ray_address_option, write_text


@click.command()
@click.option("--dataset", required=True, help="Benchmark name, e.g. humaneval, humaneval-et, mbpp.")
@click.option("--canonical", is_flag=True, help="Judge the dataset's canonical solutions.")
@click.option("--samples", type=PATH, default=None, help="JSONL of {task_id, completion|solution}.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--out", type=PATH, default=None, help="Also write the JSON result to this file.")
@click.option("--workers", type=click.IntRange(min=1), default=None, show_default=False,
              help="Sandbox workers (default: CPU count).")
@click.option("--test-timeout", type=click.FloatRange(min=0, min_open=True), default=5.0, help="Wall seconds per test.")
@click.option("--run-out", type=PATH, default=None, help="Also write the verdicts as a run directory.")
@click.option("--arm", default=None, help="Arm name for --run-out (default: samples file name).")
@data_dir_option
@hub_id_option
@executor_option
@ray_address_option
def judge(dataset: str, canonical: bool, samples: Path | None, as_json: bool, out: Path | None, workers: int | None,
          test_timeout: float, run_out: Path | None, arm: str | None, data_dir: Path | None, hub_id: str | None,
          executor: str, ray_address: str | None) -> None:
    """Judge code against a benchmark's hidden tests in the sandbox.

    A completion whose first code line starts at column 0 is a whole program (judged after the
    prompt's imports and helpers); an indented one continues the prompt and is appended to it.
    """
    result = api.judge(dataset, samples, canonical, workers, test_timeout, data_dir, executor, ray_address,
                       progress=not as_json and sys.stderr.isatty(), run_out=run_out, arm=arm, hub_id=hub_id)
    text = json.dumps(result.as_dict(), indent=2)
    if out is not None:
        write_text(out, text + "\n")
    if as_json:
        click.echo(text)
        return
    data, verdicts = result.dataset, result.verdicts
    click.echo(f"{data.name}: {result.passed}/{len(verdicts)} passed ({100 * result.pass_rate:.1f} %)  "
               f"dataset sha256:{data.content_hash[:16]}")
    click.echo("  " + "  ".join(f"{status}={count}" for status, count in result.counts.items()))
    rules = result.as_dict().get("output_rules")
    if rules is not None:
        click.echo(f"  outputs compared by the {rules} rules"
                   + (" (ExecEval's: a NaN matches any number)" if rules == "execeval" else " (a NaN matches only a NaN)"))
    base = result.base_verdicts
    if base is not None and result.base_passed is not None:  # an EvalPlus dataset: both of its figures
        n = len(verdicts)
        click.echo(f"  base tests: {result.base_passed}/{n} passed ({100 * result.base_passed / max(n, 1):.1f} %)  "
                   f"base + extra tests: {result.passed}/{n} passed ({100 * result.pass_rate:.1f} %)")
    for index, verdict in enumerate(verdicts):
        if not verdict.passed:
            note = " (base tests passed)" if base is not None and base[index] else ""
            click.echo(f"  {verdict.problem_id}: {verdict.status}{note}: {verdict.result.exception_type}: "
                       f"{(verdict.result.message or '')[:120]}")
