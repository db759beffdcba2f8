"""Export of a run store's cells as the outcome table ``audit/`` reads (schema in ``audit/outcomes.py``):
``outcomes.parquet``, ``outcomes.csv`` and ``run.json`` beside ``store.sqlite``, written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from reruns.store.run_store import RunStore

COLUMNS = ["arm", "dataset", "problem", "repeat", "passed", "status", "calls", "prompt_tokens", "completion_tokens",
           "first_pass_attempt", "wall_s"]


def outcome_frame(store: RunStore) -> pd.DataFrame:
    rows = store.cells()
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "detail", "finished_at"]) if rows else pd.DataFrame(columns=COLUMNS)
    frame["passed"] = pd.array([None if s == "error" else bool(p) for s, p in zip(frame["status"], frame["passed"],
                                                                                  strict=True)], dtype="boolean")
    for column in ("calls", "prompt_tokens", "completion_tokens", "first_pass_attempt"):
        frame[column] = pd.to_numeric(frame[column]).astype("Int64")
    return frame[COLUMNS]


def export_outcomes(store: RunStore, run_dir: Path, meta: dict[str, Any]) -> pd.DataFrame:
    frame = outcome_frame(store)
    for name, write in (("outcomes.parquet", lambda p: frame.to_parquet(p, index=False)),
                        ("outcomes.csv", lambda p: frame.to_csv(p, index=False)),
                        ("run.json", lambda p: Path(p).write_text(json.dumps(meta, indent=2, default=str) + "\n"))):
        tmp = run_dir / f".{name}.tmp"
        write(tmp)
        os.replace(tmp, run_dir / name)
    return frame
