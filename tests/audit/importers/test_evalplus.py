"""The EvalPlus importer on MapCoder's released ChatGPT HumanEval+ results (bundled, data/SOURCES.md), against
the pass rates EvalPlus itself reports from the same files, and on bad input."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sotacheck.audit.importers.evalplus import evalplus_arm, import_evalplus, read_eval_results
from sotacheck.core.outcomes import OutcomeError, normalise

REPO = Path(__file__).resolve().parents[3]
EVALPLUS = REPO / "data/published/mapcoder/ChatGPT/HumanEvalPlus"
# What EvalPlus 0.1.7 prints for each file (its "Base" and "Base + Extra" pass@1), produced by
#   python -m evalplus.evaluate --dataset humaneval --samples ChatGPT-CoT-Python3-0-1.jsonl
# with the file's _eval_results.json beside it (EvalPlus then reads the verdicts instead of judging).
REPORTED = {  # arm: (base pass@1, base + extra pass@1), all over 164 tasks, one sample each
    "Analogical": (0.6341463414634146, 0.5853658536585366),
    "CoT": (0.7073170731707317, 0.6463414634146342),
    "MapCoder-5-5": (0.8048780487804879, 0.7012195121951219),
    "Reflexion-10": (0.6951219512195121, 0.6158536585365854),
}


def _rates(table, arm: str) -> tuple[float, float]:
    rows = table[table["arm"] == arm]
    base = rows[rows["dataset"] == "humaneval-plus-base"]
    plus = rows[rows["dataset"] == "humaneval-plus"]
    assert len(base) == len(plus) == 164
    return float(base["passed"].mean()), float(plus["passed"].mean())


def test_imported_pass_rates_are_those_evalplus_reported() -> None:
    frame, fields = import_evalplus(EVALPLUS)
    table = normalise(frame, "import")
    assert sorted(set(table["arm"])) == sorted(REPORTED)
    for arm, (base, plus) in REPORTED.items():
        # 1e-12: the same ratio of whole numbers, computed by EvalPlus with numpy and here with pandas.
        assert _rates(table, arm) == pytest.approx((base, plus), abs=1e-12)
    assert {f["model"] for f in fields["files"]} == {"ChatGPT"} and "model_identity" not in fields
    assert {f["sampling"]["temperature"] for f in fields["files"]} == {0.0}  # "-Python3-0-1"
    assert {f["evalplus_dataset_hash"] for f in fields["files"]} == {"84f4b93a1270b492e4c54d5212da7a5b"}
    assert all(f["samples"]["file"].endswith(".jsonl.gz") for f in fields["files"])
    mapcoder = table[table["arm"] == "MapCoder-5-5"]
    assert set(mapcoder["pipeline"]) == {"MapCoder"} and set(mapcoder["param.k"]) == {5}


SHARED = Path(os.environ.get("SOTACHECK_DATA") or "/nonexistent") / "published-runs" / "mapcoder" / "ChatGPT" / "HumanEvalPlus"


@pytest.mark.skipif(not SHARED.is_dir(),
                    reason="the plain copy of MapCoder's released runs: set $SOTACHECK_DATA to the full data folder")
def test_the_shared_copy_of_mapcoder_results_gives_exactly_what_evalplus_reported() -> None:
    """The same files as ../shared holds them (plain; the bundled ones are these, gzip-compressed, checked byte
    for byte): each arm's base and base + extra pass rates are exactly EvalPlus's, a count over 164 both ways."""
    names = sorted(file.name for file in SHARED.iterdir())
    assert len(names) == 8 and names == sorted(f.name.removesuffix(".gz") for f in EVALPLUS.glob("*.gz"))
    for name in names:
        assert (SHARED / name).read_bytes() == gzip.decompress((EVALPLUS / f"{name}.gz").read_bytes()), name
    table = normalise(import_evalplus(SHARED)[0], "import")
    assert sorted(set(table["arm"])) == sorted(REPORTED)
    for arm, rates in REPORTED.items():
        assert _rates(table, arm) == rates


def test_pass_rates_follow_evalplus_rule_read_independently_from_each_task() -> None:
    """Counted from the raw files with EvalPlus 0.1.x's rule (evaluate.py): a task passes the base tests
    when ``base[i][0] == "success"``, and HumanEval+ when base *and* plus are "success"."""
    table = normalise(import_evalplus(EVALPLUS)[0], "import")
    for file in sorted(EVALPLUS.glob("*_eval_results.json.gz")):
        raw = json.loads(gzip.decompress(file.read_bytes()))["eval"]
        base = {task: entry["base"][0][0] == "success" for task, entry in raw.items()}
        plus = {task: entry["base"][0][0] == entry["plus"][0][0] == "success" for task, entry in raw.items()}
        arm = evalplus_arm(file)[0]
        for dataset, expected in (("humaneval-plus-base", base), ("humaneval-plus", plus)):
            rows = table[(table["arm"] == arm) & (table["dataset"] == dataset)]
            assert dict(zip(rows["problem"], rows["passed"].astype(bool), strict=True)) == expected
    # A sample that passes the extra tests but fails the base ones is not a HumanEval+ pass.
    cot = table[(table["arm"] == "CoT")]
    odd = cot[(cot["plus_status"] == "success") & (cot["base_status"] != "success")]
    assert len(odd) == 2 and not odd["passed"].any()  # one task, both datasets


def test_cross_check_with_evalplus_own_reader(tmp_path: Path) -> None:
    pytest.importorskip("evalplus")
    table = normalise(import_evalplus(EVALPLUS)[0], "import")
    for arm, prefix in (("CoT", "ChatGPT-CoT-Python3-0-1"), ("MapCoder-5-5", "ChatGPT-MapCoder-5-5-Human-Python3-0-1")):
        for name in (f"{prefix}.jsonl", f"{prefix}_eval_results.json"):
            (tmp_path / name).write_bytes(gzip.decompress((EVALPLUS / f"{name}.gz").read_bytes()))
        done = subprocess.run([sys.executable, "-m", "evalplus.evaluate", "--dataset", "humaneval", "--samples",
                               str(tmp_path / f"{prefix}.jsonl")], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path)
        assert "Load from previous results" in done.stdout, done.stdout + done.stderr
        printed = [float(x) for x in re.findall(r"'pass@1': (?:np\.float64\()?([0-9.]+)", done.stdout)]
        assert printed == pytest.approx(list(_rates(table, arm)), abs=1e-12)


# What EvalPlus 0.3.1 printed judging tests/fixtures/evalplus/ (its README gives the commands): pass@1 on the
# base tests and on base + extra tests, as it prints them (3 decimals; both are ratios of 10 or 5 samples).
REPORTED_031 = {"samples": (0.800, 0.800), "rounding": (1.000, 0.800)}


def test_evalplus_031_results_written_by_evalplus_itself() -> None:
    """The newer layout (a list of results per task; pass/fail/timeout), from EvalPlus 0.3.1 judging the
    model's solutions from the Inspect fixture (2 per task: repeats 0 and 1) and a rounding variant that
    passes the base tests of HumanEval/2 but not its extra ones."""
    fixture = REPO / "tests/fixtures/evalplus"
    frame, fields = import_evalplus(fixture)
    table = normalise(frame, "import")
    for arm, (base, plus) in REPORTED_031.items():
        rows = table[table["arm"] == arm]
        assert rows[rows["dataset"] == "humaneval-plus-base"]["passed"].mean() == pytest.approx(base, abs=5e-4)
        assert rows[rows["dataset"] == "humaneval-plus"]["passed"].mean() == pytest.approx(plus, abs=5e-4)
    samples = table[(table["arm"] == "samples") & (table["dataset"] == "humaneval-plus")]
    assert len(samples) == 10 and set(samples["repeat"]) == {0, 1}
    assert set(samples[~samples["passed"].astype(bool)]["problem"]) == {"HumanEval/1"}
    rounding = table[(table["arm"] == "rounding") & (table["problem"] == "HumanEval/2")]
    assert rounding.set_index("dataset")["passed"].astype(bool).to_dict() == {"humaneval-plus": False,
                                                                               "humaneval-plus-base": True}
    assert set(rounding["plus_status"]) == {"fail"} and set(rounding["base_status"]) == {"pass"}
    assert fields["files"][0]["samples"]["file"].endswith("rounding.jsonl")
    assert "model_identity" not in fields  # EvalPlus's files name no model


def test_the_newer_layout_and_base_only(tmp_path: Path) -> None:
    """EvalPlus 0.2+'s layout with a timeout and an unknown (null) status, and ``--base-only``."""
    results = {"date": "2024-10-20 10:00", "hash": "h", "eval": {
        "Mbpp/2": [{"task_id": "Mbpp/2", "solution": "", "base_status": "pass", "plus_status": "fail",
                    "base_fail_tests": [], "plus_fail_tests": [[1]]},
                   {"task_id": "Mbpp/2", "solution": "", "base_status": "pass", "plus_status": "pass",
                    "base_fail_tests": [], "plus_fail_tests": []}],
        "Mbpp/3": [{"task_id": "Mbpp/3", "solution": "", "base_status": "timeout", "plus_status": "pass",
                    "base_fail_tests": [[0]], "plus_fail_tests": []},
                   {"task_id": "Mbpp/3", "solution": "", "base_status": "pass", "plus_status": None,
                    "base_fail_tests": [], "plus_fail_tests": []}]}}
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps(results))
    table = normalise(import_evalplus(path, arm="direct")[0], "x")
    plus = table[table["dataset"] == "mbpp-plus"].set_index(["problem", "repeat"])["passed"].astype(bool).to_dict()
    assert plus == {("Mbpp/2", 0): False, ("Mbpp/2", 1): True, ("Mbpp/3", 0): False, ("Mbpp/3", 1): False}
    base = table[table["dataset"] == "mbpp-plus-base"]["passed"].astype(bool).tolist()
    assert base == [True, True, False, True]
    for sample in (s for task in results["eval"].values() for s in task):
        sample["plus_status"] = None  # --base-only
    path.write_text(json.dumps(results))
    assert set(normalise(import_evalplus(path)[0], "x")["dataset"]) == {"mbpp-plus-base"}
    assert evalplus_arm(path) == (tmp_path.name, None)


def test_bad_evalplus_input_is_one_line_naming_the_file(tmp_path: Path) -> None:
    lmeval = REPO / "tests/fixtures/lmeval/logs/qwen2.5-coder-0.5b-instruct-q4_k_m"
    wrong = tmp_path / "x_eval_results.json"
    shutil.copy(next(lmeval.glob("results_*.json")), wrong)
    with pytest.raises(OutcomeError, match=r"x_eval_results\.json: not an EvalPlus .*lm-eval") as info:
        import_evalplus(wrong)
    assert "\n" not in str(info.value)
    wrong.write_text('{"eval": {"HumanEval/0": {"nfiles": 1, "base": [[]], "plus": []}}}')
    with pytest.raises(OutcomeError, match=r"task 'HumanEval/0' sample 0 \(base\): expected \[status, details\]"):
        read_eval_results(wrong)
    wrong.write_text('{"eval": {"HumanEval/0": [{"plus_status": "pass"}]}}')
    with pytest.raises(OutcomeError, match=r"task 'HumanEval/0' sample 0: no `base_status`"):
        read_eval_results(wrong)
    wrong.write_text('{"eval": {')
    with pytest.raises(OutcomeError, match=r"invalid JSON \(expecting property name enclosed in double quotes at "
                                           r"line 1, column 11\)"):
        read_eval_results(wrong)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(OutcomeError, match=r"empty: no \*eval_results\.json"):
        import_evalplus(empty)
