"""`sotacheck compare` answers a quick question in under 1 s: the whole command a user types, process start-up
included, side by side with its floor, a bare `python -c "import scipy.stats"` (the library its tests need),
7 times each, alternating; medians compared. Packages are byte-compiled first, as `pip install` does (this
machine sets PYTHONDONTWRITEBYTECODE=1). Also: the in-process time of `sotacheck.compare` once imported.
Run: `.venv/bin/python bench/bench_compare.py`."""

from __future__ import annotations

import compileall
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 1.0
REPEATS = 7
COMMANDS = {
    "floor: python -c 'import scipy.stats'": [sys.executable, "-c", "import scipy.stats"],
    "sotacheck compare 96.5 96.3 --n 164": [sys.executable, "-m", "sotacheck.cli", "compare", "96.5", "96.3", "--n",
                                            "164"],
    "... --runs 3 --sd 0.7": [sys.executable, "-m", "sotacheck.cli", "compare", "96.5", "96.3", "--n", "164", "--runs",
                              "3", "--sd", "0.7"],
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _wall(command: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system: less sensitive to other processes on a shared machine)."""
    started, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return wall, _cpu() - cpu


def main() -> None:
    import scipy

    for folder in (Path("sotacheck"), Path("audit"), Path("reports"), Path(scipy.__file__).parent):
        compileall.compile_dir(folder, quiet=1)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(REPEATS):
        for name, command in COMMANDS.items():
            wall, used = _wall(command)
            times[name].append(wall)
            cpu[name].append(used)
    sys.path.insert(0, ".")
    from sotacheck import compare

    compare(96.5, 96.3, 164, runs=3, sd=0.7)
    started = time.perf_counter()
    for _ in range(20):
        compare(96.5, 96.3, 164, runs=3, sd=0.7)
    in_process = (time.perf_counter() - started) / 20
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {REPEATS} runs each, alternating")
    for name, walls in times.items():
        print(f"{name:40s} wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f}); "
              f"CPU median {statistics.median(cpu[name]):.2f} s")
    print(f"sotacheck.compare in process (imports done): {1000 * in_process:.1f} ms per call")
    worst = max(statistics.median(times[name]) for name in list(COMMANDS)[1:])
    print(f"target: under {TARGET_S:.0f} s: {'met' if worst < TARGET_S else 'NOT met'} ({worst:.2f} s)")


if __name__ == "__main__":
    main()
