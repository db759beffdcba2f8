"""A run store's cells as the outcome table, and its calls as the call table (their schemas and writer are
``sotacheck.core.rundir``'s)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from sotacheck.core.rundir import CALL_COLUMNS
from sotacheck.reruns.store.run_store import RunStore

COLUMNS = ["arm", "dataset", "problem", "repeat", "passed", "status", "calls", "prompt_tokens", "completion_tokens",
           "first_pass_attempt", "wall_s"]


def outcome_frame(store: RunStore, arms: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per finished cell, with each arm's identity columns (``arms``: label → ``arm_columns``)."""
    rows = store.cells()
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "detail", "finished_at"]) if rows else pd.DataFrame(columns=COLUMNS)
    frame["passed"] = pd.array([None if s == "error" else bool(p) for s, p in zip(frame["status"], frame["passed"],
                                                                                  strict=True)], dtype="boolean")
    for column in ("calls", "prompt_tokens", "completion_tokens", "first_pass_attempt"):
        frame[column] = pd.to_numeric(frame[column]).astype("Int64")
    identity = pd.DataFrame([{**arms[label]} if label in arms else {"arm": label, "pipeline": label}
                             for label in frame["arm"]], index=frame.index)
    for column in identity.columns:
        if column != "arm":
            frame[column] = identity[column].convert_dtypes()
    return frame[[*COLUMNS, *(c for c in identity.columns if c != "arm")]]


def calls_frame(store: RunStore) -> pd.DataFrame:
    """One row per model call, in the order prepared (``sotacheck.core.rundir.CALL_COLUMNS``)."""
    frame = pd.DataFrame(store.call_records(), columns=list(CALL_COLUMNS))
    for column in ("repeat", "prompt_tokens", "completion_tokens"):
        frame[column] = pd.to_numeric(frame[column]).astype("Int64")
    for column in ("arm", "dataset", "problem", "stage", "call_path", "state", "finish_reason", "served_from"):
        frame[column] = frame[column].astype("string")
    return frame
