"""What the importers share: reading JSONL (plain or gzip-compressed) with line numbers, listing the files of
a folder, hashing, ``--arm``/``--dataset`` applied to a tool's log, and the manifest entry of an input file."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sotacheck.core.errors import UsageError, describe_json_error
from sotacheck.core.outcomes import OutcomeError

if TYPE_CHECKING:
    import pandas as pd


def jsonl_rows(path: Path, repairs: list[str] | None = None) -> Iterable[tuple[int, dict[str, Any]]]:
    """JSON objects, one per line. A line with stray text before its object (MapCoder's ablation files
    start with a Windows path) is read from its first ``{`` and the repair is noted in ``repairs``.
    A ``.gz`` file is decompressed as it is read."""
    with open_text(path) as fh:
        for number, line in enumerate(_lines(fh, path), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                start = line.find("{")
                try:
                    row = json.loads(line[start:]) if start > 0 and repairs is not None else None
                except json.JSONDecodeError:
                    row = None
                if row is None or repairs is None:
                    raise OutcomeError(f"{path}:{number}: invalid JSON ({describe_json_error(exc)})") from None
                repairs.append(f"{path.name}:{number}: ignored {start} stray characters before the JSON object")
            if not isinstance(row, dict):
                raise OutcomeError(f"{path}:{number}: expected a JSON object")
            yield number, row


def open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _lines(fh: IO[str], path: Path) -> Iterator[str]:
    """The lines of an open text file; a damaged ``.gz`` is an ``OutcomeError`` naming the file."""
    try:
        yield from fh
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{path}: cannot read ({exc})") from None


def uncompressed_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except (OSError, EOFError) as exc:
        raise OutcomeError(f"{path}: cannot read ({exc})") from None
    return digest.hexdigest()


def files_of(path: Path, *patterns: str) -> list[Path]:
    """The files of ``path`` matching ``patterns`` (or ``path`` itself); a folder holding a file both plain
    and gzip-compressed is an error, since either could be the one meant."""
    if path.is_dir():
        files = sorted({file for pattern in patterns for file in path.glob(pattern)})
        if not files:
            raise OutcomeError(f"{path}: no {' or '.join(patterns)} files")
        names = {file.name for file in files}
        for file in files:
            if file.suffix == ".gz" and file.name.removesuffix(".gz") in names:
                raise OutcomeError(f"{file.parent}: {file.name.removesuffix('.gz')} is there both plain and as "
                                   f"{file.name}; keep one")
        return files
    if not path.is_file():
        raise OutcomeError(f"{path} does not exist")
    return [path]


def renamed(table: pd.DataFrame, arm: str | None, dataset: str | None, what: str = "the log") -> pd.DataFrame:
    """``--arm``/``--dataset`` given for an input whose own names would otherwise be used: e.g. ``--dataset
    humaneval`` for a task on HumanEval's problems, to be compared with a rerun on them. ``--arm`` renames the
    one arm of ``what``; it is an error where there are several."""
    if arm is not None:
        arms = sorted(set(table["arm"]))
        if len(arms) > 1:
            raise UsageError(f"{{arm}} names one arm, but {what} holds {len(arms)}: {', '.join(arms)}",
                             parameters=("arm",))
        table = table.assign(arm=arm, pipeline=arm)
    if dataset is not None:
        table = table.assign(dataset=dataset)
    return table


def one_file(path: Path, what: str) -> Path:
    """``path`` as one readable file: a folder or a missing path is an error saying what was expected."""
    if path.is_dir():
        raise OutcomeError(f"{path}: a folder, but {what} is one file")
    if not path.is_file():
        raise OutcomeError(f"{path} does not exist")
    return path
