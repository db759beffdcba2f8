"""Where a rerun's time goes beyond the judge's, on the cheap-judgement workload: the ceiling of each lever.

``bench_harness.py cheap`` times the whole command; this runs the same 3,280 cells (Direct, 164 HumanEval
problems x 20 repeats, concurrency 64, ``fast_endpoint.py --fixed-wrong``) in process, ``execute_run`` from
opening the store to the export, with parts of the harness taken away, each in a process of its own, beside
the judge alone on the same programs, in rounds (variants alternating), medians:

- ``full``: the harness as it is;
- ``no-http``: the model answers in the process (no endpoint process, no HTTP client, no sockets): what the
  model calls cost beyond the harness's own work;
- ``no-records``: records are not written (``GroupCommitter.commit`` and ``commit_later`` return at once;
  the lookups still run): what the store costs;
- ``neither``: both taken away: what is left is the pipeline, the asyncio scheduling, the judge's dispatch,
  the leakage check and the export;
- ``judge``: ``judge_many`` on the same programs in one pool (what ``bench_harness.py`` calls the judge alone).

A variant's wall time less the judge's is what that part of the harness costs on this machine, the parts it
keeps included. Not a product path: the variants monkeypatch the harness, in their own process only.

Run: ``.venv/bin/python bench/bench_harness_levers.py [ROUNDS]`` (default 3).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VARIANTS = ("full", "no-http", "no-records", "neither", "judge")
FIXED_WRONG = "```python\ndef f(*a):\n    return None\n```"


def variant(name: str) -> None:
    """Run one variant in this process and print its wall time and this process's CPU time."""
    os.environ.setdefault("OPENAI_API_KEY", "none")
    if name == "judge":
        from sotacheck.reruns.benchmarks import load_dataset
        from sotacheck.reruns.pipelines.code import last_code_block
        from sotacheck.reruns.sandbox.pool import SandboxPool
        from sotacheck.reruns.sandbox.submission import judge_many

        dataset = load_dataset("humaneval")
        pairs = [(p, last_code_block(FIXED_WRONG) or "") for p in dataset.problems for _ in range(20)]
        with SandboxPool() as pool:
            started, cpu = time.perf_counter(), time.process_time()
            assert len(list(judge_many(pool, dataset.content_hash, pairs))) == len(pairs)
            print(f"{time.perf_counter() - started:.3f} {time.process_time() - cpu:.3f}")
        return
    from sotacheck.reruns.model import openai_compat
    from sotacheck.reruns.model.base import Attempt, ChatResponse
    from sotacheck.reruns.run import execute_run, validate_spec
    from sotacheck.reruns.store import group_commit

    endpoint = None
    if name in ("no-http", "neither"):
        reply = ChatResponse(FIXED_WRONG, "stop", 100, 10, 0.0, (Attempt("ok", 0.0),))

        async def complete(self: object, request: object) -> ChatResponse:
            return reply

        async def preflight(self: object, tries: int = 3) -> None:
            return None

        openai_compat.OpenAICompatibleModel.complete = complete  # type: ignore[method-assign]
        openai_compat.OpenAICompatibleModel.preflight = preflight  # type: ignore[method-assign]
        url = "http://127.0.0.1:9/v1"
    else:
        endpoint = subprocess.Popen([sys.executable, "bench/fast_endpoint.py", "--fixed-wrong"], stdout=subprocess.PIPE,
                                    text=True)
        assert endpoint.stdout is not None
        url = f"http://127.0.0.1:{int(endpoint.stdout.readline().split()[1])}/v1"
    if name in ("no-records", "neither"):
        async def commit(self: object, statements: object) -> None:
            return None

        group_commit.GroupCommitter.commit = commit  # type: ignore[method-assign]
        group_commit.GroupCommitter.commit_later = lambda self, statements: None  # type: ignore[method-assign]
    work = Path(tempfile.mkdtemp(prefix="bench-levers-"))
    try:
        spec = validate_spec({"dataset": "humaneval", "pipelines": [{"name": "direct"}], "model": url,
                              "model_name": "bench", "seed": 7, "concurrency": 64, "repeats": 20}, "bench")
        started, cpu = time.perf_counter(), time.process_time()
        asyncio.run(execute_run(work / "run", spec, progress=False))
        print(f"{time.perf_counter() - started:.3f} {time.process_time() - cpu:.3f}")
    finally:
        if endpoint is not None:
            endpoint.terminate()
            endpoint.wait()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--variant":
        variant(sys.argv[2])
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    walls: dict[str, list[float]] = {name: [] for name in VARIANTS}
    cpus: dict[str, list[float]] = {name: [] for name in VARIANTS}
    print(f"levers: the cheap-judgement workload in process (execute_run), {rounds} rounds")
    for index in range(rounds):
        order = VARIANTS if index % 2 == 0 else VARIANTS[::-1]
        for name in order:
            out = subprocess.run([sys.executable, __file__, "--variant", name], check=True, capture_output=True,
                                 text=True).stdout.split()
            walls[name].append(float(out[-2]))
            cpus[name].append(float(out[-1]))
        print(f"  round {index + 1}: " + "; ".join(f"{n} {walls[n][-1]:.2f} s" for n in VARIANTS), flush=True)
    judge = statistics.median(walls["judge"])
    print(f"  medians over {rounds} rounds (wall, the process's CPU; beyond the judge alone, median of each round's):")
    for name in VARIANTS:
        wall = statistics.median(walls[name])
        beyond = statistics.median(w - j for w, j in zip(walls[name], walls["judge"], strict=True))
        print(f"    {name:10s} {wall:6.2f} s  {statistics.median(cpus[name]):5.2f} CPU s"
              + ("" if name == "judge" else f"  {beyond:+.2f} s beyond the judge ({wall / judge:.2f}x)"))


if __name__ == "__main__":
    main()
