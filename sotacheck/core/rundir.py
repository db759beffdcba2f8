"""The run directory: the one module that defines, writes and reads it.

A run directory (``runs/NAME/``) is what every command after a rerun or an import reads:

- ``run.json``, the manifest (:class:`Manifest`): ``format_version``, where the run came from, its spec,
  the model and endpoint identity, the dataset with its content hash, package versions, git revision and
  the leakage check. Written last, so a directory with a manifest has its tables.
- ``outcomes.parquet`` and ``outcomes.csv``: one row per arm × dataset × problem × repeat:

  ========================  =======  =====================================================
  ``arm``                   str      display label, e.g. ``codesim[d=2,p=3]``
  ``pipeline``              str      the method, e.g. ``codesim`` (an imported log: its arm name)
  ``param.<name>``          typed    one column per parameter of any arm (NA where an arm has none)
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

  Further columns (``wall_s``, ``judge_status``) are kept as they are. Errored cells are kept and
  flagged; they are never counted as failures.
- ``calls.parquet`` (a rerun's; optional): one row per model call the cells made, in the order made:
  ``arm``, ``dataset``, ``problem``, ``repeat``, ``stage``, ``call_path``, ``state`` (``received`` or
  ``error``), ``finish_reason`` (``length``: cut by the token limit), ``prompt_tokens``,
  ``completion_tokens``, ``served_from`` (``model``, or the cache entry that answered it). What the
  fidelity figures (``sotacheck.audit.fidelity``) read; the prompts and replies stay in the store.

Directories written before ``format_version`` 2 (no ``pipeline`` column, a loose ``run.json``) are read
through :func:`_migrate_manifest` and :func:`sotacheck.core.arms.structure_legacy_arms`;
``sotacheck migrate`` rewrites them in the current format.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sotacheck.core.errors import describe_json_error, describe_validation_error
from sotacheck.core.files import check_replaceable, staging_directory
from sotacheck.core.outcomes import OutcomeError, normalise
from sotacheck.core.provenance import git_revision, versions

FORMAT_VERSION = 2
MANIFEST, PARQUET, CSV, CALLS = "run.json", "outcomes.parquet", "outcomes.csv", "calls.parquet"
CALL_COLUMNS = ("arm", "dataset", "problem", "repeat", "stage", "call_path", "state", "finish_reason",
                "prompt_tokens", "completion_tokens", "served_from")


class DatasetInfo(BaseModel):
    """The benchmark a run used: its name and the content hash of its problems (prompts and tests)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    name: str
    content_hash: str | None = None
    sources: list[str] = Field(default_factory=list)
    problems: int | None = None


class ModelIdentity(BaseModel):
    """Which model answered, and through which endpoint (server, build and mode)."""

    model_config = ConfigDict(frozen=True)
    model: str
    endpoint: str

    def label(self) -> str:
        return f"{self.model} @ {self.endpoint}"


class Manifest(BaseModel):
    """``run.json``: where a run's outcomes came from, enough to reproduce or re-judge them."""

    # Other keys are kept as they are: an importer's or a user's own provenance.
    model_config = ConfigDict(extra="allow", frozen=True)
    format_version: int = FORMAT_VERSION
    name: str
    source: str
    created: str | None = Field(default_factory=lambda: datetime.now(UTC).isoformat())  # None: not recorded
    spec: dict[str, Any] | None = None
    model_identity: ModelIdentity | None = None
    dataset: DatasetInfo | None = None
    versions: dict[str, str] = Field(default_factory=versions)
    git_revision: str | None = Field(default_factory=git_revision)
    leakage_check: dict[str, Any] | None = None
    files: list[dict[str, Any]] = Field(default_factory=list)
    repairs: list[str] = Field(default_factory=list)
    reuse_from: list[str] = Field(default_factory=list)
    # Each pipeline's paper-default parameters (a sweep is compared against that setting).
    pipeline_defaults: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # Each arm's sampling in a rerun (temperature, top_p, max_tokens: "none" is no cap) and where it came from.
    arm_sampling: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # The revision of each pipeline a rerun ran (sotacheck's ``Pipeline.revision``); absent: each one's first.
    pipeline_revisions: dict[str, int] = Field(default_factory=dict)
    # Which judge gave the verdicts, and under what limit (a rerun's and ``sotacheck judge``'s own; a study's
    # condition). Absent: as the source and the spec say (runs recorded before it was written).
    judge: str | None = None
    # Each system's own facts, one value per system, as an imported long table or submission gives them
    # (``model``, ``method``, ``release_date``, ``open_weights``, ``harness``, ``meta.<name>``, SWE-bench's
    # ``metadata``): the arm → {fact: value}; a leaderboard lists them beside the systems.
    systems: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def sotacheck_version(self) -> str:
        return self.versions.get("sotacheck", "unknown")


def sandbox_judge(test_timeout_s: float | None) -> str:
    """How a manifest names sotacheck's sandbox judge and its limit per test (``judge``): what a rerun writes and
    what the report reads for a run recorded before runs wrote it, in the same words, so both are one study."""
    return "sotacheck sandbox" + (f", {test_timeout_s} s per test" if test_timeout_s is not None else "")


def manifest_of(fields: Mapping[str, Any] | Manifest, name: str = "run", source: str = "unknown") -> Manifest:
    """A manifest from its fields (``name`` and ``source`` filled in when missing), validated once; a
    field of the wrong type is an error naming it."""
    if isinstance(fields, Manifest):
        return fields
    try:
        return Manifest.model_validate({"name": name, "source": source, **fields})
    except ValidationError as exc:
        raise OutcomeError(f"run manifest: {describe_validation_error(exc, '(manifest)')}") from None


@dataclass(frozen=True)
class Run:
    """An outcome table with its manifest, as read from (or about to be written to) a run directory."""

    path: Path | None
    outcomes: pd.DataFrame
    manifest: Manifest
    calls: pd.DataFrame | None = None  # ``calls.parquet`` where the run has one (a rerun's)

    def __post_init__(self) -> None:
        if not isinstance(self.manifest, Manifest):  # given as its fields, e.g. Run(None, table, {"name": "x"})
            name = self.path.name if self.path else "run"
            object.__setattr__(self, "manifest", manifest_of(self.manifest, name=name))

    @property
    def name(self) -> str:
        return self.path.name if self.path else self.manifest.name


def _import_first(file: Path) -> str:
    """What to say when a results file is given where a run directory is expected: import it, and how."""
    stem = file.name.split(".")[0] or "results"
    if file.suffix.lower() == ".csv":
        how = f"sotacheck import csv {file} --out runs/{stem}"
    else:
        how = (f"sotacheck import KIND {file} --out runs/{stem} (KIND: the tool that wrote it, e.g. mapcoder, "
               f"evalplus, lm-eval, inspect, csv; see sotacheck import --help)")
    return f"{str(file)!r} is a file, not a run directory; import it first: {how}"


def load_run(path: str | Path) -> Run:
    """Read ``runs/NAME`` (``outcomes.parquet``, else ``outcomes.csv``; ``run.json`` if present), in any
    format version this module has written."""
    directory = Path(path)
    if directory.is_file():
        raise OutcomeError(_import_first(directory))
    if not directory.is_dir():
        raise OutcomeError(f"run directory {str(directory)!r} does not exist")
    parquet, csv = directory / PARQUET, directory / CSV
    for name in (PARQUET, CSV, MANIFEST):
        if (directory / name).is_dir():
            raise OutcomeError(f"{directory / name}: a directory where a file is expected")
    if parquet.is_file():
        frame, where = _read_table(parquet, pd.read_parquet), str(parquet)
    elif csv.is_file():
        frame = _read_table(csv, lambda path: pd.read_csv(path, dtype={"problem": str, "arm": str, "dataset": str,
                                                                      "pipeline": str}))
        where = str(csv)
    else:
        raise OutcomeError(f"{directory}: no outcome table (looked for {PARQUET}, {CSV})")
    manifest_path = directory / MANIFEST
    try:
        raw = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    except json.JSONDecodeError as exc:
        raise OutcomeError(f"{manifest_path}: invalid JSON ({describe_json_error(exc)})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OutcomeError(f"{manifest_path}: not readable as JSON text ({_first_line(exc)})") from None
    return Run(directory, normalise(frame, where), _migrate_manifest(raw, directory.name, str(manifest_path)),
               _read_calls(directory / CALLS))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _read_table(path: Path, read: Callable[[Path], pd.DataFrame]) -> pd.DataFrame:
    """``read(path)``; a file that is empty, truncated, garbage or unreadable is an error naming it (pyarrow's
    and pandas' own errors are ``OSError`` or ``ValueError`` subclasses)."""
    if path.stat().st_size == 0:
        raise OutcomeError(f"{path}: the file is empty")
    if path.suffix == ".csv":
        with path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) not in b"\n\r":
                raise OutcomeError(f"{path}: the last row does not end with a newline: the file is truncated")
    try:
        return read(path)
    except (OSError, ValueError) as exc:
        kind = "Parquet" if path.suffix == ".parquet" else "CSV"
        raise OutcomeError(f"{path}: not a readable {kind} outcome table ({_first_line(exc)})") from None


def _read_calls(path: Path) -> pd.DataFrame | None:
    """The per-call table, or None where the run has none; one missing a column is an error naming it."""
    if not path.is_file():
        return None
    try:
        calls = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise OutcomeError(f"{path}: not a readable call table ({_first_line(exc)})") from None
    missing = [column for column in CALL_COLUMNS if column not in calls.columns]
    if missing:
        raise OutcomeError(f"{path}: missing column(s) {', '.join(missing)}")
    return calls


def _migrate_manifest(raw: dict[str, Any], name: str, where: str) -> Manifest:
    """A manifest of any format version as the current :class:`Manifest`."""
    if not isinstance(raw, dict):
        raise OutcomeError(f"{where}: expected a JSON object")
    data = dict(raw)
    if data.get("format_version", 1) < FORMAT_VERSION:
        data["format_version"] = FORMAT_VERSION
        data.setdefault("name", name)
        data.setdefault("source", "unknown")
        legacy_version = data.pop("sotacheck_version", None)
        data.setdefault("versions", {"sotacheck": legacy_version} if legacy_version else {})
        data.setdefault("git_revision", None)
        data.setdefault("created", None)
        identity = data.get("model_identity")
        if isinstance(identity, list | tuple) and len(identity) == 2:
            data["model_identity"] = {"model": identity[0], "endpoint": identity[1]}
        dataset = data.get("dataset")
        if isinstance(dataset, str):  # `sotacheck judge --run-out` wrote the name and the hash apart
            data["dataset"] = {"name": dataset, "content_hash": data.pop("dataset_hash", None)}
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise OutcomeError(f"{where}: {describe_validation_error(exc, '(manifest)')}") from None


def write_run(out: str | Path, outcomes: pd.DataFrame, manifest: Manifest | Mapping[str, Any],
              overwrite: bool = False) -> Path:
    """Write a new run directory atomically: into a temporary sibling, then renamed into place.
    ``manifest`` may be given as its fields (see :func:`manifest_of`; the name defaults to the directory's)."""
    target = Path(out)
    manifest = manifest_of(manifest, name=target.name)
    check_replaceable(target, overwrite)
    table = normalise(outcomes, str(target))
    staging = staging_directory(target)
    try:
        _write_files(staging, table, manifest)
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def export_into(run_dir: Path, outcomes: pd.DataFrame, manifest: Manifest,
                calls: pd.DataFrame | None = None) -> pd.DataFrame:
    """Write the tables (and ``calls``, the per-call table, when given) and the manifest into an existing
    run directory (a rerun's, beside its store), each file atomically and the manifest last. Returns the
    outcome table as written."""
    table = normalise(outcomes, str(run_dir)) if not outcomes.empty else outcomes
    _write_files(run_dir, table, manifest, calls)
    return table


def _write_files(directory: Path, table: pd.DataFrame, manifest: Manifest, calls: pd.DataFrame | None = None) -> None:
    writers: list[tuple[str, Callable[[Path], object]]] = [
        (PARQUET, lambda p: table.to_parquet(p, index=False)),
        (CSV, lambda p: table.to_csv(p, index=False)),
    ]
    if calls is not None:
        missing = [column for column in CALL_COLUMNS if column not in calls.columns]
        if missing:
            raise OutcomeError(f"{directory}: the call table lacks column(s) {', '.join(missing)}")
        frame = calls[list(CALL_COLUMNS)]
        writers.append((CALLS, lambda p: frame.to_parquet(p, index=False)))
    writers.append((MANIFEST, lambda p: p.write_text(json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n")))
    for name, write in writers:
        tmp = directory / f".{name}.tmp"
        write(tmp)
        os.replace(tmp, directory / name)


def migrate_run(path: str | Path, pipeline_defaults: Mapping[str, Mapping[str, Any]] | None = None) -> Run:
    """Rewrite a run directory of an older format in the current one (tables and manifest; every value,
    ``wall_s`` included, kept as recorded); the store and other files are left alone. ``pipeline_defaults``
    fills in what format 1 did not record. Returns the run as now written."""
    run = load_run(path)
    assert run.path is not None
    manifest = run.manifest
    if pipeline_defaults and not manifest.pipeline_defaults:
        manifest = manifest.model_copy(update={"pipeline_defaults": {k: dict(v) for k, v in pipeline_defaults.items()}})
    export_into(run.path, run.outcomes, manifest)
    return Run(run.path, run.outcomes, manifest)
