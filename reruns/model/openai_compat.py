"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp's server, Ollama, ...).

Retries with exponential backoff and full jitter on HTTP 429, 5xx, connection errors, timeouts and
malformed responses, within a budget of tries and seconds; every try is recorded in the response (or in
the ``ModelCallFailed`` it raises), so a retried call is visible in the store.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass
from typing import Any

import httpx

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.model.base import Attempt, ChatRequest, ChatResponse, ModelCallFailed


@dataclass(frozen=True)
class RetryPolicy:
    max_tries: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    budget_s: float = 120.0
    timeout_s: float = 300.0


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
        self._client = httpx.AsyncClient(headers=headers, timeout=self.retry.timeout_s,
                                         limits=httpx.Limits(max_connections=max_connections))
        self._random = random.Random(0)

    @property
    def identity(self) -> str:
        return self.model

    @property
    def endpoint(self) -> str:
        return self._endpoint_identity

    async def preflight(self, tries: int = 3) -> None:
        """Before any call: the endpoint answers ``GET /models`` and, when it lists models, serves ours."""
        last = ""
        for attempt in range(tries):
            try:
                response = await self._client.get(f"{self.base_url}/models", timeout=10)
            except httpx.HTTPError as exc:
                last = str(exc) or type(exc).__name__
                await asyncio.sleep(0.5 * 2**attempt)
                continue
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
            return
        raise SotacheckError(f"cannot reach the model endpoint {self.base_url} ({last}); no call was made")

    async def close(self) -> None:
        await self._client.aclose()

    def _payload(self, request: ChatRequest) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model, "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.sampling.temperature, "top_p": request.sampling.top_p,
            "max_tokens": request.sampling.max_tokens, "seed": request.seed,
        }
        if request.sampling.stop:
            payload["stop"] = list(request.sampling.stop)
        return payload

    async def complete(self, request: ChatRequest) -> ChatResponse:
        attempts: list[Attempt] = []
        started = time.monotonic()
        for attempt in range(self.retry.max_tries):
            t0 = time.monotonic()
            outcome, detail, retryable = "ok", "", False
            try:
                response = await self._client.post(f"{self.base_url}/chat/completions", json=self._payload(request))
            except httpx.TimeoutException as exc:
                outcome, detail, retryable = "timeout", str(exc) or type(exc).__name__, True
            except httpx.TransportError as exc:
                outcome, detail, retryable = "connection error", str(exc) or type(exc).__name__, True
            else:
                if response.status_code == 429 or response.status_code >= 500:
                    outcome, detail, retryable = f"http {response.status_code}", response.text[:200], True
                elif response.status_code >= 400:
                    outcome, detail = f"http {response.status_code}", response.text[:300]
                else:
                    try:
                        parsed = _parse(response.json())
                    except (ValueError, KeyError, IndexError, TypeError) as exc:
                        outcome, detail, retryable = "malformed response", f"{type(exc).__name__}: {exc}", True
                    else:
                        text, finish, prompt_tokens, completion_tokens = parsed
                        attempts.append(Attempt("ok", time.monotonic() - t0))
                        return ChatResponse(text, finish, prompt_tokens, completion_tokens,
                                            time.monotonic() - started, tuple(attempts))
            attempts.append(Attempt(outcome, time.monotonic() - t0, detail))
            elapsed = time.monotonic() - started
            if not retryable or attempt == self.retry.max_tries - 1 or elapsed >= self.retry.budget_s:
                break
            delay = self._random.uniform(0, min(self.retry.max_delay_s, self.retry.base_delay_s * 2 ** attempt))
            await asyncio.sleep(min(delay, max(0.0, self.retry.budget_s - elapsed)))
        last = attempts[-1]
        raise ModelCallFailed(f"{self.base_url}: {last.outcome} after {len(attempts)} tr"
                              f"{'y' if len(attempts) == 1 else 'ies'}: {last.detail[:200]}", tuple(attempts))


def _parse(body: Any) -> tuple[str, str | None, int, int]:
    choice = body["choices"][0]
    text = choice["message"]["content"]
    if not isinstance(text, str):
        raise TypeError("message.content is not a string")
    usage = body.get("usage") or {}
    return text, choice.get("finish_reason"), int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
