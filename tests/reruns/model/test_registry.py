"""The model back-end registry (scheme -> provider): every model a spec names has a back-end, bad names are
one-line errors, and the replay and loopback back-ends serve under their identities."""

from __future__ import annotations

import asyncio

import pytest

from sotacheck.core.errors import InputError, UsageError
from sotacheck.reruns.model import registry
from sotacheck.reruns.model.base import ChatRequest, Message, SamplingParams
from sotacheck.reruns.model.loopback import LOOPBACK_ENDPOINT
from sotacheck.reruns.model.replay import ReplayModel
from sotacheck.reruns.model.retry import RetryPolicy
from sotacheck.reruns.run import open_model, validate_spec

FAST = RetryPolicy(max_tries=4, base_delay_s=0.001, max_delay_s=0.002, budget_s=30.0)


def spec(model: str, **fields: object):
    return validate_spec({"dataset": "humaneval", "pipelines": [{"name": "direct"}], "model": model, **fields}, "spec")


@pytest.mark.parametrize(("model", "scheme"), [
    ("local", "local"), ("gguf:/models/m.gguf", "gguf"), ("http://127.0.0.1:8000/v1", "http"),
    ("https://api.example.com/v1", "https"), ("replay", "replay"), ("loopback", "loopback"),
])
def test_every_model_a_spec_names_has_a_backend(model, scheme) -> None:
    assert registry.scheme_of(model) == scheme and callable(registry.backend(model))


def test_unknown_scheme_missing_name_and_missing_gguf_are_one_line_errors(tmp_path) -> None:
    with pytest.raises(UsageError, match=r"^--model 'ollama/qwen': expected local, gguf:PATH, an http\(s\):// URL"):
        open_model(spec("ollama/qwen"), None, replay=False)

    async def enter(model_spec) -> None:
        async with open_model(model_spec, None, replay=False):
            raise AssertionError("opened")

    with pytest.raises(UsageError, match="an OpenAI-compatible --model URL needs --model-name"):
        asyncio.run(enter(spec("http://127.0.0.1:9/v1")))
    with pytest.raises(InputError, match=f"GGUF file {tmp_path / 'no.gguf'} does not exist"):
        asyncio.run(enter(spec(f"gguf:{tmp_path / 'no.gguf'}")))
    with pytest.raises(InputError, match="replay needs a run that recorded its model identity"):
        _replay(None)


async def _replay_model(identity: tuple[str, str] | None) -> ReplayModel:
    async with open_model(spec("http://ignored/v1", model_name="x"), identity, replay=True) as model:
        assert isinstance(model, ReplayModel)
        return model


def _replay(identity: tuple[str, str] | None) -> ReplayModel:
    return asyncio.run(_replay_model(identity))


def test_replay_serves_as_the_recorded_identity_whatever_the_spec_names() -> None:
    recorded = ("qwen2.5-coder-0.5b-instruct-q4_k_m",
                "llama-cpp-python:gguf-sha256:1d96...:fresh-prompt-eval")
    model = _replay(recorded)
    assert (model.identity, model.endpoint) == recorded


def test_loopback_backend_answers_with_canonical_code_under_a_stable_endpoint() -> None:
    request = ChatRequest((Message("user", "def truncate_number(number: float) -> float:"),), SamplingParams(), seed=1)

    async def ask() -> tuple[str, str, str]:
        async with registry.open_model(registry.ModelTarget("loopback", dataset="humaneval", retry=FAST)) as model:
            response = await model.complete(request)
            return model.identity, model.endpoint, response.text

    identity, endpoint, text = asyncio.run(ask())
    assert (identity, endpoint) == ("loopback", LOOPBACK_ENDPOINT)
    assert "def truncate_number(" in text and "return number % 1.0" in text


def test_prefix_reuse_is_for_the_embedded_model_only() -> None:
    assert spec("local", prefix_reuse=64).prefix_reuse == 64
    assert spec("gguf:/models/m.gguf", prefix_reuse=64).prefix_reuse == 64
    with pytest.raises(InputError, match=r"^spec: --prefix-reuse 64: only the embedded model \(local, gguf:PATH\) "
                                         r"reuses prompt prefixes here; --model 'http://127.0.0.1:8000/v1' is served "
                                         r"elsewhere$"):
        spec("http://127.0.0.1:8000/v1", model_name="m", prefix_reuse=64)
    from sotacheck.reruns.model.local import server_mode

    assert (server_mode(0), server_mode(64)) == ("fresh-prompt-eval", "aligned-prefix-reuse-64")
