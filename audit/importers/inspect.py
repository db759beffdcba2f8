"""Inspect AI eval logs (``.eval`` and ``.json``) as an outcome table.

The log is read with Inspect's own reader, ``inspect_ai.log.read_eval_log``, when ``inspect_ai`` is installed
(``pip install 'sotacheck[tools]'``); otherwise from its documented layout: a ``.json`` log is one
``EvalLog`` object, an ``.eval`` log a zip with ``header.json`` (the log without samples) and one
``samples/<id>_epoch_<n>.json`` per sample and epoch. Either way a row is one sample at one epoch:

- arm ``<model>/<task>`` (the log's ``eval.model`` and ``eval.task``); ``pipeline`` and ``dataset`` are the
  task (the dataset is the log's ``eval.dataset.name`` when it has one).
- problem: the sample's ``id``; repeat: its ``epoch`` − 1.
- passed: the verdict scorer's value through Inspect's ``value_to_float`` (``C`` → 1, ``I`` → 0, booleans,
  0/1), which must be 0 or 1; the verdict scorer is the first the log's ``results.scores`` names. A sample
  that ended in an error (``sample.error``) is an ``error`` cell, never a failure.

The manifest keeps the log's header under ``inspect`` (format version, status, ``eval`` spec with the
model, its base URL, generation config and package versions, and ``results`` with Inspect's own metrics),
and the model in ``model_identity``.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd

from sotacheck.audit.importers.base import FunctionImporter, ImportOptions, Result
from sotacheck.audit.importers.helpers import renamed
from sotacheck.audit.importers.sniff import ZIP_MAGIC, first_document, guess_format, head_bytes
from sotacheck.core.errors import describe_unreadable_json
from sotacheck.core.outcomes import OutcomeError, require_file
from sotacheck.core.provenance import file_sha256

_HEADER, _SAMPLES_DIR = "header.json", "samples/"
# Inspect's default score values (inspect_ai.scorer: CORRECT, INCORRECT, PARTIAL, NOANSWER).
_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0, "yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def _inspect_reader() -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        return None
    return read_eval_log


def read_log(file: Path, use_inspect: bool | None = None) -> dict[str, Any]:
    """An Inspect log as its JSON form (``EvalLog``'s fields: ``version``, ``status``, ``eval``, ``results``,
    ``samples``, ...).

    Parameters
    ----------
    file : a ``.eval`` or ``.json`` log.
    use_inspect : read with ``inspect_ai.log.read_eval_log`` (True), from the documented layout (False), or
        with Inspect's reader when it is installed (None).

    Raises
    ------
    OutcomeError
        A damaged file (a truncated zip, invalid JSON), or one that is not an Inspect log; the message names
        the file and says what it looks like.
    """
    reader = _inspect_reader() if use_inspect is not False else None
    if use_inspect and reader is None:
        raise OutcomeError("reading with Inspect's own reader needs inspect_ai (pip install 'sotacheck[tools]')")
    _check_kind(file)
    if reader is not None:
        try:
            log = reader(str(file))
        except Exception as exc:  # Inspect raises zip, JSON, pydantic and its own errors: all mean unreadable
            raise OutcomeError(f"{file}: cannot read as an Inspect log ({type(exc).__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else 'no detail'})") from None
        return log.model_dump(mode="json")
    return _read_eval_zip(file) if _is_zip(file) else _read_json_log(file)


def _is_zip(file: Path) -> bool:
    with file.open("rb") as fh:
        return fh.read(4) == ZIP_MAGIC


def _check_kind(file: Path) -> None:
    require_file(file)
    if file.suffix not in (".eval", ".json"):
        raise OutcomeError(f"{file}: not an Inspect log (expected a .eval or .json file){guess_format(file)}")
    if file.suffix == ".eval" and not _is_zip(file):
        raise OutcomeError(f"{file}: not an Inspect .eval log (not a zip file){guess_format(file)}")
    if file.suffix == ".json":
        kind = _json_kind(file)
        if kind is not None:
            raise OutcomeError(kind)


def _json_kind(file: Path) -> str | None:
    try:
        payload = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return f"{file}: not an Inspect log: {describe_unreadable_json(exc)}"
    if not (isinstance(payload, dict) and isinstance(payload.get("eval"), dict) and "task" in payload["eval"]):
        return f"{file}: not an Inspect log (no `eval` spec with a `task`){guess_format(file)}"
    return None


def _read_json_log(file: Path) -> dict[str, Any]:
    return json.loads(file.read_text(encoding="utf-8"))  # an object with an `eval` spec: checked by _check_kind


def _read_eval_zip(file: Path) -> dict[str, Any]:
    try:
        with zipfile.ZipFile(file) as archive:
            names = archive.namelist()
            if _HEADER not in names:
                raise OutcomeError(f"{file}: an .eval log with no {_HEADER} (an unfinished log?)")
            log = json.loads(archive.read(_HEADER))
            samples = [json.loads(archive.read(name)) for name in sorted(names)
                       if name.startswith(_SAMPLES_DIR) and name.endswith(".json")]
    except (zipfile.BadZipFile, OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{file}: cannot read as an Inspect log ({type(exc).__name__}: {exc})") from None
    except NotImplementedError:  # Inspect writes zstd-compressed members; Python's zipfile reads them from 3.14
        raise OutcomeError(f"{file}: its members are compressed with a method Python's zipfile cannot read; "
                           f"install inspect_ai (pip install 'sotacheck[tools]') to read it") from None
    log["samples"] = sorted(samples, key=lambda s: (s.get("epoch", 0), str(s.get("id"))))
    return log


def score_to_float(value: Any) -> float | None:
    """A score value as Inspect's default ``value_to_float`` maps it; None for a value it cannot map (a list,
    a dict, an unknown string), which Inspect itself would warn about and count as 0."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        if value in _VALUES:
            return _VALUES[value]
        lowered = value.lower()
        if lowered in _VALUES:
            return _VALUES[lowered]
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _verdict_scorer(log: dict[str, Any], file: Path) -> str:
    scores = (log.get("results") or {}).get("scores") or []
    if scores:
        return str(scores[0]["name"])
    for sample in log.get("samples") or []:
        if sample.get("scores"):
            return str(next(iter(sample["scores"])))
    raise OutcomeError(f"{file}: the log has no scores (was it scored? `inspect score` scores a log)")


def _header(log: dict[str, Any]) -> dict[str, Any]:
    spec = dict(log.get("eval") or {})
    spec.pop("dataset", None)  # its sample ids can be long; name and counts are kept below
    dataset = (log.get("eval") or {}).get("dataset") or {}
    spec["dataset"] = {k: dataset.get(k) for k in ("name", "location", "samples", "shuffled") if k in dataset}
    return {"version": log.get("version"), "status": log.get("status"), "eval": spec, "results": log.get("results"),
            "stats": log.get("stats")}


def import_inspect(path: str | Path, use_inspect: bool | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Inspect logs (a ``.eval``/``.json`` file, or a folder of them) as an outcome table.

    Parameters
    ----------
    path : a log file, or a log directory (its ``*.eval`` and ``*.json`` logs; ``logs.json`` is skipped).
    use_inspect : see :func:`read_log`.

    Returns
    -------
    table : pandas.DataFrame
        One row per log × sample × epoch, with the verdict scorer (``scorer``) and its raw value
        (``score_value``, as text).
    fields : dict
        Manifest fields: ``source`` = ``inspect``, ``files`` (SHA-256, arm, task, model, endpoint, scorer and
        the sampling of ``eval.model_generate_config``), ``inspect`` (each log's header: spec, results,
        versions), ``model_identity`` (one model only).
    """
    root = Path(path)
    if root.is_dir():
        files = sorted(f for f in [*root.glob("*.eval"), *root.glob("*.json")] if f.name != "logs.json")
        if not files:
            raise OutcomeError(f"{root}: no Inspect logs (*.eval or *.json)")
    else:
        files = [root]
    rows: list[dict[str, Any]] = []
    sources, headers, identities = [], {}, set()
    seen: dict[str, Path] = {}
    for file in files:
        log = read_log(file, use_inspect)
        spec = log.get("eval") or {}
        eval_id = str(spec.get("eval_id") or spec.get("task_id") or file)
        if eval_id in seen:  # e.g. an .eval log and its `inspect log convert` .json in one folder
            raise OutcomeError(f"{file}: the same evaluation as {seen[eval_id]} (eval id {eval_id}); import one of them")
        seen[eval_id] = file
        task, model = str(spec.get("task") or file.stem), str(spec.get("model") or "unknown")
        dataset = str((spec.get("dataset") or {}).get("name") or task)
        scorer = _verdict_scorer(log, file)
        endpoint = f"inspect {spec.get('model_base_url') or model}"
        identities.add((model, endpoint))
        config = spec.get("model_generate_config") or {}
        sources.append({"file": str(file), "sha256": file_sha256(file), "arm": f"{model}/{task}", "task": task,
                        "model": model, "endpoint": endpoint, "scorer": scorer, "status": log.get("status"),
                        "sampling": {key: config.get(key) for key in ("temperature", "top_p", "max_tokens")}})
        headers[str(file)] = _header(log)
        for sample in log.get("samples") or []:
            rows.append(_row(sample, file, model, task, dataset, scorer))
        if not log.get("samples"):
            raise OutcomeError(f"{file}: the log has no samples (status {log.get('status')!r})")
    fields: dict[str, Any] = {"source": "inspect", "files": sources, "inspect": headers}
    if len(identities) == 1:
        model, endpoint = identities.pop()
        fields["model_identity"] = {"model": model, "endpoint": endpoint}
    return pd.DataFrame(rows), fields


def _row(sample: dict[str, Any], file: Path, model: str, task: str, dataset: str, scorer: str) -> dict[str, Any]:
    where = f"{file}: sample {sample.get('id')!r} epoch {sample.get('epoch')}"
    epoch = sample.get("epoch")
    if not isinstance(epoch, int) or epoch < 1:
        raise OutcomeError(f"{where}: `epoch` must be a whole number ≥ 1")
    row = {"arm": f"{model}/{task}", "pipeline": task, "dataset": dataset, "problem": str(sample.get("id")),
           "repeat": epoch - 1, "scorer": scorer}
    if sample.get("error"):
        message = sample["error"].get("message", "") if isinstance(sample["error"], dict) else str(sample["error"])
        return {**row, "passed": None, "status": "error", "score_value": None, "error": str(message)[:200]}
    score = (sample.get("scores") or {}).get(scorer)
    if not isinstance(score, dict) or "value" not in score:
        raise OutcomeError(f"{where}: no score from scorer {scorer!r}")
    value = score_to_float(score["value"])
    if value not in (0.0, 1.0):
        raise OutcomeError(f"{where}: scorer {scorer!r} gave {score['value']!r}, not a pass/fail verdict")
    return {**row, "passed": value == 1.0, "status": None, "score_value": json.dumps(score["value"])}


def _recognises(path: Path) -> bool:
    if head_bytes(path) == ZIP_MAGIC:
        return True
    document = first_document(path)
    return isinstance(document, dict) and isinstance(document.get("eval"), dict) and "task" in document["eval"] \
        and "version" in document


def _read(path: Path, options: ImportOptions) -> Result:
    table, fields = import_inspect(path)
    return renamed(table, options.arm, options.dataset), fields


IMPORTER = FunctionImporter("inspect", "Inspect AI log, .eval or .json (or a log folder)",
                            frozenset({"arm", "dataset"}), _recognises, _read)
