"""BigCodeBench's canonical solutions judged by sotacheck and by ``bigcodebench`` 0.2.5's own local evaluator, side by
side in one run on this machine: wall time of each, and the agreement of their verdicts.

sotacheck: ``sotacheck judge --dataset bigcodebench-complete --canonical --workers W --json``. BigCodeBench:
``bigcodebench.evaluate --split complete --subset full --execution local --parallel W --check_gt_only`` with
``BIGCODEBENCH_OVERRIDE_PATH`` at the bundled ``BigCodeBench.jsonl.gz`` (its ground-truth pass over the same
1,140 canonical programs; its per-task verdicts are the times it pickles, ``None`` for a task that failed), with
a fresh cache (``XDG_CACHE_HOME``) so that nothing is reused. Each side's CPU time is printed beside its wall
time (the bench's children's rusage: each judge's whole process tree, since every level waits for its children).
The baseline's interpreter is ``$SOTACHECK_BIGCODEBENCH_BASELINE`` (default:
``~/.cache/sotacheck/bigcodebench-0.2.5-baseline/bin/python``, a virtual environment with
``scripts/bigcodebench/requirements.txt`` and ``bigcodebench==0.2.5``; see bench/RESULTS.md for how it was made). The
machine's load average is printed before and after.

The baseline runs each task unconfined, as the user who runs this bench (sotacheck's side is jailed): as root, a
task's tests write where they like on the host (one leaves ``/non/existent/path/test_file.pkl``, others files in
``/tmp``). Run it as a normal user, or on a machine to throw away.

With ``--samples FILE`` both judge the same samples file instead (the fidelity check on wrong programs, e.g.
``bench/bigcodebench_mutants.py``'s), each task limited to ``--task-timeout`` seconds on both sides.

Usage: ``python bench/bench_bigcodebench.py [--workers 2] [--baseline-parallel 2,8] [--limit N] [--samples FILE
[--task-timeout S]] [--out DIR]``
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "data" / "benchmarks" / "bigcodebench" / "BigCodeBench.jsonl.gz"
DEFAULT_BASELINE = Path.home() / ".cache" / "sotacheck" / "bigcodebench-0.2.5-baseline" / "bin" / "python"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def _tasks(limit: int | None) -> list[dict[str, str]]:
    with gzip.open(BUNDLED, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return rows[:limit] if limit else rows


def _children_cpu_s() -> float:
    """CPU seconds of this process's waited-for descendants: a judge's whole tree once it has exited (each level of
    both judges waits for its children)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_sotacheck(workers: int, out: Path, limit: int | None) -> tuple[float, dict[str, str]]:
    report = out / "sotacheck.json"
    what = ["--canonical"]
    if limit:  # the first tasks' canonical programs as a samples file: judged exactly as --canonical judges them
        samples = out / "canonical-samples.jsonl"
        samples.write_text("".join(json.dumps({"task_id": row["task_id"], "solution": row["complete_prompt"]
                                               + row["canonical_solution"]}) + "\n" for row in _tasks(limit)))
        what = ["--samples", str(samples)]
    started, cpu = time.monotonic(), _children_cpu_s()
    subprocess.run([sys.executable, "-m", "sotacheck.cli", "judge", "--dataset", "bigcodebench-complete", *what,
                    "--workers", str(workers), "--json", "--out", str(report)], check=True, stdout=subprocess.DEVNULL)
    elapsed = time.monotonic() - started
    print(f"sotacheck used {_children_cpu_s() - cpu:.0f} s of CPU in {elapsed:.0f} s")
    results = json.loads(report.read_text())["results"]
    return elapsed, {r["task_id"]: r["status"] for r in results}


# its ``bigcodebench.evaluate`` command, run by the interpreter (a console script's shebang names the folder the
# environment was built in)
_EVALUATE = "import sys; from bigcodebench.evaluate import main; sys.argv[0] = 'bigcodebench.evaluate'; main()"


def run_bigcodebench(python: Path, workers: int, out: Path, limit: int | None) -> tuple[float, dict[str, str]]:
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(tempfile.mkdtemp(prefix="bcb-cache-", dir=out))
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "BIGCODEBENCH_OVERRIDE_PATH": str(BUNDLED)}
    started, cpu = time.monotonic(), _children_cpu_s()
    with (out / "bigcodebench.log").open("w") as log:
        subprocess.run([str(python), "-c", _EVALUATE, "--split", "complete", "--subset", "full", "--execution", "local",
                        "--parallel", str(workers), "--check_gt_only", "--samples", "__dummy__.jsonl",
                        *(["--selective_evaluate", ",".join(row["task_id"] for row in _tasks(limit))] if limit else [])],
                       check=True, env=env, cwd=out, stdout=log,
                       stderr=subprocess.STDOUT)
    elapsed = time.monotonic() - started
    print(f"bigcodebench --parallel {workers} used {_children_cpu_s() - cpu:.0f} s of CPU in {elapsed:.0f} s")
    digest = hashlib.md5(BUNDLED.read_bytes()).hexdigest()
    with (cache / "bigcodebench" / f"{digest}.pkl").open("rb") as handle:
        times = pickle.load(handle)
    return elapsed, {task: ("passed" if seconds is not None else "failed") for task, seconds in times.items()}


_PATCHED_LIMIT = ("import sys, bigcodebench.eval as e; e.TIMEOUT_LIMIT = float(sys.argv.pop(1)); "
                  "from bigcodebench.evaluate import main; sys.argv[0] = 'bigcodebench.evaluate'; main()")


def judge_samples(python: Path, samples: Path, workers: int, out: Path, task_timeout: float
                  ) -> tuple[tuple[float, dict[str, str]], tuple[float, dict[str, str]]]:
    """Both judges on one samples file (one sample per task), each with a task limit of ``task_timeout`` s:
    sotacheck through ``$BIGCODEBENCH_TIMEOUT_PER_TASK``; bigcodebench 0.2.5 with its ``TIMEOUT_LIMIT`` set in
    its own process (its evaluator compares that variable, a string, with a number and fails when it is set).
    Its ground-truth pass is skipped (``--no_gt``: each task's limit is then max(20 s, the limit) + 1 s)."""
    report = out / "sotacheck-samples.json"
    env = {**os.environ, "BIGCODEBENCH_TIMEOUT_PER_TASK": f"{task_timeout:g}"}
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "sotacheck.cli", "judge", "--dataset", "bigcodebench-complete", "--samples",
                    str(samples), "--workers", str(workers), "--json", "--out", str(report)], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    ours = (time.monotonic() - started, {r["task_id"]: r["status"] for r in json.loads(report.read_text())["results"]})
    copy = out / "bigcodebench-samples.jsonl"
    copy.write_text(samples.read_text())
    ids = [json.loads(line)["task_id"] for line in copy.read_text().splitlines() if line.strip()]
    cache = Path(tempfile.mkdtemp(prefix="bcb-cache-", dir=out))
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "BIGCODEBENCH_OVERRIDE_PATH": str(BUNDLED)}
    started = time.monotonic()
    with (out / "bigcodebench-samples.log").open("w") as log:
        subprocess.run([str(python), "-c", _PATCHED_LIMIT, f"{task_timeout:g}", "--split", "complete", "--subset",
                        "full", "--execution", "local", "--parallel", str(workers), "--no_gt", "--samples", str(copy),
                        "--selective_evaluate", ",".join(ids)], check=True, env=env, cwd=out, stdout=log,
                       stderr=subprocess.STDOUT)
    elapsed = time.monotonic() - started
    results = json.loads((out / "bigcodebench-samples_eval_results.json").read_text())["eval"]
    theirs = {task: ("passed" if rows[0]["status"] == "pass" else rows[0]["status"]) for task, rows in results.items()}
    return ours, (elapsed, theirs)


def agreement(ours: dict[str, str], theirs: dict[str, str]) -> None:
    """Print the agreement table (pass or not) and every disagreement, with both verdicts."""
    tasks = sorted(set(ours) | set(theirs), key=lambda t: int(t.rsplit("/", 1)[1]))
    table = {"both pass": 0, "sotacheck only": 0, "bigcodebench only": 0, "neither": 0}
    disagreements = []
    for task in tasks:
        mine, other = ours.get(task) == "passed", theirs.get(task) == "passed"
        table[{(True, True): "both pass", (True, False): "sotacheck only", (False, True): "bigcodebench only",
               (False, False): "neither"}[(mine, other)]] += 1
        if mine != other:
            disagreements.append(f"{task}: sotacheck {ours.get(task)}, bigcodebench {theirs.get(task)}")
    agree = table["both pass"] + table["neither"]
    print(f"agreement {agree}/{len(tasks)} ({100 * agree / len(tasks):.1f} %): {table}")
    for line in disagreements:
        print("  ", line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks (default: all 1,140)")
    parser.add_argument("--samples", type=Path, default=None,
                        help="judge this samples file (task_id, solution) on both sides instead of the canonical "
                             "solutions, e.g. bench/bigcodebench_mutants.py's")
    parser.add_argument("--baseline-parallel", type=lambda text: [int(n) for n in text.split(",")], default=None,
                        help="the baseline's --parallel, one run each (comma-separated; default: --workers): "
                             "sotacheck's --workers bounds the cores its tasks use together, the baseline's "
                             "--parallel the tasks it runs at once, so more than the cores is its best on tasks "
                             "that wait")
    parser.add_argument("--task-timeout", type=float, default=240.0, help="with --samples: each task's limit, s")
    args = parser.parse_args()
    baseline = Path(os.environ.get("SOTACHECK_BIGCODEBENCH_BASELINE", DEFAULT_BASELINE))
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-bigcodebench-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"cpus {os.cpu_count()}, workers {args.workers}, load before {_load()}")
    if args.samples:
        (ours_s, ours), (theirs_s, theirs) = judge_samples(baseline, args.samples, args.workers, out, args.task_timeout)
        for name, seconds, verdicts in (("sotacheck", ours_s, ours), ("bigcodebench 0.2.5", theirs_s, theirs)):
            print(f"{name}: {seconds:.0f} s, passed {sum(s == 'passed' for s in verdicts.values())}/{len(verdicts)}")
        print(f"speed-up: {theirs_s / ours_s:.2f}x; load after {_load()}")
        agreement(ours, theirs)
        print(f"outputs in {out}")
        return
    ours_s, ours = run_sotacheck(args.workers, out, args.limit)
    print(f"sotacheck --workers {args.workers}: {ours_s:.0f} s, passed {sum(s == 'passed' for s in ours.values())}/"
          f"{len(ours)}, load {_load()}")
    for parallel in args.baseline_parallel or [args.workers]:
        theirs_s, theirs = run_bigcodebench(baseline, parallel, out / f"parallel-{parallel}", args.limit)
        print(f"bigcodebench 0.2.5 --parallel {parallel}: {theirs_s:.0f} s, passed "
              f"{sum(s == 'passed' for s in theirs.values())}/{len(theirs)}, load {_load()}")
        print(f"speed-up against --parallel {parallel}: {theirs_s / ours_s:.2f}x")
        agreement(ours, theirs)
    print(f"outputs in {out}")


if __name__ == "__main__":
    main()
