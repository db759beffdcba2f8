"""BigCodeBench (1,140 tasks), its two splits: ``bigcodebench-complete`` and ``bigcodebench-instruct``.

Each row of ``BigCodeBench.jsonl.gz`` (the Hugging Face layout, bundled: ``data/SOURCES.md``) is one ``unittest``
problem (:class:`~sotacheck.reruns.benchmarks.problem.Problem`): the prompt is the split's own
(``complete_prompt``: the imports, the signature and the docstring, which a completion continues;
``instruct_prompt``: the task in prose with the code to start from), the hidden test is the row's ``test`` (a
module defining ``class TestCases(unittest.TestCase)``), ``starter_code`` is ``code_prompt`` (the imports and the
``def`` line) and ``libs`` the libraries the task exercises. The canonical solution is stored as the whole program
(``complete_prompt + canonical_solution``), so both splits judge the same program. There are no visible tests:
BigCodeBench gives a model none.

BigCodeBench's "calibrated" convention (its ``evaluate.py``, on by default and used for the published results): a
whole program is judged after ``code_prompt + "\\n    pass\\n"``, so that imports the prompt gave and the model left
out are still there; ``reruns/sandbox/unittest_judge.py``'s ``calibrated_program`` applies it.
"""

from __future__ import annotations

from typing import Any, Literal

from sotacheck.core import pyast
from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.benchmarks.datadir import DataDir, find_data_file
from sotacheck.reruns.benchmarks.problem import Dataset, Problem

BIGCODEBENCH_FILE = "benchmarks/bigcodebench/BigCodeBench.jsonl"
Split = Literal["complete", "instruct"]
SPLITS: tuple[Split, ...] = ("complete", "instruct")
_FIELDS = ("task_id", "complete_prompt", "instruct_prompt", "code_prompt", "canonical_solution", "test",
           "entry_point", "libs")


def _libs(value: Any, where: str) -> tuple[str, ...]:
    """``libs`` as the file stores it (the repr of a list) or as a list."""
    try:
        parsed = pyast.literal_eval(value) if isinstance(value, str) else value
    except (SyntaxError, ValueError) as exc:
        raise SotacheckError(f"{where}: `libs` is not a list literal ({exc})") from exc
    if not isinstance(parsed, (list, tuple)) or not all(isinstance(lib, str) for lib in parsed):
        raise SotacheckError(f"{where}: `libs` is not a list of names")
    return tuple(parsed)


def _rows(data_dir: DataDir) -> tuple[list[dict[str, Any]], str]:
    """The file's rows, read with the standard library (the file is small; ``datasets`` would add seconds)."""
    import gzip
    import json

    path = find_data_file(BIGCODEBENCH_FILE, data_dir)
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise SotacheckError(f"{path}:{number}: not a JSON object ({exc})") from exc
            missing = [name for name in _FIELDS if name not in row] if isinstance(row, dict) else list(_FIELDS)
            if missing:
                raise SotacheckError(f"{path}:{number}: missing field(s) {', '.join(missing)}")
            rows.append(row)
    return rows, str(path)


def load_bigcodebench(data_dir: DataDir = None, split: Split = "complete") -> Dataset:
    """BigCodeBench's 1,140 tasks with the prompts of ``split`` (``complete`` or ``instruct``)."""
    if split not in SPLITS:
        raise SotacheckError(f"unknown BigCodeBench split {split!r}; choose one of {', '.join(SPLITS)}")
    rows, source = _rows(data_dir)
    name = f"bigcodebench-{split}"
    problems = []
    for row in rows:
        where = f"{source}: task_id {row['task_id']!r}"
        problems.append(Problem(
            id=row["task_id"], dataset=name, prompt=row[f"{split}_prompt"], entry_point=row["entry_point"],
            visible_tests=(), hidden_tests=(row["test"],), source=source,
            canonical_solution=f"{row['complete_prompt']}{row['canonical_solution']}", kind="unittest",
            starter_code=row["code_prompt"], libs=_libs(row["libs"], where)))
    return Dataset(name, tuple(problems), (source,))

