"""Speed of importing a long table: 60 systems × 400 problems × 10 samples.

Two inputs of the same outcomes: the count table a leaderboard publishes (24,000 rows: `passed` of
`samples`), expanded on import into 240,000 cells, and the same cells as a verdict CSV (240,000 rows of
`arm, dataset, problem, repeat, passed`). Side by side in one run:

- `run_importer`: read, validate, expand, normalise (what `sotacheck import` does before writing);
- `api.import_logs`: the whole import, the run directory written (Parquet and CSV) and read back;
- the baseline: the per-cell conversion loop that `normalise` ran before 2026-12-02 (each cell of
  `arm`, `dataset`, `problem`, `repeat` and `passed` converted by a Python call), on the same 240,000 cells.

Targets: `run_importer` under 3 s and the whole import under 10 s for either input (the bench fails
otherwise). Run: `.venv/bin/python bench/bench_import.py`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, ".")
from sotacheck import api
from sotacheck.audit.importers import run_importer
from sotacheck.core.arms import is_missing
from sotacheck.core.outcomes import as_bool

SYSTEMS, PROBLEMS, SAMPLES = 60, 400, 10
IMPORTER_TARGET_S, WHOLE_TARGET_S = 3.0, 10.0


def tables(folder: Path, seed: int = 1) -> tuple[Path, Path, int]:
    """The count table and its expansion as verdicts, and the number of passes in both."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 1, SYSTEMS)
    difficulty = rng.normal(0, 1.5, PROBLEMS)
    chance = 1 / (1 + np.exp(-(skill[:, None] - difficulty[None, :])))
    passes = rng.binomial(SAMPLES, chance).ravel()
    systems = np.repeat([f"model-{i:02d}" for i in range(SYSTEMS)], PROBLEMS)
    problems = np.tile([f"P/{j}" for j in range(PROBLEMS)], SYSTEMS)
    counts = folder / "counts.csv"
    pd.DataFrame({"model": systems, "dataset": "bench", "problem": problems, "passed": passes,
                  "samples": SAMPLES}).to_csv(counts, index=False)
    cell = np.repeat(np.arange(len(passes)), SAMPLES)
    repeat = np.tile(np.arange(SAMPLES), len(passes))
    verdicts = folder / "verdicts.csv"
    pd.DataFrame({"arm": systems[cell], "dataset": "bench", "problem": problems[cell], "repeat": repeat,
                  "passed": (repeat < passes[cell]).astype(int)}).to_csv(verdicts, index=False)
    return counts, verdicts, int(passes.sum())


def per_cell_loop(path: Path) -> float:
    """The baseline: every cell converted by one Python call, as normalise did before 2026-12-02."""
    frame = pd.read_csv(path, dtype=str)
    start = time.perf_counter()
    for column in ("arm", "dataset", "problem"):
        frame[column] = ["" if is_missing(v) else str(v).strip() for v in frame[column]]
    frame["repeat"] = [int(float(v)) for v in frame["repeat"]]
    frame["passed"] = [as_bool(v, "") for v in frame["passed"]]
    return time.perf_counter() - start


def main() -> int:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        counts, verdicts, passed = tables(folder)
        print(f"{SYSTEMS} systems × {PROBLEMS} problems × {SAMPLES} samples; {passed} passes")
        print(f"baseline, per-cell conversion loop (240,000 cells): {per_cell_loop(verdicts):.2f} s")
        for name, path in (("count table (24,000 rows)", counts), ("verdict table (240,000 rows)", verdicts)):
            start = time.perf_counter()
            table, _ = run_importer("csv", path)
            read_s = time.perf_counter() - start
            start = time.perf_counter()
            run, _ = api.import_logs("csv", path=path, out=folder / f"run-{path.stem}")
            whole_s = time.perf_counter() - start
            assert len(table) == len(run.outcomes) == SYSTEMS * PROBLEMS * SAMPLES
            assert int(table["passed"].sum()) == int(run.outcomes["passed"].sum()) == passed
            print(f"{name}: run_importer {read_s:.2f} s (target < {IMPORTER_TARGET_S} s); "
                  f"whole import, written and read back {whole_s:.2f} s (target < {WHOLE_TARGET_S} s)")
            if read_s >= IMPORTER_TARGET_S or whole_s >= WHOLE_TARGET_S:
                failures.append(name)
    print("FAILED: " + ", ".join(failures) if failures else "targets met")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
