"""An OpenAI-compatible endpoint for benchmarks that is not the bottleneck: one asyncio process, HTTP/1.1
keep-alive parsed by hand (no framework), answering ``POST /chat/completions`` with HumanEval's canonical
solution for the function named in the prompt (a wrong body for every third seed, as the harness tests'
``canonical_responder``), after an optional fixed latency; ``GET /models`` lists nothing (any model).
With ``--fixed-wrong`` it answers every request with one fixed wrong program (:data:`FIXED_WRONG`: it defines
no entry point, so the judge rejects it at once): the workload on which judging is cheap and the harness's
own cost per cell shows (bench_harness.py's ``cheap``).

Run as its own process (``python bench/fast_endpoint.py --port 0 --latency-ms 20``): it prints
``listening PORT`` on stdout, and on SIGTERM ``served N requests in S s`` with its own busy time, so a
bench can show that the endpoint was never the limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.model.loopback import canonical_responder

FIXED_WRONG = "```python\ndef f(*a):\n    return None\n```"
"""The one reply of ``--fixed-wrong``: a fenced program that defines ``f``, never the function asked for."""


class Endpoint:
    def __init__(self, latency_s: float, fixed_wrong: bool = False) -> None:
        if fixed_wrong:
            self.respond = lambda request: FIXED_WRONG
        else:
            problems = load_dataset("humaneval").problems
            self.respond = canonical_responder({p.entry_point: p.prompt + (p.canonical_solution or "")
                                                for p in problems})
        self.latency_s = latency_s
        self.served = 0
        self.busy_s = 0.0  # CPU-side time spent parsing and answering (the latency sleep excluded)
        self.first: float | None = None
        self.last = 0.0

    def answer(self, method: bytes, body: bytes) -> bytes:
        started = time.perf_counter()
        if method == b"GET":
            payload = b'{"object": "list", "data": []}'
        else:
            request = json.loads(body)
            text = self.respond(request)
            payload = json.dumps({"id": "bench", "object": "chat.completion", "model": request.get("model"),
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                               "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": len(text) // 4}
                                  }).encode()
            self.served += 1
        self.busy_s += time.perf_counter() - started
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(payload)).encode() + b"\r\n\r\n" + payload)

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method = head.split(b" ", 1)[0]
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                now = time.perf_counter()
                self.first = self.first if self.first is not None else now
                if self.latency_s and method == b"POST":
                    await asyncio.sleep(self.latency_s)
                writer.write(self.answer(method, body))
                await writer.drain()
                self.last = time.perf_counter()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def serve(port: int, latency_s: float, fixed_wrong: bool = False) -> None:
    endpoint = Endpoint(latency_s, fixed_wrong)
    server = await asyncio.start_server(endpoint.connection, "127.0.0.1", port, backlog=1024)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    server.close()
    span = (endpoint.last - endpoint.first) if endpoint.first is not None else 0.0
    print(f"served {endpoint.served} requests in {span:.2f} s, {endpoint.busy_s:.2f} s of it answering "
          f"({endpoint.served / endpoint.busy_s if endpoint.busy_s else 0:.0f} requests per busy second)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--fixed-wrong", action="store_true", help="answer every request with FIXED_WRONG")
    args = parser.parse_args()
    asyncio.run(serve(args.port, args.latency_ms / 1000, args.fixed_wrong))
    sys.exit(0)


if __name__ == "__main__":
    main()
