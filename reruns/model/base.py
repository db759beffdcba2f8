"""The model boundary: a request, a response, and the one async method a provider implements."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any, Protocol


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass(frozen=True)
class SamplingParams:
    """What a request is sampled with. ``max_tokens`` None sends no completion cap: the reply ends at the
    model's end of turn, a stop string, or the model's context (the embedded server's 4096 tokens)."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int | None = 768
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 0 <= self.temperature <= 2:
            raise ValueError(f"`temperature` must be in [0, 2], got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"`top_p` must be in (0, 1], got {self.top_p}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"`max_tokens` must be at least 1 (or None: no cap), got {self.max_tokens}")


_SAMPLING_FIELDS = tuple(f.name for f in fields(SamplingParams))


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    sampling: SamplingParams
    seed: int

    def as_dict(self) -> dict[str, Any]:
        """What ``dataclasses.asdict`` gives (the fields' values are immutable: nothing to copy), in a tenth
        of its time: it is built twice for every call (the cache key and the stored request)."""
        sampling = self.sampling
        return {"messages": [{"role": m.role, "content": m.content} for m in self.messages],
                "sampling": {name: getattr(sampling, name) for name in _SAMPLING_FIELDS}, "seed": self.seed}


@dataclass(frozen=True)
class Attempt:
    """One try at a call: what happened and how long it took (retries are recorded, never hidden)."""

    outcome: str            # "ok", "http 429", "http 500", "connection error", "timeout", "malformed response"
    latency_s: float
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``, without its recursive copy (a fifth of the time; once a call)."""
        return {"outcome": self.outcome, "latency_s": self.latency_s, "detail": self.detail}


@dataclass(frozen=True)
class ChatResponse:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: tuple[Attempt, ...] = field(default_factory=tuple)


class ModelCallFailed(Exception):
    """A call that still failed after the retry budget: recorded as an ``error``, never a wrong answer."""

    def __init__(self, message: str, attempts: tuple[Attempt, ...]) -> None:
        super().__init__(message)
        self.attempts = attempts


class ChatModel(Protocol):
    """A chat-completions endpoint. ``identity`` and ``endpoint`` enter every cache key."""

    @property
    def identity(self) -> str: ...

    @property
    def endpoint(self) -> str: ...

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


def cache_key(model_identity: str, endpoint: str, request: ChatRequest, repeat: int) -> str:
    """Model identity, endpoint identity, the full message list, every sampling parameter, the seed and
    the repeat index — never the prompt alone."""
    payload = json.dumps({"model": model_identity, "endpoint": endpoint, "repeat": repeat, **request.as_dict()},
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()
