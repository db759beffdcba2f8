"""The set-up targets as `make -n` plans them (nothing is built): `make demo` needs neither Chromium, the test
tools nor llama-server (it sets up the embedded model itself, in the background, while the steps that need no model run);
`make setup` (CI's) builds llama.cpp once for both engines and installs Chromium; the build's cache directory is
keyed by the compiler options."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _plan(tmp_path: Path, *args: str) -> str:
    """What `make -n ARGS` would run, with an empty HOME (no build cached) and a venv that does not exist."""
    done = subprocess.run(["make", "-n", "--no-print-directory", f"VENV={tmp_path / 'venv'}", *args],
                          cwd=REPO, env={"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=True)
    return done.stdout


def test_demo_needs_neither_the_browser_nor_llama_server(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "demo")
    assert "scripts/demo.sh 10 1" in plan
    assert "apt-get" not in plan and "chromium" not in plan
    assert "build_llama.sh" not in plan  # scripts/demo.sh runs `make setup-model` in the background itself
    assert "install -q --config-settings editable_mode=strict -e .\n" in plan  # sotacheck and its own dependencies
    assert "'.[dev,ray,tools]'" not in plan  # not the test tools, Ray or the importers' tools


def test_setup_builds_llama_cpp_once_for_both_engines_and_installs_the_browser(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "setup")
    builds = re.findall(r"scripts/build_llama\.sh (\w+)", plan)
    assert builds == ["wheel", "server"]
    assert len(set(re.findall(r"DEST=(\S+)", plan))) == 1  # one cache directory, one CMake tree
    assert "apt-get" in plan and "chromium-driver" in plan


def test_the_build_cache_is_keyed_by_the_compiler_options(tmp_path: Path) -> None:
    def dest(*args: str) -> str:
        found = re.findall(r"DEST=(\S+)", _plan(tmp_path, "setup-native", *args))
        assert len(found) == 1
        return found[0]

    default = dest()
    assert re.fullmatch(rf"{re.escape(str(tmp_path / 'home'))}/\.cache/sotacheck/llama-0\.3\.36-[0-9a-f]{{12}}",
                        default)
    assert dest() == default
    assert dest("LLAMA_CMAKE_ARGS=-DGGML_NATIVE=OFF") != default
    assert dest("LLAMA_VERSION=0.3.35") != default
