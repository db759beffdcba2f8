"""The embedded model's engines and modes on the recorded calls, side by side in one run.

Replays the 88 model-answered calls of ``recordings/methods-qwen05b``'s CodeSim and MapCoder arms on
HumanEval/0-4 (``bench_prefix_reuse.stored_calls``) as the harness sends them: each cell (arm, problem) sends
its calls in the order it made them, one after the other, and the cells run side by side up to the mode's
sequences in flight (one for llama-cpp-python's server, which answers one request at a time). Modes:

- ``python-fresh``: llama-cpp-python's server, every prompt evaluated from an empty cache (the recorded replies'
  mode, and the baseline);
- ``python-reuse-A``: the same with aligned prefix reuse (``reruns/model/_llama_server.py``);
- ``native-S-SPEC``: llama.cpp's ``llama-server`` (``reruns/model/native_server.py``) with S slots and
  speculative decoding SPEC (``off`` or ``ngram-simple``);
- ``native-S-SPEC-reuse512``: the same with prefix reuse aligned to the 512-token micro-batch (the patched
  server, ``scripts/native/aligned-prefix-reuse.patch``), after its start-up probe; its replies are compared
  with ``native-S-SPEC``'s byte for byte;
- ``MODE@reversed``: MODE again with the cells started shortest first, another interleaving of the same requests,
  whose replies are compared with MODE's byte for byte.

For each mode: the wall time of the 88 calls, prompt and reply tokens per second of each sequence (from the
server's own timings: llama-server's ``timings``, llama-cpp-python's perf lines in its log; with several sequences
in flight their times overlap), reply tokens per second of wall time, the draft acceptance, and the share of
replies identical byte for byte to the stored ones and to the replies of ``native-1-off`` (plain decoding, one
sequence at a time). Each mode's replies go to ``OUT/MODE.jsonl``; a mode with all its calls there is not run
again, so a stopped bench resumes at the mode it was in.

``--throughput 1,2,4,8`` measures instead the aggregate throughput of the cells' first calls (10 independent
requests) sent at once to ``llama-server`` with that many slots.

Run: ``.venv/bin/python bench/bench_embedded.py [--modes native-1-off,native-4-ngram-simple,python-fresh]
[--throughput 1,2,4,8] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_prefix_reuse import stored_calls

from sotacheck.reruns.model import native_server
from sotacheck.reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf

THREADS = 2
NATIVE_MODE = re.compile(r"native-(?P<slots>\d+)-(?P<spec>off|ngram-simple)(?:-reuse(?P<reuse>\d+))?")
PERF = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens.*?\n.*?eval time =\s*([\d.]+) ms /\s*(\d+) runs",
                  re.S)


class Served:
    """One mode's server (``reruns.model.local.LocalServer``, either engine) for a ``with`` block: its base URL,
    its sequences in flight, its log."""

    def __init__(self, mode: str, log: Path) -> None:
        self.mode = mode
        mode = mode.removesuffix("@reversed")
        reuse, native = 0, None
        if mode.startswith("python-"):
            reuse = 0 if mode == "python-fresh" else int(mode.rsplit("-", 1)[1])
        else:
            parsed = NATIVE_MODE.fullmatch(mode)
            if parsed is None:
                raise SystemExit(f"--modes: {mode!r} is not python-fresh, python-reuse-A or native-S-SPEC[-reuseA]")
            native = native_server.NativeMode(slots=int(parsed["slots"]), speculative=parsed["spec"],
                                              prefix_reuse=int(parsed["reuse"] or 0))
        self.slots = native.slots if native else 1
        self.server = LocalServer(assemble_gguf(), threads=THREADS, log_file=log, prefix_reuse=reuse, native=native)

    def __enter__(self) -> Served:
        self.url = self.server.start().base_url
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()


def _send(client: httpx.Client, url: str, request: dict[str, Any]) -> dict[str, Any]:
    body = {"model": LOCAL_MODEL_ID, "messages": request["messages"], "seed": request["seed"],
            **{k: v for k, v in request["sampling"].items() if k != "stop" or v}}
    started = time.perf_counter()
    reply = client.post(f"{url}/chat/completions", json=body).json()
    return {"text": reply["choices"][0]["message"]["content"], "wall_s": time.perf_counter() - started,
            "usage": reply["usage"], "timings": reply.get("timings")}


def run_mode(mode: str, calls: list[dict[str, Any]], out: Path) -> None:
    """All the calls in ``mode``, cells side by side up to its sequences in flight; the results to MODE.jsonl."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for call in calls:
        cells[(call["arm"], call["problem"])].append(call)
    results: list[dict[str, Any]] = []
    lock = threading.Lock()
    with Served(mode, out / f"{mode}.server.log") as served, httpx.Client(timeout=3600) as client:
        gate = threading.Semaphore(served.slots)

        def cell(chain: list[dict[str, Any]]) -> None:
            for call in chain:
                with gate:
                    got = _send(client, served.url, call["request"])
                with lock:
                    results.append({"call_id": call["call_id"], **got})

        started = time.perf_counter()
        # the longest cells first, as a harness that works through cells in order would reach them; MODE@reversed
        # the shortest first (another interleaving, for the same mode's replies to be compared byte for byte)
        with ThreadPoolExecutor(len(cells)) as pool:
            list(pool.map(cell, sorted(cells.values(), key=len, reverse=not mode.endswith("@reversed"))))
        wall = time.perf_counter() - started
    probe = served.server.probe_result
    with (out / f"{mode}.jsonl").open("w") as fh:
        fh.write(json.dumps({"mode": mode, "wall_s": wall, "slots": served.slots,
                             "served": served.server.native.identity if served.server.native else mode,
                             "probe": None if probe is None else {"exact": probe.exact, "detail": probe.detail}})
                 + "\n")
        for row in results:
            fh.write(json.dumps(row) + "\n")


def load(out: Path, mode: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]] | None:
    path = out / f"{mode}.jsonl"
    if not path.is_file():
        return None
    head, *rows = [json.loads(line) for line in path.read_text().splitlines()]
    return head, {row["call_id"]: row for row in rows}


def token_rates(mode: str, rows: dict[str, dict[str, Any]], out: Path) -> tuple[float, float, str, str]:
    """Prompt and reply tokens per second of the server's own work, the draft acceptance, and the server's
    seconds on prompts and on replies (summed over calls; with several in flight they overlap)."""
    if mode.startswith("python-"):
        # llama.cpp's perf lines as llama-cpp-python prints them; its prompt figure leaves out part of the
        # prompt's evaluation (it counts only some of the batches), so the reply figure is the one to read
        perf = PERF.findall((out / f"{mode.removesuffix('@reversed')}.server.log").read_text(errors="replace"))
        p_ms, p_n = sum(float(m[0]) for m in perf), sum(int(m[1]) for m in perf)
        e_ms, e_n = sum(float(m[2]) for m in perf), sum(int(m[3]) for m in perf)
        return (p_n / p_ms * 1000 if p_ms else float("nan"), e_n / e_ms * 1000 if e_ms else float("nan"), "-",
                f"- / {e_ms / 1000:.0f} s")
    t = [row["timings"] for row in rows.values()]
    p_ms, e_ms = sum(x["prompt_ms"] for x in t), sum(x["predicted_ms"] for x in t)
    prompt = sum(x["prompt_n"] for x in t) / p_ms * 1000
    reply = sum(x["predicted_n"] for x in t) / e_ms * 1000
    drafted, accepted = sum(x.get("draft_n", 0) for x in t), sum(x.get("draft_n_accepted", 0) for x in t)
    cached, evaluated = sum(x.get("cache_n", 0) for x in t), sum(x["prompt_n"] for x in t)
    reused = f"; {cached}/{cached + evaluated} prompt tokens reused" if cached else ""
    return (prompt, reply, f"{accepted}/{drafted} ({accepted / drafted:.0%})" if drafted else "-",
            f"{p_ms / 1000:.0f} s / {e_ms / 1000:.0f} s{reused}")


def summary(modes: list[str], calls: list[dict[str, Any]], out: Path) -> None:
    stored = {call["call_id"]: call["response"] for call in calls}
    reference = load(out, "native-1-off")
    base = load(out, "python-fresh")
    print("| mode | wall (88 calls) | vs python-fresh | prompt tok/s | reply tok/s | reply tokens / wall s "
          "| server on prompts / replies | drafts accepted | replies = stored "
          "| replies = native-1-off (MODE@reversed: = MODE; MODE-reuseA: = MODE) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode in modes:
        got = load(out, mode)
        if got is None:
            continue
        head, rows = got
        prompt, reply, accepted, split = token_rates(mode, rows, out)
        same = sum(rows[c]["text"] == stored[c] for c in rows)
        # the mode's twin: MODE for MODE@reversed, the mode without reuse for a reuse mode, else plain decoding
        twin = (load(out, mode.removesuffix("@reversed")) if mode.endswith("@reversed")
                else load(out, re.sub(r"-reuse\d+$", "", mode)) if re.search(r"-reuse\d+$", mode) else reference)
        same_ref = f"{sum(rows[c]['text'] == twin[1][c]['text'] for c in rows)}/{len(rows)}" if twin else "-"
        speed = f"{base[0]['wall_s'] / head['wall_s']:.2f}x" if base else "-"
        replied = sum(row["usage"]["completion_tokens"] for row in rows.values()) / head["wall_s"]
        print(f"| {mode} | {head['wall_s']:.0f} s | {speed} | {prompt:.1f} | {reply:.1f} | {replied:.1f} | {split} "
              f"| {accepted} "
              f"| {same}/{len(rows)} | {same_ref} |")
    for mode in modes:
        got = load(out, mode)
        if got is not None and got[0].get("probe"):
            print(f"- {mode}: served as {got[0]['served']}; start-up probe: {got[0]['probe']['detail']}")


def throughput(slot_counts: list[int], calls: list[dict[str, Any]], out: Path) -> None:
    """Aggregate throughput with several sequences in flight: the first call of every cell (independent requests),
    all sent at once to ``llama-server`` with S slots and plain decoding, for each S; the replies compared with
    one slot's (where several sequences share a batch, a reply can depend on its company)."""
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for call in calls:
        first.setdefault((call["arm"], call["problem"]), call)
    requests = list(first.values())
    for slots in slot_counts:
        path = out / f"throughput-{slots}.jsonl"
        if path.is_file():
            continue
        native = native_server.NativeMode(slots=slots, speculative="off")
        server = LocalServer(assemble_gguf(), threads=THREADS, log_file=out / f"throughput-{slots}.server.log",
                             native=native)
        with server, httpx.Client(timeout=3600) as client, ThreadPoolExecutor(len(requests)) as pool:
            started = time.perf_counter()
            url = server.base_url
            replies = list(pool.map(lambda call, url=url: _send(client, url, call["request"]), requests))
            wall = time.perf_counter() - started
        with path.open("w") as fh:
            fh.write(json.dumps({"slots": slots, "wall_s": wall}) + "\n")
            for call, reply in zip(requests, replies, strict=True):
                fh.write(json.dumps({"call_id": call["call_id"], **reply}) + "\n")
    print(f"| sequences in flight | wall ({len(requests)} requests) | prompt tokens / wall s | reply tokens / wall s "
          "| replies = one slot's |")
    print("|---|---|---|---|---|")
    one = load(out, "throughput-1")
    for slots in slot_counts:
        got = load(out, f"throughput-{slots}")
        if got is None:
            continue
        head, rows = got
        prompt = sum(row["usage"]["prompt_tokens"] for row in rows.values())
        reply = sum(row["usage"]["completion_tokens"] for row in rows.values())
        same = f"{sum(rows[c]['text'] == one[1][c]['text'] for c in rows)}/{len(rows)}" if one else "-"
        print(f"| {slots} | {head['wall_s']:.0f} s | {prompt / head['wall_s']:.1f} | {reply / head['wall_s']:.1f} "
              f"| {same} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modes", default="python-fresh,native-1-ngram-simple,native-1-off,native-4-ngram-simple,"
                                           "native-1-ngram-simple@reversed,native-4-off,python-reuse-64")
    parser.add_argument("--problems", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("artifacts/bench-embedded"))
    parser.add_argument("--throughput", default=None, metavar="S,S,...",
                        help="instead of the modes: aggregate throughput at these numbers of sequences in flight")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    modes = args.modes.split(",")
    calls = stored_calls(args.problems)
    if args.throughput:
        throughput([int(n) for n in args.throughput.split(",")], calls, args.out)
        return
    for mode in modes:
        if load(args.out, mode) is None:
            print(f"{time.strftime('%H:%M:%S')} {mode}: {len(calls)} calls", flush=True)
            run_mode(mode, calls, args.out)
        summary(modes, calls, args.out)


if __name__ == "__main__":
    main()
