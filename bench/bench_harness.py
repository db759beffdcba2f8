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
2. The cheap judgement (``cheap [ROUNDS] [--baseline SOTACHECK]``): the same 3,280 cells at concurrency 64
   against ``fast_endpoint.py --fixed-wrong``, which answers at once with one fixed wrong program (it defines
   no entry point, so each verdict takes the judge about a millisecond): here the harness's own cost per cell
   (records, commits, bookkeeping, export) shows, where the first workload's looping programs hide it behind
   a slow judge. Beside it, in each round, the judge alone on the very programs: in one sandbox pool, and as
   the whole ``sotacheck judge --samples`` command (start-up included, as the rerun's figure is); and where
   the rerun's time goes, from its store's own timestamps (start-up until the first call is prepared, the
   cells, then the leakage check and export until the command exits). ``--baseline`` also runs another
   ``sotacheck`` executable (another checkout's, e.g. main's) in each round, alternating, for before/after.
   Medians over the rounds.
3. Overhead against the embedded model (``overhead N``): Direct on the first N HumanEval problems through
   ``sotacheck rerun`` (concurrency 1) against the same N requests sent one by one with httpx to the same
   server. Target: at most 5 % overhead. Needs the embedded model (``make setup``).

Run: ``.venv/bin/python bench/bench_harness.py [throughput] [cheap [ROUNDS] [--baseline SOTACHECK]] [overhead N]``
(default: throughput).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
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

    def __init__(self, latency_ms: float, fixed_wrong: bool = False) -> None:
        self.latency_ms = latency_ms
        self.fixed_wrong = fixed_wrong
        self.report = ""

    def __enter__(self) -> FastEndpoint:
        self.process = subprocess.Popen([sys.executable, "bench/fast_endpoint.py", "--latency-ms", str(self.latency_ms),
                                         *(["--fixed-wrong"] if self.fixed_wrong else [])],
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=30)
        self.report = out.strip()


def _cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (all its threads), from ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _peak_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None


def harness(url: str, concurrency: int, out: Path, sotacheck: str = SOTACHECK) -> tuple[float, float]:
    """The whole ``sotacheck rerun`` command: its wall time and the peak resident memory of its process (MB;
    the sandbox's processes not included), read from ``/proc`` while it runs."""
    wall, peak, _, _ = _harness(url, concurrency, out, sotacheck)
    return wall, peak


def _harness(url: str, concurrency: int, out: Path, sotacheck: str) -> tuple[float, float, float, float]:
    """``harness``, with the CPU seconds of the command's own process (its last reading before it ended) and
    the Unix time it was started at."""
    cpu = 0.0
    with tempfile.TemporaryFile() as errors:
        spawned = time.time()
        started = time.perf_counter()
        process = subprocess.Popen([sotacheck, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model",
                                    url, "--model-name", "bench", "--repeats", str(REPEATS), "--concurrency",
                                    str(concurrency), "--seed", "7", "--out", str(out)], stdout=subprocess.DEVNULL,
                                   stderr=errors, env={**os.environ, "OPENAI_API_KEY": "none"})
        peak = 0.0
        while process.poll() is None:
            peak = max(peak, _peak_rss_mb(process.pid) or 0.0)
            cpu = max(cpu, _cpu_s(process.pid) or 0.0)
            time.sleep(0.02)
        wall = time.perf_counter() - started
        if process.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"sotacheck rerun failed ({process.returncode}): {errors.read().decode()[-500:]}")
    return wall, peak, cpu, spawned


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


async def bare_aiohttp_loop(url: str, bodies: Sequence[Mapping[str, object]], concurrency: int,
                            judge: Callable[[int, str], Awaitable[object]] | None = None) -> float:
    """The same requests with asyncio + aiohttp (the client the harness sends with) and nothing else. With
    ``judge``, each reply's text is handed to it with its body's index as an awaited job that does not hold up
    the next request (the harness keeps up to 8,192 cells ahead of the judge); the wall time then includes
    the last job."""
    limit = asyncio.Semaphore(concurrency)
    jobs: list[asyncio.Future[object]] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def one(index: int, body: Mapping[str, object]) -> None:
            async with limit, session.post(f"{url}/chat/completions", json=body) as response:
                response.raise_for_status()
                reply = json.loads(await response.read())
            if judge is not None:
                jobs.append(asyncio.ensure_future(judge(index, reply["choices"][0]["message"]["content"])))

        started = time.perf_counter()
        await asyncio.gather(*(one(index, body) for index, body in enumerate(bodies)))
        await asyncio.gather(*jobs)
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


def judge_command(replies: list[tuple[str, str]], work: Path) -> tuple[float, float]:
    """The same programs judged by the whole ``sotacheck judge --samples`` command: its wall time and the CPU
    seconds of it and the sandbox processes it reaped."""
    samples = work / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": problem, "completion": last_code_block(reply) or ""}) + "\n"
                               for problem, reply in replies))
    before = os.times()
    started = time.perf_counter()
    subprocess.run([SOTACHECK, "judge", "--dataset", "humaneval", "--samples", str(samples), "--json"], check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def phases(run_dir: Path, spawned: float, wall: float) -> tuple[float, float, float, float]:
    """Where a rerun's wall time went, from its store: start-up (the command started until its first call
    was prepared), the model calls (until the last reply was stored), the cells (until the last cell's
    outcome was stored), the end (leakage check, export, exit)."""
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        first, replies = db.execute("SELECT MIN(prepared_at), MAX(finished_at) FROM calls").fetchone()
        last = db.execute("SELECT MAX(finished_at) FROM cells").fetchone()[0]
    return first - spawned, replies - first, last - first, spawned + wall - last


def cheap(work: Path, rounds: int, baseline: str | None) -> None:
    """The rerun against the fixed wrong program, beside the judge alone on the very programs, ``rounds``
    times (alternating with ``baseline``'s rerun when given); medians."""
    cells = PROBLEMS * REPEATS
    print(f"cheap judgement: Direct on {PROBLEMS} HumanEval problems x {REPEATS} repeats = {cells} cells, "
          f"concurrency 64, an endpoint answering at once with one fixed wrong program; {rounds} rounds")
    figures: dict[str, list[float]] = {}
    runs = [("rerun", SOTACHECK)] + ([("baseline", baseline)] if baseline else [])
    for index in range(rounds):
        for label, executable in runs if index % 2 == 0 else runs[::-1]:
            run_dir = work / f"cheap-{label}-{index}"
            with FastEndpoint(0.0, fixed_wrong=True) as endpoint:
                wall, peak_mb, cpu, spawned = _harness(endpoint.url, 64, run_dir, executable)
            for name, value in zip(("wall", "peak_mb", "cpu", "startup", "calls", "cells", "end"),
                                   (wall, peak_mb, cpu, *phases(run_dir, spawned, wall)), strict=True):
                figures.setdefault(f"{label}.{name}", []).append(value)
        _, replies = stored(run_dir)
        figures.setdefault("judge.pool", []).append(judge_alone(replies))
        command_wall, command_cpu = judge_command(replies, work)
        figures.setdefault("judge.command", []).append(command_wall)
        figures.setdefault("judge.command_cpu", []).append(command_cpu)
        for label, _ in runs:  # this round's ratios: the machine's state is the same for all three
            figures.setdefault(f"{label}.per_pool", []).append(figures[f"{label}.wall"][-1] / figures["judge.pool"][-1])
            figures.setdefault(f"{label}.per_command", []).append(figures[f"{label}.wall"][-1] / command_wall)
        shown = "; ".join(f"{key} {values[-1]:.2f}" for key, values in figures.items() if "per_" not in key)
        print(f"  round {index + 1}: {shown}", flush=True)
    median = {key: statistics.median(values) for key, values in figures.items()}
    print(f"  medians over {rounds} rounds:")
    print(f"    judge alone, same {cells} programs: in one pool {median['judge.pool']:.2f} s; as `sotacheck judge` "
          f"{median['judge.command']:.2f} s (its processes {median['judge.command_cpu']:.1f} CPU s)")
    for label, _ in runs:
        m = {name: median[f"{label}.{name}"] for name in ("wall", "peak_mb", "cpu", "startup", "calls", "cells", "end")}
        print(f"    {label} ({dict(runs)[label]}): {m['wall']:.2f} s = {cells / m['wall']:.0f} cells/s "
              f"(start-up {m['startup']:.2f} s, cells {m['cells']:.2f} s of which the model calls the first "
              f"{m['calls']:.2f} s, leakage check + export + exit "
              f"{m['end']:.2f} s; its own process {m['cpu']:.1f} CPU s = {1000 * m['cpu'] / cells:.2f} ms per cell, "
              f"at most {m['peak_mb']:.0f} MB)")
        print(f"      / judge alone in one pool: {median[f'{label}.per_pool']:.2f}x; / `sotacheck judge`: "
              f"{median[f'{label}.per_command']:.2f}x (medians of each round's ratio)", flush=True)


def main() -> None:
    args = sys.argv[1:] or ["throughput"]
    work = Path(tempfile.mkdtemp(prefix="bench-harness-"))
    try:
        if "throughput" in args:
            throughput(work)
        if "cheap" in args:
            after = args[args.index("cheap") + 1:]
            rounds = int(after[0]) if after and after[0].isdigit() else 3
            baseline = args[args.index("--baseline") + 1] if "--baseline" in args else None
            cheap(work, rounds, baseline)
        if "overhead" in args:
            overhead(int(args[args.index("overhead") + 1]), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
