"""Harness benchmarks, side by side in one run.

1. Overhead against calling the same local server directly: Direct on the first N HumanEval problems
   through `sotacheck rerun` (concurrency 1: records, seeds, judge, export) against the same N requests
   (same messages, same seeds, so the same replies) sent one by one with httpx to the same server.
   Target: at most 5 % overhead.
2. Throughput with durable records against a loopback endpoint that answers instantly: calls per second
   at concurrency 1, 8 and 64 (every call prepared and received in SQLite before the run moves on; each
   cell also judged in the sandbox).

Run: `.venv/bin/python bench/bench_harness.py [N]` (needs the embedded model: `make setup`).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, ".")
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf
from sotacheck.reruns.model.loopback import LoopbackServer, canonical_responder
from sotacheck.reruns.run import execute_run, validate_spec


def spec(url: str, limit: int, concurrency: int, dataset: str = "humaneval", repeats: int = 1) -> object:
    return validate_spec({"dataset": dataset, "pipelines": [{"name": "direct"}], "model": url,
                          "model_name": LOCAL_MODEL_ID, "limit": limit, "seed": 7, "concurrency": concurrency,
                          "repeats": repeats}, "bench")


def overhead(n: int, work: Path) -> None:
    with LocalServer(assemble_gguf()) as server:
        run_dir = work / "harness"
        started = time.perf_counter()
        asyncio.run(execute_run(run_dir, spec(server.base_url, n, 1), progress=False))  # type: ignore[arg-type]
        harness = time.perf_counter() - started
        with sqlite3.connect(run_dir / "store.sqlite") as db:
            requests = [json.loads(r) for (r,) in db.execute("SELECT request FROM calls ORDER BY prepared_at")]
            harness_tokens = db.execute("SELECT SUM(completion_tokens) FROM calls").fetchone()[0]
        started = time.perf_counter()
        direct_tokens = 0
        with httpx.Client(timeout=600) as client:
            for request in requests:
                body = {"model": LOCAL_MODEL_ID, "messages": request["messages"], "seed": request["seed"],
                        "temperature": request["sampling"]["temperature"], "top_p": request["sampling"]["top_p"],
                        "max_tokens": request["sampling"]["max_tokens"]}
                reply = client.post(f"{server.base_url}/chat/completions", json=body).json()
                direct_tokens += reply["usage"]["completion_tokens"]
        direct = time.perf_counter() - started
    print(f"overhead, Direct on {n} HumanEval problems, embedded model, concurrency 1:")
    print(f"  calling the server directly:  {direct:7.1f} s  ({direct_tokens} completion tokens)")
    print(f"  through sotacheck rerun:      {harness:7.1f} s  ({harness_tokens} completion tokens)")
    print(f"  overhead: {100 * (harness - direct) / direct:+.1f} % (target at most 5 %)")


def throughput(work: Path) -> None:
    dataset = load_dataset("humaneval")
    responder = canonical_responder({p.entry_point: p.prompt + (p.canonical_solution or "") for p in dataset.problems})
    print("throughput against an instant loopback endpoint, durable records (164 problems x 2 repeats):")
    with LoopbackServer(responder) as server:
        for concurrency in (1, 8, 64):
            run_dir = work / f"loop-{concurrency}"
            started = time.perf_counter()
            summary = asyncio.run(execute_run(run_dir, spec(server.base_url, 164, concurrency, repeats=2),  # type: ignore[arg-type]
                                              progress=False))
            wall = time.perf_counter() - started
            print(f"  concurrency {concurrency:2d}: {summary.sent} calls in {wall:5.1f} s = "
                  f"{summary.sent / wall:6.1f} calls/s (each cell also judged)")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    work = Path(tempfile.mkdtemp(prefix="bench-harness-"))
    try:
        throughput(work)
        overhead(n, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
