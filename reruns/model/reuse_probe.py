"""The start-up check behind ``llama-server``'s aligned prefix reuse: does a reply whose prompt was partly taken
from the cache carry, token for token, the same log-probabilities as the same request evaluated afresh, on this
build and this CPU?

The probe sends a fixed prompt ``A`` (so the server caches it), an unrelated short prompt (so the slot is
taken by another prompt and ``A`` must come back from the server's saved prompts, as a cell's earlier call does
when other cells' requests held the slot), then ``B``, which shares with ``A`` a prefix longer than one
micro-batch but not a multiple of it, twice: with the cache, and without it (``cache_prompt: false``). It passes
when the server reused exactly the aligned part of the shared prefix (``timings.cache_n``: the patched server is
running, and reuse happened) and both replies have the same text and the same top log-probabilities at every
token, compared as the exact numbers the server printed. Log-probabilities are normalised over the whole
vocabulary, so a change in any logit of a row shows in them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

# A prefix of roughly 600 tokens of code (more than one 512-token micro-batch, not a multiple of it), and two
# different continuations; the text is arbitrary but fixed, so the probe is the same on every start.
_SHARED = "".join(f"def step_{i}(values):\n    return [v * {i} + {i * i % 7} for v in values if v % {i + 2}]\n\n"
                  for i in range(24))
PROMPT_A = _SHARED + "# Sum the steps of a list of integers.\ndef total(values):\n"
PROMPT_B = _SHARED + "# Compose every step above, in order, on a list.\ndef compose(values):\n"
PROMPT_OTHER = "Write a haiku about the sea."
REPLY_TOKENS = 24
TOP_LOGPROBS = 5


@dataclass(frozen=True)
class ProbeResult:
    """The outcome: ``exact`` when aligned reuse reproduced fresh evaluation; ``detail`` says what was seen."""

    exact: bool
    detail: str


def _complete(client: httpx.Client, prompt: str, *, cache: bool, tokens: int) -> dict[str, Any]:
    response = client.post("/completion", json={
        "prompt": prompt, "n_predict": tokens, "temperature": 0.0, "top_k": 1, "seed": 0, "n_probs": TOP_LOGPROBS,
        "cache_prompt": cache})
    response.raise_for_status()
    reply: dict[str, Any] = response.json()
    return reply


def _first_difference(a: list[Any], b: list[Any]) -> int:
    """The index where ``a`` and ``b`` first differ (the length of their common prefix)."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def _probabilities(reply: dict[str, Any]) -> list[Any]:
    """Every reply token's top log-probabilities, as the server printed them."""
    return [(step.get("id"), step.get("logprob"), [(top.get("id"), top.get("logprob"))
                                                   for top in step.get("top_logprobs", [])])
            for step in reply.get("completion_probabilities", [])]


def probe(base_url: str, ubatch: int, timeout_s: float = 120.0) -> ProbeResult:
    """Run the probe against the server at ``base_url`` (its root, without ``/v1``), which evaluates prompts in
    micro-batches of ``ubatch`` tokens and was started with aligned reuse asked for."""
    with httpx.Client(base_url=base_url, timeout=timeout_s) as client:
        tokens_a, tokens_b = (client.post("/tokenize", json={"content": text}).json()["tokens"]
                              for text in (PROMPT_A, PROMPT_B))
        shared = _first_difference(tokens_a, tokens_b)
        if shared < ubatch or shared % ubatch == 0:
            return ProbeResult(False, f"the probe's prompts share {shared} tokens: not a test of aligned reuse at "
                                      f"micro-batch {ubatch}")
        _complete(client, PROMPT_A, cache=True, tokens=1)
        _complete(client, PROMPT_OTHER, cache=True, tokens=1)
        reused = _complete(client, PROMPT_B, cache=True, tokens=REPLY_TOKENS)
        fresh = _complete(client, PROMPT_B, cache=False, tokens=REPLY_TOKENS)
    cached = int(reused.get("timings", {}).get("cache_n", -1))
    expected = shared - shared % ubatch
    if cached != expected:
        return ProbeResult(False, f"the server reused {cached} prompt tokens where aligned reuse reuses {expected} "
                                  f"({shared} shared, micro-batch {ubatch}): not the patched llama-server, or its "
                                  "saved prompts were not used")
    if fresh.get("timings", {}).get("cache_n", 0) != 0:
        return ProbeResult(False, "the request without the cache still reused a cached prefix")
    same_text = reused.get("content") == fresh.get("content")
    reused_probs, fresh_probs = _probabilities(reused), _probabilities(fresh)
    if not reused_probs:
        return ProbeResult(False, "the server returned no log-probabilities to compare")
    if not same_text or reused_probs != fresh_probs:
        first = _first_difference(reused_probs, fresh_probs)
        return ProbeResult(False, f"reusing {cached} cached tokens changed the reply's log-probabilities from "
                                  f"token {first} on (reply text {'same' if same_text else 'differs'})")
    return ProbeResult(True, f"reusing {cached} of {shared} shared prompt tokens gave the same top-{TOP_LOGPROBS} "
                             f"log-probabilities at all {len(reused_probs)} reply tokens as fresh evaluation")
