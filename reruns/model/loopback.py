"""A loopback OpenAI-compatible endpoint on 127.0.0.1, for harness tests and benchmarks.

Either it answers instantly from a ``responder`` (a scripted model: it drives control flow in tests and
measures harness throughput, never evidence that a method works), or it proxies to an ``upstream`` real
server. Either way it logs every request it receives (time, a key of messages + seed) and can inject
faults: HTTP 429 and 500, connection resets, stalls past the client's timeout, malformed JSON.

As the model back-end ``loopback`` (``--model loopback``) it answers with the run's dataset's canonical
solutions, a wrong body for every third seed (:func:`canonical_responder`).
"""

from __future__ import annotations

import hashlib
import io
import json
import socket
import struct
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import httpx

from sotacheck.core.errors import UsageError
from sotacheck.reruns.model.openai_compat import OpenAICompatibleModel

if TYPE_CHECKING:
    from sotacheck.reruns.model.registry import ModelTarget

Responder = Callable[[dict[str, Any]], str]
FAULTS = ("429", "500", "reset", "stall", "malformed")
# The back-end's endpoint identity: stable across starts (the port is not), so a resumed run reuses its calls.
LOOPBACK_ENDPOINT = "loopback:canonical:fail_every=3"


def request_key(body: dict[str, Any]) -> str:
    """The same call, whoever sends it: messages and seed."""
    payload = json.dumps({"messages": body.get("messages"), "seed": body.get("seed")}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class RequestLog:
    entries: list[tuple[float, str, str]] = field(default_factory=list)  # (time, key, outcome)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, key: str, outcome: str) -> None:
        with self.lock:
            self.entries.append((time.time(), key, outcome))

    def answered(self) -> list[tuple[float, str]]:
        with self.lock:
            return [(t, k) for t, k, outcome in self.entries if outcome == "ok"]


class LoopbackServer:
    def __init__(self, responder: Responder | None = None, upstream: str | None = None,
                 faults: list[str | None] | None = None, stall_s: float = 30.0,
                 models: tuple[str, ...] | None = None, delay_s: float = 0.0) -> None:
        if responder is None and upstream is None:
            raise ValueError("give a `responder` or an `upstream`")
        for fault in faults or []:
            if fault is not None and fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}; known: {FAULTS}")
        self.responder = responder
        self.upstream = upstream.rstrip("/") if upstream else None
        self.faults = list(faults or [])
        self.stall_s = stall_s
        self.models = models
        self.delay_s = delay_s  # seconds before each answer, as a real endpoint takes
        self.log = RequestLog()
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests it was answering at once
        self._count = 0
        self._count_lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _next_fault(self) -> str | None:
        with self._count_lock:
            index = self._count
            self._count += 1
        return self.faults[index % len(self.faults)] if self.faults else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                names = server.models or ()  # no list: any model name is accepted
                self._send(200, json.dumps({"object": "list", "data": [{"id": n} for n in names]}).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                body = json.loads(raw)
                key = request_key(body)
                if server.models is not None and body.get("model") not in server.models:
                    self._send(404, json.dumps({"error": f"model {body.get('model')!r} not found"}).encode())
                    return
                fault = server._next_fault()
                if fault == "429":
                    server.log.add(key, "429")
                    self._send(429, b'{"error": "rate limited"}')
                elif fault == "500":
                    server.log.add(key, "500")
                    self._send(500, b'{"error": "internal"}')
                elif fault == "reset":
                    server.log.add(key, "reset")
                    # SO_LINGER 0 and a close of every reference to the socket send a TCP reset.
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.rfile.close()
                    self.wfile.close()
                    self.connection.close()
                    self.wfile = io.BytesIO()  # the handler flushes wfile after us; let it flush nothing
                elif fault == "stall":
                    server.log.add(key, "stall")
                    time.sleep(server.stall_s)
                    self.close_connection = True
                elif fault == "malformed":
                    server.log.add(key, "malformed")
                    self._send(200, b'{"choices": [{"message": ')
                else:
                    with server._count_lock:
                        server.in_flight += 1
                        server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    try:
                        time.sleep(server.delay_s)
                        text, usage, finish = server._answer(body)
                    finally:
                        with server._count_lock:
                            server.in_flight -= 1
                    server.log.add(key, "ok")
                    reply = {"id": "loopback", "object": "chat.completion", "model": body.get("model"),
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                          "finish_reason": finish}], "usage": usage}
                    self._send(200, json.dumps(reply).encode())

        return Handler

    def _answer(self, body: dict[str, Any]) -> tuple[str, dict[str, int], str]:
        if self.upstream is not None:
            response = httpx.post(f"{self.upstream}/chat/completions", json=body, timeout=600)
            response.raise_for_status()
            data = response.json()
            return (data["choices"][0]["message"]["content"], data.get("usage", {}),
                    data["choices"][0].get("finish_reason", "stop"))
        assert self.responder is not None
        text = self.responder(body)
        prompt_tokens = sum(len(m["content"].split()) for m in body["messages"])
        return text, {"prompt_tokens": prompt_tokens, "completion_tokens": len(text.split())}, "stop"

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def canonical_responder(solutions: dict[str, str], fail_every: int = 3) -> Responder:
    """A scripted model for harness tests: the canonical solution for the function named in the prompt,
    except every ``fail_every``-th seed, which gets a wrong body — so outcome tables have both verdicts."""

    def respond(body: dict[str, Any]) -> str:
        text = "\n".join(m["content"] for m in body["messages"])
        for entry_point, solution in solutions.items():
            if f"def {entry_point}(" in text:
                seed = int(body.get("seed") or 0)
                code = solution if seed % fail_every else solution.replace("return", "return None and", 1)
                return f"Here you go.\n```python\n{code}\n```"
        return "I cannot help with that."

    return respond


@asynccontextmanager
async def open_loopback(target: ModelTarget) -> AsyncIterator[OpenAICompatibleModel]:
    """The back-end ``loopback``, for tests: a scripted endpoint on 127.0.0.1 for the ``with`` block."""
    from sotacheck.reruns.benchmarks.registry import load_dataset

    if target.model != "loopback":
        raise UsageError(f"--model {target.model!r}: the scripted test endpoint is named just 'loopback'")
    if target.dataset is None:
        raise UsageError("--model loopback answers from a dataset's canonical solutions: give the run's dataset")
    problems = load_dataset(target.dataset, target.data_dir, target.hub_id).problems
    responder = canonical_responder({p.entry_point: p.prompt + (p.canonical_solution or "") for p in problems})
    with LoopbackServer(responder) as server:
        model = OpenAICompatibleModel(server.base_url, target.model_name or "loopback", retry=target.retry,
                                      endpoint_identity=LOOPBACK_ENDPOINT)
        try:
            yield model
        finally:
            await model.close()
