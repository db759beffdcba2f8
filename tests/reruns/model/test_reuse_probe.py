"""The start-up probe of llama-server's aligned prefix reuse (``reruns/model/reuse_probe.py``) and the server's
fall-back (``LocalServer.start``), against a scripted stand-in for the binary that reuses prefixes the way it is
told (aligned and exact; unaligned, as the stock server; aligned but with changed log-probabilities). With the
real binary and model, the probe passes and a reply served with reuse equals the same request evaluated afresh."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest

from sotacheck.reruns.model import native_server
from sotacheck.reruns.model.local import LocalServer, assemble_gguf, server_mode
from sotacheck.reruns.model.native_server import NativeMode
from sotacheck.reruns.model.reuse_probe import PROMPT_A, PROMPT_B, probe

# A stand-in for llama-server: tokens are characters; the slot keeps every prompt it saw (the saved prompts);
# FAKE_REUSE says how a cached prefix is reused (aligned-exact, stock, aligned-inexact) when the patched
# server's switch is set, and the reply's log-probabilities carry a mark when the prompt was partly reused
# inexactly.
FAKE = r'''
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port = int(sys.argv[sys.argv.index("--port") + 1])
aligned = "SOTACHECK_ALIGNED_REUSE" in os.environ
cache_on = "--no-cache-prompt" not in sys.argv
kind = os.environ.get("FAKE_REUSE", "aligned-exact")
seen = []
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\n")

def common(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send({"data": [{"id": "fake"}]})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/tokenize":
            return self.send({"tokens": [ord(c) for c in request["content"]]})
        prompt = request["prompt"]
        cached = 0
        if cache_on and request.get("cache_prompt", True):
            cached = max([common(p, prompt) for p in seen] + [0])
            if aligned and kind != "stock":
                cached -= cached % 512
        seen.append(prompt)
        mark = 0.125 if cached and kind == "aligned-inexact" else 0.0
        probs = [{"id": i, "logprob": -0.5 - i - mark, "top_logprobs": [{"id": i, "logprob": -0.5 - i - mark}]}
                 for i in range(request["n_predict"])]
        self.send({"content": "x" * request["n_predict"], "completion_probabilities": probs,
                   "timings": {"cache_n": cached}})

ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''


@pytest.fixture
def fake(tmp_path, monkeypatch) -> Path:
    binary = tmp_path / "llama-server"
    binary.write_text(f"#!{sys.executable}\n{FAKE}")
    binary.chmod(0o755)
    monkeypatch.setenv("SOTACHECK_LLAMA_SERVER", str(binary))
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "argv.log"))
    return tmp_path


def test_the_probes_prompts_share_more_than_a_micro_batch_but_not_a_multiple_of_it() -> None:
    shared = next(i for i, (a, b) in enumerate(zip(PROMPT_A, PROMPT_B, strict=False)) if a != b)
    assert shared > 512 and shared % 512  # in characters here; the real probe counts the server's tokens


def test_aligned_exact_reuse_is_kept(fake) -> None:
    with LocalServer(Path("m.gguf"), threads=1, native=NativeMode(1, "ngram-simple", 512),
                     log_file=fake / "server.log") as server:
        assert server.probe_result is not None and server.probe_result.exact, server.probe_result
        assert server.native == NativeMode(1, "ngram-simple", 512)
        assert server_mode(0, server.native).endswith(":aligned-prefix-reuse-512")
    assert "aligned prefix reuse probe: exact" in (fake / "server.log").read_text()


@pytest.mark.parametrize(("kind", "said"), [
    ("stock", "where aligned reuse reuses"),
    ("aligned-inexact", "changed the reply's log-probabilities from token 0 on"),
])
def test_inexact_reuse_falls_back_to_fresh_evaluation(fake, monkeypatch, capfd, kind, said) -> None:
    monkeypatch.setenv("FAKE_REUSE", kind)
    with LocalServer(Path("m.gguf"), threads=1, native=NativeMode(1, "ngram-simple", 512),
                     log_file=fake / "server.log") as server:
        assert server.probe_result is not None and not server.probe_result.exact
        assert said in server.probe_result.detail
        # the server now serving is the fresh one, and the identity says so
        assert server.native == NativeMode(1, "ngram-simple")
        assert server_mode(0, server.native) == "llama-server:slots-1:spec-ngram-simple"
        assert httpx.get(f"{server.base_url}/models", timeout=5).status_code == 200
    starts = (fake / "argv.log").read_text().splitlines()
    assert len(starts) == 2 and "--no-cache-prompt" not in starts[0] and "--no-cache-prompt" in starts[1]
    assert "aligned prefix reuse probe: NOT exact" in (fake / "server.log").read_text()
    assert "aligned prefix reuse is not exact here" in capfd.readouterr().err


def test_a_server_without_log_probabilities_fails_the_probe(monkeypatch) -> None:
    shared = next(i for i, (a, b) in enumerate(zip(PROMPT_A, PROMPT_B, strict=False)) if a != b)

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.read())
        if request.url.path == "/tokenize":
            return httpx.Response(200, json={"tokens": [ord(c) for c in body["content"]]})
        cached = shared - shared % 512 if body["prompt"] == PROMPT_B and body["cache_prompt"] else 0
        return httpx.Response(200, json={"content": "", "timings": {"cache_n": cached}})

    monkeypatch.setattr(httpx, "Client", _with_transport(httpx.MockTransport(handler)))
    result = probe("http://fake", 512)
    assert not result.exact and result.detail == "the server returned no log-probabilities to compare"


def _with_transport(transport: httpx.BaseTransport) -> type[httpx.Client]:
    original = httpx.Client

    class Client(original):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: object) -> None:
            super().__init__(transport=transport, **kwargs)  # type: ignore[arg-type]

    return Client


@pytest.mark.model
def test_the_real_server_passes_its_probe() -> None:
    """On this build and CPU, aligned reuse gives the fresh evaluation's log-probabilities."""
    if not _built():
        pytest.skip("llama-server is not built (make setup-local)")
    with LocalServer(assemble_gguf(), native=NativeMode(1, "ngram-simple", 512)) as server:
        assert server.probe_result is not None and server.probe_result.exact, server.probe_result.detail


def _built() -> bool:
    try:
        native_server.binary()
    except Exception:
        return False
    return True
