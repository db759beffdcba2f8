"""An arm without a single complete, non-error result (every cell an error, as the authors' MapCoder code on a
model that does not close its XML tags) is reported as such; it stops neither the analysis, its tables, the
HTML report, a sweep nor a claim verdict, and it changes nothing about the other arms."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from sotacheck.audit.analysis import analyze, combine_runs, study_findings
from sotacheck.audit.claim_registry import Claim
from sotacheck.audit.claims import UNVERIFIABLE, evaluate
from sotacheck.audit.report_inputs import report_inputs
from sotacheck.audit.sweeps import sweep_table
from sotacheck.core.rundir import Run, load_run, normalise, write_run
from sotacheck.reports.html import build_model, render
from sotacheck.reports.tables import comparison_table, pass_rate_table, to_markdown
from tests.sotacheck_command import SOTACHECK

N = 12
# 0/1 outcomes per problem of the arms that do have results (chosen so the two differ on 5 problems)
OUTCOMES = {"direct": [1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0], "method": [1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0]}


def _cells(arm: str, passed: list[int | None], repeat: int = 0, **columns: object) -> list[dict[str, object]]:
    return [{"arm": arm, "dataset": "humaneval", "problem": f"HumanEval/{i}", "repeat": repeat,
             "passed": None if p is None else bool(p), "status": "error" if p is None else
             ("passed" if p else "failed"), **columns} for i, p in enumerate(passed)]


def _run(rows: list[dict[str, object]], name: str = "run") -> Run:
    return Run(None, normalise(pd.DataFrame(rows), name), {"name": name, "source": "csv"})


@pytest.fixture(scope="module")
def with_broken() -> Run:
    return _run([*_cells("direct", OUTCOMES["direct"]), *_cells("method", OUTCOMES["method"]),
                 *_cells("broken", [None] * N)])


def test_the_arm_is_unscored_and_the_rest_unchanged(with_broken) -> None:
    result = analyze([with_broken], baseline="direct", n_resamples=500)
    without = analyze([_run([*_cells("direct", OUTCOMES["direct"]), *_cells("method", OUTCOMES["method"])])],
                      baseline="direct", n_resamples=500)
    assert [u.arm for u in result.unscored] == ["broken"]
    broken = result.unscored[0]
    assert (broken.n_cells, broken.n_errors, broken.cause, broken.study) == (N, N, f"all {N} cells are errors", "S1")
    assert result.arms == without.arms and result.comparisons == without.comparisons
    # the remaining arms' intervals: Wilson, as statsmodels computes it (to 1e-9)
    for arm in result.arms:
        k = sum(OUTCOMES[arm.arm])
        assert (arm.ci_low, arm.ci_high) == pytest.approx(proportion_confint(k, N, method="wilson"), abs=1e-9)
    # one comparison in the Holm family (method vs direct), so Holm leaves its p as it is
    assert [(c.a, c.b) for c in result.comparisons] == [("method", "direct")]
    assert result.comparisons[0].pvalue_adjusted == result.comparisons[0].pvalue
    assert [(n.a, n.b, n.family, n.asked_for) for n in result.not_compared] == [("broken", "direct", "S1", False)]
    assert result.not_compared[0].reason == f"broken: all {N} cells are errors"
    assert "1 more without any complete result (broken)" in study_findings(result, result.studies[0])
    payload = json.loads(json.dumps(result.as_dict()))
    assert payload["unscored"][0]["arm"] == "broken" and payload["not_compared"][0]["a"] == "broken"


def test_tables_show_the_arm_without_a_pass_rate(with_broken) -> None:
    result = analyze([with_broken], baseline="direct", n_resamples=200)
    rates = pass_rate_table(result)
    assert [r[0].text for r in rates.rows] == ["direct", "method", "broken"]
    assert [c.text for c in rates.rows[-1]] == ["broken", "humaneval", "0", "no result", "–", "–", "–"]
    assert rates.notes == (f"broken on humaneval: no pass rate and no comparison: all {N} cells are errors.",)
    markdown = to_markdown(comparison_table(result))
    assert f"> broken vs direct on humaneval: not compared; broken: all {N} cells are errors." in markdown


def test_an_unscored_baseline_compares_nothing_and_says_why(with_broken) -> None:
    result = analyze([with_broken], baseline="broken", n_resamples=200)
    assert result.comparisons == ()
    assert sorted((n.a, n.b) for n in result.not_compared) == [("direct", "broken"), ("method", "broken")]
    assert {a.arm for a in result.arms} == {"direct", "method"}


def test_a_comparison_asked_for_is_refused_with_its_reason(with_broken) -> None:
    result = analyze([with_broken], baseline="direct", n_resamples=200,
                     compare=[("method", "broken"), ("method", "direct")])
    assert [(c.a, c.b) for c in result.requested] == [("method", "direct")]
    refused = [n for n in result.not_compared if n.asked_for]
    assert [(n.a, n.b) for n in refused] == [("method", "broken")]
    assert f"method vs broken on humaneval: not compared; broken: all {N} cells are errors" in result.notes


def test_errored_repeats_on_every_problem_and_disjoint_problems() -> None:
    # "patchy": two repeats, one of them an error on every problem; "early"/"late": complete on disjoint halves
    half = N // 2
    rows = [*_cells("direct", OUTCOMES["direct"]),
            *_cells("patchy", [1] * N), *_cells("patchy", [None] * N, repeat=1),
            *_cells("early", [1] * half + [None] * half), *_cells("late", [None] * half + [0] * half)]
    result = analyze([_run(rows)], baseline="direct", n_resamples=200, compare=[("early", "late")])
    patchy = next(u for u in result.unscored if u.arm == "patchy")
    assert patchy.cause == f"every problem has an errored or missing repeat ({N} of {2 * N} cells are errors)"
    assert {a.arm for a in result.arms} == {"direct", "early", "late"}
    refused = next(n for n in result.not_compared if n.asked_for)
    assert (refused.a, refused.b, refused.reason) == ("early", "late", "no problem has complete results in both")
    # each of early/late pairs with direct on its own half
    assert {(c.a, c.n) for c in result.comparisons} == {("early", half), ("late", half)}


def test_a_study_of_unscored_arms_only_still_reports() -> None:
    result = analyze([_run(_cells("broken", [None] * N))], n_resamples=200)
    assert result.arms == () and len(result.unscored) == 1
    assert study_findings(result, result.studies[0]).endswith("no pass rate to report.")
    assert pass_rate_table(result).rows[0][3].text == "no result"


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
def test_cli_and_html_report(tmp_path, with_broken) -> None:
    run_dir = write_run(tmp_path / "broken-run", with_broken.outcomes, {"source": "csv"})
    done = subprocess.run([*SOTACHECK, "analyze", str(run_dir), "--baseline", "direct", "--resamples", "200",
                           "--compare", "method", "broken"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"no result: all {N} cells are errors" in done.stdout
    assert f"asked for by name, method vs broken on humaneval: not compared; broken: all {N} cells are errors" \
        in done.stdout
    as_json = subprocess.run([*SOTACHECK, "analyze", str(run_dir), "--json", "--resamples", "200"],
                             capture_output=True, text=True)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["unscored"][0]["cause"] == f"all {N} cells are errors"
    only_broken = write_run(tmp_path / "only-broken", pd.DataFrame(_cells("broken", [None] * N)), {"source": "csv"})
    html = render(build_model(report_inputs([load_run(run_dir), load_run(only_broken)], baseline="direct",
                                            compare=[("method", "broken")])))
    assert f"broken on humaneval: no pass rate and no comparison: all {N} cells are errors." in html
    assert "Asked for by name, method vs broken on humaneval: not compared" in html
    assert "no pass rate to report." in html


def test_a_sweep_setting_without_results_gets_no_row() -> None:
    rows = [*_cells("pycapsule[max_attempts=0]", OUTCOMES["direct"], **{"pipeline": "pycapsule", "param.max_attempts": 0}),
            *_cells("pycapsule[max_attempts=1]", OUTCOMES["method"], **{"pipeline": "pycapsule", "param.max_attempts": 1}),
            *_cells("pycapsule[max_attempts=2]", [None] * N, **{"pipeline": "pycapsule", "param.max_attempts": 2})]
    table = combine_runs([_run(rows)])
    sweep = sweep_table(table, "humaneval", "pycapsule[max_attempts=0]", n_resamples=200)
    assert [r.arm for r in sweep.rows] == ["pycapsule[max_attempts=0]", "pycapsule[max_attempts=1]"]
    assert [u.arm for u in sweep.unscored] == ["pycapsule[max_attempts=2]"]
    assert [(n.a, n.b) for n in sweep.not_compared] == [("pycapsule[max_attempts=2]", "pycapsule[max_attempts=0]")]
    assert sweep.rows[1].pvalue_adjusted == sweep.rows[1].pvalue  # one comparison in the family
    broken_default = sweep_table(table, "humaneval", "pycapsule[max_attempts=2]", n_resamples=200)
    assert all(r.diff is None for r in broken_default.rows) and len(broken_default.not_compared) == 2


def test_a_rerun_claim_on_an_unscored_arm_is_unverifiable(with_broken) -> None:
    claim = Claim.model_validate({
        "id": "broken-beats-direct", "statement": "broken beats direct", "source": "test", "benchmark": "HumanEval",
        "method": {"name": "broken"}, "check": "rerun",
        "rerun": {"run": "run", "dataset": "humaneval", "method_arm": "broken", "baseline_arm": "direct"}})
    verdict = evaluate(claim, "paper", runs=[with_broken])
    assert verdict.verdict == UNVERIFIABLE
    assert verdict.reason.startswith(f"In the rerun 'run', broken vs direct on humaneval: not compared; broken: all {N} "
                                     "cells are errors.")
