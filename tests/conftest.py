"""Shared fixtures: the data directory and a sandbox pool.

``data_dir`` is ``$SOTACHECK_DATA`` when set (CI sets it to the project's full data copy). Otherwise it is
assembled once per session from what every clone has: the benchmark files and MapCoder's logs bundled with
the package (``data/``) and the released logs and claims reference kept as test fixtures
(``tests/fixtures/mapcoder-released``, ``tests/fixtures/reference``), decompressed into the layout of
``$SOTACHECK_DATA`` (``benchmarks/``, ``published-runs/mapcoder/``, and ``../reference/`` beside it).

The authors' code checkouts cannot ship; the tests that run them read ``$SOTACHECK_REFERENCE_IMPLS``
(``tests/reruns/scripted_methods.py``) and skip, naming the variable, when it is not set.
"""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from sotacheck.reruns.sandbox import SandboxPool

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
# (source folder, folder under the assembled data directory)
_BUNDLED = ((REPO / "data" / "benchmarks", "benchmarks"),
            (REPO / "data" / "published" / "mapcoder", "published-runs/mapcoder"),
            (FIXTURES / "mapcoder-released", "published-runs/mapcoder"),
            (FIXTURES / "reference", "../reference"))


def _decompress_tree(source: Path, target: Path) -> None:
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as src, out.with_suffix("").open("wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(path, out)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("SOTACHECK_DATA")
    if env:
        path = Path(env)
        if not (path / "benchmarks").is_dir():
            pytest.fail(f"SOTACHECK_DATA={env} has no benchmarks/ folder")
        return path
    root = tmp_path_factory.mktemp("bundled") / "data"
    for source, relative in _BUNDLED:
        _decompress_tree(source, (root / relative).resolve())
    return root


@pytest.fixture(scope="session")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool() as sandbox_pool:
        yield sandbox_pool
