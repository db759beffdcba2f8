"""APPS as MapCoder and CodeSim run it: the 150 problems of MapCoder's ``data/APPS/selected150.jsonl``.

MapCoder's ``convert-apps-xcode.py`` drew 50 introductory, 50 interview and 50 Codeforces problems (48 of
them labelled competition, 2 interview: 50/52/48 in all) of APPS at random (``random_state=1``) and wrote
each as ``{name, description, difficulty, id, sample_io, test_list, starter_code}``, a test being
``{"input": str, "output": [accepted, ...]}``. It read APPS's train split twice (``train_set + test_set``
both from ``train.jsonl``), so 22 rows repeat an earlier row exactly (``1604`` three times); MapCoder
counts all 150. Here every row is a problem: the first row of an id is ``APPS/<id>``, a repeat ``APPS/<id>#2`` (``#3``).

Every problem is a standard-input *program* problem (``Problem.kind == "program"``), judged as ExecEval
judges it (``sotacheck.reruns.sandbox.stdin_programs``). 98 rows are Codewars function-call problems (a
``starter_code`` such as ``def get_score(dice):``): their tests give the function's arguments on stdin, one
per line (``"\\n".join(str(arg) ...)``), and expect the return value printed. Their accepted outputs are
often not strings in the file (``100``, ``true``, a list): those are compared here as ``print`` writes the
value (``str``). ExecEval could not read such a test at all (its ``convert_crlf_to_lf`` calls ``.replace``
on every output, so the request failed and MapCoder counted the problem unsolved: 74 of the 150 problems,
:func:`execeval_unjudgeable`), nor an input with a non-ASCII character (2 problems). ``apps`` judges
those tests as written; ``apps-execeval`` reproduces ExecEval, such a test failing (``IOTest.judgeable``),
which gives MapCoder's released verdicts back. The file has no canonical solutions.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.benchmarks.datadir import find_data_file
from sotacheck.reruns.benchmarks.problem import Dataset, IOTest, Problem

APPS_SELECTED = "benchmarks/apps/selected150.jsonl"
DIFFICULTIES = ("introductory", "interview", "competition")
_FUNCTION_NAME = re.compile(r"^\s*def\s+(\w+)\s*\(", re.MULTILINE)


def printed(value: Any) -> str:
    """An accepted output as the program prints it: a string as it is, another value as ``print`` writes it."""
    return value if isinstance(value, str) else str(value)


def _tests(row: dict[str, Any], field: str, where: str, as_execeval: bool = False) -> tuple[IOTest, ...]:
    tests = row.get(field)
    if not isinstance(tests, list):
        raise SotacheckError(f"{where}: `{field}` is not a list")
    parsed = []
    for number, test in enumerate(tests):
        if not isinstance(test, dict) or not isinstance(test.get("input"), str):
            raise SotacheckError(f"{where}: `{field}`[{number}] has no string `input`")
        outputs = test.get("output")
        if not isinstance(outputs, list) or not outputs:
            raise SotacheckError(f"{where}: `{field}`[{number}] has no accepted `output`")
        judgeable = not as_execeval or (all(isinstance(o, str) for o in outputs) and test["input"].isascii())
        parsed.append(IOTest(test["input"], tuple(printed(output) for output in outputs), judgeable))
    return tuple(parsed)


def _rows(path: Path) -> list[tuple[int, Any]]:
    """(line number, parsed row) of a JSON-lines file, plain or gzip-compressed."""
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    try:
                        rows.append((number, json.loads(line)))
                    except ValueError as exc:
                        raise SotacheckError(f"{path}: row {number}: not JSON ({exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SotacheckError(f"{path}: cannot read it ({exc})") from None
    return rows


def problem_of(row: Any, where: str, problem_id: str, source: str, dataset: str = "apps",
               as_execeval: bool = False) -> Problem:
    """One row as a program problem; a malformed row is a one-line error naming ``where``. ``as_execeval`` (a
    benchmark judged by ExecEval's output rules, as its card says): the tests ExecEval could not read are marked
    so (``IOTest.judgeable``)."""
    if not isinstance(row, dict):
        raise SotacheckError(f"{where}: not a JSON object")
    for field, kind in (("id", int), ("description", str), ("difficulty", str)):
        if not isinstance(row.get(field), kind) or isinstance(row.get(field), bool):
            raise SotacheckError(f"{where}: `{field}` is missing or not a {kind.__name__}")
    if row["difficulty"] not in DIFFICULTIES:
        raise SotacheckError(f"{where}: unknown difficulty {row['difficulty']!r}")
    hidden = _tests(row, "test_list", where, as_execeval)
    if not hidden:
        raise SotacheckError(f"{where}: `test_list` is empty (a problem with no tests cannot be judged)")
    starter = row.get("starter_code") or ""
    if not isinstance(starter, str):
        raise SotacheckError(f"{where}: `starter_code` is not a string")
    name = _FUNCTION_NAME.search(starter)
    return Problem(id=problem_id, dataset=dataset, prompt=row["description"], entry_point=name.group(1) if name else "",
                   visible_tests=(), hidden_tests=(), source=source, kind="program",
                   visible_io=_tests(row, "sample_io", where, as_execeval), hidden_io=hidden, starter_code=starter,
                   difficulty=row["difficulty"])


def load_apps(data_dir: str | os.PathLike[str] | None = None, dataset: str = "apps") -> Dataset:
    """The 150 APPS problems MapCoder and CodeSim report on (module docstring), as ``dataset``; a dataset whose
    card gives ExecEval's output rules (``apps-execeval``) judges them exactly as MapCoder's ExecEval did, a test
    it could not read failing."""
    from sotacheck.reruns.benchmarks.registry import card  # the registry lists this module's loader

    as_execeval = card(dataset).output_rules == "execeval"
    path = find_data_file(APPS_SELECTED, data_dir)
    seen: Counter[int] = Counter()
    problems = []
    for number, row in _rows(path):
        row_id = row.get("id") if isinstance(row, dict) else None
        where = f"{path}: row {number}" + (f" (id {row_id})" if row_id is not None else "")
        if isinstance(row_id, int):
            seen[row_id] += 1
        problem_id = f"APPS/{row_id}" + (f"#{seen[row_id]}" if isinstance(row_id, int) and seen[row_id] > 1 else "")
        problems.append(problem_of(row, where, problem_id, str(path), dataset, as_execeval))
    if not problems:
        raise SotacheckError(f"{path}: no problems in it")
    return Dataset(dataset, tuple(problems), (str(path),))


def execeval_unjudgeable(row: dict[str, Any]) -> str | None:
    """Why ExecEval (as MapCoder called it) could not judge a row at all, or None: an accepted output that
    is not a string, or an input that is not ASCII (it encodes each input as ASCII)."""
    tests = row.get("test_list") or []
    if any(not isinstance(output, str) for test in tests for output in test.get("output", [])):
        return "an accepted output is not a string"
    if any(not str(test.get("input", "")).isascii() for test in tests):
        return "an input is not ASCII"
    return None
