"""A long table's file read as it is: CSV, JSON lines or Parquet, each row with the place an error names.

Column names are matched without regard to case or surrounding spaces (``Model`` is ``model``). A CSV is
read as text (each cell is parsed by the importer, so that ``1.0`` and ``true`` mean what they say); JSON
lines keep their JSON types; Parquet its column types.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sotacheck.audit.importers.helpers import jsonl_rows, one_file
from sotacheck.audit.importers.sniff import PARQUET_MAGIC, guess_format, head_bytes
from sotacheck.core.outcomes import OutcomeError

FORMATS = {"csv": "CSV", "jsonl": "JSON lines", "parquet": "Parquet"}


def format_of(path: Path) -> str | None:
    """``csv``, ``jsonl`` or ``parquet`` from the file's suffix (``.gz`` ignored), or None."""
    bare = path.name.lower().removesuffix(".gz")
    for suffix, name in ((".csv", "csv"), (".tsv", "csv"), (".jsonl", "jsonl"), (".ndjson", "jsonl"),
                         (".parquet", "parquet"), (".pq", "parquet")):
        if bare.endswith(suffix):
            return name
    return None


@dataclass(frozen=True)
class TableFile:
    """A long table as read, before its columns are interpreted.

    Attributes
    ----------
    file : the file.
    frame : its rows, with lower-cased column names.
    lines : each row's line in the file (CSV, JSONL) or 1-based row number (Parquet).
    by_line : whether ``lines`` are file lines (``file:7``) or row numbers (``file: row 7``).
    """

    file: Path
    frame: pd.DataFrame
    lines: np.ndarray
    by_line: bool

    def at(self, row: int) -> str:
        """The place of the frame's ``row`` (0-based), as error messages name it."""
        return f"{self.file}:{self.lines[row]}" if self.by_line else f"{self.file}: row {self.lines[row]}"

    def line(self, row: int) -> str:
        """``line 7`` or ``row 7``: the place of ``row`` within the file."""
        return f"{'line' if self.by_line else 'row'} {self.lines[row]}"

    @property
    def first_line(self) -> int | None:
        """The first row's line where the rows are consecutive lines (what ``normalise`` takes), else None."""
        consecutive = len(self.lines) and int(self.lines[-1] - self.lines[0]) == len(self.lines) - 1
        return int(self.lines[0]) if self.by_line and consecutive else None


def read_table_file(path: Path, fmt: str) -> TableFile:
    """Read ``path`` as ``fmt`` (``csv``, ``jsonl``, ``parquet``).

    Raises
    ------
    OutcomeError
        A folder, a missing or empty file, a file of another table format by its suffix, one that does not
        parse (binary garbage), or two columns whose names differ only in case.
    """
    file = one_file(path, f"a {FORMATS[fmt]} table")
    suffix_format = format_of(file)
    if suffix_format is not None and suffix_format != fmt:
        raise OutcomeError(f"{file}: a {FORMATS[suffix_format]} file by its name, read as {FORMATS[fmt]}; "
                           f"use `sotacheck import {suffix_format}` (or `table`, which goes by the suffix)")
    if file.stat().st_size == 0:
        raise OutcomeError(f"{file}: the file is empty (expected a table with one row per system and problem)")
    if fmt == "csv":
        table = _read_csv(file)
    elif fmt == "jsonl":
        table = _read_jsonl(file)
    else:
        table = _read_parquet(file)
    names = [str(column).strip().lower() for column in table.frame.columns]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise OutcomeError(f"{file}: column(s) {', '.join(doubled)} given twice (names are matched ignoring case)")
    table.frame.columns = names
    if table.frame.empty:
        raise OutcomeError(f"{file}: the table has a header but no rows")
    return table


def _read_csv(file: Path) -> TableFile:
    separator = "\t" if file.name.lower().removesuffix(".gz").endswith(".tsv") else ","
    try:
        frame = pd.read_csv(file, sep=separator, dtype=str, keep_default_na=False, na_values=[""],
                            skip_blank_lines=False)
    except pd.errors.EmptyDataError:
        raise OutcomeError(f"{file}: the file is empty (expected a header line and one row per cell)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, EOFError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OutcomeError(f"{file}: cannot parse as CSV ({first}){guess_format(file)}") from None
    if "\x00" in "".join(map(str, frame.columns)):
        raise OutcomeError(f"{file}: cannot parse as CSV (binary content){guess_format(file)}")
    blank = frame.isna().all(axis=1).to_numpy()
    lines = np.arange(2, len(frame) + 2)[~blank]
    return TableFile(file, frame[~blank].reset_index(drop=True), lines, True)


def _read_jsonl(file: Path) -> TableFile:
    records, lines = [], []
    try:
        for number, row in jsonl_rows(file):
            records.append(row)
            lines.append(number)
    except OutcomeError as exc:
        raise OutcomeError(f"{exc}{guess_format(file)}") from None
    if not records:
        raise OutcomeError(f"{file}: no JSON objects in the file (expected one per system and problem)")
    return TableFile(file, pd.DataFrame.from_records(records), np.asarray(lines), True)


def _read_parquet(file: Path) -> TableFile:
    if head_bytes(file) != PARQUET_MAGIC:
        raise OutcomeError(f"{file}: not a Parquet file (no PAR1 magic number){guess_format(file)}")
    try:
        frame = pd.read_parquet(file)
    except (OSError, ValueError) as exc:
        raise OutcomeError(f"{file}: cannot read as Parquet ({str(exc).splitlines()[0]})") from None
    return TableFile(file, frame.reset_index(drop=True), np.arange(1, len(frame) + 1), False)
