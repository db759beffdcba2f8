"""The CI gate on real outcomes (MapCoder's released HumanEval run), repeats, exit codes and outputs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import junitparser
import numpy as np
import pandas as pd
import pytest
from markdown_it import MarkdownIt
from scipy import stats

from sotacheck.audit.gate import GateInputError, GateSettings, gate
from sotacheck.audit.importers.mapcoder import import_mapcoder
from sotacheck.core.rundir import Run, load_run, normalise, write_run
from tests.sotacheck_command import SOTACHECK


@pytest.fixture(scope="module")
def baseline_dir(tmp_path_factory, data_dir) -> Path:
    frame, meta = import_mapcoder(data_dir / "published-runs/mapcoder/ChatGPT/HumanEval/"
                                  "ChatGPT-MapCoder-5-5-Human-Python3-0-1.jsonl")
    return write_run(tmp_path_factory.mktemp("runs") / "baseline", frame, meta)


def flipped(run_dir: Path, k: int, out: Path) -> Path:
    """A candidate that fails k problems the baseline passed (the first k, by task id)."""
    table = load_run(run_dir).outcomes.copy()
    passing = table.index[table["passed"].astype(bool)][:k]
    table.loc[passing, "passed"] = False
    table.loc[passing, "status"] = "failed"
    return write_run(out, table, {"derived_from": str(run_dir), "flipped": k})


def run_gate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SOTACHECK, "gate", *args], capture_output=True, text=True, timeout=120)


# make test: the two sides of the boundary (passes at k = 4, fails at 5); make test-all every k.
@pytest.mark.parametrize("k", [pytest.param(k, marks=[] if k in (4, 5) else pytest.mark.slow) for k in (0, 1, 3, 4, 5, 6, 10)])
def test_flipping_k_problems_matches_the_exact_one_sided_binomial(baseline_dir, tmp_path, k) -> None:
    candidate = flipped(baseline_dir, k, tmp_path / f"cand{k}")
    expected_p = stats.binomtest(k, k, 0.5, alternative="greater").pvalue if k else 1.0  # = 0.5**k
    result = gate(load_run(baseline_dir), load_run(candidate))
    check = result.checks[0]
    assert (check.drops, check.gains) == (k, 0)
    assert check.pvalue == pytest.approx(expected_p, rel=1e-12)
    assert result.exit_code == (1 if expected_p < 0.05 else 0)  # passes up to k = 4, fails from k = 5
    done = run_gate("--baseline", str(baseline_dir), "--candidate", str(candidate))
    assert done.returncode == result.exit_code
    lines = done.stdout.strip().splitlines()  # the verdict is the command's output: on stdout
    assert "Power:" in lines[1] and len(lines) == 3 and done.stderr == ""  # verdict, decision, its problems
    lost = sorted((str(p) for p in load_run(baseline_dir).outcomes.query("passed == True")["problem"][:k]),
                  key=lambda p: int(p.split("/")[1]))
    assert lines[2] == f"  Lost: {', '.join(lost) or 'none'}. Gained: none."
    assert check.lost == tuple(lost) and check.gained == ()


def _repeats_table(arm: str, lost_problems: int, n_problems: int = 40) -> pd.DataFrame:
    rows = [{"arm": arm, "dataset": "humaneval", "problem": f"p{i}", "repeat": r,
             "passed": not (i < lost_problems)} for i in range(n_problems) for r in range(3)]
    return normalise(pd.DataFrame(rows), arm)


def test_repeats_use_the_cluster_aware_test_and_rows_as_independent_would_differ() -> None:
    baseline = Run(None, _repeats_table("base", 0), {"name": "base"})
    candidate = Run(None, _repeats_table("cand", 3), {"name": "cand"})  # 3 problems fail in all 3 repeats
    check = gate(baseline, candidate).checks[0]
    assert check.n_repeats == 3 and check.test.startswith("one-sided sign-flip permutation")
    assert check.pvalue == pytest.approx(0.5**3)  # 3 problems lost: exact sign-flip, 1/8
    assert not check.regression
    # treating the 120 rows as independent pairs: 9 discordant rows, all losses
    rows_p = stats.binomtest(9, 9, 0.5, alternative="greater").pvalue
    assert rows_p == pytest.approx(0.5**9) and rows_p < 0.05  # ... which would have failed the gate


def _small(tmp_path: Path, name: str, arm: str, problems: list[str], passed: list[object]) -> Path:
    frame = pd.DataFrame({"arm": arm, "dataset": "humaneval", "problem": problems, "repeat": 0, "passed": passed})
    return write_run(tmp_path / name, frame, {})


def test_exit_code_2_cases(tmp_path, baseline_dir) -> None:
    ids = [f"HumanEval/{i}" for i in range(40)]
    no_overlap = _small(tmp_path, "other", "x", [f"Other/{i}" for i in range(40)], [True] * 40)
    few = _small(tmp_path, "few", "x", ids[:10], [True] * 10)
    errors = _small(tmp_path, "errors", "x", ids, [None] * 10 + [True] * 30)
    base = str(baseline_dir)
    cases = {
        "no overlap": ([base, str(no_overlap)], "no overlap: the candidate has no result on any of the baseline's "
                                                "164 problems of humaneval"),
        "missing arm": ([base, f"{baseline_dir}:NoSuchArm"], "has no arm 'NoSuchArm'"),
        "missing problems": ([base, str(few)], "the candidate lacks 154 of the baseline's 164 problems on humaneval "
                                               "(HumanEval/10, HumanEval/11, "),
        "too few problems": ([str(few), str(few)], "too few problems: the runs share 10"),
        "too many errors": ([str(errors), str(errors)], "too many errors: 25.0 %"),
    }
    for name, ((baseline, candidate), message) in cases.items():
        done = run_gate("--baseline", baseline, "--candidate", candidate)
        assert done.returncode == 2, name
        assert message in done.stderr, (name, done.stderr)
        assert "UNUSABLE INPUT (exit 2)" in done.stderr and done.stdout == ""


def test_noninferiority_mode_uses_the_lower_bound(baseline_dir, tmp_path) -> None:
    candidate = flipped(baseline_dir, 3, tmp_path / "c3")
    strict = gate(load_run(baseline_dir), load_run(candidate),
                  settings=GateSettings(mode="noninferiority", max_drop=0.001))
    lenient = gate(load_run(baseline_dir), load_run(candidate),
                   settings=GateSettings(mode="noninferiority", max_drop=0.05))
    assert strict.checks[0].ci_low < 0 and strict.exit_code == 1
    assert lenient.checks[0].ci_low > -0.05 and lenient.exit_code == 0
    with pytest.raises(GateInputError, match="noninferiority mode needs the largest drop you accept"):
        GateSettings(mode="noninferiority")  # no margin: would fail identical methods in most runs
    with pytest.raises(GateInputError, match="`mode` must be"):
        GateSettings(mode="vibes")  # type: ignore[arg-type]


def test_junit_and_markdown_outputs(baseline_dir, tmp_path) -> None:
    candidate = flipped(baseline_dir, 8, tmp_path / "c8")
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    done = run_gate("--baseline", str(baseline_dir), "--candidate", str(candidate), "--junit", str(junit),
                    "--markdown", str(md))
    assert done.returncode == 1
    xml = junitparser.JUnitXml.fromfile(str(junit))
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    cases = [case for suite in suites for case in suite]
    assert len(cases) == 1 and cases[0].name == "MapCoder-5-5 vs MapCoder-5-5 on humaneval"
    assert isinstance(cases[0].result[0], junitparser.Failure)
    assert suites[0].tests == 1 and suites[0].failures == 1
    html = MarkdownIt("commonmark").enable("table").render(md.read_text())
    assert "<table>" in html and "<td>humaneval</td>" in html and "<strong>regression</strong>" in html


def test_five_repeats_of_identical_runs_pass() -> None:
    # (The 1,000 problems x 5 repeats speed figure lives in bench/bench_gate.py, not in a timed test.)
    rng = np.random.default_rng(0)
    rows = [{"arm": arm, "dataset": "d", "problem": f"p{i}", "repeat": r, "passed": bool(rng.random() < 0.7)}
            for arm in ("a", "b") for i in range(200) for r in range(5)]
    table = normalise(pd.DataFrame(rows), "t")
    result = gate(Run(None, table, {"name": "x"}), Run(None, table, {"name": "y"}), "a", "b")
    assert result.checks[0].n == 200 and result.checks[0].n_repeats == 5
    assert 0 <= result.checks[0].pvalue <= 1
