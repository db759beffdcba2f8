"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp's server, Ollama, ...): the
``http://`` and ``https://`` back-ends, and the client the ``local``, ``gguf:`` and ``loopback`` ones use.

Each call goes through the shared retry wrapper (:mod:`.retry`): HTTP 429, 5xx, connection errors, timeouts
and malformed responses are tried again within the policy's tries and seconds; every try is recorded in the
response (or in the ``ModelCallFailed`` it raises), so a retried call is visible in the store.
"""

from __future__ import annotations

import os
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import httpx

from sotacheck.core.errors import SotacheckError, UsageError
from sotacheck.reruns.model.base import ChatRequest, ChatResponse, ModelCallFailed
from sotacheck.reruns.model.http_pool import ClientShards
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
    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY",
                 retry: RetryPolicy | None = None, max_connections: int = 64,
                 endpoint_identity: str | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"`base_url` must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.retry = retry or RetryPolicy()
        # What enters the cache key: the URL, unless the caller names something more stable (the embedded
        # server's port changes every start; its GGUF hash does not).
        self._endpoint_identity = endpoint_identity or self.base_url
        key = os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._clients = ClientShards(max_connections, headers=headers, timeout=self.retry.timeout_s)
        self._random = random.Random(0)

    @property
    def identity(self) -> str:
        return self.model

    @property
    def endpoint(self) -> str:
        return self._endpoint_identity

    async def preflight(self, tries: int = 3) -> None:
        """Before any call: the endpoint answers ``GET /models`` and, when it lists models, serves ours."""

        async def list_models() -> httpx.Response:
            try:
                async with self._clients.client() as client:
                    return await client.get(f"{self.base_url}/models", timeout=10)
            except httpx.HTTPError as exc:
                raise TryFailed("connection error", str(exc) or type(exc).__name__, retryable=True) from None

        try:
            policy = replace(_PREFLIGHT, max_tries=tries)
            response = (await with_retries(list_models, policy, self._random, self.base_url)).value
        except ModelCallFailed as exc:
            raise SotacheckError(f"cannot reach the model endpoint {self.base_url} ({exc.attempts[-1].detail}); "
                                 "no call was made") from None
        if response.status_code == 404:
            return  # an endpoint without a model list: nothing to check
        if response.status_code != 200:
            raise SotacheckError(f"the model endpoint {self.base_url} answered GET /models with HTTP "
                                 f"{response.status_code}: {response.text[:200]}")
        try:
            served = [m["id"] for m in response.json().get("data", [])]
        except (ValueError, KeyError, TypeError, AttributeError):
            return
        if served and self.model not in served:
            raise SotacheckError(f"the model endpoint {self.base_url} does not serve model {self.model!r}; "
                                 f"it serves: {', '.join(served)}")

    async def close(self) -> None:
        await self._clients.aclose()

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
        retried = await with_retries(lambda: self._try(payload), self.retry, self._random, self.base_url)
        text, finish, prompt_tokens, completion_tokens = retried.value
        return ChatResponse(text, finish, prompt_tokens, completion_tokens, retried.elapsed_s, retried.attempts)

    async def _try(self, payload: dict[str, Any]) -> tuple[str, str | None, int, int]:
        """One POST; a failure says whether another try may help (429, 5xx, transport, malformed: yes)."""
        try:
            async with self._clients.client() as client:
                response = await client.post(f"{self.base_url}/chat/completions", json=payload)
        except httpx.TimeoutException as exc:
            raise TryFailed("timeout", str(exc) or type(exc).__name__, retryable=True) from None
        except httpx.TransportError as exc:
            raise TryFailed("connection error", str(exc) or type(exc).__name__, retryable=True) from None
        if response.status_code == 429 or response.status_code >= 500:
            raise TryFailed(f"http {response.status_code}", response.text[:200], retryable=True)
        if response.status_code >= 400:
            raise TryFailed(f"http {response.status_code}", response.text[:300], retryable=False)
        try:
            return _parse(response.json())
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise TryFailed("malformed response", f"{type(exc).__name__}: {exc}", retryable=True) from None


def _parse(body: Any) -> tuple[str, str | None, int, int]:
    choice = body["choices"][0]
    text = choice["message"]["content"]
    if not isinstance(text, str):
        raise TypeError("message.content is not a string")
    usage = body.get("usage") or {}
    return text, choice.get("finish_reason"), int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
