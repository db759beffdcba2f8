"""llama.cpp's ``llama-server`` as the embedded model's engine (``reruns/model/native_server.py``): each mode is
named apart in the endpoint identity, the settings that keep a reply a function of its request are on the command
line, a spec asks for it only where it applies, the watched process ends with its parent; and, with the real
binary and model, one slot's replies do not depend on the order requests arrive in."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from sotacheck.core.errors import InputError, SotacheckError
from sotacheck.reruns.model import native_server
from sotacheck.reruns.model.local import LOCAL_SERVER_MODE, LocalServer, server_mode
from sotacheck.reruns.model.native_server import NativeMode
from sotacheck.reruns.run import validate_spec
from tests.sotacheck_command import SOTACHECK


def _fake_binary(tmp_path: Path) -> Path:
    fake = tmp_path / "llama-server"
    fake.write_text("#!/bin/sh\nexec sleep 120\n")
    fake.chmod(0o755)
    return fake


def test_every_mode_has_its_own_identity() -> None:
    modes = [NativeMode(1, "off"), NativeMode(1, "ngram-simple"), NativeMode(4, "off"), NativeMode(4, "ngram-simple"),
             NativeMode(1, "ngram-simple", 512)]
    names = {server_mode(0, mode) for mode in modes} | {server_mode(0), server_mode(64)}
    assert len(names) == 7
    assert server_mode(0) == LOCAL_SERVER_MODE
    assert NativeMode(1, "ngram-simple", 512).fresh() == NativeMode(1, "ngram-simple")


def test_the_command_carries_the_settings_of_the_recorded_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SOTACHECK_LLAMA_SERVER", str(_fake_binary(tmp_path)))
    line = native_server.command(Path("m.gguf"), 8123, 2, 4096, "alias", NativeMode(3, "ngram-simple"))
    joined = " ".join(line)
    # llama-cpp-python's server evaluates prompts in 512-token batches without flash attention, from an empty cache
    for flag in ("-b 512", "-ub 512", "-fa off", "--no-cache-prompt", "--no-kv-unified", "-np 3",
                 "--spec-type ngram-simple", "-c 12288", "--port 8123", "-t 2"):
        assert flag in joined, flag
    assert "--spec-type" not in native_server.command(Path("m.gguf"), 1, 2, 4096, "a", NativeMode())
    # aligned reuse: the prompt cache on (no --no-cache-prompt), saved prompts kept, the patch's switch set
    reuse = NativeMode(1, "ngram-simple", 512)
    joined = " ".join(native_server.command(Path("m.gguf"), 1, 2, 4096, "a", reuse))
    assert "--no-cache-prompt" not in joined and "--cache-ram 2048" in joined and "-ub 512" in joined
    assert reuse.env() == {"SOTACHECK_ALIGNED_REUSE": "512"} and NativeMode().env() == {}


def test_bad_modes_and_a_missing_binary_are_one_line_errors(tmp_path, monkeypatch) -> None:
    with pytest.raises(ValueError, match="`slots` must be at least 1"):
        NativeMode(0)
    with pytest.raises(ValueError, match="`speculative` must be one of"):
        NativeMode(1, "eagle")
    with pytest.raises(ValueError, match=r"`prefix_reuse` must be 0 \(off\) or 512"):
        NativeMode(1, "off", 64)
    monkeypatch.setenv("SOTACHECK_LLAMA_SERVER", str(tmp_path / "nowhere"))
    with pytest.raises(SotacheckError, match=r"SOTACHECK_LLAMA_SERVER=.*not an executable file"):
        native_server.binary()


@pytest.mark.parametrize(("fields", "message"), [
    ({"engine": "llama-server", "model": "http://127.0.0.1:9/v1"}, "--engine llama-server: only the embedded model"),
    ({"slots": 2}, "--slots 2: only --engine llama-server has it"),
    ({"speculative": "ngram-simple"}, "--speculative ngram-simple: only --engine llama-server has it"),
    ({"engine": "llama-server", "prefix_reuse": 64}, "--prefix-reuse 64: llama-server reuses a prefix aligned to "
                                                     "its 512-token micro-batch only"),
])
def test_a_spec_asks_for_engine_settings_only_where_they_apply(fields, message) -> None:
    base = {"dataset": "humaneval", "pipelines": [{"name": "direct"}], "model": "local"}
    with pytest.raises(InputError, match=message):
        validate_spec({**base, **fields}, "test")


def test_the_spec_names_the_native_mode() -> None:
    base = {"dataset": "humaneval", "pipelines": [{"name": "direct"}], "model": "local"}
    assert validate_spec(base, "test").server_settings[1] is None
    spec = validate_spec({**base, "engine": "llama-server", "slots": 2, "speculative": "ngram-simple"}, "test")
    assert spec.server_settings[1] == NativeMode(2, "ngram-simple")
    assert spec.model_dump()["speculative"] == "ngram-simple"  # so run.json records the mode
    spec = validate_spec({**base, "engine": "llama-server", "speculative": "ngram-simple", "prefix_reuse": 512}, "t")
    assert spec.server_settings[1] == NativeMode(1, "ngram-simple", 512)


def test_auto_is_llama_server_with_drafting_and_aligned_reuse_where_it_is_built(tmp_path, monkeypatch) -> None:
    def resolve(engine: str, speculative: str, slots: int = 1, reuse: int | None = None,
                embedded: bool = True) -> tuple[str, str, int]:
        choice = native_server.resolve(engine, speculative, slots, reuse, embedded=embedded)
        return choice.engine, choice.speculative, choice.prefix_reuse

    monkeypatch.setenv("SOTACHECK_LLAMA_SERVER", str(_fake_binary(tmp_path)))
    assert resolve("auto", "auto") == ("llama-server", "ngram-simple", 512)
    assert resolve("auto", "off", reuse=0) == ("llama-server", "off", 0)
    assert resolve("auto", "auto", reuse=64) == ("llama-cpp-python", "off", 64)
    assert resolve("llama-cpp-python", "auto") == ("llama-cpp-python", "off", 0)
    assert resolve("auto", "auto", embedded=False) == ("llama-cpp-python", "off", 0)
    assert native_server.resolve("auto", "auto", 1, None, embedded=False).line == ""
    said = native_server.resolve("auto", "auto", 1, None, embedded=True).line
    assert said == ("the embedded model: llama-server, 1 slot, speculative decoding ngram-simple, prefix reuse "
                    "aligned to 512 tokens where exact here (checked at start)")
    monkeypatch.setenv("SOTACHECK_LLAMA_SERVER", "")
    monkeypatch.setattr(native_server, "binary", lambda: (_ for _ in ()).throw(SotacheckError("not built")))
    choice = native_server.resolve("auto", "auto", 1, None, embedded=True)
    assert (choice.engine, choice.speculative, choice.prefix_reuse) == ("llama-cpp-python", "off", 0)
    assert "not built: make setup-local" in choice.line
    # asking for a llama-server setting picks llama-server, and a missing binary is then an error at start
    assert resolve("auto", "ngram-simple")[0] == "llama-server"
    assert resolve("auto", "auto", reuse=512)[0] == "llama-server"
    assert resolve("auto", "auto", slots=4) == ("llama-server", "ngram-simple", 512)


def test_the_cli_refuses_slots_without_the_native_engine(tmp_path) -> None:
    done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--slots", "2",
                           "--engine", "llama-cpp-python", "--out", str(tmp_path / "r")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert "--slots 2: only --engine llama-server has it" in done.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("options", "said"), [
    (["--prefix-reuse", "banana"], "'banana': expected auto, off, or an alignment in tokens"),
    (["--engine", "llama-server", "--prefix-reuse", "64"],
     "--prefix-reuse 64: llama-server reuses a prefix aligned to its 512-token micro-batch only"),
])
def test_the_cli_refuses_a_prefix_reuse_the_engine_cannot_give(tmp_path, options, said) -> None:
    done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", *options,
                           "--out", str(tmp_path / "r")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert not (tmp_path / "r").exists()


def test_the_native_server_ends_with_its_parent(tmp_path, monkeypatch) -> None:
    """A run killed with SIGKILL cannot stop its llama-server; the watching process kills it instead."""
    monkeypatch.setenv("SOTACHECK_LLAMA_SERVER", str(_fake_binary(tmp_path)))
    server = LocalServer(Path("m.gguf"), port=1, threads=1, native=NativeMode())
    parent = subprocess.Popen([sys.executable, "-P", "-c", f"import subprocess, time; "
                               f"subprocess.Popen({server.command()!r}); time.sleep(120)"])
    deadline = time.monotonic() + 30
    while not (pids := _children_named("sleep", parent.pid)):
        assert time.monotonic() < deadline, "the fake server never started"
        time.sleep(0.1)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in pids):
        assert time.monotonic() < deadline, "the server outlived its killed parent"
        time.sleep(0.1)


def _children_named(name: str, ancestor: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            grand = int((Path("/proc") / str(ppid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        if comm == name and ancestor in (ppid, grand):
            found.append(int(entry.name))
    return found


def _has_binary() -> bool:
    try:
        native_server.binary()
    except SotacheckError:
        return False
    return True


@pytest.mark.model
@pytest.mark.skipif(not _has_binary(), reason="needs llama-server (make setup-local)")
def test_one_slot_replies_do_not_depend_on_the_order_of_requests() -> None:
    """The same four requests, in two orders, with speculative decoding: byte-identical replies."""
    from sotacheck.reruns.model.local import LOCAL_MODEL_ID, assemble_gguf

    prompts = ["Write a Python function that reverses a string.", "Fix: def add(a, b): return a - b",
               "def is_even(n):\n    return n % 2 == 0\n\nRewrite is_even without the modulo operator.",
               "Write a Python function that counts vowels in a string."]

    def replies(order: list[int]) -> dict[int, str]:
        got = {}
        with LocalServer(assemble_gguf(), native=NativeMode(1, "ngram-simple")) as server, \
                httpx.Client(timeout=600) as client:
            for i in order:
                body = {"model": LOCAL_MODEL_ID, "messages": [{"role": "user", "content": prompts[i]}],
                        "temperature": 0.0, "max_tokens": 96, "seed": 3}
                got[i] = client.post(f"{server.base_url}/chat/completions", json=body).json()[
                    "choices"][0]["message"]["content"]
        return got

    first, second = replies([0, 1, 2, 3]), replies([3, 1, 0, 2])
    assert first == second
    assert all(first.values())


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.skipif(not _has_binary(), reason="needs llama-server (make setup-local)")
def test_two_live_runs_in_the_speculative_mode_agree_call_for_call(tmp_path) -> None:
    """The same spec twice, live, through the CLI: the same calls with the same replies; run.json names the
    engine and mode in the endpoint identity (part of every call's cache key) and in the spec."""
    import json
    import sqlite3

    def run(out: Path) -> list[tuple[str, str]]:
        done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct,cot",
                               "--model", "local", "--engine", "llama-server", "--speculative", "ngram-simple",
                               "--limit", "2", "--seed", "7", "--max-tokens", "256", "--out", str(out)],
                              capture_output=True, text=True, timeout=1200)
        assert done.returncode == 0, done.stderr
        manifest = json.loads((out / "run.json").read_text())
        # aligned prefix reuse is the default; the identity names it where the start-up probe found it exact
        assert manifest["model_identity"]["endpoint"].endswith(
            (":llama-server:slots-1:spec-ngram-simple", ":llama-server:slots-1:spec-ngram-simple:aligned-prefix-reuse-512"))
        assert (manifest["spec"]["engine"], manifest["spec"]["speculative"], manifest["spec"]["prefix_reuse"]) == (
            "llama-server", "ngram-simple", 512)
        with sqlite3.connect(out / "store.sqlite") as db:
            return sorted(db.execute("SELECT call_id, response FROM calls").fetchall())

    first, second = run(tmp_path / "a"), run(tmp_path / "b")
    assert len(first) == 4
    assert first == second
