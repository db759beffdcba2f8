"""Shared fixtures: the data directory (../shared/data or $SOTACHECK_DATA) and a sandbox pool."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sotacheck.reruns.sandbox import SandboxPool

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    env = os.environ.get("SOTACHECK_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = shared_data_dir()
    if not (path / "benchmarks").is_dir():
        pytest.fail(f"shared data not found at {path}; set SOTACHECK_DATA")
    return path


@pytest.fixture(scope="session")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool() as sandbox_pool:
        yield sandbox_pool
