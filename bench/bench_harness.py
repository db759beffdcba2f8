"""Harness benchmarks, side by side in one run.

1. Throughput (``throughput``), against ``bench/fast_endpoint.py`` (an asyncio endpoint in its own process,
   which prints its own rate): Direct on 164 HumanEval problems × 20 repeats (3,280 cells), each call
   prepared and received in SQLite before the run moves on and each cell judged in the sandbox, as the
   whole command ``sotacheck rerun`` (start-up and export included), beside the two limits measured on the
   same work in the same run:
   - the bare loop: the very requests the harness sent (read back from its store), sent by asyncio + httpx
     at the same concurrency, with no records and no judging (and the same with aiohttp, the client the
     harness sends with);
   - the judge alone: the very programs the harness judged (the fenced code of each reply), judged on the
     hidden tests in one sandbox pool.
   At concurrency 64 with an endpoint that answers at once, and at concurrency 8 with 20 ms latency.
2. Overhead against the embedded model (``overhead N``): Direct on the first N HumanEval problems through
   ``sotacheck rerun`` (concurrency 1) against the same N requests sent one by one with httpx to the same
   server. Target: at most 5 % overhead. Needs the embedded model (``make setup``).

Run: ``.venv/bin/python bench/bench_harness.py [throughput] [overhead N]`` (default: throughput).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import httpx
from httpx_shards import ClientShards

sys.path.insert(0, ".")
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.run import execute_run, validate_spec

SOTACHECK = str(Path(sys.executable).parent / "sotacheck")
PROBLEMS, REPEATS = 164, 20


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


class FastEndpoint:
    """``bench/fast_endpoint.py`` as a child process for the ``with`` block; ``report`` is its own summary."""

    def __init__(self, latency_ms: float) -> None:
        self.latency_ms = latency_ms
        self.report = ""

    def __enter__(self) -> FastEndpoint:
        self.process = subprocess.Popen([sys.executable, "bench/fast_endpoint.py", "--latency-ms", str(self.latency_ms)],
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=30)
        self.report = out.strip()


def _peak_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None


def harness(url: str, concurrency: int, out: Path) -> tuple[float, float]:
    """The whole ``sotacheck rerun`` command: its wall time and the peak resident memory of its process (MB;
    the sandbox's processes not included), read from ``/proc`` while it runs."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen([SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model",
                                    url, "--model-name", "bench", "--repeats", str(REPEATS), "--concurrency",
                                    str(concurrency), "--seed", "7", "--out", str(out)], stdout=subprocess.DEVNULL,
                                   stderr=errors, env={**os.environ, "OPENAI_API_KEY": "none"})
        peak = 0.0
        while process.poll() is None:
            peak = max(peak, _peak_rss_mb(process.pid) or 0.0)
            time.sleep(0.05)
        wall = time.perf_counter() - started
        if process.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"sotacheck rerun failed ({process.returncode}): {errors.read().decode()[-500:]}")
    return wall, peak


def stored(run_dir: Path) -> tuple[list[dict[str, object]], list[tuple[str, str]]]:
    """The requests the harness sent (as JSON bodies) and the (problem, reply) of each call."""
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        rows = db.execute("SELECT problem, request, response FROM calls ORDER BY prepared_at").fetchall()
    bodies = []
    for _, request, _ in rows:
        r = json.loads(request)
        bodies.append({"model": "bench", "messages": r["messages"], "seed": r["seed"], **r["sampling"]})
    return bodies, [(problem, response) for problem, _, response in rows]


async def bare_loop(url: str, bodies: list[dict[str, object]], concurrency: int, sharded: bool = True) -> float:
    """The same requests with asyncio + httpx and nothing else: no records, no judging. ``sharded``: over
    the harness's own ``ClientShards`` (the fastest way to drive httpx found here); else one
    ``httpx.AsyncClient`` with ``concurrency`` connections, as a naive loop would."""
    limit = asyncio.Semaphore(concurrency)
    shards = ClientShards(concurrency, timeout=60) if sharded else None
    single = None if sharded else httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency))

    async def one(body: dict[str, object]) -> None:
        async with limit:
            if shards is not None:
                async with shards.client() as client:
                    response = await client.post(f"{url}/chat/completions", json=body)
            else:
                assert single is not None
                response = await single.post(f"{url}/chat/completions", json=body)
            response.raise_for_status()
            response.json()

    started = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
    wall = time.perf_counter() - started
    await (shards.aclose() if shards is not None else single.aclose())  # type: ignore[union-attr]
    return wall


async def bare_aiohttp_loop(url: str, bodies: list[dict[str, object]], concurrency: int) -> float:
    """The same requests with asyncio + aiohttp (the client the harness sends with) and nothing else."""
    limit = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def one(body: dict[str, object]) -> None:
            async with limit, session.post(f"{url}/chat/completions", json=body) as response:
                response.raise_for_status()
                json.loads(await response.read())

        started = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - started


def judge_alone(replies: list[tuple[str, str]]) -> float:
    """The same programs judged on the hidden tests in one sandbox pool, nothing else."""
    from sotacheck.reruns.sandbox.pool import SandboxPool
    from sotacheck.reruns.sandbox.submission import judge_many

    dataset = load_dataset("humaneval")
    by_id = {p.id: p for p in dataset.problems}
    pairs = [(by_id[problem], last_code_block(reply) or "") for problem, reply in replies]
    with SandboxPool() as pool:
        started = time.perf_counter()
        verdicts = list(judge_many(pool, dataset.content_hash, pairs))
        wall = time.perf_counter() - started
    assert len(verdicts) == len(pairs)
    return wall


def throughput(work: Path) -> None:
    cells = PROBLEMS * REPEATS
    print(f"throughput: Direct on {PROBLEMS} HumanEval problems x {REPEATS} repeats = {cells} cells")
    for concurrency, latency_ms in ((64, 0.0), (8, 20.0)):
        run_dir = work / f"harness-{concurrency}"
        with FastEndpoint(latency_ms) as endpoint:
            wall, peak_mb = harness(endpoint.url, concurrency, run_dir)
            bodies, replies = stored(run_dir)
            bare = asyncio.run(bare_loop(endpoint.url, bodies, concurrency))
            naive = asyncio.run(bare_loop(endpoint.url, bodies, concurrency, sharded=False))
            bare_aiohttp = asyncio.run(bare_aiohttp_loop(endpoint.url, bodies, concurrency))
        judge = judge_alone(replies)
        print(f"  concurrency {concurrency}, endpoint latency {latency_ms:.0f} ms ({endpoint.report}):")
        print(f"    sotacheck rerun, whole command (records + judge): {wall:6.2f} s = {cells / wall:6.0f} cells/s "
              f"(its process at most {peak_mb:.0f} MB resident)")
        print(f"    bare asyncio + httpx loop, same {len(bodies)} requests:  {bare:6.2f} s = {len(bodies) / bare:6.0f} calls/s "
              f"(one httpx client instead of the shards: {naive:.2f} s = {len(bodies) / naive:.0f} calls/s)")
        print(f"    bare asyncio + aiohttp loop (the harness's client):   {bare_aiohttp:6.2f} s = "
              f"{len(bodies) / bare_aiohttp:6.0f} calls/s")
        print(f"    judge alone, same {len(replies)} programs:               {judge:6.2f} s = "
              f"{len(replies) / judge:6.0f} programs/s")
        print(f"    harness / bare loop: {wall / bare:.2f}x; harness / judge alone: {wall / judge:.2f}x", flush=True)


def main() -> None:
    args = sys.argv[1:] or ["throughput"]
    work = Path(tempfile.mkdtemp(prefix="bench-harness-"))
    try:
        if "throughput" in args:
            throughput(work)
        if "overhead" in args:
            overhead(int(args[args.index("overhead") + 1]), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
