"""Long tables: one row per system × problem (× sample), in CSV, JSON lines or Parquet.

Columns (names matched ignoring case):

- the system: ``arm``, else ``system``, else ``model`` (``arm`` and ``system`` together are an error);
- the problem: exactly one of ``problem``, ``task_id``, ``instance_id``;
- ``dataset`` (else ``--dataset``);
- the outcome, in one of three shapes:

  ========================================  ===========================================================
  ``passed`` (0/1, true/false; ``repeat``)   one verdict per row; without ``repeat``, one row per system
                                             and problem (a second is an error naming both rows)
  ``passed`` + ``samples``, or               k of n samples passed: n rows (repeats 0..n-1), the first k
  ``n_passed`` + ``n_samples``               passed
  ``pass_rate``/``pass@1``/``fraction``/     a fraction k/n with n from ``samples`` or ``--sample-count``;
  ``score`` (+ ``samples``)                  it must be k/n for a whole k (within 1e-9)
  ========================================  ===========================================================

- per-system facts, one value per system, kept in the manifest's ``systems``: ``model`` (where it is not
  the system column), ``method``, ``release_date``, ``open_weights``, ``harness`` and any ``meta.<name>``.

Every other column is kept in the outcome table as it is. ``arm, dataset, problem, repeat, passed`` with
optional ``status`` and token columns is the outcome table's own schema (:mod:`sotacheck.core.rundir`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sotacheck.audit.importers.base import FunctionImporter, ImportOptions, Result
from sotacheck.audit.importers.sniff import SYSTEM_COLUMNS, table_columns
from sotacheck.audit.importers.table_files import FORMATS, TableFile, format_of, read_table_file
from sotacheck.core.arms import is_missing
from sotacheck.core.errors import UsageError
from sotacheck.core.outcomes import OutcomeError, as_bool, normalise
from sotacheck.core.provenance import file_sha256

PROBLEM_COLUMNS = ("problem", "task_id", "instance_id")
FRACTION_COLUMNS = ("pass_rate", "pass@1", "fraction", "score")
SYSTEM_FIELDS = ("model", "method", "release_date", "open_weights", "harness")
COUNT_COLUMNS = (("passed", "samples"), ("n_passed", "n_samples"))
FRACTION_TOLERANCE = 1e-9


def _system_column(table: TableFile) -> str:
    columns = set(table.frame.columns)
    named = [c for c in ("arm", "system") if c in columns]
    if len(named) == 2:
        raise OutcomeError(f"{table.file}: both `arm` and `system` columns; keep the one that names the system")
    if named:
        return named[0]
    if "model" in columns:
        return "model"
    raise OutcomeError(f"{table.file}: no system column (`arm`, `system` or `model`); its columns: "
                       f"{', '.join(table.frame.columns)}")


def _problem_column(table: TableFile) -> str:
    named = [c for c in PROBLEM_COLUMNS if c in table.frame.columns]
    if len(named) != 1:
        what = "no problem column" if not named else f"{len(named)} problem columns ({', '.join(named)})"
        raise OutcomeError(f"{table.file}: {what}; give exactly one of {', '.join(PROBLEM_COLUMNS)} "
                           f"(its columns: {', '.join(table.frame.columns)})")
    return named[0]


def _names(table: TableFile, column: str) -> np.ndarray:
    """A name column as stripped text; an empty cell is an error naming its row."""
    values = table.frame[column]
    text = values.astype(str).str.strip().to_numpy(dtype=object)
    empty = values.isna().to_numpy() | (text == "")
    if empty.any():
        raise OutcomeError(f"{table.at(int(np.argmax(empty)))}: column `{column}` is empty")
    return text


def _shown(value: Any) -> str:
    """A cell as written: a number plainly (a CSV's cells are text), anything else quoted."""
    try:
        float(value)
    except (TypeError, ValueError):
        return repr(value)
    return str(value)


def _whole(table: TableFile, column: str, minimum: int) -> np.ndarray:
    """A count column as integers ≥ ``minimum``; the first bad cell is an error naming its row and value."""
    raw = table.frame[column]
    numbers = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(numbers) | (numbers != np.round(numbers)) | (numbers < minimum)
    if bad.any():
        row = int(np.argmax(bad))
        value = raw.iloc[row]
        why = "is empty" if is_missing(value) else f"is {_shown(value)}, not a whole number" + \
            (f" ≥ {minimum}" if np.isfinite(numbers[row]) and numbers[row] == round(numbers[row]) else "")
        raise OutcomeError(f"{table.at(row)}: column `{column}` {why}")
    return numbers.astype(np.int64)


def _fraction_counts(table: TableFile, column: str, samples: np.ndarray) -> np.ndarray:
    raw = table.frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    unreadable = ~np.isfinite(values)
    if unreadable.any():
        row = int(np.argmax(unreadable))
        what = "is empty" if is_missing(raw.iloc[row]) else f"is {_shown(raw.iloc[row])}, not a number"
        raise OutcomeError(f"{table.at(row)}: column `{column}` {what}")
    outside = (values < 0) | (values > 1)
    if outside.any():
        row = int(np.argmax(outside))
        hint = " (a percentage? give fractions)" if values[row] <= 100 else ""
        raise OutcomeError(f"{table.at(row)}: column `{column}` is {_shown(raw.iloc[row])}, outside [0, 1]{hint}")
    passes = np.rint(values * samples)
    off = np.abs(values - passes / samples) > FRACTION_TOLERANCE
    if off.any():
        row = int(np.argmax(off))
        raise OutcomeError(f"{table.at(row)}: column `{column}` is {_shown(raw.iloc[row])}, not k/{samples[row]} for a "
                           f"whole k (nearest {int(passes[row])}/{samples[row]}); check the sample count")
    return passes.astype(np.int64)


def _check_once(table: TableFile, keys: pd.DataFrame, what: str) -> None:
    """Each system × dataset × problem at most once; the second row of a pair is an error naming both."""
    again = keys.duplicated(keep="first").to_numpy()
    if again.any():
        row = int(np.argmax(again))
        first = int(np.argmax((keys == keys.iloc[row]).all(axis=1).to_numpy()))
        system, _, problem = keys.iloc[row]
        raise OutcomeError(f"{table.at(row)}: system {system!r} has problem {problem!r} twice (first at "
                           f"{table.line(first)}); {what}")


def _systems(table: TableFile, systems: np.ndarray, system_column: str) -> dict[str, dict[str, Any]]:
    """Each system's per-system facts; a fact with two values for one system is an error naming both."""
    columns = [c for c in table.frame.columns if (c in SYSTEM_FIELDS or c.startswith("meta.")) and c != system_column]
    facts: dict[str, dict[str, Any]] = {str(s): {} for s in dict.fromkeys(systems)}
    for column in columns:
        values = table.frame[column].astype(object).where(table.frame[column].notna(), None)
        for system, group in values.groupby(systems, sort=False):
            distinct = list(dict.fromkeys(group))
            if len(distinct) > 1:
                raise OutcomeError(f"{table.file}: system {system!r} has {len(distinct)} values in column "
                                   f"`{column}` ({distinct[0]!r}, {distinct[1]!r}); it must be one per system")
            value = distinct[0].item() if hasattr(distinct[0], "item") else distinct[0]
            if column == "open_weights":
                value = as_bool(value, f"{table.at(int(group.index[0]))}: column `open_weights`")
            elif column.startswith("meta.") and isinstance(value, str):
                value = _number_or_text(value)
            facts[str(system)][column] = value
    return facts


def _number_or_text(value: str) -> Any:
    """A CSV cell of a ``meta.`` column as the number it spells (``70`` → 70, ``0.5`` → 0.5), else the text."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


_OUTCOME_COLUMNS = frozenset({"passed", "repeat", "status", "samples", "n_passed", "n_samples", *FRACTION_COLUMNS})


def _numbers_kept(frame: pd.DataFrame, dropped: set[str]) -> pd.DataFrame:
    """A CSV's other columns (``wall_s``, ``calls``) as numbers where every cell is one, as pandas infers them."""
    out = frame.copy()
    for column in out.columns:
        if column in dropped or column in _OUTCOME_COLUMNS:
            continue
        numbers = pd.to_numeric(out[column], errors="coerce")
        if numbers.notna().sum() == out[column].notna().sum():
            out[column] = numbers
    return out


def _expand(base: pd.DataFrame, passes: np.ndarray, samples: np.ndarray) -> pd.DataFrame:
    """k of n as n rows: repeats 0..n-1, the first k passed."""
    index = np.repeat(np.arange(len(base)), samples)
    starts = np.repeat(np.cumsum(samples) - samples, samples)
    repeat = np.arange(len(index)) - starts
    out = base.iloc[index].reset_index(drop=True)
    out["repeat"] = repeat
    out["passed"] = np.where(repeat < np.repeat(passes, samples), "true", "false")
    return out


def _shape(table: TableFile, options: ImportOptions) -> str:
    columns = set(table.frame.columns)
    fractions = [c for c in FRACTION_COLUMNS if c in columns]
    counts = [pair for pair in COUNT_COLUMNS if pair[0] in columns and pair[1] in columns]
    half = [c for pair in COUNT_COLUMNS[1:] for c in pair if c in columns and pair not in counts]
    if half:
        raise OutcomeError(f"{table.file}: column `{half[0]}` without its pair (`n_passed` with `n_samples`)")
    shapes = [*(["counts"] if counts else []), *(["fraction"] if fractions else [])]
    if len(fractions) > 1 or len(shapes) > 1 or (counts and counts[0][0] != "passed" and "passed" in columns):
        found = [c for c in ("passed", "n_passed", *FRACTION_COLUMNS) if c in columns]
        raise OutcomeError(f"{table.file}: several outcome columns ({', '.join(found)}); keep one")
    shape = shapes[0] if shapes else "verdicts" if "passed" in columns else None
    if shape is None:
        raise OutcomeError(f"{table.file}: no outcome column: give `passed` (0/1), `passed` and `samples` (k of "
                           f"n), or a fraction ({', '.join(FRACTION_COLUMNS)}) with its sample count")
    if options.sample_count is not None and (shape != "fraction" or "samples" in columns):
        raise UsageError(f"{{sample_count}} gives the sample count of a fraction column without a `samples` column; "
                         f"{table.file} has {'a `samples` column' if 'samples' in columns else 'no fraction'}",
                         parameters=("sample_count",))
    if shape != "verdicts" and "repeat" in columns:
        raise OutcomeError(f"{table.file}: a `repeat` column with {shape}: each row holds all of a system's "
                           f"samples of a problem")
    return shape


def read_long_table(path: Path, options: ImportOptions, fmt: str) -> Result:
    """A long table (see the module docstring) as an outcome table and manifest fields (``systems``).

    Raises
    ------
    OutcomeError
        A one-line message naming the file and, for a bad cell, its row and column.
    UsageError
        ``--dataset`` for a table with a ``dataset`` column, ``--sample-count`` where no fraction needs it, or
        ``--arm`` for a table of several systems.
    """
    table = read_table_file(path, fmt)
    frame = table.frame
    system_column, problem_column = _system_column(table), _problem_column(table)
    if "dataset" in frame.columns and options.dataset is not None:
        raise UsageError(f"{{dataset}}: {table.file} has a `dataset` column", parameters=("dataset",))
    if "dataset" not in frame.columns and options.dataset is None:
        raise OutcomeError(f"{table.file}: no `dataset` column; give the dataset with {{dataset}}",
                           parameters=("dataset",))
    shape = _shape(table, options)
    systems = _names(table, system_column)
    if options.arm is not None:
        if len(set(systems)) > 1:
            raise UsageError(f"{{arm}} names one system, but {table.file} holds {len(set(systems))}",
                             parameters=("arm",))
        systems = np.full(len(frame), options.arm, dtype=object)
    facts = _systems(table, systems, system_column)
    datasets = _names(table, "dataset") if options.dataset is None else np.full(len(frame), options.dataset, object)
    problems = _names(table, problem_column)
    dropped = {system_column, problem_column, "dataset", *(c for c in frame.columns if c in SYSTEM_FIELDS
                                                           or c.startswith("meta."))}
    keys = pd.DataFrame({"arm": systems, "dataset": datasets, "problem": problems})
    if fmt == "csv":  # read as text: the columns kept as they are get the numbers they spell back
        frame = _numbers_kept(frame, dropped)
    if shape != "verdicts" or "repeat" not in frame.columns:
        _check_once(table, keys, "give each sample its `repeat`, or counts (`passed` of `samples`)"
                    if shape == "verdicts" else "give one row per system and problem")
    if shape == "verdicts":
        rows = pd.concat([keys, frame.drop(columns=[c for c in dropped if c in frame.columns])], axis=1)
        if "repeat" not in rows.columns:
            rows["repeat"] = 0
        else:  # a CSV is read as text: numbers as numbers, so that a bad one is shown as written (1.7, not '1.7')
            numbers = pd.to_numeric(rows["repeat"], errors="coerce")
            rows["repeat"] = numbers.astype(object).where(numbers.notna(), rows["repeat"])
        outcomes = normalise(rows, str(table.file), first_line=table.first_line)
    else:
        count, total = next(p for p in COUNT_COLUMNS if p[0] in frame.columns) if shape == "counts" \
            else (next(c for c in FRACTION_COLUMNS if c in frame.columns), "samples")
        if total not in frame.columns and options.sample_count is None:
            raise OutcomeError(f"{table.file}: fractions in `{count}` without a sample count; give it as a "
                               f"`samples` column or as {{sample_count}}", parameters=("sample_count",))
        samples = _whole(table, total, 1) if total in frame.columns else np.full(len(frame), options.sample_count)
        if options.sample_count is not None and options.sample_count < 1:
            raise UsageError(f"{{sample_count}} must be at least 1, got {options.sample_count}",
                             parameters=("sample_count",))
        passes = _whole(table, count, 0) if shape == "counts" else _fraction_counts(table, count, samples)
        over = passes > samples
        if over.any():
            row = int(np.argmax(over))
            raise OutcomeError(f"{table.at(row)}: `{count}` is {passes[row]}, more than `{total}` ({samples[row]})")
        kept = frame.drop(columns=[c for c in {*dropped, count, total} if c in frame.columns])
        outcomes = normalise(_expand(pd.concat([keys, kept], axis=1), passes, samples), str(table.file))
    source = {"file": str(table.file), "sha256": file_sha256(table.file), "format": fmt, "shape": shape,
              "system_column": system_column, "problem_column": problem_column}
    return outcomes, {"source": fmt, "files": [source], "systems": facts}


def _table_importer(name: str, fmt: str | None) -> FunctionImporter:
    def recognises(path: Path) -> bool:
        found = format_of(path)
        columns = table_columns(path)
        return (found is not None and (fmt is None or found == fmt) and bool(SYSTEM_COLUMNS & columns)
                and bool(set(PROBLEM_COLUMNS) & columns))

    def read(path: Path, options: ImportOptions) -> Result:
        found = fmt or format_of(path)
        if found is None:
            raise OutcomeError(f"{path}: cannot tell the table's format from its name (expected .csv, .tsv, .jsonl "
                               f"or .parquet, optionally .gz)")
        return read_long_table(path, options, found)

    reads = f"a long table in {FORMATS[fmt]}" if fmt else "a long table (.csv, .jsonl or .parquet, by suffix)"
    return FunctionImporter(name, reads, frozenset({"arm", "dataset", "sample_count"}), recognises, read)


CSV = _table_importer("csv", "csv")
JSONL = _table_importer("jsonl", "jsonl")
PARQUET = _table_importer("parquet", "parquet")
TABLE = _table_importer("table", None)


def import_table(path: str | Path, fmt: str | None = None, **options: Any) -> Result:
    """A long table read directly (``fmt``: ``csv``, ``jsonl``, ``parquet``; default by suffix); ``options``
    are :class:`ImportOptions` fields (``dataset``, ``sample_count``, ``arm``)."""
    return (TABLE if fmt is None else {"csv": CSV, "jsonl": JSONL, "parquet": PARQUET}[fmt]).read(
        Path(path), ImportOptions(**options))
