"""The harness against the real embedded model (llama.cpp server, Qwen2.5-Coder-0.5B), with a loopback proxy
in front of it that counts requests and injects faults. Needs `make setup` (the `local` extra).

Stock llama-cpp-python reuses the KV cache of the previous request's common prefix, and a prompt evaluated
in a different batch shape can change a greedy token, so the same request could get a different reply
after a different predecessor. The embedded server (``reruns.model._llama_server``) evaluates every prompt
from an empty cache; the first test checks that a reply no longer depends on the request before it. The
trials still start a fresh server each and run one call at a time, as a user's run would."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from sotacheck.reruns.model.local import LocalServer, assemble_gguf
from sotacheck.reruns.model.loopback import LoopbackServer

from .test_harness_recovery import assert_nothing_lost_or_duplicated, cli, outcomes

pytestmark = [pytest.mark.slow, pytest.mark.model,
              pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="the embedded model needs the `local` extra (make setup)")]
LIMIT = 2


@pytest.fixture()
def real_server() -> Iterator[LocalServer]:
    with LocalServer(assemble_gguf()) as server:
        yield server


def args(url: str, out: Path, *extra: str, pipelines: str = "direct") -> list[str]:
    return ["rerun", "--dataset", "humaneval", "--pipelines", pipelines, "--model", url, "--model-name",
            "qwen2.5-coder-0.5b-instruct-q4_k_m", "--limit", str(LIMIT), "--seed", "7", "--max-tokens", "256",
            "--concurrency", "1", "--out", str(out), *extra]


def test_reply_does_not_depend_on_the_request_before_it(real_server) -> None:
    import httpx

    system = "You are a careful Python programmer. Answer with one Python code block."
    question = "Write a function is_palindrome(s: str) -> bool that ignores case and spaces."

    def ask(user: str) -> str:
        body = {"model": real_server.model_alias, "temperature": 0, "max_tokens": 64, "seed": 11,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        reply = httpx.post(f"{real_server.base_url}/chat/completions", json=body, timeout=300).json()
        return str(reply["choices"][0]["message"]["content"])

    first = ask(question)
    ask(question + " Also explain the algorithm in detail.")  # shares the whole question as a prefix
    after_long_prefix = ask(question)
    ask("Write a haiku about rivers.")  # shares only the system prompt
    after_short_prefix = ask(question)
    assert first == after_long_prefix == after_short_prefix


@pytest.fixture(scope="module")
def real_reference(tmp_path_factory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("real") / "ref"
    with LocalServer(assemble_gguf()) as server, LoopbackServer(upstream=server.base_url) as proxy:
        done = cli(args(proxy.base_url, out))
    assert done.returncode == 0, done.stderr
    return outcomes(out)


@pytest.mark.parametrize("crash_at", ["before_send:2", "after_receive:1", "during_outcome_write:2"])
def test_sigkill_and_resume_against_the_real_server(real_server, real_reference, tmp_path, crash_at) -> None:
    out = tmp_path / "run"
    with LoopbackServer(upstream=real_server.base_url) as proxy:
        crashed = cli(args(proxy.base_url, out), crash_at=crash_at)
        assert crashed.returncode == -9, crashed.stderr[-300:]
        resumed = cli(["resume", str(out)])
        assert resumed.returncode == 0, resumed.stderr
        assert_nothing_lost_or_duplicated(out, real_reference, proxy)


def test_faults_in_front_of_the_real_server(real_server, tmp_path) -> None:
    out = tmp_path / "run"
    faults: list[str | None] = ["429", "500", None, "reset", "malformed", None, "stall", None]
    with LoopbackServer(upstream=real_server.base_url, faults=faults, stall_s=25) as proxy:
        done = cli(args(proxy.base_url, out, "--request-timeout", "20", "--max-tries", "6", pipelines="direct,cot"))
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out / "outcomes.csv")
    assert len(table) == 2 * LIMIT and set(table["status"]) <= {"passed", "failed", "error"}
    with sqlite3.connect(out / "store.sqlite") as db:
        attempts = [json.loads(a) for (a,) in db.execute("SELECT attempts FROM calls WHERE attempts IS NOT NULL")]
        states = dict(db.execute("SELECT state, COUNT(*) FROM calls GROUP BY state").fetchall())
    seen = {a["outcome"] for call in attempts for a in call}
    assert {"http 429", "http 500", "connection error", "malformed response", "timeout"} <= seen
    assert sum(states.values()) == 2 * LIMIT  # one record per call, none lost, none duplicated
