"""Sweep work sharing with the embedded model: a 3×3 CodeSim p×d grid on the first 10 HumanEval problems.

Side by side in one run:
- the sweep (`sotacheck sweep --pipeline codesim --grid p=1,2,3 --grid d=1,2,3`): model calls *requested*
  (what the nine settings make if each ran alone with the same seeds: every call a pipeline asks for,
  served by the endpoint or the cache) vs calls *made* (sent to the endpoint), and its wall time;
- two settings run alone (`sotacheck rerun`), each as its own run with its own server: their outcome
  tables must equal the sweep's rows for those settings, and their calls made are the one-by-one cost.

Target: made <= 50 % of requested, and identical outcomes. Runs are kept under runs/ and resumed if the
script is interrupted (the wall time is then that of the last, partial, invocation — rerun from scratch
with --fresh for a clean figure).
Run: `.venv/bin/python bench/bench_sweep.py [--fresh]`. Exit 1 if a target is missed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SOTACHECK = str(Path(sys.executable).parent / "sotacheck")
COMMON = ["--dataset", "humaneval", "--limit", "10", "--seed", "7", "--model", "local", "--concurrency", "1"]
ALONE = [(1, 1), (1, 2)]


def _run(args: list[str], out: Path, fresh: bool) -> tuple[str, float]:
    if fresh and out.exists():
        shutil.rmtree(out)
    command = [SOTACHECK, "resume", str(out)] if (out / "store.sqlite").exists() else [*args, "--out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout, time.perf_counter() - started


def _table(run: Path) -> pd.DataFrame:
    return pd.read_csv(run / "outcomes.csv").drop(columns=["wall_s"]).sort_values(["arm", "problem"]).reset_index(drop=True)


def _made(stdout: str) -> tuple[int, int]:
    found = re.search(r"(\d+) model calls \((\d+) sent", stdout)
    if found is None:
        raise SystemExit(f"no call counts in: {stdout[-300:]}")
    return int(found.group(1)), int(found.group(2))


def main() -> int:
    fresh = "--fresh" in sys.argv
    runs = ROOT / "runs"
    sweep_dir = runs / "sweep-codesim-pd"
    stdout, sweep_s = _run([SOTACHECK, "sweep", "--pipeline", "codesim", "--grid", "p=1,2,3", "--grid", "d=1,2,3",
                            *COMMON], sweep_dir, fresh)
    requested, made = _made(stdout)
    sweep = _table(sweep_dir)
    print("CodeSim p×d sweep, p=1,2,3 × d=1,2,3, first 10 HumanEval problems, embedded model, seed 7")
    print(f"sweep: {requested} calls requested, {made} made ({100 * made / requested:.0f} %), {sweep_s:.0f} s")
    identical = True
    alone_made = 0
    for p, d in ALONE:
        arm = f"codesim[d={d},p={p}]"
        out = runs / f"alone-codesim-p{p}-d{d}"
        stdout, alone_s = _run([SOTACHECK, "rerun", "--pipelines", "codesim", "--param", f"codesim.p={p}", "--param",
                                f"codesim.d={d}", *COMMON], out, fresh)
        calls, sent = _made(stdout)
        alone_made += sent
        part = sweep[sweep["arm"] == arm].reset_index(drop=True)
        same = part.equals(_table(out)) or _frames_equal(part, _table(out))
        identical &= same
        print(f"{arm} alone: {calls} calls, {sent} made, {alone_s:.0f} s; outcome table identical to the sweep's: "
              f"{same} ({int(part['passed'].sum())}/{len(part)} passed)")
    per_setting = sweep.groupby("arm")["calls"].sum()
    print("calls per setting in the sweep: " + ", ".join(f"{a} {n}" for a, n in per_setting.items()))
    ok = made <= 0.5 * requested and identical
    print(f"target made <= 50 % of requested: {made <= 0.5 * requested}; identical outcomes: {identical}")
    return 0 if ok else 1


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    try:
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
    except AssertionError as exc:
        print(f"  difference: {str(exc)[:400]}")
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
