"""lm-evaluation-harness ``--log_samples`` output as an outcome table.

lm-eval (``lm-eval run ... --output_path OUT --log_samples``) writes, per model, ``OUT/<model>/results_<date>.json``
(the aggregated scores, the task configs, versions) and one ``samples_<task>_<date>.jsonl`` per task: one line
per document and filter, with ``doc_id``, the ``doc`` itself, ``resps``/``filtered_resps``, the names of the
task's metrics in ``metrics`` and each metric's value for that document. A row of the outcome table is one
such line:

- arm ``<model>/<task>`` (``<model>/<task>/<filter>`` for a filter other than ``none``); ``pipeline`` is the
  task; the model is the one ``results_*.json`` names (``model_name``), recorded in the manifest's
  ``model_identity`` with the endpoint from its ``model_args`` (``base_url``).
- problem: the document's ``task_id`` (HumanEval-style tasks), else its ``id``, else ``doc_id``; repeat 0.
- passed: the value of the task's verdict metric, which must be 0 or 1 for every document. The metric is
  the task's only one, or else the one named ``pass_at_1``/``pass@1``. A task run with ``repeats: n`` and
  a per-document mean (a fractional value) cannot be split into repeats from the log, and is an error.

The manifest keeps lm-eval's own report (``results``, ``versions``, ``n-samples``, ``configs``, its version
and git hash) under ``lm_eval``, one entry per results file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sotacheck.audit.importers.base import FunctionImporter, ImportOptions, Result
from sotacheck.audit.importers.helpers import jsonl_rows, renamed
from sotacheck.audit.importers.sniff import first_document, guess_format, sniff
from sotacheck.core.errors import describe_unreadable_json
from sotacheck.core.outcomes import OutcomeError
from sotacheck.core.provenance import file_sha256

VERDICT_METRICS = ("pass_at_1", "pass@1")
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
# Fields of results_*.json kept in the manifest (``pretty_env_info`` is a page of pip and CUDA details).
_KEPT = ("results", "groups", "versions", "n-shot", "n-samples", "higher_is_better", "configs", "config",
         "model_name", "model_source", "lm_eval_version", "git_hash", "date", "task_hashes",
         "transformers_version", "total_evaluation_time_seconds")


@dataclass(frozen=True)
class LmEvalLog:
    """One task's sample log and the results file of the same run.

    Attributes
    ----------
    samples : the ``samples_<task>_<date>.jsonl`` file.
    task : the task's name (from the file name).
    results : the ``results_<date>.json`` beside it, or None where there is none.
    """

    samples: Path
    task: str
    results: Path | None


def find_logs(path: Path) -> list[LmEvalLog]:
    """The sample logs under ``path`` (a ``samples_*.jsonl`` file, or a folder searched recursively), each
    with the results file of its run: the ``results_<date>.json`` of the same date, in the same folder."""
    if path.is_dir():
        files = sorted(path.rglob("samples_*.jsonl"))
        if not files:
            raise OutcomeError(f"{path}: no lm-eval samples_*.jsonl files (run lm-eval with --log_samples)")
    elif path.is_file():
        files = [path]
    else:
        raise OutcomeError(f"{path} does not exist")
    logs = []
    for file in files:
        kind = sniff(file)
        if kind is not None and kind != "lm-eval":
            raise OutcomeError(f"{file}: not an lm-eval sample log{guess_format(file)}")
        match = _SAMPLES.match(file.name)
        if match is None and kind != "lm-eval":
            raise OutcomeError(f"{file}: not an lm-eval sample log (expected samples_<task>_<date>.jsonl)")
        task = match["task"] if match else file.stem.removeprefix("samples_")
        logs.append(LmEvalLog(file, task, _results_beside(file, match["date"] if match else None)))
    return logs


def _results_beside(file: Path, date: str | None) -> Path | None:
    if date is not None and (file.parent / f"results_{date}.json").is_file():
        return file.parent / f"results_{date}.json"
    candidates = sorted(file.parent.glob("results_*.json"))
    return candidates[-1] if len(candidates) == 1 else None


def read_results(file: Path) -> dict[str, Any]:
    """lm-eval's ``results_*.json``, the fields sotacheck keeps (see the module docstring)."""
    try:
        payload = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{file}: not an lm-eval results file: {describe_unreadable_json(exc)}") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), dict):
        raise OutcomeError(f"{file}: not an lm-eval results file (no `results` object){guess_format(file)}")
    return {key: payload[key] for key in _KEPT if key in payload}


def _model_and_endpoint(results: dict[str, Any] | None, log: LmEvalLog) -> tuple[str, str]:
    config = (results or {}).get("config") or {}
    args = config.get("model_args") or {}
    if isinstance(args, str):  # "model=x,base_url=y" (lm-eval keeps the command line's form)
        args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    model = (results or {}).get("model_name") or args.get("model") or args.get("pretrained") or log.samples.parent.name
    backend = config.get("model") or "unknown backend"
    endpoint = f"lm-eval {backend}" + (f" {args['base_url']}" if args.get("base_url") else "")
    return str(model), endpoint


def _sampling(results: dict[str, Any] | None, task: str) -> dict[str, Any] | None:
    """temperature, top_p and max tokens of the task's generation: its config's ``generation_kwargs`` with
    the command line's ``--gen_kwargs`` over them; None without a results file."""
    if results is None:
        return None
    kwargs = {**(((results.get("configs") or {}).get(task) or {}).get("generation_kwargs") or {}),
              **((results.get("config") or {}).get("gen_kwargs") or {})}
    temperature = kwargs.get("temperature", 0.0 if kwargs.get("do_sample") is False else None)
    return {"temperature": temperature, "top_p": kwargs.get("top_p"),
            "max_tokens": kwargs.get("max_tokens", kwargs.get("max_gen_toks"))}


def _verdict_metric(row: dict[str, Any], where: str) -> str:
    names = row.get("metrics")
    if not isinstance(names, list) or not names:
        raise OutcomeError(f"{where}: no `metrics` list (not an lm-eval sample line?)")
    if len(names) == 1:
        return str(names[0])
    for name in VERDICT_METRICS:
        if name in names:
            return name
    raise OutcomeError(f"{where}: the task has metrics {names}; sotacheck reads a pass/fail verdict from a "
                       f"single metric or one named {' or '.join(VERDICT_METRICS)}")


def _problem(row: dict[str, Any]) -> str:
    doc: dict[str, Any] = row["doc"] if isinstance(row.get("doc"), dict) else {}
    for key in ("task_id", "id"):
        if doc.get(key) not in (None, ""):
            return str(doc[key])
    return str(row["doc_id"])


def import_lmeval(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """lm-eval sample logs (a ``samples_*.jsonl`` file or an ``--output_path`` folder) as an outcome table.

    Parameters
    ----------
    path : a sample log, or a folder holding them (searched recursively).

    Returns
    -------
    table : pandas.DataFrame
        One row per task × document × filter, with the verdict metric's name and value (``metric``,
        ``metric_value``) and the filter (``filter``).
    fields : dict
        Manifest fields: ``source`` = ``lm-eval``, ``files`` (one per arm: SHA-256, task, model, endpoint,
        sampling and the results file), ``lm_eval`` (each results file's report), ``model_identity`` (one
        model only).

    Raises
    ------
    OutcomeError
        A file of another format, a line that is not JSON or not an lm-eval sample (``file:line``), a
        verdict metric that is not 0/1, or two logs of the same model and task.
    """
    rows: list[dict[str, Any]] = []
    sources: list[dict[str, Any]] = []
    reports: dict[str, dict[str, Any]] = {}
    identities: set[tuple[str, str]] = set()
    seen: dict[tuple[str, str], Path] = {}
    for log in find_logs(Path(path)):
        results = read_results(log.results) if log.results else None
        if log.results is not None and results is not None:
            reports[str(log.results)] = results
        model, endpoint = _model_and_endpoint(results, log)
        if (model, log.task) in seen:
            raise OutcomeError(f"{log.samples}: a second log of task {log.task!r} by {model!r} (the first: "
                               f"{seen[model, log.task]}); import one run at a time")
        seen[model, log.task] = log.samples
        identities.add((model, endpoint))
        entry = {"file": str(log.samples), "sha256": file_sha256(log.samples), "task": log.task, "model": model,
                 "endpoint": endpoint, "sampling": _sampling(results, log.task),
                 "results": str(log.results) if log.results else None}
        arms: set[str] = set()
        count = 0
        for number, row in jsonl_rows(log.samples):
            where = f"{log.samples}:{number}"
            if "doc_id" not in row:
                raise OutcomeError(f"{where}: no `doc_id` (not an lm-eval sample line){guess_format(log.samples)}")
            metric = _verdict_metric(row, where)
            value = row.get(metric)
            if isinstance(value, bool) or value not in (0, 1):
                raise OutcomeError(f"{where}: metric `{metric}` is {value!r}, not a 0/1 verdict (sotacheck needs one "
                                   f"verdict per sample; a task with `repeats` > 1 logs a per-document mean)")
            flt = str(row.get("filter") or "none")
            arm = f"{model}/{log.task}" + ("" if flt == "none" else f"/{flt}")
            rows.append({"arm": arm, "pipeline": log.task, "dataset": log.task, "problem": _problem(row),
                         "repeat": 0, "passed": bool(value), "status": None, "filter": flt, "doc_id": row["doc_id"],
                         "metric": metric, "metric_value": float(value)})
            arms.add(arm)
            count += 1
        if count == 0:
            raise OutcomeError(f"{log.samples}: no samples in the log")
        sources.extend({**entry, "arm": arm} for arm in sorted(arms))  # one entry per arm: studies read it
    fields: dict[str, Any] = {"source": "lm-eval", "files": sources, "lm_eval": reports}
    if len(identities) == 1:
        model, endpoint = identities.pop()
        fields["model_identity"] = {"model": model, "endpoint": endpoint}
    return pd.DataFrame(rows), fields


def _recognises(path: Path) -> bool:
    document = first_document(path)
    return isinstance(document, dict) and "doc_id" in document and ("resps" in document or "filtered_resps" in document)


def _read(path: Path, options: ImportOptions) -> Result:
    table, fields = import_lmeval(path)
    return renamed(table, options.arm, options.dataset), fields


IMPORTER = FunctionImporter("lm-eval", "lm-evaluation-harness samples_*.jsonl (or --output_path)",
                            frozenset({"arm", "dataset"}), _recognises, _read)
