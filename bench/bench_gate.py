"""Gate speed: 1,000 problems × 5 repeats, baseline vs a candidate that lost 3 % of problems.

Times the whole command a CI job runs (`sotacheck gate ... --junit --markdown`, start-up included) and
the decision itself in-process. Target: an answer in under 2 s. Run: `.venv/bin/python bench/bench_gate.py`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, ".")
from sotacheck.audit.gate import gate
from sotacheck.core.rundir import load_run, write_run

PROBLEMS, REPEATS = 1000, 5


def table(arm: str, drop: float, rng: np.random.Generator, difficulty: np.ndarray) -> pd.DataFrame:
    rows = [{"arm": arm, "dataset": "humaneval", "problem": f"P/{i}", "repeat": r,
             "passed": bool(rng.random() < max(0.0, difficulty[i] - drop))}
            for i in range(PROBLEMS) for r in range(REPEATS)]
    return pd.DataFrame(rows)


def main() -> None:
    rng = np.random.default_rng(7)
    difficulty = rng.beta(3, 1, PROBLEMS)
    work = Path(tempfile.mkdtemp(prefix="bench-gate-"))
    base = write_run(work / "base", table("base", 0.0, rng, difficulty), {})
    cand = write_run(work / "cand", table("cand", 0.03, rng, difficulty), {})
    started = time.perf_counter()
    result = gate(load_run(base), load_run(cand))
    in_process = time.perf_counter() - started
    started = time.perf_counter()
    done = subprocess.run([str(Path(sys.executable).parent / "sotacheck"), "gate", "--baseline", str(base),
                           "--candidate", str(cand), "--junit", str(work / "g.xml"), "--markdown", str(work / "g.md")],
                          capture_output=True, text=True)
    command = time.perf_counter() - started
    check = result.checks[0]
    print(f"{PROBLEMS} problems x {REPEATS} repeats: diff {check.diff:+.4f}, p = {check.pvalue:.3g}, "
          f"exit {done.returncode}")
    print(f"gate decision in-process (load + test + CI + power): {in_process:.2f} s")
    print(f"sotacheck gate command (start-up, JUnit, Markdown):   {command:.2f} s (target < 2 s)")


if __name__ == "__main__":
    main()
