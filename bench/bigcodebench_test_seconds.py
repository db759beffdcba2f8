"""Measure how long each BigCodeBench task's tests take on its canonical solution, and write the judge's scheduling
hint, ``data/benchmarks/bigcodebench/test_seconds.json`` (``sotacheck.reruns.benchmarks.test_seconds``).

Every canonical solution is judged as ``sotacheck judge --canonical`` judges it, in the task list's order (no hint
used), with ``--workers W``; a task's seconds are the sum of its test methods' times as the runner reports them.
Tasks under ``--floor`` seconds are left out (the judge counts them as 0 s: their order does not matter). The
file's ``measured`` header records the day, the commit, the machine and the command.

Usage: ``python bench/bigcodebench_test_seconds.py [--workers 2] [--floor 0.5] [--out PATH]``
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from sotacheck.reruns.benchmarks.bigcodebench import load_bigcodebench
from sotacheck.reruns.benchmarks.test_seconds import read_hints, suite_key
from sotacheck.reruns.sandbox.unittest_judge import UnittestWorkers

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "data" / "benchmarks" / "bigcodebench" / "test_seconds.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--floor", type=float, default=0.5, help="leave out tasks faster than this (seconds)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    problems = load_bigcodebench().problems
    started = time.monotonic()
    with UnittestWorkers(args.workers) as workers:
        results = list(workers.map(lambda p: workers.judge(p, p.canonical_solution), problems))
    elapsed = time.monotonic() - started
    rows = [{"task_id": problem.id, "tests_sha256": suite_key(problem), "seconds": round(result.duration_s or 0.0, 2)}
            for problem, result in zip(problems, results, strict=True) if (result.duration_s or 0.0) >= args.floor]
    rows.sort(key=lambda row: -row["seconds"])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    document = {
        "what": "Seconds each BigCodeBench task's tests took on its canonical solution: the judge's scheduling "
                "hint (longest first), never part of a verdict. Tasks not listed took under the floor.",
        "measured": {"day": datetime.datetime.now(datetime.UTC).date().isoformat(), "commit": commit,
                     "machine": f"{len(os.sched_getaffinity(0))} cores, {platform.machine()}, {platform.system()}",
                     "workers": args.workers, "floor_s": args.floor, "wall_s": round(elapsed, 1),
                     "command": " ".join(["python bench/bigcodebench_test_seconds.py", *sys.argv[1:]])},
        "tests": rows,
    }
    read_hints(document, str(args.out))  # what the judge will accept
    args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"{len(rows)} of {len(problems)} tasks took >= {args.floor:g} s ({sum(r['seconds'] for r in rows):.0f} s "
          f"in all); judged in {elapsed:.0f} s; wrote {args.out}")


if __name__ == "__main__":
    main()
