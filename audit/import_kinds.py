"""Every kind ``sotacheck import`` reads, with a one-line description, and the one call that runs an importer.

The importers themselves live one module per tool: :mod:`sotacheck.audit.importers` (MapCoder, human-eval,
CSV), :mod:`~sotacheck.audit.importers_evalplus`, :mod:`~sotacheck.audit.importers_lmeval` and
:mod:`~sotacheck.audit.importers_inspect`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sotacheck.core.errors import UsageError

if TYPE_CHECKING:  # pandas is imported by the importers, when one runs: `sotacheck --help` stays fast
    import pandas as pd


@dataclass(frozen=True)
class ImportKind:
    """One ``sotacheck import`` kind.

    Attributes
    ----------
    name : the KIND argument.
    reads : what PATH is, in a few words (shown by ``sotacheck import --help``).
    """

    name: str
    reads: str


IMPORT_KINDS = (
    ImportKind("mapcoder", "MapCoder/CodeSim results (.jsonl[.gz], or a folder)"),
    ImportKind("humaneval-results", "human-eval's *_results.jsonl"),
    ImportKind("evalplus", "EvalPlus *eval_results.json (or a folder): base and plus"),
    ImportKind("lm-eval", "lm-evaluation-harness samples_*.jsonl (or --output_path)"),
    ImportKind("inspect", "Inspect AI log, .eval or .json (or a log folder)"),
    ImportKind("csv", "a CSV of arm, dataset, problem, repeat, passed"),
)
KIND_NAMES = tuple(kind.name for kind in IMPORT_KINDS)


def run_importer(kind: str, path: str | Path, arm: str | None = None, dataset: str | None = None
                 ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The outcome table and manifest fields of ``path`` read as ``kind``.

    Parameters
    ----------
    kind : one of :data:`KIND_NAMES`.
    path : the log file or folder.
    arm : the arm's name (humaneval-results, evalplus: one file; lm-eval, inspect: a log of one arm).
    dataset : the dataset's name (for evalplus the base name, e.g. ``humaneval``); lm-eval and inspect
        otherwise name it after the task.

    Raises
    ------
    UsageError
        An unknown kind, or ``arm`` for a log of several arms.
    OutcomeError
        Input the importer cannot read (the message names the file and the row).
    """
    from sotacheck.audit import importers

    if kind == "mapcoder":
        return importers.import_mapcoder(path, dataset=dataset)
    if kind == "humaneval-results":
        return importers.import_humaneval_results(path, arm=arm, dataset=dataset or "humaneval")
    if kind == "csv":
        return importers.import_csv(path)
    if kind == "evalplus":
        from sotacheck.audit.importers_evalplus import import_evalplus

        return import_evalplus(path, arm=arm, dataset=dataset)
    if kind == "lm-eval":
        from sotacheck.audit.importers_lmeval import import_lmeval

        return _renamed(*import_lmeval(path), arm, dataset)
    if kind == "inspect":
        from sotacheck.audit.importers_inspect import import_inspect

        return _renamed(*import_inspect(path), arm, dataset)
    raise UsageError(f"unknown import kind {kind!r}; choose one of {', '.join(KIND_NAMES)}")


def _renamed(table: pd.DataFrame, fields: dict[str, Any], arm: str | None, dataset: str | None
             ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``--arm``/``--dataset`` given for a tool's log: e.g. ``--dataset humaneval`` for a task on HumanEval's
    problems, to be compared with a rerun on them."""
    if arm is not None:
        arms = sorted(set(table["arm"]))
        if len(arms) > 1:
            raise UsageError(f"--arm names one arm, but the log holds {len(arms)}: {', '.join(arms)}")
        table = table.assign(arm=arm, pipeline=arm)
    if dataset is not None:
        table = table.assign(dataset=dataset)
    return table, fields
