"""BigCodeBench's result files (``*_eval_results.json``) as an outcome table: one arm per file, one row per sample.

BigCodeBench's evaluator (``bigcodebench.evaluate``; read in 0.2.5's ``evaluate.py`` and ``eval/__init__.py``,
and 0.1.9 writes the same layout) judges a samples file ``<name>.jsonl`` (``{task_id, solution}`` lines, several
per task for pass@k) and writes beside it:

- ``<name>_eval_results.json``: ``{"date": ..., "eval": {task_id: [{"task_id", "solution", "status",
  "details"}, ...]}}``, one result per sample in the samples file's order (its ``completion_id``): repeat n
  is the n-th. ``status`` is ``pass``, ``fail`` or ``timeout`` (a process that died before reporting is a
  timeout too); ``details`` maps each failing test to its traceback (``ALL``: the program did not load).
  ``solution`` is the program judged: with ``--calibrated`` (the default), ``code_prompt`` and a ``pass``
  body before the sample.
- ``<name>_pass_at_k.json``: ``pass@k`` for each k the sample count allows, ``model``, ``split``,
  ``subset``, ``calibrated``, ``gt_pass_rate``, ``failed_tasks`` (canonical solutions that failed there).

``bigcodebench.generate`` names the samples ``<model>--bigcodebench[-hard]-<split>--<backend>-<temperature>-
<n_samples>-sanitized_calibrated.jsonl`` (0.2.x: ``<model>`` is ``<org>--<name>--<revision>``; 0.1.x had no
revision and wrote ``-sanitized-calibrated``, and ``_hard_eval_results.json`` for the Hard subset). From that
name the arm is the model as BigCodeBench's own ``pass_at_k.json`` names it (the part before
``--bigcodebench-``) and the dataset is ``bigcodebench-<split>`` (``bigcodebench-hard-<split>`` for the Hard
subset); a name that says neither takes them from the ``_pass_at_k.json`` beside it, or from
``--arm``/``--dataset``. pass is a pass; fail and timeout are failures, as BigCodeBench counts them; the
status is kept in ``bigcodebench_status``.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from sotacheck.audit.importers.base import FunctionImporter, ImportOptions, Result
from sotacheck.audit.importers.helpers import files_of, uncompressed_sha256
from sotacheck.audit.importers.sniff import eval_layout, first_document, guess_format
from sotacheck.core.errors import UsageError, describe_unreadable_json
from sotacheck.core.outcomes import OutcomeError, normalise
from sotacheck.core.provenance import file_sha256

STATUSES = {"pass": True, "fail": False, "timeout": False}  # bigcodebench/eval/__init__.py: PASS, FAIL, TIMEOUT
TASK_PREFIX = "BigCodeBench/"
KIND = "bigcodebench"
_NAME = re.compile(r"^(?P<model>.+?)--bigcodebench(?:-(?P<subset>hard|full))?-(?P<split>complete|instruct)"
                   r"(?:--(?P<backend>.+?)-(?P<temperature>\d+(?:\.\d+)?)-(?P<n>\d+))?"
                   r"(?:-sanitized(?:[-_]calibrated)?)?$")


@dataclass(frozen=True)
class ResultName:
    """What a result file's name says (None: not in the name).

    Attributes
    ----------
    stem : the samples file's name without ``.jsonl`` (empty for a folder's ``eval_results.json``).
    model : the model as BigCodeBench names it (``org--name--revision``).
    split : ``complete`` or ``instruct``.
    hard : whether it is the Hard subset.
    backend, temperature, n_samples : the generation's backend, temperature and samples per task.
    """

    stem: str
    model: str | None = None
    split: str | None = None
    hard: bool = False
    backend: str | None = None
    temperature: float | None = None
    n_samples: int | None = None

    @property
    def generation(self) -> str | None:
        """``<backend>-<temperature>-<n>`` as the name writes it."""
        return None if self.backend is None else f"{self.backend}-{self.temperature:g}-{self.n_samples}"


def result_name(file: Path) -> ResultName:
    """Parse a result file's name the way ``bigcodebench.generate`` and ``evaluate`` build it (module docstring)."""
    stem = file.name.removesuffix(".gz").removesuffix(".json").removesuffix("eval_results").rstrip("_-")
    hard = stem == "hard" or stem.endswith("_hard")  # 0.1.x: <samples>_hard_eval_results.json
    if hard:
        stem = stem.removesuffix("hard").rstrip("_")
    match = _NAME.match(stem)
    if match is None:
        return ResultName(stem, hard=hard)
    temperature = match["temperature"]
    return ResultName(stem, match["model"], match["split"], hard or match["subset"] == "hard", match["backend"],
                      float(temperature) if temperature is not None else None,
                      int(match["n"]) if match["n"] is not None else None)


def _repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; one that names a key twice (``json`` would keep the last silently) as a
    :class:`_Repeated` that says which."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    repeated = []
    for key, _ in pairs:
        if key in seen:
            repeated.append(key)
        seen.add(key)
    return _Repeated(obj, repeated)


class _Repeated(dict[str, Any]):
    def __init__(self, obj: dict[str, Any], repeated: list[str]) -> None:
        super().__init__(obj)
        self.repeated = repeated


def _load(file: Path, what: str) -> Any:
    try:
        raw = gzip.decompress(file.read_bytes()) if file.suffix == ".gz" else file.read_bytes()
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_repeated_keys)
    except (OSError, EOFError) as exc:
        raise OutcomeError(f"{file}: cannot read ({exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{file}: not a BigCodeBench {what}: {describe_unreadable_json(exc)}"
                           f"{guess_format(file, KIND)}") from None


def read_eval_results(file: Path) -> tuple[dict[str, Any], list[tuple[str, int, str]]]:
    """The header (``date``) and every sample's (task id, repeat, status) of one BigCodeBench result file.

    Parameters
    ----------
    file : a ``*eval_results.json``, plain or gzip-compressed (``.gz``).

    Returns
    -------
    header : dict
        The file's top-level fields other than ``eval``.
    verdicts : list of (str, int, str)
        In the file's task order, each task's samples in order.

    Raises
    ------
    OutcomeError
        Not JSON, not BigCodeBench's layout (the message says which tool's file it looks like, where one
        does), a task listed twice, a result without ``status``, a status BigCodeBench does not write, or a
        result whose ``task_id`` is not its task's; each names the file, the task and the sample.
    """
    payload = _load(file, "eval_results.json")
    if not isinstance(payload, dict) or not isinstance(payload.get("eval"), dict):
        raise OutcomeError(f"{file}: not a BigCodeBench eval_results.json (no `eval` object){guess_format(file, KIND)}")
    tasks = payload["eval"]
    if not tasks:
        raise OutcomeError(f"{file}: the `eval` object has no tasks")
    if isinstance(tasks, _Repeated):
        raise OutcomeError(f"{file}: task {tasks.repeated[0]!r} is listed twice in `eval` (JSON keeps only the "
                           f"last; which results are the run's?)")
    verdicts = []
    for task_id, results in tasks.items():
        where = f"{file}: task {task_id!r}"
        if not isinstance(results, list):
            raise OutcomeError(f"{where}: expected a list of results, got {type(results).__name__}{guess_format(file, KIND)}")
        if not results:
            raise OutcomeError(f"{where}: no results")
        for repeat, result in enumerate(results):
            here = f"{where} sample {repeat}"
            if not isinstance(result, dict) or "status" not in result:
                raise OutcomeError(f"{here}: no `status`{guess_format(file, KIND)}")
            if "task_id" in result and result["task_id"] != task_id:
                raise OutcomeError(f"{here}: its `task_id` is {result['task_id']!r}")
            status = result["status"]
            if not isinstance(status, str) or status not in STATUSES:
                raise OutcomeError(f"{here}: status {status!r}; BigCodeBench writes {', '.join(STATUSES)}")
            verdicts.append((str(task_id), repeat, status))
    return {k: v for k, v in payload.items() if k != "eval"}, verdicts


def _beside(file: Path, kind: Literal["samples", "pass_at_k"]) -> Path | None:
    """The samples file a result file judged (``<name>.jsonl``) or the ``_pass_at_k.json`` written with it,
    plain or ``.gz``, named as BigCodeBench names them; None where there is none."""
    bare = file.name.removesuffix(".gz")
    if kind == "samples":
        name = re.sub(r"_?(hard_)?eval_results\.json$", ".jsonl", bare)
        if name == ".jsonl":  # a folder's eval_results.json: the samples are the folder's files
            return None
    else:
        name = bare.replace("eval_results.json", "pass_at_k.json")
    for candidate in (file.with_name(name), file.with_name(name + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def _pass_at_k(file: Path) -> dict[str, Any] | None:
    found = _beside(file, "pass_at_k")
    if found is None:
        return None
    report = _load(found, "pass_at_k.json")
    if not isinstance(report, dict):
        raise OutcomeError(f"{found}: not a BigCodeBench pass_at_k.json (expected an object)")
    return {"file": str(found), "sha256": file_sha256(found), "report": report}


def _dataset(name: ResultName, report: dict[str, Any] | None, file: Path) -> str:
    split, hard = name.split, name.hard
    if report is not None:
        said = report["report"].get("split")
        if split is not None and said is not None and said != split:
            raise OutcomeError(f"{file}: its name says split {split!r}, but {report['file']} says {said!r}")
        split = split or said
        hard = hard or report["report"].get("subset") == "hard"
    if split not in ("complete", "instruct"):
        raise OutcomeError(f"{file}: cannot tell BigCodeBench's split (complete or instruct) from the file's name "
                           f"or a _pass_at_k.json beside it; give {{dataset}}", parameters=("dataset",))
    return f"bigcodebench-hard-{split}" if hard else f"bigcodebench-{split}"


@dataclass
class _File:
    file: Path
    name: ResultName
    arm: str
    dataset: str
    verdicts: list[tuple[str, int, str]]
    source: dict[str, Any]


def _read_file(file: Path, options: ImportOptions) -> _File:
    header, verdicts = read_eval_results(file)
    name = result_name(file)
    report = _pass_at_k(file)
    dataset = options.dataset or _dataset(name, report, file)
    if options.dataset is None:
        foreign = next((task for task, _, _ in verdicts if not task.startswith(TASK_PREFIX)), None)
        if foreign is not None:
            raise OutcomeError(f"{file}: task {foreign!r} is not one of BigCodeBench's ({TASK_PREFIX}N); give "
                               f"{{dataset}} to import it under another dataset's name", parameters=("dataset",))
    model = name.model or (report["report"].get("model") if report else None)
    arm = options.arm or model or name.stem or file.parent.resolve().name
    sampling = None if name.temperature is None else {
        "temperature": name.temperature, "top_p": None, "max_tokens": None, "n_samples": name.n_samples}
    source: dict[str, Any] = {"file": str(file), "sha256": file_sha256(file), "arm": arm, "dataset": dataset,
                              "model": model, "backend": name.backend, "sampling": sampling,
                              "bigcodebench_date": header.get("date"), "pass_at_k": report}
    if file.suffix == ".gz":
        source["uncompressed_sha256"] = uncompressed_sha256(file)
    samples = _beside(file, "samples")
    if samples is not None:
        source["samples"] = {"file": str(samples), "sha256": file_sha256(samples)}
    return _File(file, name, arm, dataset, verdicts, source)


def _distinct_arms(read: list[_File]) -> None:
    """Two files of one model on one dataset (two generations: greedy and sampled) become two arms, each
    named after its generation (``<model>--vllm-0.8-5``); two that cannot be told apart are an error."""
    by_key: dict[tuple[str, str], list[_File]] = {}
    for item in read:
        by_key.setdefault((item.arm, item.dataset), []).append(item)
    for (arm, dataset), items in by_key.items():
        generations = [item.name.generation for item in items]
        if len(items) == 1:
            continue
        if None in generations or len(set(generations)) < len(items):
            raise OutcomeError(f"{items[1].file}: a second result of arm {arm!r} on {dataset} (the first: "
                               f"{items[0].file}); import them one at a time with {{arm}}", parameters=("arm",))
        for item, generation in zip(items, generations, strict=True):
            item.arm = f"{arm}--{generation}"
            item.source["arm"] = item.arm


def import_bigcodebench(path: str | Path, arm: str | None = None, dataset: str | None = None) -> Result:
    """BigCodeBench result files (one ``*eval_results.json`` or a folder of them) as an outcome table.

    Parameters
    ----------
    path : the file, or a folder whose ``*eval_results.json`` files (plain or ``.gz``) are each one arm.
    arm : the arm's name (one file only); default the model the file's name gives (module docstring).
    dataset : the dataset's name; default ``bigcodebench-<split>`` from the file's name or its
        ``_pass_at_k.json`` (``bigcodebench-hard-<split>`` for the Hard subset).

    Returns
    -------
    table : pandas.DataFrame
        One row per arm × task × sample, with BigCodeBench's status (``bigcodebench_status``).
    fields : dict
        Manifest fields: ``source`` = ``bigcodebench`` and ``files``: per file its SHA-256, arm, dataset, the
        model, backend and sampling its name gives, BigCodeBench's ``date``, the ``_pass_at_k.json`` beside it
        (its SHA-256 and what it reports) and the samples file it judged (SHA-256), where they are there.

    Raises
    ------
    OutcomeError
        Input that cannot be read (:func:`read_eval_results`), a split that cannot be told, task ids that
        are not BigCodeBench's, two files that give one arm on one dataset.
    UsageError
        ``arm`` for a folder of several files.
    """
    root = Path(path)
    files = files_of(root, "*eval_results.json", "*eval_results.json.gz")
    if arm is not None and len(files) > 1:
        raise UsageError(f"{{arm}} names one arm, but the folder holds {len(files)} result files: {root}",
                         parameters=("arm",))
    read = [_read_file(file, ImportOptions(arm=arm, dataset=dataset)) for file in files]
    _distinct_arms(read)
    frames = [pd.DataFrame({"arm": item.arm, "pipeline": item.arm, "dataset": item.dataset,
                            "problem": [task for task, _, _ in item.verdicts],
                            "repeat": [repeat for _, repeat, _ in item.verdicts],
                            "passed": [STATUSES[status] for _, _, status in item.verdicts],
                            "bigcodebench_status": [status for _, _, status in item.verdicts]}) for item in read]
    table = normalise(pd.concat(frames, ignore_index=True), str(root))
    return table, {"source": "bigcodebench", "files": [item.source for item in read]}


def _recognises(path: Path) -> bool:
    return eval_layout(first_document(path)) == KIND


IMPORTER = FunctionImporter(
    KIND, "BigCodeBench *_eval_results.json (or a folder): one arm per file", frozenset({"arm", "dataset"}),
    _recognises, lambda path, options: import_bigcodebench(path, arm=options.arm, dataset=options.dataset))
