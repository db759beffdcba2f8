"""MapCoder's and CodeSim's released result files (``{model}-{strategy}-...-Python3-0-1.jsonl``, plain or
``.jsonl.gz``, or a folder of them): one arm per file, one row per line (``task_id``, ``is_solved``)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from sotacheck.audit.importers.base import FunctionImporter
from sotacheck.audit.importers.helpers import files_of, jsonl_rows, uncompressed_sha256
from sotacheck.audit.importers.sniff import first_document
from sotacheck.core.outcomes import OutcomeError, as_bool
from sotacheck.core.provenance import file_sha256

MAPCODER_DATASETS = {"humaneval": "humaneval", "humanevalet": "humaneval-et", "mbpp": "mbpp-mapcoder",
                     "mbppet": "mbpp-et"}


# The prompting strategies of MapCoder's and CodeSim's released code (``src/promptings/``), which name the
# arm in their result files: ``{model}-{strategy}[-{settings}][-{dataset}]-{language}-{t}-{p}.jsonl``.
MAPCODER_STRATEGIES = ("Direct", "CoT", "SelfPlanning", "Analogical", "Reflexion", "MapCoder", "CodeSIM")


def mapcoder_file_identity(filename: str) -> tuple[str, str]:
    """(model, arm) from a MapCoder-style result file name (``.jsonl`` or ``.jsonl.gz``):
    ``ChatGPT-MapCoder-5-5-Human-Python3-0-1.jsonl`` → (``ChatGPT``, ``MapCoder-5-5``);
    ``GPT4-Turbo-CoT-Human-Python3-0-1.jsonl`` → (``GPT4-Turbo``, ``CoT``): the model is everything before
    the first known strategy, so a model name may itself contain hyphens. A name with no known strategy
    is read as ``{model}-{arm}`` with a one-word model."""
    stem = Path(filename).name.removesuffix(".gz").removesuffix(".jsonl")
    stem = re.sub(r"-Python3-\d+-\d+$", "", stem)
    stem = re.sub(r"-(Human|MBPP|HumanEval|CC|APPS|xCodeEval)$", "", stem)
    parts = stem.split("-")
    start = next((i for i, part in enumerate(parts) if i > 0 and part in MAPCODER_STRATEGIES), None)
    if start is None:
        model, _, arm = stem.partition("-")
        return (model, arm) if arm else ("", stem)
    return "-".join(parts[:start]), "-".join(parts[start:])


_MAPCODER_RUN_TAIL = re.compile(r"-[A-Za-z0-9]+-(?P<temperature>\d+(?:\.\d+)?)-(?P<pass_at_k>\d+)$")


def mapcoder_file_sampling(filename: str) -> dict[str, Any]:
    """The sampling a MapCoder-style result file name records: its released ``main.py`` names a run
    ``{model}-{strategy}-{dataset}-{language}-{temperature}-{pass_at_k}``, so ``...-Python3-0-1.jsonl`` is
    temperature 0 and pass@1. top_p and max_tokens are not in the name (they are left unrecorded, so an
    analysis compares these arms only with arms of the same import)."""
    stem = Path(filename).name.removesuffix(".gz").removesuffix(".jsonl")
    match = _MAPCODER_RUN_TAIL.search(stem)
    if match is None:
        return {}
    temperature = float(match["temperature"])
    return {"temperature": temperature, "top_p": None, "max_tokens": None, "pass_at_k": int(match["pass_at_k"])}


_MAPCODER_SETTING = re.compile(r"^MapCoder-(?P<k>\d+)-(?P<t>\d+)$")


def mapcoder_arm_columns(arm: str) -> dict[str, Any]:
    """MapCoder's file names carry its setting: ``MapCoder-3-5`` is pipeline ``MapCoder`` with k = 3
    retrieved exemplars and t = 5 debugging rounds; other arms (``CoT``, ``Direct``) have no parameters."""
    match = _MAPCODER_SETTING.match(arm)
    if match is None:
        return {"arm": arm, "pipeline": arm}
    return {"arm": arm, "pipeline": "MapCoder", "param.k": int(match["k"]), "param.t": int(match["t"])}


def _token_sum(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, list):
        return int(sum(value))
    return int(value)


def _mapcoder_problem(task_id: object, seen: Counter[str]) -> str:
    """A row's problem id: the task id as written. MapCoder writes an integer id for one benchmark only, APPS
    (its problems' numbers; the others' ids are strings: ``HumanEval/0``, ``mbpp_3_is_not_prime``, a hash for
    xCodeEval), and its APPS selection repeats some: an integer id is named as sotacheck's APPS loaders name
    the problem, ``APPS/<id>``, and a repeat ``APPS/<id>#2``... A fact of MapCoder's format, read from the row
    whatever ``--dataset`` says (so no dataset's name is compared)."""
    if type(task_id) is not int:
        return str(task_id)
    seen[str(task_id)] += 1
    return f"APPS/{task_id}" + (f"#{seen[str(task_id)]}" if seen[str(task_id)] > 1 else "")


def import_mapcoder(path: str | Path, dataset: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """MapCoder-format JSONL logs (a file or a folder of them, plain ``.jsonl`` or gzip-compressed
    ``.jsonl.gz``); arm names from the file names, the dataset from the folder name (``HumanEval`` →
    ``humaneval``, ``HumanEvalET`` → ``humaneval-et``). A ``.gz`` file's manifest entry also records the
    SHA-256 of its uncompressed content (``uncompressed_sha256``)."""
    rows: list[dict[str, Any]] = []
    sources = []
    repairs: list[str] = []
    files = files_of(Path(path), "*.jsonl", "*.jsonl.gz")
    for file in files:
        model, arm = mapcoder_file_identity(file.name)
        identity = mapcoder_arm_columns(arm)
        data = dataset or MAPCODER_DATASETS.get(file.parent.name.lower(), file.parent.name.lower())
        source: dict[str, Any] = {"file": str(file), "sha256": file_sha256(file), "arm": arm, "dataset": data,
                                  "model": model or None, "sampling": mapcoder_file_sampling(file.name) or None}
        if file.suffix == ".gz":
            source["uncompressed_sha256"] = uncompressed_sha256(file)
        sources.append(source)
        seen: Counter[str] = Counter()
        before = len(rows)
        for number, row in jsonl_rows(file, repairs):
            # MapCoder's MultiPL-E MBPP rows set `task_id` to the row's `name`; its released Reflexion file has
            # only the `name` (e.g. ChatGPT-Reflexion-10-MBPP-Python3-0-1.jsonl), which is the same id.
            task_id = row.get("task_id", row.get("name"))
            if task_id is None or "is_solved" not in row:
                raise OutcomeError(f"{file}:{number}: needs fields `task_id` (or `name`) and `is_solved`")
            solved = as_bool(row["is_solved"], f"{file}:{number}: field `is_solved`")
            rows.append({**identity, "dataset": data, "problem": _mapcoder_problem(task_id, seen),
                         "repeat": 0,
                         "passed": solved, "status": "error" if solved is None else None,
                         "calls": row.get("api_calls"), "prompt_tokens": _token_sum(row.get("prompt_tokens")),
                         "completion_tokens": _token_sum(row.get("completion_tokens"))})
        if len(rows) == before:
            raise OutcomeError(f"{file}: no results in the file (expected one JSON line per problem)")
    # MapCoder's paper reports k = 5 exemplars and t = 5 debugging rounds as its main setting.
    return pd.DataFrame(rows), {"source": "mapcoder", "files": sources, "repairs": repairs,
                                "pipeline_defaults": {"MapCoder": {"k": 5, "t": 5}}}


def _recognises(path: Path) -> bool:
    document = first_document(path)
    return isinstance(document, dict) and ("task_id" in document or "name" in document) and "is_solved" in document


IMPORTER = FunctionImporter(
    "mapcoder", "MapCoder/CodeSim results (.jsonl[.gz], or a folder)", frozenset({"dataset"}), _recognises,
    lambda path, options: import_mapcoder(path, dataset=options.dataset))
