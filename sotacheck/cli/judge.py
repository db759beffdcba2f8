"""``sotacheck judge``: code against a benchmark's hidden tests, in the sandbox."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from sotacheck import api
from sotacheck.cli.options import (
    PATH,
    as_flags,
    data_dir_option,
    deprecated_alias,
    executor_option,
    hub_id_option,
    ray_address_option,
    write_text,
)


@click.command()
@deprecated_alias("--audit-tests", "--suspect-tests", "suspect_tests", is_flag=True)
@click.option("--dataset", required=True, help="Benchmark name, e.g. humaneval, humaneval-et, mbpp.")
@click.option("--canonical", is_flag=True, help="Judge the dataset's canonical solutions.")
@click.option("--samples", type=PATH, default=None, help="JSONL of {task_id, completion|solution}.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--out", type=PATH, default=None, help="Also write the JSON result to this file.")
@click.option("--workers", type=click.IntRange(min=1), default=None, show_default=False,
              help="Sandbox workers (default: CPU count). BigCodeBench: the cores its tasks use together; more tasks "
                   "are in flight (up to 4 per worker) while those leave half a core unused.")
@click.option("--test-timeout", type=click.FloatRange(min=0, min_open=True), default=5.0, help="Wall seconds per test.")
@click.option("--run-out", type=PATH, default=None, help="Also write the verdicts as a run directory.")
@click.option("--force", is_flag=True, help="Replace an existing run directory at --run-out.")
@click.option("--arm", default=None, help="Arm name for --run-out (default: samples file name).")
@click.option("--duplicates", type=click.Choice(["auto", "first", "last", "samples"]), default="auto",
              show_default=True,
              help="A task on several lines of --samples: 'auto' judges them as samples (repeats) in a file of several "
                   "samples per task (pass@k: most tasks on two lines or more) and refuses a file of one line per task "
                   "where a task appears again (a duplicated line); 'first'/'last' keep that line only; 'samples' "
                   "judges every line.")
@click.option("--suspect-tests", "suspect_tests", is_flag=True, default=False,
              help="Instead of judging code: list the problems whose tests accept a cheap wrong program.")
@click.option("--relative-timeout", is_flag=True,
              help="Per-problem test limit max(4 s, 4 x the canonical solution's time), as EvalPlus (overrides --test-timeout).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Judge the same code N times and list the problems whose verdict changes (flaky tests).")
@data_dir_option
@hub_id_option
@executor_option
@ray_address_option
def judge(dataset: str, canonical: bool, samples: Path | None, as_json: bool, out: Path | None, workers: int | None,
          test_timeout: float, run_out: Path | None, force: bool, arm: str | None, duplicates: str, suspect_tests: bool,
          relative_timeout: bool, repeat: int,
          data_dir: Path | None, hub_id: str | None, executor: str, ray_address: str | None) -> None:
    """Judge code against a benchmark's hidden tests in the sandbox.

    A completion whose first code line starts at column 0 is a whole program (judged after the
    prompt's imports and helpers); an indented one continues the prompt and is appended to it.
    """
    if suspect_tests:
        _audit(dataset, workers, test_timeout, data_dir, hub_id, as_json, out)
        return
    with as_flags(canonical="--canonical", samples="--samples FILE", executor="--executor",
                  relative_timeout="--relative-timeout", duplicates="--duplicates"):
        reports = [api.judge(dataset, samples=samples, canonical=canonical, workers=workers, test_timeout=test_timeout,
                             data_dir=data_dir, executor=executor, ray_address=ray_address,
                             progress=not as_json and sys.stderr.isatty(), run_out=run_out if index == 0 else None,
                             arm=arm, hub_id=hub_id, relative_timeout=relative_timeout, duplicates=duplicates,
                             force=force) for index in range(repeat)]
    result = reports[0]
    flaky = api.flaky_problems(reports) if repeat > 1 else None
    if out is not None or as_json:
        report = result.as_dict()
        if flaky is not None:
            report["repeat"] = {"n": repeat, "flaky": flaky}
        text = json.dumps(report, indent=2)
        if out is not None:
            write_text(out, text + "\n")
        if as_json:
            click.echo(text)
            return
    data, verdicts = result.dataset, result.verdicts
    click.echo(f"{data.name}: {result.passed}/{result.judged} passed ({100 * result.pass_rate:.1f} %)  "
               f"dataset sha256:{data.content_hash[:16]}")
    click.echo("  " + "  ".join(f"{status}={count}" for status, count in result.counts.items()))
    if result.judged != len(verdicts):
        click.echo(f"  {len(verdicts) - result.judged} of {len(verdicts)} tasks the environment cannot judge (status "
                   f"environment): neither passes nor failures, left out of the rate")
    if flaky is not None:
        click.echo(f"  judged {repeat} times: {len(flaky)} problems changed verdict"
                   + "".join(f"\n    {problem}: {' '.join(seen)}" for problem, seen in flaky.items()))
    rules = result.output_rules
    if rules is not None:
        click.echo(f"  outputs compared by the {rules} rules"
                   + (" (ExecEval's: a NaN matches any number, integers as 129-bit floats)" if rules == "execeval"
                      else " (a NaN matches only a NaN, integers digit for digit)"))
    lenient = result.execeval_only
    if lenient is not None:
        click.echo(f"  {len(lenient)} passed only by ExecEval's rules (the strict rules reject an output)"
                   + (": " + " ".join(lenient) if lenient else ""))
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


def _audit(dataset: str, workers: int | None, test_timeout: float, data_dir: Path | None, hub_id: str | None,
           as_json: bool, out: Path | None) -> None:
    audit = api.find_suspect_tests(dataset, workers=workers, test_timeout=test_timeout, data_dir=data_dir, hub_id=hub_id)
    text = json.dumps(audit.as_dict(), indent=2)
    if out is not None:
        write_text(out, text + "\n")
    if as_json:
        click.echo(text)
        return
    flagged = len({s.problem_id for s in audit.suspects})
    click.echo(f"{audit.dataset}: {flagged} of {audit.problems} problems have tests that accept a wrong program "
               f"({audit.programs_run} programs run)")
    click.echo("| problem | wrong program | passed |\n| --- | --- | --- |")
    for suspect in audit.suspects:
        click.echo(f"| {suspect.problem_id} | {suspect.kind} | `{suspect.program}` |")
