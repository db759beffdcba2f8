"""Report size and speed: 6 arms × 164 problems × 3 repeats (one arm with attempt data for the decay
section, three arms forming a sweep), all claims registries. Targets: renders in under 10 s, under 5 MB.
Run: `.venv/bin/python bench/bench_report.py`."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, ".")
from sotacheck.audit.report_inputs import report_inputs
from sotacheck.core.rundir import load_run, write_run
from sotacheck.reports.html import write_report

ARMS = ["direct", "cot", "pycapsule[max_attempts=5]", "codesim[d=1,p=1]", "codesim[d=3,p=3]", "codesim[d=5,p=5]"]


def main() -> None:
    rng = np.random.default_rng(3)
    difficulty = rng.beta(2, 1, 164)
    rows = []
    for index, arm in enumerate(ARMS):
        for i in range(164):
            for r in range(3):
                passed = bool(rng.random() < min(1.0, difficulty[i] + 0.03 * index))
                first = (int(rng.geometric(0.5)) - 1 if passed else None) if "pycapsule" in arm else None
                rows.append({"arm": arm, "dataset": "humaneval", "problem": f"HumanEval/{i}", "repeat": r,
                             "passed": passed, "calls": int(rng.integers(1, 20)), "prompt_tokens": 900,
                             "completion_tokens": 300, "first_pass_attempt": None if first is None else min(first, 5)})
    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    run = load_run(write_run(work / "synthetic", pd.DataFrame(rows), {"source": "synthetic benchmark"}))
    claims = sorted(Path("data/claims").glob("*.yaml"))
    started = time.perf_counter()
    out = write_report(report_inputs([run], claims, baseline="direct", dataset_sizes={"humaneval": 164}),
                       work / "report.html")
    wall = time.perf_counter() - started
    size = out.stat().st_size / 1e6
    print(f"report over {len(ARMS)} arms x 164 problems x 3 repeats + {len(claims)} claims files: "
          f"{wall:.2f} s (target < 10 s), {size:.2f} MB (target < 5 MB)")


if __name__ == "__main__":
    main()
