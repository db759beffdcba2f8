"""The embedded model's server: llama-cpp-python's OpenAI-compatible server, with prompt-prefix reuse that
cannot change a reply.

Stock ``Llama.generate`` keeps the previous request's KV cache and evaluates only the part of the new
prompt after the longest common prefix. The logits then depend on how the prompt was split between the
two evaluations (ggml computes a batch's rows in tiles; rows in a partial tile take another path), so at
temperature 0 the same request can get a different reply after a different predecessor — a run's replies
would depend on the order its cells happened to reach the server.

Two modes, chosen by ``SOTACHECK_PREFIX_REUSE`` (set by ``reruns.model.local.LocalServer``):

- ``0`` (or unset): every request is evaluated from an empty cache, so a reply is a function of its
  request alone, at the cost of re-evaluating shared prefixes.
- ``A`` > 0: the cached prefix is kept only up to a multiple of ``A`` tokens (and never the whole prompt),
  so the rest of the prompt is evaluated in batches that start at a multiple of ``A``, on the same cache
  contents a fresh evaluation would have there. With ``A`` a multiple of ggml's row tile, every row then
  falls in the same tile position as in a fresh evaluation; ``tests/reruns/model/test_prefix_reuse.py`` and
  ``bench/bench_prefix_reuse.py`` check the logits and the replies against fresh evaluation.

Run as ``python -P -m sotacheck.reruns.model._llama_server`` with the stock server's arguments, by
``local.LocalServer``: a child process's module, hence the leading underscore (docs/design.md, "One meaning
per name"). The server exits when the process that started it is gone (killed with SIGKILL, say), instead of
holding both cores for ever.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import llama_cpp  # pyright: ignore[reportMissingImports]  (the `local` extra, not in `make setup-core`)
from llama_cpp.server.__main__ import main  # pyright: ignore[reportMissingImports]

from sotacheck.reruns.model.parent_watch import exit_with_parent

_stock_generate = llama_cpp.Llama.generate
ALIGN = int(os.environ.get("SOTACHECK_PREFIX_REUSE", "0") or 0)


def reusable_prefix(cached: Sequence[int], prompt: Sequence[int], align: int) -> int:
    """How many leading tokens of ``prompt`` may be taken from a cache holding ``cached``: the common
    prefix, rounded down to a multiple of ``align``, and short of the whole prompt (its last token must be
    evaluated to give the logits the first reply token is sampled from). 0 when ``align`` is 0."""
    if align <= 0:
        return 0
    common = 0
    for a, b in zip(cached, prompt, strict=False):
        if a != b:
            break
        common += 1
    return (min(common, len(prompt) - 1) // align) * align


def _generate_with_aligned_reuse(self: llama_cpp.Llama, tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
    # The stock code reuses the longest common prefix of what it holds (the first n_tokens tokens) and the
    # prompt; holding only the aligned prefix makes that its choice. 0 resets and evaluates the whole prompt.
    self.n_tokens = reusable_prefix(self._input_ids.tolist(), list(tokens), ALIGN)
    yield from _stock_generate(self, tokens, *args, **kwargs)


llama_cpp.Llama.generate = _generate_with_aligned_reuse  # type: ignore[method-assign,assignment]


if __name__ == "__main__":
    threading.Thread(target=exit_with_parent, args=(os.getppid(),), daemon=True, name="parent-watch").start()
    # in the server's log: which way this server evaluated prompts
    print(f"sotacheck: prompt evaluation: {f'aligned prefix reuse, {ALIGN} tokens' if ALIGN else 'fresh'}",
          file=sys.stderr, flush=True)
    main()
