"""Ray vs the local pool on this machine, side by side in one run.

1. Judge throughput: the canonical HumanEval-ET solutions, all 164 problems × 10 copies (1,640 judged
   programs, every hidden ET test), with the local ``SandboxPool`` and with Ray tasks (batches of 16) on a
   private Ray instance with the same CPU count. Verdicts must be identical.
2. Ray's per-task overhead: no-op tasks, one at a time (round trip) and 2,000 in flight (amortised).
3. Rerun cells per second per CPU with the Ray executor (Direct on all 164 HumanEval problems against an
   instant loopback endpoint, so the figure is harness + judge cost, not model time), and the projection
   to a 64-CPU cluster by that figure — a projection, not a measurement.

Run: `make bench` (needs the `ray` extra), which starts it outside the checkout's root: Ray puts the working
directory first on its workers' sys.path, where the checkout's ``sotacheck/`` folder would shadow the
installed package (docs/ray.md). Exit 1 if verdicts differ.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COPIES = 10


def judge_throughput() -> tuple[float, float, float, bool]:
    import ray

    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.executors import ray as cluster
    from sotacheck.reruns.sandbox import SandboxLimits, SandboxPool, judge_many

    data = load_dataset("humaneval-et")
    pairs = [(p, p.canonical_solution or "") for p in data.problems] * COPIES
    limits = SandboxLimits()
    started = time.perf_counter()
    with SandboxPool(limits=limits) as pool:
        local = [v.status for v in judge_many(pool, data.content_hash, pairs)]
    local_s = time.perf_counter() - started

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    started = time.perf_counter()
    cluster.judge_pairs(data.content_hash, pairs[:32], limits)  # cold: worker processes start, pools open
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    remote = [v.status for v in cluster.judge_pairs(data.content_hash, pairs, limits)]
    ray_s = time.perf_counter() - started
    return local_s, ray_s, cold_s, local == remote


def task_overhead() -> tuple[float, float]:
    import ray

    @ray.remote(num_cpus=1)
    def noop() -> int:
        return 0

    ray.get([noop.remote() for _ in range(50)])  # warm workers
    started = time.perf_counter()
    for _ in range(200):
        ray.get(noop.remote())
    round_trip = (time.perf_counter() - started) / 200
    started = time.perf_counter()
    ray.get([noop.remote() for _ in range(2000)])
    amortised = (time.perf_counter() - started) / 2000
    return round_trip, amortised


def cells_per_second() -> tuple[float, int]:
    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.model.loopback import LoopbackServer, canonical_responder

    data = load_dataset("humaneval")
    responder = canonical_responder({p.entry_point: p.prompt + (p.canonical_solution or "") for p in data.problems})
    with LoopbackServer(responder) as server, tempfile.TemporaryDirectory() as work:
        started = time.perf_counter()
        subprocess.run([str(Path(sys.executable).parent / "sotacheck"), "rerun", "--dataset", "humaneval",
                        "--pipelines", "direct", "--model", server.base_url, "--model-name", "loopback",
                        "--concurrency", "16", "--out", f"{work}/run", "--executor", "ray"],
                       check=True, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
    return len(data) / elapsed, len(data)


def main() -> int:
    import ray

    cpus = os.cpu_count() or 1
    local_s, ray_s, cold_s, identical = judge_throughput()
    n = 164 * COPIES
    round_trip, amortised = task_overhead()
    ray.shutdown()
    rate, cells = cells_per_second()
    print(f"machine: {cpus} CPUs; Ray {ray.__version__}; canonical HumanEval-ET, 164 problems x {COPIES} copies")
    print(f"judge, local SandboxPool ({cpus} workers): {local_s:6.2f} s  {n / local_s:6.1f} programs/s")
    print(f"judge, Ray tasks of 16 ({cpus} CPUs):      {ray_s:6.2f} s  {n / ray_s:6.1f} programs/s  "
          f"(ratio Ray/local {ray_s / local_s:.2f}; cold start of the first batch {cold_s:.2f} s)")
    print(f"identical verdicts: {identical}")
    print(f"Ray no-op task: {1000 * round_trip:.2f} ms round trip, {1000 * amortised:.3f} ms amortised "
          f"with 2,000 in flight")
    print(f"rerun cells (Direct, instant loopback endpoint, {cells} cells incl. Ray start-up): {rate:.1f} cells/s "
          f"= {rate / cpus:.2f} cells/s per CPU")
    print(f"PROJECTION, not measured: a 64-CPU cluster at that per-CPU rate would do {64 * rate / cpus:.0f} cells/s, "
          f"provided the endpoint keeps up and the single driver-side store does too")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
