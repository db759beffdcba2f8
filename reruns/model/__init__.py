"""The model boundary (``sotacheck.reruns.model``): the chat-model protocol and its requests and replies
(``base``), model recipes and the registry of endpoint schemes, the embedded llama.cpp server (``local``),
retries.

The public modules are ``__all__`` (``docs/python-api.md`` lists them), imported on first use. The others
(``loopback``, ``openai_compat``, ``parent_watch``, ``replay``) are reached through ``registry``;
``native_server`` is llama.cpp's ``llama-server`` as the embedded model's other engine (``local`` starts it);
``_llama_server`` and ``_native_server_watch`` (the watch around ``native_server``'s binary) are the embedded
servers' child processes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.lazy import lazy_submodules

if TYPE_CHECKING:
    from sotacheck.reruns.model import base, local, recipe, registry, retry

__all__ = ["base", "local", "recipe", "registry", "retry"]

__getattr__ = lazy_submodules(__name__, __all__)
