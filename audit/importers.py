"""Importers: other tools' per-problem logs as outcome tables (the schema is in ``sotacheck.core.rundir``).

Each importer returns the table and the manifest fields that say where it came from (``source``,
``files`` with their SHA-256, ``repairs`` made while reading); ``sotacheck import`` writes them as a run
directory that every other command reads like a rerun.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import pandas as pd

from sotacheck.core.outcomes import OutcomeError, as_bool, normalise, require_file
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


def mapcoder_arm_name(filename: str) -> str:
    """The arm a MapCoder-style result file holds (see :func:`mapcoder_file_identity`)."""
    return mapcoder_file_identity(filename)[1]


_MAPCODER_SETTING = re.compile(r"^MapCoder-(?P<k>\d+)-(?P<t>\d+)$")


def mapcoder_arm_columns(arm: str) -> dict[str, Any]:
    """MapCoder's file names carry its setting: ``MapCoder-3-5`` is pipeline ``MapCoder`` with k = 3
    retrieved exemplars and t = 5 debugging rounds; other arms (``CoT``, ``Direct``) have no parameters."""
    match = _MAPCODER_SETTING.match(arm)
    if match is None:
        return {"arm": arm, "pipeline": arm}
    return {"arm": arm, "pipeline": "MapCoder", "param.k": int(match["k"]), "param.t": int(match["t"])}


def _jsonl_rows(path: Path, repairs: list[str] | None = None) -> Iterable[tuple[int, dict[str, Any]]]:
    """JSON objects, one per line. A line with stray text before its object (MapCoder's ablation files
    start with a Windows path) is read from its first ``{`` and the repair is noted in ``repairs``.
    A ``.gz`` file is decompressed as it is read."""
    with _open_text(path) as fh:
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
                    raise OutcomeError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
                repairs.append(f"{path.name}:{number}: ignored {start} stray characters before the JSON object")
            if not isinstance(row, dict):
                raise OutcomeError(f"{path}:{number}: expected a JSON object")
            yield number, row


def _empty(path: Path) -> OutcomeError:
    return OutcomeError(f"{path}: the file is empty (expected one JSON object per line)")


def _token_sum(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, list):
        return int(sum(value))
    return int(value)


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _lines(fh: IO[str], path: Path) -> Iterator[str]:
    """The lines of an open text file; a damaged ``.gz`` is an ``OutcomeError`` naming the file."""
    try:
        yield from fh
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{path}: cannot read ({exc})") from None


def _uncompressed_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except (OSError, EOFError) as exc:
        raise OutcomeError(f"{path}: cannot read ({exc})") from None
    return digest.hexdigest()


def _files(path: Path, *patterns: str) -> list[Path]:
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
    require_file(path)
    return [path]


def _mapcoder_problem(dataset: str, task_id: object, seen: Counter[str]) -> str:
    """A row's problem id: the task id; for APPS (its numeric id, and rows that repeat an earlier one, which
    MapCoder's selection has) the loader's ``APPS/<id>``, ``APPS/<id>#2``..."""
    if dataset not in ("apps", "apps-execeval"):
        return str(task_id)
    seen[str(task_id)] += 1
    return f"APPS/{task_id}" + (f"#{seen[str(task_id)]}" if seen[str(task_id)] > 1 else "")


def import_mapcoder(path: str | Path, dataset: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """MapCoder-format JSONL logs (a file or a folder of them, plain ``.jsonl`` or gzip-compressed
    ``.jsonl.gz``); arm names from the file names, the dataset from the folder name (``HumanEval`` →
    ``humaneval``, ``HumanEvalET`` → ``humaneval-et``). A ``.gz`` file's manifest entry also records the
    SHA-256 of its uncompressed content (``uncompressed_sha256``)."""
    rows = []
    sources = []
    repairs: list[str] = []
    files = _files(Path(path), "*.jsonl", "*.jsonl.gz")
    for file in files:
        model, arm = mapcoder_file_identity(file.name)
        identity = mapcoder_arm_columns(arm)
        data = dataset or MAPCODER_DATASETS.get(file.parent.name.lower(), file.parent.name.lower())
        source: dict[str, Any] = {"file": str(file), "sha256": file_sha256(file), "arm": arm, "dataset": data,
                                  "model": model or None, "sampling": mapcoder_file_sampling(file.name) or None}
        if file.suffix == ".gz":
            source["uncompressed_sha256"] = _uncompressed_sha256(file)
        sources.append(source)
        seen: Counter[str] = Counter()
        before = len(rows)
        for number, row in _jsonl_rows(file, repairs):
            if "task_id" not in row or "is_solved" not in row:
                raise OutcomeError(f"{file}:{number}: needs fields `task_id` and `is_solved`")
            solved = as_bool(row["is_solved"], f"{file}:{number}: field `is_solved`")
            rows.append({**identity, "dataset": data, "problem": _mapcoder_problem(data, row["task_id"], seen),
                         "repeat": 0,
                         "passed": solved, "status": "error" if solved is None else None,
                         "calls": row.get("api_calls"), "prompt_tokens": _token_sum(row.get("prompt_tokens")),
                         "completion_tokens": _token_sum(row.get("completion_tokens"))})
        if len(rows) == before:
            raise _empty(file)
    # MapCoder's paper reports k = 5 exemplars and t = 5 debugging rounds as its main setting.
    return pd.DataFrame(rows), {"source": "mapcoder", "files": sources, "repairs": repairs,
                                "pipeline_defaults": {"MapCoder": {"k": 5, "t": 5}}}


def import_humaneval_results(path: str | Path, arm: str | None = None, dataset: str = "humaneval"
                             ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """human-eval ``*_results.jsonl`` (``task_id``, ``passed``; repeated task ids are repeats). An EvalPlus
    ``eval_results.json`` is an error pointing to ``sotacheck import evalplus``, which keeps its base and
    plus verdicts apart (:mod:`sotacheck.audit.importers_evalplus`)."""
    file = Path(path)
    require_file(file)
    if file.name.endswith((".json", ".json.gz")):
        raise OutcomeError(f"{file}: a JSON file, not human-eval's *_results.jsonl; an EvalPlus eval_results.json "
                           f"is read by `sotacheck import evalplus` (base and plus verdicts kept apart)")
    name = arm or re.sub(r"(_results)?\.jsonl?$", "", file.name)
    rows = []
    seen: dict[str, int] = {}
    for number, row in _jsonl_rows(file):
        if "task_id" not in row or "passed" not in row:
            raise OutcomeError(f"{file}:{number}: needs fields `task_id` and `passed`")
        repeat = seen.get(row["task_id"], 0)
        seen[row["task_id"]] = repeat + 1
        passed = as_bool(row["passed"], f"{file}:{number}: field `passed`")
        rows.append({"arm": name, "pipeline": name, "dataset": dataset, "problem": row["task_id"], "repeat": repeat,
                     "passed": passed, "status": "error" if passed is None else None})
    if not rows:
        raise _empty(file)
    return pd.DataFrame(rows), {"source": "humaneval-results", "files": [
        {"file": str(file), "sha256": file_sha256(file), "arm": name, "dataset": dataset}]}


def import_csv(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A plain CSV with ``arm, dataset, problem, repeat, passed`` (``status`` and token columns optional)."""
    file = Path(path)
    require_file(file)
    try:
        frame = pd.read_csv(file, dtype={"problem": str, "arm": str, "dataset": str, "status": str},
                            keep_default_na=False, na_values=[""])
    except pd.errors.EmptyDataError:
        raise OutcomeError(f"{file}: the file is empty (expected a header line and one row per cell)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{file}: cannot parse as CSV ({exc})") from None
    # Validated here, so that an error names the CSV's own line (the header is line 1).
    table = normalise(frame, str(file), first_line=2)
    return table, {"source": "csv", "files": [{"file": str(file), "sha256": file_sha256(file)}]}


IMPORTERS = {"mapcoder": import_mapcoder, "humaneval-results": import_humaneval_results, "csv": import_csv}
