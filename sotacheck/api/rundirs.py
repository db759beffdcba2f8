"""The API that makes and checks run directories: importing other tools' logs, migrating old directories,
checking stored prompts for leaked tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sotacheck.core.deprecation import renamed_keywords

if TYPE_CHECKING:
    from sotacheck.core.rundir import Run
    from sotacheck.reruns.leakage import LeakageReport


@renamed_keywords(samples="sample_count")
def import_logs(kind: str, *, path: str | Path, out: str | Path, arm: str | None = None, dataset: str | None = None,
                force: bool = False, sample_count: int | None = None, instances: str | Path | None = None
                ) -> tuple[Run, list[str]]:
    """Import another tool's per-problem logs as a run directory at ``out``, written atomically (nothing is
    written when the input cannot be read).

    Parameters
    ----------
    kind : str
        One of :func:`import_kinds`: mapcoder, humaneval-results, evalplus, bigcodebench, lm-eval, inspect, csv,
        jsonl, parquet, table, swebench.
    path : str or Path
        The log file or folder.
    out : str or Path
        The run directory to write.
    arm : str, optional
        The arm's name, for input of one arm.
    dataset : str, optional
        The dataset's name (for evalplus the base name, e.g. ``humaneval``).
    force : bool
        Overwrite ``out`` if it exists.
    sample_count : int, optional
        The sample count behind each fraction of a long table (``samples``: its old name, deprecated: it
        warns and goes in the next release).
    instances : str or Path, optional
        The file of instance ids (SWE-bench results).

    Returns
    -------
    (sotacheck.core.rundir.Run, list of str)
        The run as written, and the repairs made while reading.

    Raises
    ------
    UsageError
        An unknown kind, an option the kind does not read.
    OutcomeError
        Input the importer cannot read (the message names the file and the row), or ``out`` existing
        without ``force``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> logs = Path(sotacheck.data.__file__).with_name("published") / "mapcoder/ChatGPT/HumanEval"
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     run, repairs = sotacheck.import_logs("mapcoder", path=logs / "ChatGPT-CoT-Python3-0-1.jsonl.gz",
    ...                                          out=Path(folder) / "cot")
    >>> run.name, len(run.outcomes), repairs
    ('cot', 164, [])
    """
    from sotacheck.audit.importers import run_importer
    from sotacheck.core.rundir import load_run, manifest_of, write_run

    target = Path(out)
    frame, fields = run_importer(kind, path, arm=arm, dataset=dataset, sample_count=sample_count,
                                 instances=instances)
    written = write_run(target, frame, manifest_of(fields, name=target.name), overwrite=force)
    return load_run(written), list(fields.get("repairs", []))


def import_kinds() -> dict[str, str]:
    """Every kind of log :func:`import_logs` reads, with what it reads, in registration order (an importer
    registered after start-up included); no importer is imported.

    Returns
    -------
    dict of str to str
        Kind → a line on the files it reads (``sotacheck import --help`` lists them).

    Raises
    ------
    Nothing
        The kinds are listed from the registry alone.

    Examples
    --------
    >>> import sotacheck
    >>> kinds = sotacheck.import_kinds()
    >>> list(kinds)[:3], kinds["mapcoder"]
    (['mapcoder', 'humaneval-results', 'evalplus'], 'MapCoder/CodeSim results (.jsonl[.gz], or a folder)')
    """
    from sotacheck.audit.importers import IMPORTERS

    return dict(IMPORTERS.descriptions())


def migrate(run_dir: str | Path) -> Run:
    """Rewrite a run directory written by an older sotacheck in the current format (see
    :func:`sotacheck.core.rundir.migrate_run`); a rerun's paper defaults come from the pipeline registry.

    Parameters
    ----------
    run_dir : str or Path
        The run directory, rewritten in place (every recorded value kept).

    Returns
    -------
    sotacheck.core.rundir.Run
        The run as rewritten.

    Raises
    ------
    OutcomeError
        A run directory that cannot be read.

    Examples
    --------
    >>> import shutil, tempfile
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> runs = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings"
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     copy = shutil.copytree(runs / "methods-qwen05b", Path(folder) / "methods")
    ...     sotacheck.migrate(copy).manifest.format_version
    2
    """
    from sotacheck.core.rundir import load_run, migrate_run
    from sotacheck.reruns.pipelines import get_pipeline, names

    run = load_run(run_dir)
    pipelines = {p.get("name") for p in (run.manifest.spec or {}).get("pipelines", []) if isinstance(p, dict)}
    defaults = {name: get_pipeline(name).defaults().model_dump() for name in names() if name in pipelines}
    return migrate_run(run_dir, defaults)


def check_leakage(run_dir: str | Path) -> LeakageReport:
    """Check every stored request of a run for hidden-test asserts (see :mod:`sotacheck.reruns.leakage`).

    Parameters
    ----------
    run_dir : str or Path
        A rerun's directory (with its run store).

    Returns
    -------
    sotacheck.reruns.leakage.LeakageReport
        The requests checked and every hidden assert found in one (``.clean`` when none).

    Raises
    ------
    InputError
        No run store in ``run_dir``.

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> report = sotacheck.check_leakage(Path(sotacheck.data.__file__).resolve().parents[1] / "recordings" / "methods-qwen05b")
    >>> report.requests_checked, report.clean
    (520, True)
    """
    from sotacheck.reruns.leakage import check_run_leakage

    return check_run_leakage(Path(run_dir))
