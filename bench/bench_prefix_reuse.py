"""Prefix reuse in the embedded server: exact, and how much faster?

Replays the requests of the recorded run ``data/runs/methods-qwen05b`` (whose replies came from fresh
prompt evaluation) for its CodeSim and MapCoder arms on the first PROBLEMS HumanEval problems, one at a
time, each cell's calls in the order the cell made them, against the embedded server twice in one run:
with aligned prefix reuse (``SOTACHECK_PREFIX_REUSE=ALIGN``) and with fresh evaluation (``0``). Every reply
is compared with the stored one byte for byte; the wall time of the calls is summed per mode.

Each reply is appended to ``OUT/<mode>.jsonl`` as it arrives, so a stopped bench resumes where it was
(``--out`` keeps the folder). Run: ``.venv/bin/python bench/bench_prefix_reuse.py [--problems 5]
[--align 64] [--out DIR] [--modes reuse,fresh]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, ".")
from sotacheck.reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf

RUN = Path("data/runs/methods-qwen05b")
ARMS = ("codesim[d=5,p=5]", "mapcoder[k=3,t=5]")


def stored_calls(problems: int) -> list[dict[str, Any]]:
    """The model-answered calls of the two arms on the first ``problems`` problems, cell by cell."""
    store = Path(tempfile.mkdtemp(prefix="bench-reuse-")) / "store.sqlite"
    with gzip.open(RUN / "store.sqlite.gz", "rb") as packed, store.open("wb") as plain:
        shutil.copyfileobj(packed, plain)
    wanted = [f"HumanEval/{i}" for i in range(problems)]
    with sqlite3.connect(store) as db:
        rows = db.execute(
            f"SELECT call_id, arm, problem, request, response, latency_s FROM calls WHERE state = 'received' "
            f"AND arm IN ({','.join('?' * len(ARMS))}) AND problem IN ({','.join('?' * len(wanted))}) "
            f"ORDER BY arm, problem, prepared_at", (*ARMS, *wanted)).fetchall()
    shutil.rmtree(store.parent, ignore_errors=True)
    return [{"call_id": c, "arm": a, "problem": p, "request": json.loads(r), "response": text, "latency_s": s}
            for c, a, p, r, text, s in rows]


def replay(calls: list[dict[str, Any]], align: int, log: Path) -> None:
    done = {json.loads(line)["call_id"] for line in log.read_text().splitlines()} if log.exists() else set()
    todo = [c for c in calls if c["call_id"] not in done]
    if not todo:
        return
    with LocalServer(assemble_gguf(), prefix_reuse=align) as server, httpx.Client(timeout=900) as client, log.open("a") as out:
        for call in todo:
            request = call["request"]
            body = {"model": LOCAL_MODEL_ID, "messages": request["messages"], "seed": request["seed"],
                    **{k: v for k, v in request["sampling"].items() if k != "stop" or v}}
            started = time.perf_counter()
            reply = client.post(f"{server.base_url}/chat/completions", json=body).json()
            wall = time.perf_counter() - started
            text = reply["choices"][0]["message"]["content"]
            out.write(json.dumps({"call_id": call["call_id"], "arm": call["arm"], "problem": call["problem"],
                                  "identical": text == call["response"], "wall_s": wall,
                                  "prompt_tokens": reply["usage"]["prompt_tokens"]}) + "\n")
            out.flush()


def summary(calls: list[dict[str, Any]], log: Path, mode: str) -> dict[str, Any]:
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    by_arm: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_arm.setdefault(row["arm"], []).append(row)
    print(f"{mode}: {len(rows)} of {len(calls)} calls replayed")
    for arm, arm_rows in by_arm.items():
        same = sum(r["identical"] for r in arm_rows)
        print(f"  {arm}: {same}/{len(arm_rows)} replies identical to the stored ones, "
              f"{sum(r['wall_s'] for r in arm_rows):.0f} s")
    return {r["call_id"]: r for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=5)
    parser.add_argument("--align", type=int, default=64)
    parser.add_argument("--out", type=Path, default=Path("artifacts/bench-prefix-reuse"))
    parser.add_argument("--modes", default="reuse,fresh")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    calls = stored_calls(args.problems)
    modes = {"reuse": args.align, "fresh": 0}
    results = {}
    for mode in args.modes.split(","):
        replay(calls, modes[mode], args.out / f"{mode}.jsonl")
        results[mode] = summary(calls, args.out / f"{mode}.jsonl", mode)
    if len(results) == 2 and all(len(r) == len(calls) for r in results.values()):
        reuse = sum(r["wall_s"] for r in results["reuse"].values())
        fresh = sum(r["wall_s"] for r in results["fresh"].values())
        print(f"wall time of the {len(calls)} calls: fresh {fresh:.0f} s, aligned reuse {reuse:.0f} s: "
              f"{fresh / reuse:.2f}x (recorded run, fresh, under other load: "
              f"{sum(c['latency_s'] for c in calls):.0f} s)")


if __name__ == "__main__":
    main()
