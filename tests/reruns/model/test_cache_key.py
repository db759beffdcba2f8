"""The response cache key (``sotacheck.reruns.model.base.cache_key``)."""

from __future__ import annotations

from sotacheck.reruns.model.base import ChatRequest, Message, SamplingParams, cache_key


def test_cache_key_covers_sampling_seed_repeat_model_and_endpoint() -> None:
    messages = (Message("user", "write f"),)
    base = ChatRequest(messages, SamplingParams(temperature=0.0), 1)
    key = cache_key("m", "e", base, 0)
    assert key == cache_key("m", "e", ChatRequest(messages, SamplingParams(temperature=0.0), 1), 0)
    assert key != cache_key("m", "e", ChatRequest(messages, SamplingParams(temperature=0.7), 1), 0)
    assert key != cache_key("m", "e", ChatRequest(messages, SamplingParams(temperature=0.0), 2), 0)
    assert key != cache_key("m", "e", base, 1)
    assert key != cache_key("m2", "e", base, 0) and key != cache_key("m", "e2", base, 0)
