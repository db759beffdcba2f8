"""Prefix reuse in the embedded server: exact, and how much faster?

Replays the requests of the recorded run ``recordings/methods-qwen05b`` (whose replies came from fresh
prompt evaluation) for its CodeSim and MapCoder arms on the first PROBLEMS HumanEval problems, one at a
time, each cell's calls in the order the cell made them, against the embedded server twice in one run:
with aligned prefix reuse (``SOTACHECK_PREFIX_REUSE=ALIGN``) and with fresh evaluation (``0``). Every reply
is compared with the stored one byte for byte; the wall time of the calls is summed per mode. Both
servers run at once and each call goes to one, then the other, so that other load slows both alike.

Each pair of replies is appended to ``OUT/align-A.jsonl`` as it arrives, so a stopped bench resumes where it
was. Run: ``.venv/bin/python bench/bench_prefix_reuse.py [--problems 5] [--align 64] [--out DIR]``.
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

RUN = Path("recordings/methods-qwen05b")
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


def _send(client: httpx.Client, url: str, request: dict[str, Any]) -> tuple[str, float, int]:
    body = {"model": LOCAL_MODEL_ID, "messages": request["messages"], "seed": request["seed"],
            **{k: v for k, v in request["sampling"].items() if k != "stop" or v}}
    started = time.perf_counter()
    reply = client.post(f"{url}/chat/completions", json=body).json()
    return reply["choices"][0]["message"]["content"], time.perf_counter() - started, reply["usage"]["prompt_tokens"]


def replay(calls: list[dict[str, Any]], align: int, log: Path) -> None:
    """Both servers up at once; each call goes to the reusing one, then to the fresh one, so that whatever
    else runs on the machine slows both alike. Each server sees the calls in the same order."""
    done = {json.loads(line)["call_id"] for line in log.read_text().splitlines()} if log.exists() else set()
    todo = [c for c in calls if c["call_id"] not in done]
    if not todo:
        return
    gguf = assemble_gguf()
    with LocalServer(gguf, prefix_reuse=align) as reusing, LocalServer(gguf) as fresh, \
            httpx.Client(timeout=900) as client, log.open("a") as out:
        warm_up = {"messages": [{"role": "user", "content": "Say hi."}], "seed": 0,
                   "sampling": {"temperature": 0.0, "top_p": 1.0, "max_tokens": 4}}
        for server in (reusing, fresh):  # the first request of a server pays for loading the weights: untimed
            _send(client, server.base_url, warm_up)
        for call in todo:
            reused_text, reused_s, tokens = _send(client, reusing.base_url, call["request"])
            fresh_text, fresh_s, _ = _send(client, fresh.base_url, call["request"])
            out.write(json.dumps({"call_id": call["call_id"], "arm": call["arm"], "problem": call["problem"],
                                  "reuse_identical": reused_text == call["response"],
                                  "fresh_identical": fresh_text == call["response"], "reuse_s": reused_s,
                                  "fresh_s": fresh_s, "prompt_tokens": tokens}) + "\n")
            out.flush()


def summary(calls: list[dict[str, Any]], log: Path) -> None:
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    print(f"{len(rows)} of {len(calls)} calls replayed")
    for arm in ARMS:
        arm_rows = [r for r in rows if r["arm"] == arm]
        if not arm_rows:
            continue
        reuse, fresh = sum(r["reuse_s"] for r in arm_rows), sum(r["fresh_s"] for r in arm_rows)
        print(f"  {arm}: {len(arm_rows)} calls; identical to the stored reply: aligned reuse "
              f"{sum(r['reuse_identical'] for r in arm_rows)}, fresh {sum(r['fresh_identical'] for r in arm_rows)}; "
              f"wall: fresh {fresh:.0f} s, aligned reuse {reuse:.0f} s ({fresh / reuse:.2f}x)")
    if rows:
        reuse, fresh = sum(r["reuse_s"] for r in rows), sum(r["fresh_s"] for r in rows)
        print(f"  all: fresh {fresh:.0f} s, aligned reuse {reuse:.0f} s: {fresh / reuse:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=5)
    parser.add_argument("--align", type=int, default=64)
    parser.add_argument("--out", type=Path, default=Path("artifacts/bench-prefix-reuse"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    calls = stored_calls(args.problems)
    log = args.out / f"align-{args.align}.jsonl"
    replay(calls, args.align, log)
    summary(calls, log)


if __name__ == "__main__":
    main()
