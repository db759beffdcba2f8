"""How long a problem's hidden tests are expected to take: a scheduling hint for the judge, never part of a verdict.

The judge starts the problems it expects to take longest first (longest processing time first), so that a task whose
tests wait a minute on a sleeping subprocess overlaps the short ones instead of trailing alone after them. On
BigCodeBench a few tests wait that long (``BigCodeBench/461`` polls a subprocess for about 150 s, ``/1104`` 70 s) and
the task list puts several of them near its end.

The estimates ship with the package: ``data/benchmarks/bigcodebench/test_seconds.json``, the canonical solutions'
test times written by ``bench/bigcodebench_test_seconds.py`` (its header says when, at which commit, on what
machine). They are keyed by the SHA-256 of the tests' source, so a task whose tests changed has no estimate. A
problem without one counts as 0 s: it starts after those with one, in the order given. A wrong estimate costs only
time; the verdicts are the same in any order.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.benchmarks.datadir import bundled_dir
from sotacheck.reruns.benchmarks.problem import Problem

HINT_FILES = ("benchmarks/bigcodebench/test_seconds.json",)  # relative to the bundled data folder


def suite_key(problem: Problem) -> str:
    """The key of a problem's hidden tests in a hint file: the SHA-256 of their source, hex."""
    return hashlib.sha256("\x00".join(problem.hidden_tests).encode()).hexdigest()


def expected_test_seconds(problem: Problem) -> float:
    """The seconds ``problem``'s hidden tests took when measured, or 0.0 where no estimate is bundled.

    Raises
    ------
    SotacheckError
        A bundled hint file is malformed (a packaging defect, named with its path).
    """
    return _bundled().get(suite_key(problem), 0.0)


@functools.cache
def _bundled() -> dict[str, float]:
    root = bundled_dir()
    seconds: dict[str, float] = {}
    for relative in HINT_FILES:
        path = root / relative if root is not None else None
        if path is None or not path.is_file():
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise SotacheckError(f"{path}: not JSON ({exc})") from exc
        seconds.update(read_hints(document, str(path)))
    return seconds


def read_hints(document: Any, where: str) -> dict[str, float]:
    """The ``{tests key: seconds}`` of a hint file's parsed JSON; ``where`` names it in an error.

    Raises
    ------
    SotacheckError
        ``document`` is not an object whose ``tests`` list holds ``tests_sha256`` and non-negative ``seconds``.
    """
    rows = document.get("tests") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        raise SotacheckError(f"{where}: no `tests` list")
    seconds = {}
    for number, row in enumerate(rows):
        key = row.get("tests_sha256") if isinstance(row, dict) else None
        value = row.get("seconds") if isinstance(row, dict) else None
        if (not isinstance(key, str) or not isinstance(value, int | float) or isinstance(value, bool)
                or not value >= 0):
            raise SotacheckError(f"{where}: tests[{number}] needs a `tests_sha256` string and `seconds` >= 0")
        seconds[key] = float(value)
    return seconds
