"""The embedded model's server: llama-cpp-python's OpenAI-compatible server with prompt-prefix reuse off.

Stock ``Llama.generate`` keeps the previous request's KV cache and evaluates only the part of the new
prompt after the longest common prefix. The logits then depend on how the prompt was split between the
two evaluations, so at temperature 0 the same request can get a different reply after a different
predecessor — a run's replies would depend on the order its cells happened to reach the server. Here
every request is evaluated from an empty cache, so a reply is a function of its request alone (at the
cost of re-evaluating shared prefixes).
Run as ``python -m sotacheck.reruns.model._llama_server`` with the stock server's arguments. The server exits when
the process that started it is gone (killed with SIGKILL, say), instead of holding both cores for ever.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import llama_cpp
from llama_cpp.server.__main__ import main

from sotacheck.reruns.model.parent_watch import exit_with_parent

_stock_generate = llama_cpp.Llama.generate


def _generate_from_empty_cache(self: llama_cpp.Llama, tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
    self.n_tokens = 0  # no cached prefix: the stock code resets and evaluates the whole prompt
    yield from _stock_generate(self, tokens, *args, **kwargs)


llama_cpp.Llama.generate = _generate_from_empty_cache  # type: ignore[method-assign,assignment]


if __name__ == "__main__":
    threading.Thread(target=exit_with_parent, args=(os.getppid(),), daemon=True, name="parent-watch").start()
    main()
