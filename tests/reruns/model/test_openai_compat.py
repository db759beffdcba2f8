"""The OpenAI-compatible provider (``sotacheck.reruns.model.openai_compat``) and the one retry wrapper every
provider's calls go through (the registry of back-ends: ``test_registry.py``)."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.model.base import ChatRequest, Message, ModelCallFailed, SamplingParams
from sotacheck.reruns.model.loopback import LoopbackServer
from sotacheck.reruns.model.openai_compat import OpenAICompatibleModel, environment_proxy
from sotacheck.reruns.model.retry import RetryPolicy, TryFailed, with_retries

FAST = RetryPolicy(max_tries=4, base_delay_s=0.001, max_delay_s=0.002, budget_s=30.0)


def test_endpoint_identity_of_a_url_is_the_url_without_its_trailing_slash() -> None:
    model = OpenAICompatibleModel("http://127.0.0.1:8000/v1/", "m")
    assert model.endpoint == "http://127.0.0.1:8000/v1" and model.identity == "m"
    asyncio.run(model.close())
    named = OpenAICompatibleModel("http://127.0.0.1:8000/v1", "m", endpoint_identity="llama-cpp-python:gguf-sha256:x:y")
    assert named.endpoint == "llama-cpp-python:gguf-sha256:x:y"
    asyncio.run(named.close())


async def _complete(base_url: str, policy: RetryPolicy, request: ChatRequest):
    model = OpenAICompatibleModel(base_url, "m", retry=policy)
    try:
        return await model.complete(request)
    finally:
        await model.close()


def test_the_openai_provider_records_every_try_through_the_shared_wrapper() -> None:
    request = ChatRequest((Message("user", "hi"),), SamplingParams(), seed=3)
    with LoopbackServer(lambda body: "fine", faults=["429", "500", None]) as server:
        response = asyncio.run(_complete(server.base_url, FAST, request))
    assert response.text == "fine"
    assert [a.outcome for a in response.attempts] == ["http 429", "http 500", "ok"]
    with LoopbackServer(lambda body: "never", faults=["500"]) as server, \
            pytest.raises(ModelCallFailed, match=r"http 500 after 2 tries") as info:
        asyncio.run(_complete(server.base_url, RetryPolicy(max_tries=2, base_delay_s=0.001), request))
    assert [a.outcome for a in info.value.attempts] == ["http 500", "http 500"]
    assert str(info.value).startswith(f"{server.base_url}: http 500 after 2 tries: ")


def test_with_retries_stops_on_a_failure_that_cannot_succeed_and_on_the_tries() -> None:
    outcomes = iter([TryFailed("http 429", "slow down", True), TryFailed("http 400", "bad request", False)])
    calls = 0

    async def once() -> str:
        nonlocal calls
        calls += 1
        raise next(outcomes)

    with pytest.raises(ModelCallFailed, match=r"^where: http 400 after 2 tries: bad request$") as info:
        asyncio.run(with_retries(once, FAST, random.Random(0), "where"))
    assert calls == 2 and [(a.outcome, a.detail) for a in info.value.attempts] == [("http 429", "slow down"),
                                                                                  ("http 400", "bad request")]

    async def always() -> str:
        raise TryFailed("timeout", "read timed out", True)

    with pytest.raises(ModelCallFailed, match=r"^where: timeout after 1 try: read timed out$"):
        asyncio.run(with_retries(always, RetryPolicy(max_tries=1), random.Random(0), "where"))


def test_backoff_is_full_jitter_within_the_exponential_step_or_the_step_itself() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=20.0)
    rng = random.Random(0)
    assert all(0 <= policy.delay_s(k, rng) <= min(20.0, 0.5 * 2**k) for k in range(8))
    steady = RetryPolicy(base_delay_s=0.5, max_delay_s=20.0, jitter=False)
    assert [steady.delay_s(k, rng) for k in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0]


def test_resets_stalls_and_malformed_replies_are_retried_and_recorded() -> None:
    """The OpenAI client's own failures, against a loopback that injects them: a reset connection, a reply
    slower than the client's timeout and a body that is not JSON are each one recorded, retryable try."""
    request = ChatRequest((Message("user", "hi"),), SamplingParams(), seed=3)
    policy = RetryPolicy(max_tries=4, base_delay_s=0.001, timeout_s=0.5)
    with LoopbackServer(lambda body: "fine", faults=["reset", "stall", "malformed", None], stall_s=3.0) as server:
        response = asyncio.run(_complete(server.base_url, policy, request))
    assert response.text == "fine"
    assert [a.outcome for a in response.attempts] == ["connection error", "timeout", "malformed response", "ok"]


def test_an_endpoint_that_is_not_there_is_one_line_before_any_call() -> None:
    model = OpenAICompatibleModel("http://127.0.0.1:9/v1", "m", retry=RetryPolicy(max_tries=1))

    async def check() -> None:
        try:
            await model.preflight(tries=1)
        finally:
            await model.close()

    with pytest.raises(SotacheckError, match=r"^cannot reach the model endpoint http://127.0.0.1:9/v1 \(.+\); "
                                             r"no call was made$"):
        asyncio.run(check())


def test_calls_beyond_the_endpoints_slots_wait_here_and_the_timeout_counts_only_the_endpoints_time() -> None:
    """An endpoint that serves one request at a time and takes 0.4 s each: with ``max_in_flight=1`` four
    concurrent calls under a 0.6 s timeout all succeed at the first try (each waits its turn here), and the
    endpoint never holds two at once; without it, requests queued behind others at the endpoint time out."""
    request = ChatRequest((Message("user", "hi"),), SamplingParams(), seed=3)
    policy = RetryPolicy(max_tries=1, timeout_s=0.6)

    async def four(base_url: str, max_in_flight: int | None) -> list[object]:
        model = OpenAICompatibleModel(base_url, "m", retry=policy, max_in_flight=max_in_flight)
        try:
            return list(await asyncio.gather(*(model.complete(request) for _ in range(4)), return_exceptions=True))
        finally:
            await model.close()

    serial = threading.Lock()

    def one_at_a_time(body: dict[str, object]) -> str:
        with serial:
            time.sleep(0.4)
        return "fine"

    with LoopbackServer(one_at_a_time) as server:
        limited = asyncio.run(four(server.base_url, 1))
        assert server.max_in_flight == 1
        unlimited = asyncio.run(four(server.base_url, None))
    assert [r.text for r in limited] == ["fine"] * 4  # type: ignore[union-attr]
    assert [len(r.attempts) for r in limited] == [1] * 4  # type: ignore[union-attr]
    assert sum(isinstance(r, ModelCallFailed) for r in unlimited) >= 2
    with pytest.raises(ValueError, match="max_in_flight"):
        OpenAICompatibleModel("http://127.0.0.1:1/v1", "m", max_in_flight=0)


def test_calls_do_not_wait_for_the_event_loops_default_executor() -> None:
    """The default executor's threads all busy for 2 s (as the judge once kept them, behind a program that
    loops until its timeout): a model call still completes at once. aiohttp's ``trust_env`` looked up
    ``.netrc`` there on every request, so each call waited for the executor (2 s here)."""
    request = ChatRequest((Message("user", "hi"),), SamplingParams(), seed=3)

    async def call_while_the_executor_is_busy(base_url: str) -> float:
        from concurrent.futures import ThreadPoolExecutor

        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=4))
        busy = [loop.run_in_executor(None, time.sleep, 2.0) for _ in range(4)]
        model = OpenAICompatibleModel(base_url, "m", retry=RetryPolicy(max_tries=1, timeout_s=30))
        try:
            started = time.monotonic()
            response = await model.complete(request)
            assert response.text == "fine"
            return time.monotonic() - started
        finally:
            await model.close()
            await asyncio.gather(*busy)

    with LoopbackServer(lambda body: "fine") as server:
        took = asyncio.run(call_while_the_executor_is_busy(server.base_url))
    assert took < 1.0, f"the call waited {took:.2f} s for the default executor"


@pytest.mark.parametrize(("url", "environment", "proxy"), [
    ("https://api.example.com/v1", {"HTTPS_PROXY": "http://proxy:3128"}, "http://proxy:3128"),
    ("https://api.example.com/v1", {"https_proxy": "http://proxy:3128"}, "http://proxy:3128"),
    ("http://10.0.0.5:8000/v1", {"HTTPS_PROXY": "http://proxy:3128"}, None),
    ("http://10.0.0.5:8000/v1", {"HTTP_PROXY": "http://proxy:3128"}, "http://proxy:3128"),
    ("https://api.example.com/v1", {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "example.com"}, None),
    ("http://localhost:8000/v1", {"HTTP_PROXY": "http://proxy:3128", "no_proxy": "localhost,127.0.0.1"}, None),
    ("https://api.example.com/v1", {}, None),
])
def test_the_environments_proxy_is_resolved_once_per_client(monkeypatch: pytest.MonkeyPatch, url: str,
                                                            environment: dict[str, str], proxy: str | None) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert environment_proxy(url) == proxy
    assert OpenAICompatibleModel(url, "m")._proxy == proxy
