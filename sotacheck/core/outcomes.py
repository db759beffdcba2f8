"""The outcome table's cells: validated and typed once, whatever wrote them (a rerun, an importer, a user's
CSV). The columns are listed in :mod:`sotacheck.core.rundir`.

Every bad cell is a one-line :class:`OutcomeError` naming the place (``file:line`` when the caller gives
the table's first line, else ``row N``), the column and the value. Normalisations, each tested:

- ``arm``, ``dataset`` and ``problem`` lose surrounding whitespace (``"direct "`` is ``direct``, not a
  second arm); an empty one is an error.
- ``repeat`` must be a whole number ≥ 0 (``1.0`` is 1; ``1.7`` and ``-1`` are errors).
- ``passed`` is true/false, 1/0, yes/no, pass(ed)/fail(ed), or empty; anything else (``2``) is an error.
- ``status`` may be empty (then it follows ``passed``: empty ``passed`` is ``error``); given, it must
  agree with ``passed`` (``passed=true`` with ``status=failed`` is an error). An ``error`` cell's verdict
  is never counted, whatever ``passed`` says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sotacheck.core.arms import PARAM_PREFIX, is_missing, structure_legacy_arms
from sotacheck.core.errors import InputError

REQUIRED = ("arm", "dataset", "problem", "repeat", "passed")
OPTIONAL_INT = ("calls", "prompt_tokens", "completion_tokens", "first_pass_attempt")
STATUSES = ("passed", "failed", "error")
KEY = ["arm", "dataset", "problem", "repeat"]
_TRUE = ("true", "1", "1.0", "yes", "pass", "passed")
_FALSE = ("false", "0", "0.0", "no", "fail", "failed")
_EMPTY = ("", "na", "nan", "none", "null", "<na>")


class OutcomeError(InputError, ValueError):
    """An outcome table, manifest or import source that cannot be used as it is; the message names the place."""


def require_file(path: Path) -> None:
    """An input file that is not there, or is a directory, as a one-line error naming it."""
    if path.is_dir():
        raise OutcomeError(f"{path}: a directory, where a file is expected")
    if not path.is_file():
        raise OutcomeError(f"{path} does not exist")


def as_bool(value: Any, where: str) -> bool | None:
    """A verdict cell read as True, False or None (empty); anything else is an error naming ``where``."""
    if is_missing(value):
        return None
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        if lowered in _EMPTY:
            return None
    raise OutcomeError(f"{where}: cannot read {value!r} as passed/failed (true/false, 1/0, yes/no, pass/fail, "
                       "passed/failed, or empty)")


def normalise(frame: pd.DataFrame, where: str, first_line: int | None = None) -> pd.DataFrame:
    """Validate and type an outcome table; errors name ``where`` and the offending row, column and value.

    ``first_line`` is the file line of the table's first row (2 for a CSV with a header), so that errors
    say ``file:line``; without it they say ``row N`` (1-based).
    """
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise OutcomeError(f"{where}: missing column(s) {', '.join(missing)}")
    if frame.empty:
        raise OutcomeError(f"{where}: the outcome table has no rows")
    out = frame.reset_index(drop=True)

    def at(row: int, column: str) -> str:
        place = f"{where}:{first_line + row}" if first_line is not None else f"{where}: row {row + 1}"
        return f"{place}: column `{column}`"

    for column in ("arm", "dataset", "problem", *(["pipeline"] if "pipeline" in out.columns else [])):
        out[column] = _by_value(out[column], _name, column, at)
    if "pipeline" not in out.columns:
        out = structure_legacy_arms(out)
    out["repeat"] = _by_value(out["repeat"], _repeat, "repeat", at).astype(np.int64)
    passed = _by_value(out["passed"], as_bool, "passed", at)
    verdict = np.select([passed == True, passed == False], [1, 0], 2)  # noqa: E712 (an object array)
    given = out["status"] if "status" in out.columns else None
    if given is None or given.isna().all():
        out["status"] = np.array(["failed", "passed", "error"], dtype=object)[verdict]
    else:
        pairs = pd.Series(list(zip(given.where(given.notna(), None), verdict, strict=True)), index=out.index)
        out["status"] = _by_value(pairs, lambda pair, where: _status(pair[0], _VERDICTS[pair[1]], where), "status",
                                  at)
    counted = (out["status"].to_numpy() != "error") & (verdict != 2)
    out["passed"] = pd.arrays.BooleanArray(verdict == 1, ~counted)
    for column in OPTIONAL_INT:
        out[column] = pd.to_numeric(out[column], errors="coerce").astype("Int64") if column in out else \
            pd.arrays.IntegerArray(np.zeros(len(out), dtype=np.int64), np.ones(len(out), dtype=bool))
    duplicated = out.duplicated(KEY, keep=False)
    if duplicated.any():
        first = out[duplicated].iloc[0]
        raise OutcomeError(f"{where}: duplicated cell arm={first['arm']!r} dataset={first['dataset']!r} "
                           f"problem={first['problem']!r} repeat={first['repeat']} "
                           f"({int(duplicated.sum())} rows involved)")
    params = sorted(c for c in out.columns if c.startswith(PARAM_PREFIX))
    columns = ["arm", "pipeline", *params, "dataset", "problem", "repeat", "passed", "status", *OPTIONAL_INT]
    extra = [c for c in out.columns if c not in columns]
    return out[columns + extra].sort_values(KEY, kind="stable").reset_index(drop=True)


_VERDICTS = (False, True, None)


def _by_value(column: pd.Series, convert: Callable[[Any, str], Any], name: str,
              at: Callable[[int, str], str]) -> np.ndarray:
    """``convert(value, where)`` applied once per distinct value of ``column`` (a table of a million cells has a
    few hundred distinct names and verdicts); a value it rejects is raised again with the first row holding it."""
    codes, distinct = pd.factorize(column, use_na_sentinel=False)
    converted: list[Any] = []
    for value in distinct:
        try:
            converted.append(convert(value, ""))
        except OutcomeError:
            first = int(np.argmax(codes == len(converted)))
            convert(column.iloc[first], at(first, name))
            raise  # convert accepted the value in its row: cannot happen, but never pass a bad value silently
    result = np.empty(len(converted), dtype=object)
    result[:] = converted
    return result[codes]


def _name(value: Any, where: str) -> str:
    text = "" if is_missing(value) else str(value).strip()
    if not text:
        raise OutcomeError(f"{where} is empty")
    return text


def _repeat(value: Any, where: str) -> int:
    if is_missing(value) or (isinstance(value, str) and not value.strip()):
        raise OutcomeError(f"{where} is empty (a repeat number, 0 for a single run)")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise OutcomeError(f"{where}: {value!r} is not a whole number") from None
    if not math.isfinite(number) or number != int(number):
        raise OutcomeError(f"{where}: {value!r} is not a whole number")
    if number < 0:
        raise OutcomeError(f"{where}: {value!r} is negative (repeats count from 0)")
    return int(number)


def _status(given: Any, passed: bool | None, where: str) -> str:
    derived = "error" if passed is None else "passed" if passed else "failed"
    if is_missing(given) or (isinstance(given, str) and not given.strip()):
        return derived
    status = str(given).strip()
    if status not in STATUSES:
        raise OutcomeError(f"{where}: unknown value {status!r}; allowed: {', '.join(STATUSES)}")
    if status != "error" and status != derived:
        shown = "empty" if passed is None else str(passed).lower()
        raise OutcomeError(f"{where}: {status!r} contradicts `passed` ({shown})")
    return status
