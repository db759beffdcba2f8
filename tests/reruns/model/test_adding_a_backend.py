"""Adding a model back-end is one new file and one registry line: the provider below (a model that answers
every prompt with the same fenced function, written only in this test) serves a run named by its URL scheme,
``--model echo:...``, through ``sotacheck.rerun``; nothing in the harness, the store or the analysis changes.
Its replies are control flow, not evidence about any model."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import sotacheck
from sotacheck.core.errors import UsageError
from sotacheck.core.registry import Entry
from sotacheck.reruns.model import registry

NEW_BACKEND = '''
"""``echo:TEXT``: a model that answers every request with a function returning TEXT's length."""

import time
from contextlib import asynccontextmanager

from sotacheck.reruns.model.base import ChatResponse


class EchoModel:
    def __init__(self, text):
        self.text = text

    @property
    def identity(self):
        return f"echo-{self.text}"

    @property
    def endpoint(self):
        return "echo:in-process"

    async def complete(self, request):
        start = time.perf_counter()
        prompt = request.messages[-1].content
        name = prompt.split("def ", 1)[1].split("(", 1)[0] if "def " in prompt else "f"
        code = f"def {name}(*args, **kwargs):\\n    return {len(self.text)}\\n"
        return ChatResponse(f"```python\\n{code}```", "stop", len(prompt), len(code), time.perf_counter() - start)


@asynccontextmanager
async def open_echo(target):
    yield EchoModel(target.model.partition(":")[2])
'''


@pytest.fixture
def echo_scheme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "echo_backend.py").write_text(textwrap.dedent(NEW_BACKEND))  # the one new file
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.BACKENDS.entries, "echo", Entry("echo_backend:open_echo", "echo:TEXT"))  # the line
    yield "echo"
    sys.modules.pop("echo_backend", None)


def test_a_new_scheme_serves_a_run_with_no_other_change(echo_scheme: str, tmp_path: Path) -> None:
    assert "echo_backend" not in sys.modules  # registered, not imported
    spec = {"dataset": "humaneval", "limit": 2, "model": "echo:abc", "seed": 3, "pipelines": [{"name": "direct"}]}
    summary = sotacheck.rerun(spec, out=tmp_path / "run", progress=False)
    assert (summary.finished, summary.errors, summary.calls) == (2, 0, 2)
    run = sotacheck.load_run(tmp_path / "run")
    identity = run.manifest.model_identity
    assert identity is not None and (identity.model, identity.endpoint) == ("echo-abc", "echo:in-process")
    assert len(run.outcomes) == 2


def test_an_unknown_scheme_names_the_new_one_too(echo_scheme: str) -> None:
    assert callable(registry.backend("echo:x"))
    with pytest.raises(UsageError, match=r"^--model 'ollama/q': expected local, gguf:PATH, an http\(s\):// URL of an "
                                         r"OpenAI-compatible endpoint, replay, loopback or echo$"):
        registry.backend("ollama/q")
