"""SWE-bench submissions' results: ``results.json`` with the ids of the instances resolved, one arm per
submission, against the list of the benchmark's instance ids.

The SWE-bench/experiments repository (github.com/SWE-bench/experiments, ``evaluation/<split>/<date>_<system>/``)
keeps, per submission, ``metadata.yaml`` and ``results/results.json``: an object of instance-id lists,
``{"no_generation": [...], "no_logs": [...], "resolved": [...]}`` (older submissions also list
``generated``, ``with_logs``, ``applied``, ...). Only ``resolved`` is a verdict: every other instance of the
benchmark counts as not resolved, as the leaderboard counts it, so the instance list (``--instances``) is
needed to know the denominator. The other lists are kept per row (``swebench_status``) and the submission's
``metadata.yaml``, where there is one, in the manifest's ``systems``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from sotacheck.audit.importers.base import FunctionImporter, Result
from sotacheck.audit.importers.helpers import jsonl_rows, one_file
from sotacheck.audit.importers.sniff import first_document, guess_format
from sotacheck.core.errors import UsageError, describe_unreadable_json
from sotacheck.core.outcomes import OutcomeError, normalise
from sotacheck.core.provenance import file_sha256

RESULTS = "results.json"
DEFAULT_DATASET = "swe-bench"


def read_instances(path: Path) -> list[str]:
    """The instance ids of ``path``: a text file (one id a line), a JSON list of ids, or SWE-bench's
    instances as JSON or JSONL objects (their ``instance_id``) or Parquet (its ``instance_id`` column)."""
    file = one_file(path, "--instances")
    name = file.name.lower().removesuffix(".gz")
    if name.endswith(".parquet"):
        try:
            ids = [str(v) for v in pd.read_parquet(file, columns=["instance_id"])["instance_id"]]
        except (OSError, ValueError, KeyError) as exc:
            raise OutcomeError(f"{file}: cannot read `instance_id` from Parquet ({str(exc).splitlines()[0]})") from None
    elif name.endswith(".jsonl"):
        ids = [_instance_id(row, f"{file}:{number}") for number, row in jsonl_rows(file)]
    elif name.endswith(".json"):
        try:
            payload = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise OutcomeError(f"{file}: {describe_unreadable_json(exc)}") from None
        if not isinstance(payload, list):
            raise OutcomeError(f"{file}: expected a JSON list of instance ids or of instances")
        ids = [_instance_id(item, f"{file}: item {i + 1}") for i, item in enumerate(payload)]
    else:
        try:
            ids = [line.strip() for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
        except UnicodeDecodeError:
            raise OutcomeError(f"{file}: not a text file of instance ids (one a line)") from None
    if not ids:
        raise OutcomeError(f"{file}: no instance ids")
    seen: set[str] = set()
    for instance in ids:
        if instance in seen:
            raise OutcomeError(f"{file}: instance {instance!r} listed twice")
        seen.add(instance)
    return ids


def _instance_id(item: Any, where: str) -> str:
    if isinstance(item, str) and item.strip():
        return item.strip()
    if isinstance(item, dict) and isinstance(item.get("instance_id"), str):
        return item["instance_id"]
    raise OutcomeError(f"{where}: expected an instance id or an object with `instance_id`, got {item!r:.60}")


def submission_files(path: Path) -> dict[str, Path]:
    """arm → its ``results.json``: a file is one submission, named after its folder (the one holding
    ``results/``); a folder holds one submission per ``results.json`` found under it."""
    if path.is_file():
        return {_submission_name(path): path}
    if not path.is_dir():
        raise OutcomeError(f"{path} does not exist")
    found: dict[str, Path] = {}
    for file in sorted(path.rglob(RESULTS)):
        name = _submission_name(file)
        if name in found:
            raise OutcomeError(f"{file}: a second submission named {name!r} (the first: {found[name]})")
        found[name] = file
    if not found:
        raise OutcomeError(f"{path}: no {RESULTS} under it (SWE-bench/experiments keeps "
                           f"evaluation/<split>/<submission>/results/{RESULTS})")
    return found


def _submission_name(file: Path) -> str:
    folder = file.parent.parent if file.parent.name == "results" else file.parent
    return folder.name or file.stem


def _read_results(file: Path) -> dict[str, list[str]]:
    try:
        raw = gzip.decompress(file.read_bytes()) if file.suffix == ".gz" else file.read_bytes()
        payload = json.loads(raw.decode("utf-8"))
    except (OSError, EOFError) as exc:
        raise OutcomeError(f"{file}: cannot read ({exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{file}: not a SWE-bench results.json: {describe_unreadable_json(exc)}"
                           f"{guess_format(file)}") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("resolved"), list):
        raise OutcomeError(f"{file}: not a SWE-bench results.json (no `resolved` list){guess_format(file)}")
    lists = {}
    for key, ids in payload.items():
        if isinstance(ids, list):
            if not all(isinstance(i, str) for i in ids):
                raise OutcomeError(f"{file}: `{key}` must be a list of instance ids")
            lists[key] = ids
    return lists


def _metadata(submission: Path) -> dict[str, Any] | None:
    file = submission / "metadata.yaml"
    if not file.is_file():
        return None
    try:
        loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{file}: invalid YAML ({str(exc).splitlines()[0]})") from None
    return json.loads(json.dumps(loaded, default=str)) if isinstance(loaded, dict) else None


def import_swebench(path: str | Path, instances: str | Path | None, arm: str | None = None,
                    dataset: str | None = None) -> Result:
    """SWE-bench results (one ``results.json`` or a folder of submissions) as an outcome table.

    Parameters
    ----------
    path : a submission's ``results.json``, or a folder searched for them (one arm per submission).
    instances : the benchmark's instance ids (see :func:`read_instances`); required.
    arm : the arm's name, for one submission (default: the submission's folder).
    dataset : the dataset's name (default ``swe-bench``).

    Returns
    -------
    table : pandas.DataFrame
        One row per submission × instance: passed iff the instance is in ``resolved``; ``swebench_status``
        says which of the file's lists holds it (``unresolved`` where none does).
    fields : dict
        Manifest fields: ``source`` = ``swebench``, ``files`` (each results file and the instance list, with
        SHA-256), ``systems`` (each submission's ``metadata.yaml``, where it has one).
    """
    root = Path(path)
    if instances is None:
        raise OutcomeError(f"{root}: SWE-bench results list only the instances resolved; give the benchmark's "
                           f"instance ids with {{instances}} (a file: one id a line, or SWE-bench's instances)",
                           parameters=("instances",))
    ids = read_instances(Path(instances))
    known = set(ids)
    submissions = submission_files(root)
    if arm is not None and len(submissions) > 1:
        raise UsageError(f"{{arm}} names one submission, but {root} holds {len(submissions)}", parameters=("arm",))
    name_of = dataset or DEFAULT_DATASET
    frames, sources, systems = [], [], {}
    for name, file in submissions.items():
        lists = _read_results(file)
        arm_name = arm or name
        status = dict.fromkeys(ids, "unresolved")
        for key, listed in lists.items():
            unknown = [i for i in listed if i not in known]
            if unknown and key == "resolved":
                raise OutcomeError(f"{file}: resolved instance {unknown[0]!r} is not in the instance list "
                                   f"{instances} ({len(unknown)} such)")
            for instance in listed:
                if instance in status and (key == "resolved" or status[instance] == "unresolved"):
                    status[instance] = key
        frames.append(pd.DataFrame({"arm": arm_name, "dataset": name_of, "problem": ids, "repeat": 0,
                                    "passed": [status[i] == "resolved" for i in ids],
                                    "swebench_status": [status[i] for i in ids]}))
        sources.append({"file": str(file), "sha256": file_sha256(file), "arm": arm_name,
                        "resolved": len(set(lists["resolved"])), "lists": sorted(lists)})
        metadata = _metadata(file.parent.parent if file.parent.name == "results" else file.parent)
        systems[arm_name] = {"metadata": metadata} if metadata else {}
    instance_file = Path(instances)
    sources.append({"file": str(instance_file), "sha256": file_sha256(instance_file), "instances": len(ids)})
    table = normalise(pd.concat(frames, ignore_index=True), str(root))
    return table, {"source": "swebench", "files": sources, "systems": systems}


def _recognises(path: Path) -> bool:
    document = first_document(path)
    return isinstance(document, dict) and isinstance(document.get("resolved"), list)


IMPORTER = FunctionImporter(
    "swebench", "SWE-bench results.json (or a folder of submissions) with --instances",
    frozenset({"arm", "dataset", "instances"}), _recognises,
    lambda path, options: import_swebench(path, options.instances, options.arm, options.dataset))
