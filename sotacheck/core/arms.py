"""An arm's identity: the pipeline and its typed parameters, with a display label made from them.

The outcome table stores the identity as columns (``pipeline`` and ``param.<name>``); the label
(``codesim[d=2,p=3]``) is for people. Nothing reads parameters back out of a label, except
:func:`structure_legacy_arms`, which migrates tables written before the columns existed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd
import yaml

PARAM_PREFIX = "param."
_LEGACY_LABEL = re.compile(r"^(?P<pipeline>[A-Za-z_][\w-]*)\[(?P<params>[^\[\]]*)\]$")


def arm_label(pipeline: str, params: Mapping[str, Any]) -> str:
    """``codesim`` with ``{"p": 3, "d": 2}`` → ``codesim[d=2,p=3]`` (parameters sorted by name)."""
    if not params:
        return pipeline
    return f"{pipeline}[{','.join(f'{k}={params[k]}' for k in sorted(params))}]"


def arm_columns(pipeline: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The outcome-table columns that identify an arm."""
    return {"arm": arm_label(pipeline, params), "pipeline": pipeline,
            **{f"{PARAM_PREFIX}{name}": value for name, value in params.items()}}


def parameters_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of one outcome row (``param.*`` columns that are set), by name."""
    found = {}
    for column, value in row.items():
        if str(column).startswith(PARAM_PREFIX) and not is_missing(value):
            found[str(column).removeprefix(PARAM_PREFIX)] = value.item() if hasattr(value, "item") else value
    return found


def is_missing(value: Any) -> bool:
    """Whether a table cell is empty (None, NaN, pd.NA, NaT); a value pandas cannot judge is not."""
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def structure_legacy_arms(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``pipeline`` and ``param.*`` columns to a table that has only labels (format version 1).

    A label ``name[k=v,...]`` gives the pipeline ``name`` and its parameters, each value read as YAML
    (``3`` an integer, ``direct`` a string); any other label (an imported log's arm) is its own pipeline
    with no parameters.
    """
    out = frame.copy()
    parsed = {label: _parse_legacy_label(label) for label in out["arm"].unique()}
    out["pipeline"] = out["arm"].map(lambda label: parsed[label][0])
    names = sorted({name for _, params in parsed.values() for name in params})
    for name in names:
        values = [parsed[label][1].get(name) for label in out["arm"]]
        out[f"{PARAM_PREFIX}{name}"] = _typed_column(values)
    return out


def _parse_legacy_label(label: str) -> tuple[str, dict[str, Any]]:
    match = _LEGACY_LABEL.match(label)
    if not match:
        return label, {}
    params: dict[str, Any] = {}
    for item in filter(None, match["params"].split(",")):
        name, equals, value = item.partition("=")
        if not equals:
            return label, {}
        params[name.strip()] = yaml.safe_load(value)
    return match["pipeline"], params


def _typed_column(values: list[Any]) -> Any:
    """Integers as Int64, numbers as Float64, anything else as strings (None where unset)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.array(values, dtype="Int64")
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pd.array(values, dtype="Float64")
    return [None if v is None else str(v) for v in values]
