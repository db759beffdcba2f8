"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp's server, Ollama, ...): the
``http://`` and ``https://`` back-ends, and the client the ``local``, ``gguf:`` and ``loopback`` ones use.

Each call goes through the shared retry wrapper (:mod:`.retry`): HTTP 429, 5xx, connection errors, timeouts
and malformed responses are tried again within the policy's tries and seconds; every try is recorded in the
response (or in the ``ModelCallFailed`` it raises), so a retried call is visible in the store.

The HTTP client is aiohttp's: the harness sends every model call through it, and per request it costs a fifth
to a sixth of the CPU of httpx's pooled client (0.13–0.19 against 0.82–0.94 ms, bench/RESULTS.md,
"Harness"), which on a small machine is time taken from the judge. vLLM's own serving benchmark drives
endpoints the same way. The environment's proxy (``HTTP_PROXY``/``HTTPS_PROXY``, ``NO_PROXY``) is looked up
once per client, not by aiohttp's ``trust_env`` per request: that also reads ``~/.netrc`` each time, in the
event loop's default executor, so a busy executor held up every call.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import aiohttp

from sotacheck.core.errors import SotacheckError, UsageError
from sotacheck.reruns.model.base import ChatRequest, ChatResponse, ModelCallFailed
from sotacheck.reruns.model.retry import RetryPolicy, TryFailed, with_retries

if TYPE_CHECKING:
    from sotacheck.reruns.model.registry import ModelTarget

# Reaching the endpoint before the run: a few tries, 0.5 s, 1 s, ... apart, no jitter.
_PREFLIGHT = RetryPolicy(max_tries=3, base_delay_s=0.5, jitter=False, budget_s=60.0)


@asynccontextmanager
async def open_openai_compatible(target: ModelTarget) -> AsyncIterator[OpenAICompatibleModel]:
    """The back-end for an ``http(s)://`` URL: checked with ``GET /models`` before any call."""
    if not target.model_name:
        raise UsageError("an OpenAI-compatible --model URL needs --model-name")
    model = OpenAICompatibleModel(target.model, target.model_name, api_key_env=target.api_key_env, retry=target.retry)
    try:
        await model.preflight()
        yield model
    finally:
        await model.close()


class OpenAICompatibleModel:
    """``max_in_flight``: the most requests the endpoint serves at once (the embedded server: one), when it
    is known. Calls beyond it wait here, before their first try, so the request timeout counts the time the
    endpoint spends on a request, never a queue behind other requests; ``None``: no limit here."""

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY",
                 retry: RetryPolicy | None = None, max_connections: int = 64,
                 endpoint_identity: str | None = None, max_in_flight: int | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"`base_url` must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.retry = retry or RetryPolicy()
        # What enters the cache key: the URL, unless the caller names something more stable (the embedded
        # server's port changes every start; its GGUF hash does not).
        self._endpoint_identity = endpoint_identity or self.base_url
        if max_connections < 1:
            raise ValueError(f"`max_connections` must be at least 1, got {max_connections}")
        key = os.environ.get(api_key_env, "")
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None  # made inside the event loop that first uses it
        self._session_loop: asyncio.AbstractEventLoop | None = None
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(f"`max_in_flight` must be at least 1 or None, got {max_in_flight}")
        self.max_in_flight = max_in_flight
        self._in_flight: asyncio.Semaphore | None = None
        self._random = random.Random(0)
        self._proxy = environment_proxy(self.base_url)

    @property
    def identity(self) -> str:
        return self.model

    @property
    def endpoint(self) -> str:
        return self._endpoint_identity

    def _client(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._session_loop is not loop:
            self._session_loop = loop
            self._session = aiohttp.ClientSession(
                headers=self._headers, timeout=aiohttp.ClientTimeout(total=self.retry.timeout_s),
                connector=aiohttp.TCPConnector(limit=self._max_connections))
        return self._session

    async def _request(self, method: str, path: str, timeout_s: float | None = None,
                       body: dict[str, Any] | None = None) -> _Reply:
        """One HTTP request; a transport failure or a timeout is a retryable :class:`TryFailed`."""
        options: dict[str, Any] = {} if timeout_s is None else {"timeout": aiohttp.ClientTimeout(total=timeout_s)}
        try:
            async with self._client().request(method, f"{self.base_url}{path}", json=body, proxy=self._proxy,
                                              **options) as response:
                return _Reply(response.status, await response.read())
        except TimeoutError as exc:
            raise TryFailed("timeout", str(exc) or f"no reply within {timeout_s or self.retry.timeout_s:g} s",
                            retryable=True) from None
        except aiohttp.ClientError as exc:
            raise TryFailed("connection error", str(exc) or type(exc).__name__, retryable=True) from None

    async def preflight(self, tries: int = 3) -> None:
        """Before any call: the endpoint answers ``GET /models`` and, when it lists models, serves ours."""
        try:
            policy = replace(_PREFLIGHT, max_tries=tries)
            response = (await with_retries(lambda: self._request("GET", "/models", timeout_s=10), policy,
                                           self._random, self.base_url)).value
        except ModelCallFailed as exc:
            raise SotacheckError(f"cannot reach the model endpoint {self.base_url} ({exc.attempts[-1].detail}); "
                                 "no call was made") from None
        if response.status == 404:
            return  # an endpoint without a model list: nothing to check
        if response.status != 200:
            raise SotacheckError(f"the model endpoint {self.base_url} answered GET /models with HTTP "
                                 f"{response.status}: {response.text[:200]}")
        try:
            served = [m["id"] for m in json.loads(response.body).get("data", [])]
        except (ValueError, KeyError, TypeError, AttributeError):
            return
        if served and self.model not in served:
            raise SotacheckError(f"the model endpoint {self.base_url} does not serve model {self.model!r}; "
                                 f"it serves: {', '.join(served)}")

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    def _payload(self, request: ChatRequest) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model, "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.sampling.temperature, "top_p": request.sampling.top_p, "seed": request.seed,
        }
        if request.sampling.max_tokens is not None:  # none: the endpoint's own limit (OpenAI's default)
            payload["max_tokens"] = request.sampling.max_tokens
        if request.sampling.stop:
            payload["stop"] = list(request.sampling.stop)
        return payload

    async def complete(self, request: ChatRequest) -> ChatResponse:
        payload = self._payload(request)
        if self.max_in_flight is not None and self._in_flight is None:  # made inside the event loop that uses it
            self._in_flight = asyncio.Semaphore(self.max_in_flight)
        async with self._in_flight or nullcontext():
            retried = await with_retries(lambda: self._try(payload), self.retry, self._random, self.base_url)
        text, finish, prompt_tokens, completion_tokens = retried.value
        return ChatResponse(text, finish, prompt_tokens, completion_tokens, retried.elapsed_s, retried.attempts)

    async def _try(self, payload: dict[str, Any]) -> tuple[str, str | None, int, int]:
        """One POST; a failure says whether another try may help (429, 5xx, transport, malformed: yes)."""
        response = await self._request("POST", "/chat/completions", body=payload)
        if response.status == 429 or response.status >= 500:
            raise TryFailed(f"http {response.status}", response.text[:200], retryable=True)
        if response.status >= 400:
            raise TryFailed(f"http {response.status}", response.text[:300], retryable=False)
        try:
            return _parse(json.loads(response.body))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise TryFailed("malformed response", f"{type(exc).__name__}: {exc}", retryable=True) from None


def environment_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url``: ``HTTP_PROXY`` or ``HTTPS_PROXY`` by its scheme (either
    case), none when ``NO_PROXY`` covers its host; as httpx and aiohttp read them."""
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # public, not in typeshed
    if parts.hostname is None or bypass(parts.hostname, proxies):
        return None
    return proxies.get(parts.scheme)


@dataclass(frozen=True)
class _Reply:
    status: int
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def _parse(body: Any) -> tuple[str, str | None, int, int]:
    choice = body["choices"][0]
    text = choice["message"]["content"]
    if not isinstance(text, str):
        raise TypeError("message.content is not a string")
    usage = body.get("usage") or {}
    return text, choice.get("finish_reason"), int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
