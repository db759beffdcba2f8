"""The API that runs pipelines: the spec of a rerun (from a file, or from pipelines and fields) or of a sweep,
a rerun from it, and resuming one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sotacheck.core.errors import InputError, UsageError

if TYPE_CHECKING:
    from sotacheck.reruns.run import RunSpec, RunSummary

MAX_SETTINGS = 500
"""The largest grid :func:`sweep_spec` makes without ``allow_large``."""


def executor_names() -> tuple[str, ...]:
    """The executors' names (``--executor``), as registered in :data:`sotacheck.reruns.executors.EXECUTORS`, the
    default first; no executor is imported."""
    from sotacheck.reruns.executors import EXECUTORS

    return EXECUTORS.names()


def check_executor(executor: str) -> None:
    """Refuse an executor that is not registered (:func:`executor_names`), before anything starts."""
    names = executor_names()
    if executor not in names:
        raise UsageError(f"{{executor}} {executor!r}: expected {' or '.join(map(repr, names))}", parameters=("executor",))


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


def parse_original_code(items: Sequence[str]) -> dict[str, str]:
    """The checkouts of the authors' code, from ``REPOSITORY=PATH`` items (``--original-code``), for a spec's
    ``original_code`` field (the ``@original`` pipelines run them).

    Parameters
    ----------
    items : sequence of str
        ``mapcoder=PATH`` (Md-Ashraful-Pramanik/MapCoder) or ``codegenerator=PATH`` (kagnlp/CodeGenerator).

    Returns
    -------
    dict of str to str
        Repository → path; a later item for the same repository wins.

    Raises
    ------
    UsageError
        An item that is not ``REPOSITORY=PATH``.

    Examples
    --------
    >>> import sotacheck
    >>> sotacheck.parse_original_code(["mapcoder=../MapCoder"])
    {'mapcoder': '../MapCoder'}
    >>> sotacheck.parse_original_code(["../MapCoder"])
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: --original-code '../MapCoder': expected REPOSITORY=PATH, e.g. mapcoder=../MapCoder
    """
    from sotacheck.reruns.original.checkout import parse_original_code as parse

    return parse(tuple(items))


def pipeline_params(items: Sequence[str], *, pipelines: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Pipeline parameters from ``PIPELINE.NAME=VALUE`` items (``--param``), each value read as YAML, grouped by
    pipeline for :func:`run_spec`'s ``params``.

    Parameters
    ----------
    items : sequence of str
        ``codesim.p=3``, ``cot.base=direct``: each naming one of ``pipelines``.
    pipelines : sequence of str
        The pipelines of the run.

    Returns
    -------
    dict of str to dict
        Pipeline → its parameters (``3`` an integer, ``direct`` a string).

    Raises
    ------
    UsageError
        An item that is not ``PIPELINE.NAME=VALUE``, or one naming a pipeline not in ``pipelines``.

    Examples
    --------
    >>> import sotacheck
    >>> sotacheck.pipeline_params(["codesim.p=3", "codesim.d=2"], pipelines=["direct", "codesim"])
    {'codesim': {'p': 3, 'd': 2}}
    >>> sotacheck.pipeline_params(["cot.x=1"], pipelines=["direct"])
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: --param names pipeline(s) not in --pipelines: cot
    """
    from sotacheck.reruns.grid import pipeline_params as parse

    return parse(items, pipelines)


def run_spec(pipelines: Sequence[str], *, fields: Mapping[str, Any],
             params: Mapping[str, Mapping[str, Any]] | None = None, source: str = "run spec") -> RunSpec:
    """The run spec of a rerun of ``pipelines``, validated: run it with :func:`rerun`.

    Parameters
    ----------
    pipelines : sequence of str
        The pipelines to run, in order (``direct``, ``codesim``, ``mapcoder@original``).
    fields : mapping
        The spec's other fields (dataset, model, sampling, repeats, ...).
    params : mapping of str to mapping, optional
        Each pipeline's parameters (:func:`pipeline_params`); a pipeline not named keeps its paper defaults.
    source : str
        What the fields came from, the first words of a validation error (the CLI: ``command line``).

    Returns
    -------
    sotacheck.reruns.run.RunSpec
        The spec, one pipeline entry per name.

    Raises
    ------
    InputError, UsageError
        A spec that does not validate (the message names the field): an unknown pipeline or dataset, a
        parameter out of range, engine settings that do not fit.

    Examples
    --------
    >>> import sotacheck
    >>> spec = sotacheck.run_spec(["direct", "codesim"], fields={"dataset": "humaneval"}, params={"codesim": {"p": 3}})
    >>> [(entry.name, entry.params) for entry in spec.pipelines]
    [('direct', {}), ('codesim', {'p': 3})]
    >>> sotacheck.run_spec(["nope"], fields={"dataset": "humaneval"})
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: run spec: unknown pipeline 'nope'; choose one of direct, cot, ...
    """
    from sotacheck.reruns.run import validate_spec

    chosen = params or {}
    return validate_spec({**fields, "pipelines": [{"name": name, "params": chosen.get(name, {})} for name in pipelines]},
                         source)


def load_spec(path: str | Path, *, original_code: Mapping[str, str] | None = None) -> RunSpec:
    """The run spec of a YAML file, validated; ``original_code`` names (or overrides) its checkouts of the
    authors' code.

    Parameters
    ----------
    path : str or Path
        The run spec file (docs/reruns.md).
    original_code : mapping of str to str, optional
        Repository → checkout path (:func:`parse_original_code`), over the file's ``original_code``.

    Returns
    -------
    sotacheck.reruns.run.RunSpec
        The spec; run it with :func:`rerun`.

    Raises
    ------
    InputError
        A file that cannot be read, or a spec that does not validate (the message names the file and the
        field).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import sotacheck
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = Path(folder.name) / "spec.yaml"
    >>> _ = path.write_text("dataset: humaneval\\npipelines:\\n  - name: direct\\n")
    >>> spec = sotacheck.load_spec(path)
    >>> spec.dataset, [entry.name for entry in spec.pipelines]
    ('humaneval', ['direct'])
    >>> sotacheck.load_spec(Path(folder.name) / "none.yaml")
    Traceback (most recent call last):
    sotacheck.core.errors.InputError: .../none.yaml: cannot read the run spec ([Errno 2] No such file or directory: ...)
    >>> folder.cleanup()
    """
    from sotacheck.reruns.run import load_spec as read
    from sotacheck.reruns.run import validate_spec

    spec = read(Path(path))
    if not original_code:
        return spec
    return validate_spec({**spec.model_dump(), "original_code": {**spec.original_code, **original_code}}, str(path))
