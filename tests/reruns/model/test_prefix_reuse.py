"""Aligned prefix reuse in the embedded server gives the replies of fresh evaluation (#22).

The real server, twice: with ``prefix_reuse=64`` and with fresh evaluation. Each case sends a request
that fills the cache, then one that shares a prefix of a given length with it; the second reply must be
byte-identical in both modes, at temperature 0 and at 0.8 with a seed. The prefixes are chosen to end
before, on and after multiples of 64, below and above the 512-token batch. The replay of the recorded
methods run (``bench/bench_prefix_reuse.py``) is the larger check.
"""

from __future__ import annotations

import importlib.util

import httpx
import pytest

from tests.sotacheck_command import SOTACHECK

pytestmark = [pytest.mark.model, pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="the embedded model needs llama-cpp-python (make setup)")]

# The cases: (filler words before the shared end, words that differ after it)
TEXT = ("def running_mean(values, window):\n    '''Mean of each window of the list; windows that do not fit are "
        "dropped.'''\n") * 40


def _requests(shared_words: int) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    words = TEXT.split(" ")
    shared = " ".join(words[:shared_words])
    first = [{"role": "system", "content": "You are an expert Python programmer."},
             {"role": "user", "content": shared + "\nSummarise the code above in one line."}]
    second = [{"role": "system", "content": "You are an expert Python programmer."},
              {"role": "user", "content": shared + "\nName one bug in the code above, briefly."}]
    return first, second


def _second_replies(prefix_reuse: int) -> list[str]:
    from sotacheck.reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf

    replies = []
    with LocalServer(assemble_gguf(), prefix_reuse=prefix_reuse) as server, httpx.Client(timeout=600) as client:
        for shared_words, temperature in ((30, 0.0), (70, 0.0), (190, 0.8), (260, 0.0)):
            first, second = _requests(shared_words)
            for messages in (first, second):
                body = {"model": LOCAL_MODEL_ID, "messages": messages, "temperature": temperature, "top_p": 1.0,
                        "max_tokens": 24, "seed": 11}
                reply = client.post(f"{server.base_url}/chat/completions", json=body).json()
            replies.append(reply["choices"][0]["message"]["content"])
    return replies


def test_reusable_prefix_is_aligned_and_short_of_the_prompt() -> None:
    from sotacheck.reruns.model._llama_server import reusable_prefix

    assert reusable_prefix([1, 2, 3, 4, 5], [1, 2, 3, 4, 9], 2) == 4
    assert reusable_prefix([1, 2, 3, 4, 5], [1, 2, 3, 4, 9], 3) == 3
    assert reusable_prefix([1, 2, 3, 4], [1, 2, 3, 4], 2) == 2  # the last prompt token is always evaluated
    assert reusable_prefix([1, 2, 3, 4, 5], [1, 2, 3, 4, 9], 0) == 0  # reuse off
    assert reusable_prefix([], [1, 2], 64) == 0


def test_reuse_gives_the_replies_of_fresh_evaluation() -> None:
    assert _second_replies(64) == _second_replies(0)


def test_a_run_asks_for_reuse_by_name_and_records_it_in_the_endpoint_identity(tmp_path) -> None:
    """``--prefix-reuse 64``: the embedded server starts in that mode (its log says so) and the run's endpoint
    identity, part of every call's cache key, ends in ``aligned-prefix-reuse-64``; without it (and with
    llama-cpp-python's server named, as ``auto`` may choose llama-server), ``fresh``."""
    import json
    import subprocess

    identities, logs = {}, {}
    for mode, extra in (("reuse", ["--prefix-reuse", "64"]), ("fresh", ["--engine", "llama-cpp-python"])):
        out = tmp_path / mode
        done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines",
                               "direct", "--model", "local", "--limit", "1", "--max-tokens", "8", *extra, "--out",
                               str(out)], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        identities[mode] = json.loads((out / "run.json").read_text())["model_identity"]["endpoint"]
        logs[mode] = (out / "server.log").read_text()
    assert identities["reuse"].endswith(":aligned-prefix-reuse-64")
    assert identities["fresh"].endswith(":fresh-prompt-eval")
    assert identities["reuse"].rsplit(":", 1)[0] == identities["fresh"].rsplit(":", 1)[0]  # the same weights
    assert "sotacheck: prompt evaluation: aligned prefix reuse, 64 tokens" in logs["reuse"]
    assert "sotacheck: prompt evaluation: fresh" in logs["fresh"]
