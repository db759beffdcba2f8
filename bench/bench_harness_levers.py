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
- ``judge``: ``judge_many`` on the same programs in one pool (what ``bench_harness.py`` calls the judge alone);
- ``canned``: the harness as it is, every execution answered at once with the result the judge gave the same
  problem first (so no judge processes after the first per problem): the harness's own work, HTTP included;
- ``http``: the same 3,280 requests (the harness's bodies: Direct's messages and sampling) sent by a bare
  asyncio + aiohttp loop at concurrency 64, nothing else: the HTTP exchange alone (client, endpoint, kernel);
- ``minimal``: the least any harness with this client, endpoint and judge could do: the bare loop's requests,
  each reply's code handed to the judge as it arrives (``SandboxPool.offload``, as the harness judges), no
  records, no pipeline, no export. Its wall less the judge's is the floor of the harness's cost here.

A variant's wall time less the judge's is what that part of the harness costs on this machine, the parts it
keeps included. Each variant also reports the CPU time the whole machine spent while it ran (``/proc/stat``:
user, nice, system, irq and softirq of both CPUs, whoever spent it) and the endpoint process's own: the judge
alone keeps both CPUs busy, so each CPU second of other work costs about half a second of wall. Not a product
path: the variants monkeypatch the harness, in their own process only.

Run: ``.venv/bin/python bench/bench_harness_levers.py [ROUNDS [VARIANT,...]]`` (default 3 rounds, every variant;
the judge alone always runs, the others are measured against it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench_harness import FastEndpoint, _cpu_s, bare_aiohttp_loop
from fast_endpoint import FIXED_WRONG

VARIANTS = ("full", "no-http", "no-records", "neither", "judge", "canned", "http", "minimal")
REPEATS, CONCURRENCY = 20, 64


def machine_cpu_s() -> float:
    """CPU seconds the whole machine has spent since boot (user, nice, system, irq, softirq; all CPUs)."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")


def bodies() -> list[tuple[Any, dict[str, Any]]]:
    """(problem, request body) for each cell, as the harness's Direct arm sends them."""
    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.pipelines.direct import SYSTEM, instruction
    from sotacheck.reruns.pipelines.registry import get_pipeline

    sampling = get_pipeline("direct").sampling
    return [(problem, {"model": "bench", "messages": [{"role": "system", "content": SYSTEM},
                                                      {"role": "user", "content": instruction(problem.prompt)}],
                       "temperature": sampling.temperature, "top_p": sampling.top_p, "seed": 1000 * index + repeat,
                       **({"max_tokens": sampling.max_tokens} if sampling.max_tokens else {})})
            for index, problem in enumerate(load_dataset("humaneval").problems) for repeat in range(REPEATS)]


def measured(run: Callable[[], object], endpoint: FastEndpoint | None) -> None:
    """Run ``run`` and print its wall time, this process's CPU time, the machine's CPU time and the endpoint
    process's (0 without one)."""
    endpoint_cpu = (_cpu_s(endpoint.process.pid) or 0.0) if endpoint is not None else 0.0
    started, cpu, machine = time.perf_counter(), time.process_time(), machine_cpu_s()
    run()
    wall, cpu, machine = time.perf_counter() - started, time.process_time() - cpu, machine_cpu_s() - machine
    if endpoint is not None:
        endpoint_cpu = (_cpu_s(endpoint.process.pid) or 0.0) - endpoint_cpu
    print(f"{wall:.3f} {cpu:.3f} {machine:.3f} {endpoint_cpu:.3f}")


def variant(name: str) -> None:
    """Run one variant in this process and print its figures (:func:`measured`)."""
    os.environ.setdefault("OPENAI_API_KEY", "none")
    with contextlib.ExitStack() as stack:
        endpoint = stack.enter_context(FastEndpoint(0.0, fixed_wrong=True)) \
            if name in ("full", "no-records", "canned", "http", "minimal") else None
        if name in ("judge", "minimal", "http"):
            judge_or_send(name, endpoint, stack)
        else:
            harness(name, endpoint)


def judge_or_send(name: str, endpoint: FastEndpoint | None, stack: contextlib.ExitStack) -> None:
    """``judge``, ``http`` and ``minimal``: the judge alone, the requests alone, and the two together."""
    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.pipelines.code import last_code_block
    from sotacheck.reruns.sandbox.pool import SandboxPool
    from sotacheck.reruns.sandbox.submission import judge_hidden, judge_many

    work = bodies()
    problems = [problem for problem, _ in work]
    if name == "http":
        assert endpoint is not None
        measured(lambda: asyncio.run(bare_aiohttp_loop(endpoint.url, [body for _, body in work], CONCURRENCY)),
                 endpoint)
        return
    pool = stack.enter_context(SandboxPool())
    time.sleep(0.3)  # its supervisors started, as the harness's are by its first verdict
    if name == "judge":
        programs = [(problem, last_code_block(FIXED_WRONG) or "") for problem in problems]
        dataset_hash = load_dataset("humaneval").content_hash
        measured(lambda: list(judge_many(pool, dataset_hash, programs)), None)
        return
    assert endpoint is not None

    def judge(index: int, text: str) -> Awaitable[object]:
        return pool.offload(judge_hidden, pool, problems[index], last_code_block(text) or "")

    measured(lambda: asyncio.run(bare_aiohttp_loop(endpoint.url, [body for _, body in work], CONCURRENCY, judge)),
             endpoint)


def harness(name: str, endpoint: FastEndpoint | None) -> None:
    """The harness (``execute_run``) with the parts the variant takes away monkeypatched out."""
    from sotacheck.reruns.model import openai_compat
    from sotacheck.reruns.model.base import Attempt, ChatResponse
    from sotacheck.reruns.run import execute_run, validate_spec
    from sotacheck.reruns.sandbox import pool as pool_module
    from sotacheck.reruns.store import group_commit

    url = endpoint.url if endpoint is not None else "http://127.0.0.1:9/v1"
    if name in ("no-http", "neither"):
        reply = ChatResponse(FIXED_WRONG, "stop", 100, 10, 0.0, (Attempt("ok", 0.0),))

        async def complete(self: object, request: object) -> ChatResponse:
            return reply

        async def preflight(self: object, tries: int = 3) -> None:
            return None

        openai_compat.OpenAICompatibleModel.complete = complete  # type: ignore[method-assign]
        openai_compat.OpenAICompatibleModel.preflight = preflight  # type: ignore[method-assign]
    if name in ("no-records", "neither"):
        async def commit(self: object, statements: object) -> None:
            return None

        group_commit.GroupCommitter.commit = commit  # type: ignore[method-assign]
        group_commit.GroupCommitter.commit_later = lambda self, statements: None  # type: ignore[method-assign]
    if name == "canned":
        run = pool_module.SandboxPool.run
        first: dict[tuple[str, ...], Any] = {}

        def canned(self: Any, code: str, tests: Any, **options: Any) -> Any:
            key = tuple(tests)
            if key not in first:
                first[key] = run(self, code, tests, **options)
            return first[key]

        pool_module.SandboxPool.run = canned  # type: ignore[method-assign]
    work_dir = Path(tempfile.mkdtemp(prefix="bench-levers-"))
    try:
        spec = validate_spec({"dataset": "humaneval", "pipelines": [{"name": "direct"}], "model": url,
                              "model_name": "bench", "seed": 7, "concurrency": CONCURRENCY, "repeats": REPEATS},
                             "bench")
        measured(lambda: asyncio.run(execute_run(work_dir / "run", spec, progress=False)), endpoint)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--variant":
        variant(sys.argv[2])
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(VARIANTS)
    if "judge" not in names:
        names.append("judge")
    figures: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": [], "machine": [], "endpoint": []}
                                                  for name in names}
    print(f"levers: the cheap-judgement workload in process, {rounds} rounds, variants {', '.join(names)}")
    for index in range(rounds):
        for name in names if index % 2 == 0 else names[::-1]:
            out = subprocess.run([sys.executable, __file__, "--variant", name], check=True, capture_output=True,
                                 text=True).stdout.split()
            for key, value in zip(("wall", "cpu", "machine", "endpoint"), out[-4:], strict=True):
                figures[name][key].append(float(value))
        print(f"  round {index + 1}: " + "; ".join(f"{n} {figures[n]['wall'][-1]:.2f} s" for n in names), flush=True)
    judge = figures["judge"]
    print(f"  medians over {rounds} rounds (beyond the judge alone: the median of each round's difference):")
    print(f"    {'variant':10s} {'wall':>8s} {'x judge':>8s} {'beyond':>8s} {'process':>8s} {'machine':>8s} "
          f"{'beyond':>8s} {'endpoint':>8s}   (CPU s: this process, the whole machine, beyond the judge's, the endpoint)")
    for name in names:
        f = {key: statistics.median(values) for key, values in figures[name].items()}
        beyond = statistics.median(w - j for w, j in zip(figures[name]["wall"], judge["wall"], strict=True))
        beyond_cpu = statistics.median(m - j for m, j in zip(figures[name]["machine"], judge["machine"], strict=True))
        ratio = statistics.median(w / j for w, j in zip(figures[name]["wall"], judge["wall"], strict=True))
        print(f"    {name:10s} {f['wall']:7.2f}s {ratio:7.2f}x {beyond:+7.2f}s {f['cpu']:7.2f}s {f['machine']:7.2f}s "
              f"{beyond_cpu:+7.2f}s {f['endpoint']:7.2f}s")


if __name__ == "__main__":
    main()
