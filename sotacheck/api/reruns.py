"""The API that runs pipelines: a rerun from a spec, resuming it, and the spec of a sweep."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sotacheck.core.errors import InputError, UsageError

if TYPE_CHECKING:
    from sotacheck.reruns.run import RunSpec, RunSummary

MAX_SETTINGS = 500
"""The largest grid :func:`sweep_spec` makes without ``allow_large``."""


def check_executor(executor: str) -> None:
    """Refuse an executor that is not ``local`` or ``ray``, before anything starts."""
    if executor not in ("local", "ray"):
        raise UsageError(f"{{executor}} {executor!r}: expected 'local' or 'ray'", parameters=("executor",))


def reuse_dirs(reuse: Sequence[str | Path]) -> list[Path] | None:
    """The run directories of ``reuse`` (None for none); one without a run store is an :class:`InputError`."""
    from sotacheck.reruns.store.run_store import RunStore

    for run_dir in reuse:
        if not RunStore.exists(Path(run_dir)):
            raise InputError(f"{{reuse}} {run_dir}: no run store (store.sqlite or store.sqlite.gz) there", parameters=("reuse",))
    return [Path(r) for r in reuse] if reuse else None


def rerun(spec: RunSpec | dict[str, Any], *, out: str | Path, executor: str = "local", ray_address: str | None = None,
          reuse: Sequence[str | Path] = (), progress: bool = True) -> RunSummary:
    """Re-execute the pipelines of ``spec`` on its benchmark into the run directory ``out``; resumes when
    ``out`` holds the same spec already.

    Parameters
    ----------
    spec : sotacheck.reruns.run.RunSpec or dict
        The run spec, or its fields (validated here).
    out : str or Path
        The run directory to create (or resume).
    executor : str
        Where the cells run: ``local`` or ``ray``.
    ray_address : str, optional
        The Ray cluster's address (``executor="ray"``).
    reuse : sequence of str or Path
        Earlier run directories whose stored replies answer the same calls (never sent again).
    progress : bool
        Show progress on standard error.

    Returns
    -------
    sotacheck.reruns.run.RunSummary
        Cells, calls requested and sent, errors, time, and the leakage check.

    Raises
    ------
    UsageError
        A spec that does not validate (the message names the field), an unknown ``executor``.
    InputError
        A ``reuse`` directory without a run store.
    SotacheckError
        A model that cannot be reached, a run directory holding another spec.

    Examples
    --------
    A rerun calls a model; what it is given is checked before any call:

    >>> import tempfile
    >>> from pathlib import Path
    >>> import sotacheck
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     sotacheck.rerun({"dataset": "humaneval", "pipelines": [{"name": "direct"}]}, out=Path(folder) / "run",
    ...                     reuse=[Path(folder) / "nothing"])
    Traceback (most recent call last):
    sotacheck.core.errors.InputError: `reuse` .../nothing: no run store (store.sqlite or store.sqlite.gz) there
    """
    import asyncio

    from sotacheck.reruns.run import RunSpec, execute_run, validate_spec

    check_executor(executor)
    run_spec = spec if isinstance(spec, RunSpec) else validate_spec(spec, "run spec")
    target = Path(out)
    reused = reuse_dirs(reuse)
    return asyncio.run(execute_run(target, run_spec, progress=progress, server_log=target / "server.log",
                                   executor=executor, ray_address=ray_address, reuse=reused))


def resume(run_dir: str | Path, *, replay: bool = False, executor: str = "local", ray_address: str | None = None,
           reuse: Sequence[str | Path] = (), progress: bool = True) -> RunSummary:
    """Continue a stopped run; with ``replay``, re-derive every cell from the store without a model.

    Parameters
    ----------
    run_dir : str or Path
        The run directory (with its run store).
    replay : bool
        Serve every call from the store; a call not stored is an error.
    executor, ray_address, reuse, progress
        As in :func:`rerun`.

    Returns
    -------
    sotacheck.reruns.run.RunSummary
        As :func:`rerun`'s.

    Raises
    ------
    UsageError
        An unknown ``executor``.
    InputError
        No run store in ``run_dir``, or in a ``reuse`` directory.
    SotacheckError
        Pipelines changed since the run was recorded (its calls would not replay).

    Examples
    --------
    >>> import tempfile
    >>> import sotacheck
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     sotacheck.resume(folder, replay=True)
    Traceback (most recent call last):
    sotacheck.core.errors.InputError: ...: no run store (store.sqlite or store.sqlite.gz) to resume
    """
    import asyncio

    from sotacheck.reruns.run import execute_run
    from sotacheck.reruns.store.run_store import RunStore

    check_executor(executor)
    target = Path(run_dir)
    if not RunStore.exists(target):
        raise InputError(f"{target}: no run store (store.sqlite or store.sqlite.gz) to resume")
    reused = reuse_dirs(reuse)
    return asyncio.run(execute_run(target, None, replay=replay, progress=progress, server_log=target / "server.log",
                                   executor=executor, ray_address=ray_address, reuse=reused))


def sweep_spec(pipeline: str, *, grid: Sequence[str], fields: dict[str, Any], fixed: Sequence[str] = (),
               allow_large: bool = False) -> RunSpec:
    """The run spec of a sweep: ``pipeline`` at every setting of ``grid``.

    Parameters
    ----------
    pipeline : str
        The pipeline to sweep (``codesim``).
    grid : sequence of str
        One axis each: ``NAME=V1,V2`` or ``NAME=LOW..HIGH`` (``p=1,2,3``, ``max_attempts=0..8``).
    fields : dict
        The spec's other fields (dataset, model, sampling).
    fixed : sequence of str
        Parameters held fixed, ``NAME=VALUE`` (``base=cot``).
    allow_large : bool
        Allow a grid of more than :data:`MAX_SETTINGS` settings.

    Returns
    -------
    sotacheck.reruns.run.RunSpec
        One pipeline entry per setting; run it with :func:`rerun`.

    Raises
    ------
    UsageError
        An axis that does not parse, a grid over :data:`MAX_SETTINGS` settings without ``allow_large``, a
        spec that does not validate.

    Examples
    --------
    >>> import sotacheck
    >>> spec = sotacheck.sweep_spec("codesim", grid=["p=1,2"], fields={"dataset": "humaneval"})
    >>> [entry.params for entry in spec.pipelines]
    [{'p': 1}, {'p': 2}]
    >>> sotacheck.sweep_spec("codesim", grid=["p=1..30", "d=1..20"], fields={"dataset": "humaneval"})
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: the grid has 600 settings (> 500); pass `allow_large` to run it anyway
    """
    from sotacheck.reruns.grid import parse_assignment, parse_grid
    from sotacheck.reruns.run import validate_spec

    settings = parse_grid(grid)
    if len(settings) > MAX_SETTINGS and not allow_large:
        raise UsageError(f"the grid has {len(settings)} settings (> {MAX_SETTINGS}); pass {{allow_large}} to run "
                         "it anyway", parameters=("allow_large",))
    constant = dict(parse_assignment(item) for item in fixed)
    return validate_spec({**fields, "pipelines": [{"name": pipeline, "params": {**constant, **s}} for s in settings]},
                         "sweep")
