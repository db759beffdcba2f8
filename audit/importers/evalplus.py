"""EvalPlus's ``eval_results.json`` as an outcome table: the base-test and the base + extra-test verdicts.

EvalPlus judges every sample twice: on the benchmark's original (*base*) tests and on the base plus its
extra tests. It reports the two pass rates separately ("humaneval (base tests)" and "humaneval+ (base +
extra tests)"), and a sample counts for the second only when it passes *both* suites. The importer keeps
both verdicts, as two datasets of the same arm, so that arms are compared within one test suite and never a
sample's base verdict with its own plus verdict:

=========================  ====================================================================
dataset ``<name>-plus``    passed = base ∧ plus (what EvalPlus reports as HumanEval+ / MBPP+)
dataset ``<name>-plus-base`` passed = base (EvalPlus's own base tests, not the original judge)
=========================  ====================================================================

``<name>`` is ``humaneval`` or ``mbpp`` (from the task ids) unless given. Both of EvalPlus's result
layouts are read: 0.1.x (``eval`` → task → ``{nfiles, base: [[status, details]], plus: [...]}``,
statuses ``success``/``failed``/``timed out``) and 0.2+ (``eval`` → task → list of ``{base_status,
plus_status, ...}``, statuses ``pass``/``fail``/``timeout``/null). A timeout or an unknown status is a
failure, as EvalPlus counts it; the tool's own statuses are kept in the ``base_status`` and
``plus_status`` columns. The n-th result of a task is repeat n (EvalPlus's ``completion_id`` order).
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sotacheck.audit.importers.base import FunctionImporter
from sotacheck.audit.importers.helpers import files_of, uncompressed_sha256
from sotacheck.audit.importers.mapcoder import (
    mapcoder_arm_columns,
    mapcoder_file_identity,
    mapcoder_file_sampling,
)
from sotacheck.audit.importers.sniff import eval_layout, first_document, guess_format
from sotacheck.core.errors import UsageError, describe_unreadable_json
from sotacheck.core.outcomes import OutcomeError
from sotacheck.core.provenance import file_sha256

PASSING = ("success", "pass")  # EvalPlus 0.1.x, 0.2+
PLUS_SUFFIX, BASE_SUFFIX = "-plus", "-plus-base"


@dataclass(frozen=True)
class EvalPlusVerdict:
    """One sample's two verdicts, with EvalPlus's own status strings.

    Attributes
    ----------
    problem : the task id (``HumanEval/0``, ``Mbpp/2``).
    repeat : the sample's index among the task's results (0-based).
    base_status : EvalPlus's status on the base tests.
    plus_status : its status on the extra tests (None: unknown, or not run).
    has_plus : whether the file has extra-test verdicts at all (not EvalPlus's ``--base-only``).
    """

    problem: str
    repeat: int
    base_status: str | None
    plus_status: str | None
    has_plus: bool = True

    @property
    def base_passed(self) -> bool:
        return self.base_status in PASSING

    @property
    def plus_passed(self) -> bool | None:
        """base ∧ plus, EvalPlus's definition of a HumanEval+ pass; None where the file has no extra tests."""
        if not self.has_plus:
            return None
        return self.base_passed and self.plus_status in PASSING


def read_eval_results(file: Path) -> tuple[dict[str, Any], list[EvalPlusVerdict]]:
    """The header (``date``, ``hash``) and every sample's verdicts of one EvalPlus result file.

    Parameters
    ----------
    file : an EvalPlus ``eval_results.json`` / ``*_eval_results.json``, plain or gzip-compressed (``.gz``).

    Returns
    -------
    header : dict
        The file's top-level fields other than ``eval``.
    verdicts : list of EvalPlusVerdict
        In the file's task order, each task's samples in order.

    Raises
    ------
    OutcomeError
        Not JSON, not an EvalPlus layout (the message says which tool's file it looks like), or a task
        whose entry lacks a status (named by task and sample).
    """
    try:
        raw = gzip.decompress(file.read_bytes()) if file.suffix == ".gz" else file.read_bytes()
        payload = json.loads(raw.decode("utf-8"))
    except (OSError, EOFError) as exc:
        raise OutcomeError(f"{file}: cannot read ({exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{file}: not an EvalPlus eval_results.json: {describe_unreadable_json(exc)}"
                           f"{guess_format(file)}") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("eval"), dict):
        raise OutcomeError(f"{file}: not an EvalPlus eval_results.json (no `eval` object){guess_format(file)}")
    if not payload["eval"]:
        raise OutcomeError(f"{file}: the `eval` object has no tasks")
    verdicts: list[EvalPlusVerdict] = []
    for task_id, entry in payload["eval"].items():
        where = f"{file}: task {task_id!r}"
        if isinstance(entry, dict):  # 0.1.x: parallel lists of [status, details]
            verdicts.extend(_legacy_task(task_id, entry, where))
        elif isinstance(entry, list):
            for repeat, result in enumerate(entry):
                if not isinstance(result, dict) or "base_status" not in result:
                    raise OutcomeError(f"{where} sample {repeat}: no `base_status`{guess_format(file, 'evalplus')}")
                verdicts.append(EvalPlusVerdict(str(task_id), repeat, result["base_status"], result.get("plus_status")))
        else:
            raise OutcomeError(f"{where}: expected a list of results or an object, got {type(entry).__name__}")
    # 0.2+ writes plus_status null for every sample under --base-only (and for a sample it could not judge).
    if not any(v.plus_status is not None for v in verdicts):
        verdicts = [EvalPlusVerdict(v.problem, v.repeat, v.base_status, None, has_plus=False) for v in verdicts]
    return {k: v for k, v in payload.items() if k != "eval"}, verdicts


def _legacy_task(task_id: str, entry: dict[str, Any], where: str) -> list[EvalPlusVerdict]:
    base, plus = entry.get("base"), entry.get("plus", [])
    if not isinstance(base, list) or not isinstance(plus, list):
        raise OutcomeError(f"{where}: `base` and `plus` must be lists of [status, details]")
    if plus and len(plus) != len(base):
        raise OutcomeError(f"{where}: {len(base)} base results but {len(plus)} plus results")
    verdicts = []
    for repeat, result in enumerate(base):
        plus_status = _legacy_status(plus[repeat], f"{where} sample {repeat} (plus)") if plus else None
        verdicts.append(EvalPlusVerdict(str(task_id), repeat, _legacy_status(result, f"{where} sample {repeat} (base)"),
                                        plus_status, has_plus=bool(plus)))
    return verdicts


def _legacy_status(result: Any, where: str) -> str | None:
    if not isinstance(result, list) or not result:
        raise OutcomeError(f"{where}: expected [status, details], got {result!r:.60}")
    return result[0]


def _dataset_name(verdicts: list[EvalPlusVerdict], file: Path) -> str:
    prefixes = {v.problem.split("/")[0].lower() for v in verdicts}
    if prefixes == {"humaneval"}:
        return "humaneval"
    if prefixes == {"mbpp"}:
        return "mbpp"
    raise OutcomeError(f"{file}: cannot tell the benchmark from task ids {sorted(prefixes)[:3]}; give {{dataset}}",
                       parameters=("dataset",))


def evalplus_arm(file: Path) -> tuple[str, str | None]:
    """(arm, model) of a result file: ``ChatGPT-CoT-Python3-0-1_eval_results.json`` (MapCoder's naming) is
    arm ``CoT`` of model ``ChatGPT``; a plain ``eval_results.json`` (EvalPlus's name for a folder of
    samples) is named after its folder; any other ``X_eval_results.json`` is arm ``X``."""
    stem = file.name.removesuffix(".gz").removesuffix(".json").removesuffix("eval_results").rstrip("_-")
    if not stem:
        return file.parent.name, None
    model, arm = mapcoder_file_identity(stem + ".jsonl")
    if model and re.search(r"-Python3-\d+-\d+$", stem):
        return arm, model
    return stem, None


def import_evalplus(path: str | Path, arm: str | None = None, dataset: str | None = None
                    ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """EvalPlus result files (one ``*eval_results.json`` or a folder of them) as an outcome table.

    Parameters
    ----------
    path : the file, or a folder whose ``*eval_results.json`` files (plain or ``.gz``) are each one arm.
    arm : the arm name (one file only); default from the file name (:func:`evalplus_arm`).
    dataset : the benchmark's base name (``humaneval``, ``mbpp``); default from the task ids. The rows go
        to ``<dataset>-plus`` (base ∧ plus) and ``<dataset>-plus-base`` (base).

    Returns
    -------
    table : pandas.DataFrame
        One row per arm × dataset × task × sample, with the tool's ``base_status`` and ``plus_status``.
    fields : dict
        Manifest fields: ``source`` = ``evalplus`` and ``files``: per file its SHA-256, arm, the model and
        sampling its name records (MapCoder's naming; else not recorded: EvalPlus's files name neither, nor
        an endpoint, so no ``model_identity``), EvalPlus's ``date`` and dataset ``hash``, and the samples
        file beside it, where there is one, with its SHA-256.
    """
    files = files_of(Path(path), "*eval_results.json", "*eval_results.json.gz")
    if arm is not None and len(files) > 1:
        raise UsageError(f"{{arm}} names one arm, but the folder holds {len(files)} result files: {path}",
                         parameters=("arm",))
    rows: list[dict[str, Any]] = []
    sources: list[dict[str, Any]] = []
    for file in files:
        header, verdicts = read_eval_results(file)
        name, model = (arm, None) if arm else evalplus_arm(file)
        base = dataset or _dataset_name(verdicts, file)
        source: dict[str, Any] = {"file": str(file), "sha256": file_sha256(file), "arm": name, "model": model,
                                  "datasets": [base + PLUS_SUFFIX, base + BASE_SUFFIX],
                                  "evalplus_date": header.get("date"), "evalplus_dataset_hash": header.get("hash")}
        if model:  # MapCoder's name also records the sampling (…-Python3-0-1: temperature 0, pass@1)
            source["sampling"] = mapcoder_file_sampling(file.name.replace("_eval_results.json", ".jsonl")) or None
        if file.suffix == ".gz":
            source["uncompressed_sha256"] = uncompressed_sha256(file)
        samples = file.with_name(file.name.replace("_eval_results.json", ".jsonl"))
        if samples != file and samples.is_file():
            source["samples"] = {"file": str(samples), "sha256": file_sha256(samples)}
            if samples.suffix == ".gz":
                source["samples"]["uncompressed_sha256"] = uncompressed_sha256(samples)
        sources.append(source)
        # A MapCoder-named file's arm is structured as the mapcoder importer does (MapCoder-5-5: k=5, t=5).
        identity = mapcoder_arm_columns(name) if model else {"arm": name, "pipeline": name}
        for v in verdicts:
            common = {**identity, "problem": v.problem, "repeat": v.repeat,
                      "base_status": v.base_status, "plus_status": v.plus_status}
            rows.append({**common, "dataset": base + BASE_SUFFIX, "passed": v.base_passed, "status": None})
            if v.plus_passed is not None:
                rows.append({**common, "dataset": base + PLUS_SUFFIX, "passed": v.plus_passed, "status": None})
    fields: dict[str, Any] = {"source": "evalplus", "files": sources}
    if any(row.get("pipeline") == "MapCoder" and "param.k" in row for row in rows):
        fields["pipeline_defaults"] = {"MapCoder": {"k": 5, "t": 5}}  # as import_mapcoder says
    return pd.DataFrame(rows), fields


def _recognises(path: Path) -> bool:
    document = first_document(path)
    return (isinstance(document, dict) and isinstance(document.get("eval"), dict)
            and not ("task" in document["eval"] and "version" in document)  # that is an Inspect log
            and eval_layout(document) != "bigcodebench")


IMPORTER = FunctionImporter(
    "evalplus", "EvalPlus *eval_results.json (or a folder): base and plus", frozenset({"arm", "dataset"}),
    _recognises, lambda path, options: import_evalplus(path, arm=options.arm, dataset=options.dataset))
