"""Model back-ends, keyed by the scheme of the model a run names (``--model``):

========== ===================================================== =======================================
scheme     model                                                 provider (imported on first use)
========== ===================================================== =======================================
local      the embedded Qwen2.5-Coder-0.5B GGUF, served locally  :func:`.local.open_local`
gguf       ``gguf:PATH``: any GGUF file, served locally          :func:`.local.open_gguf`
http(s)    an OpenAI-compatible endpoint URL (needs a name)      :func:`.openai_compat.open_openai_compatible`
replay     no model: every call must be found in the store       :func:`.replay.open_replay`
loopback   a scripted endpoint on 127.0.0.1, for tests           :func:`.loopback.open_loopback`
========== ===================================================== =======================================

A back-end is one async context manager taking a :class:`ModelTarget` and yielding a ``ChatModel``; adding
one is a provider file plus a line in ``BACKENDS`` (a lazy :class:`~sotacheck.core.registry.Registry`, like
every other kind of plug-in). The endpoint identity a back-end gives its model enters
every cache key, so a provider must keep it stable (replay compares it with the recorded one).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sotacheck.core.errors import UsageError
from sotacheck.core.registry import Entry, Registry
from sotacheck.reruns.model.base import ChatModel
from sotacheck.reruns.model.native_server import NativeMode
from sotacheck.reruns.model.retry import RetryPolicy

Opener = Callable[["ModelTarget"], AbstractAsyncContextManager[ChatModel]]


def _checked(scheme: str, found: Any) -> Opener:
    if not callable(found):
        raise TypeError(f"model back-end {scheme!r} must be registered to an opener (a callable), not {found!r}")
    opener: Opener = found
    return opener


_HERE = "sotacheck.reruns.model"
# scheme -> the provider's opener (its module imported when a run first opens a model of that scheme)
BACKENDS: Registry[Opener] = Registry("model back-end", {
    "local": Entry(f"{_HERE}.local:open_local", "the embedded Qwen2.5-Coder-0.5B GGUF, served locally"),
    "gguf": Entry(f"{_HERE}.local:open_gguf", "gguf:PATH: any GGUF file, served locally"),
    "http": Entry(f"{_HERE}.openai_compat:open_openai_compatible", "an OpenAI-compatible endpoint URL"),
    "https": Entry(f"{_HERE}.openai_compat:open_openai_compatible", "an OpenAI-compatible endpoint URL"),
    "replay": Entry(f"{_HERE}.replay:open_replay", "no model: every call must be found in the store"),
    "loopback": Entry(f"{_HERE}.loopback:open_loopback", "a scripted endpoint on 127.0.0.1, for tests"),
}, check=_checked)
# how the unknown-scheme message spells a scheme (None: said by another's spelling); the rest by their name
_SPELLING: dict[str, str | None] = {"gguf": "gguf:PATH", "http": "an http(s):// URL of an OpenAI-compatible endpoint",
                                    "https": None}
# the back-ends that serve the model in sotacheck's own llama.cpp server (whose prefix reuse a spec can set)
EMBEDDED_SCHEMES = ("local", "gguf")


@dataclass(frozen=True)
class ModelTarget:
    """What a back-end needs to open the model a run names."""

    model: str                                     # ``local``, ``gguf:PATH``, a URL, ``replay``, ``loopback``
    model_name: str | None = None                  # the name an endpoint serves the model under
    api_key_env: str = "OPENAI_API_KEY"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    server_log: Path | None = None                 # where a locally started server writes its log
    recorded_identity: tuple[str, str] | None = None  # (model, endpoint) a run recorded: what replay serves as
    dataset: str | None = None                     # the run's dataset and data directory (the loopback's answers)
    data_dir: str | None = None
    prefix_reuse: int = 0                          # the embedded server's prefix reuse (0: fresh evaluation)
    native: NativeMode | None = None               # the embedded model in llama.cpp's llama-server, in this mode
    hub_id: str | None = None                      # the run's hub dataset, where it reads one


def scheme_of(model: str) -> str:
    """``gguf:/m.gguf`` → ``gguf``, ``https://api.example/v1`` → ``https``, ``local`` → ``local``."""
    return model.partition(":")[0]


def backend(model: str) -> Opener:
    """The opener for ``model``; an unknown scheme is a one-line error listing the known ones."""
    scheme = scheme_of(model)
    if scheme not in BACKENDS:
        spelled = [spelling for name in BACKENDS if (spelling := _SPELLING.get(name, name))]
        raise UsageError(f"--model {model!r}: expected {', '.join(spelled[:-1])} or {spelled[-1]}")
    return BACKENDS.get(scheme)


def open_model(target: ModelTarget) -> AbstractAsyncContextManager[ChatModel]:
    """``async with open_model(target) as model:`` the model ``target`` names, closed (its server stopped)
    at the end of the block."""
    return backend(target.model)(target)
