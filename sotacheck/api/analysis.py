"""The API on run directories already made: read one, analyse, tabulate, rank, report (the gate: :mod:`.gating`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sotacheck.api.inputs import runs_of
from sotacheck.core.errors import UsageError

if TYPE_CHECKING:
    from sotacheck.audit.analysis import AnalysisResult
    from sotacheck.audit.analysis import Comparison as Comparison  # an AnalysisResult's, for the CLI's annotations
    from sotacheck.audit.leaderboard_results import Leaderboard
    from sotacheck.core.rundir import Run

TABLE_KINDS = ("pass-rates", "comparisons", "fidelity", "calls-by-problem")
"""The tables :func:`table` makes (``sotacheck table --kind``)."""
CI_STYLES = ("bracket", "pm")


def load_run(path: str | Path) -> Run:
    """Read a run directory (a rerun's, an import's, a judge's ``run_out``), in any format version.

    Parameters
    ----------
    path : str or Path
        The run directory (``runs/NAME``).

    Returns
    -------
    sotacheck.core.rundir.Run
        Its outcome table (one row per arm × dataset × problem × repeat, the arm's identity as columns)
        and its manifest.

    Raises
    ------
    sotacheck.core.rundir.OutcomeError
        No such directory, or a table that does not validate (the message names the file, line and column).

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> runs = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings"
    >>> run = sotacheck.load_run(runs / "methods-qwen05b")
    >>> run.name, len(run.outcomes), run.manifest.format_version
    ('methods-qwen05b', 120, 2)
    """
    from sotacheck.core.rundir import load_run as read

    return read(path)


def analyze(runs: Iterable[Run | str | Path], *, baseline: str | None = None, confidence: float = 0.95,
            resamples: int = 10_000, seed: int = 0, compare: Sequence[tuple[str, str]] = ()) -> AnalysisResult:
    """Pass rates with confidence intervals per arm, grouped into studies (the same problems, model,
    endpoint, sampling and judge), and within each study paired comparisons against its baseline.

    Parameters
    ----------
    runs : iterable of Run, str or Path
        Run directories (paths) or loaded :class:`~sotacheck.core.rundir.Run` objects.
    baseline : str, optional
        The arm each study's other arms are compared with, by its name in its run; a study without it uses
        its default: the first pipeline its first run lists, else its first arm.
    confidence : float
        Confidence level of every interval.
    resamples : int
        Bootstrap / permutation resamples (at least 1).
    seed : int
        Seed of the resampling.
    compare : sequence of (str, str)
        Extra ``(arm, against)`` pairs, across studies if need be (then labelled so); they form their own
        Holm family.

    Returns
    -------
    sotacheck.audit.analysis.AnalysisResult
        The arms' pass rates, the comparisons, the studies, and what could not be scored or compared.

    Raises
    ------
    UsageError
        No runs, ``resamples`` below 1, ``compare`` not pairs.
    sotacheck.core.rundir.OutcomeError
        A run that cannot be read.

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> runs = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings"
    >>> result = sotacheck.analyze([runs / "methods-qwen05b"], baseline="direct", resamples=200)
    >>> [(arm.arm, arm.pass_rate) for arm in result.arms][:2]
    [('codesim[d=5,p=5]', 0.65), ('cot', 0.7)]
    >>> sotacheck.analyze([runs / "methods-qwen05b"], resamples=0)
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: `resamples` must be at least 1, got 0
    """
    from sotacheck.audit.analysis import analyze as analyze_runs

    if resamples < 1:
        raise UsageError(f"{{resamples}} must be at least 1, got {resamples}", parameters=("resamples",))
    pairs = [tuple(pair) for pair in compare]
    if any(len(pair) != 2 for pair in pairs):
        raise UsageError(f"{{compare}} must be pairs (arm, against), got {list(compare)!r}", parameters=("compare",))
    return analyze_runs(runs_of(runs), baseline=baseline, confidence_level=confidence, n_resamples=resamples,
                        seed=seed, compare=[(str(a), str(b)) for a, b in pairs])


def leaderboard(runs: Iterable[Run | str | Path], *, dataset: str | None = None, alpha: float = 0.05,
                against: str | None = None, confidence: float = 0.95, canonical: bool = False,
                weak_tests: bool = False, data_dir: str | Path | None = None) -> Leaderboard:
    """Rank every system (arm) of ``runs`` on one dataset: pass rates with intervals, every pair tested with
    the paired test under Holm, simultaneous rank intervals and the top group (the systems no other beats
    significantly), the benchmark's resolution and its suspect problems.

    Parameters
    ----------
    runs : iterable of Run, str or Path
        Run directories (paths) or loaded runs; all their arms on ``dataset`` are the systems.
    dataset : str, optional
        The benchmark; required when the runs hold several.
    alpha : float
        Family-wise error rate of the pairwise tests, and so the level of the rank intervals.
    against : str, optional
        Test only this system's pairs (``"TOP"``: the best by pass rate, chosen from these data).
    confidence : float
        Level of the pass-rate intervals.
    canonical : bool
        Judge the dataset's canonical solutions and show their verdicts beside suspect problems.
    weak_tests : bool
        Run cheap wrong programs against the dataset's tests (:func:`find_suspect_tests`) and list the problems whose
        tests accept one among the suspect problems.
    data_dir : str or Path, optional
        Local benchmark files for ``canonical`` and ``weak_tests``.

    Returns
    -------
    sotacheck.audit.leaderboard_results.Leaderboard
        The systems, the pairs, the rank intervals, the top group and the benchmark's resolution.

    Raises
    ------
    InputError
        Fewer than two systems, no problem shared by all, an unknown dataset, unreadable runs.
    UsageError
        ``canonical`` for a dataset sotacheck cannot judge, or ``canonical``/``weak_tests`` on runs of
        several datasets without ``dataset``.

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> runs = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings"
    >>> board = sotacheck.leaderboard([runs / "methods-qwen05b"])
    >>> board.dataset, board.n_systems, board.n_problems
    ('humaneval', 6, 20)
    """
    from sotacheck.api.judging import find_suspect_tests, judge
    from sotacheck.audit.leaderboard import leaderboard as build

    loaded = runs_of(runs)
    verdicts: dict[str, bool] | None = None
    weak: dict[str, str] | None = None
    if canonical or weak_tests:
        names = sorted({str(d) for run in loaded for d in run.outcomes["dataset"].unique()})
        chosen = dataset or (names[0] if len(names) == 1 else None)
        if chosen is None:
            raise UsageError(f"{{canonical}}/{{weak_tests}}: name the dataset (the runs hold {', '.join(names)})",
                             parameters=("canonical", "weak_tests"))
        if canonical:
            judged = judge(chosen, canonical=True, data_dir=data_dir)
            verdicts = {v.problem_id: v.result.status == "passed" for v in judged.verdicts}
        if weak_tests:
            weak = {}
            for suspect in find_suspect_tests(chosen, data_dir=data_dir).suspects:
                weak.setdefault(suspect.problem_id, suspect.kind)
    return build(loaded, dataset, alpha=alpha, against=against, confidence_level=confidence, canonical=verdicts,
                 weak_tests=weak)


def table(runs: Iterable[Run | str | Path], *, format: str = "markdown", kind: str = "pass-rates",
          ci: str = "bracket", baseline: str | None = None, compare: Sequence[tuple[str, str]] = ()) -> str:
    """A paper table of one ``kind``: ``pass-rates`` or ``comparisons`` (the numbers of :func:`analyze`),
    ``fidelity`` (calls and tokens per problem and the replies the token limit cut, per arm:
    :func:`sotacheck.audit.fidelity.fidelity`) or ``calls-by-problem`` (each cell's calls, cut replies and
    status: :func:`sotacheck.audit.fidelity.calls_by_problem`).

    Parameters
    ----------
    runs : iterable of Run, str or Path
        Run directories (paths) or loaded runs.
    format : str
        ``latex`` (booktabs), ``markdown`` or ``csv``.
    kind : str
        One of :data:`TABLE_KINDS`.
    ci : str
        How an interval is written: ``bracket`` (``[low, high]``) or ``pm`` (``±``).
    baseline, compare
        As in :func:`analyze`.

    Returns
    -------
    str
        The table's text.

    Raises
    ------
    UsageError
        An unknown ``format``, ``kind`` or ``ci``, or no runs.

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> runs = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings"
    >>> print(sotacheck.table([runs / "methods-qwen05b"], baseline="direct").splitlines()[0])
    | Arm | Dataset | n | Pass@1 [95% CI] | Calls | Tokens | p (Holm) |
    >>> sotacheck.table([runs / "methods-qwen05b"], format="html")
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: `format` must be one of latex, markdown, csv, got 'html'
    """
    from sotacheck.api.rendering import check_choice
    from sotacheck.audit.fidelity import calls_by_problem, fidelity
    from sotacheck.reports.tables import RENDERERS, calls_by_problem_table, comparison_table, fidelity_table, pass_rate_table

    check_choice("format", format, list(RENDERERS))
    if ci not in CI_STYLES:
        raise UsageError(f"{{ci}} must be 'bracket' or 'pm', got {ci!r}", parameters=("ci",))
    check_choice("kind", kind, TABLE_KINDS)
    if kind in ("fidelity", "calls-by-problem"):
        loaded = runs_of(runs)
        view = fidelity_table(fidelity(loaded)) if kind == "fidelity" else calls_by_problem_table(calls_by_problem(loaded))
        return RENDERERS[format](view)
    result = analyze(runs, baseline=baseline, compare=compare)
    built = pass_rate_table(result, ci) if kind == "pass-rates" else comparison_table(result)  # type: ignore[arg-type]
    return RENDERERS[format](built)


def report(runs: Iterable[Run | str | Path], *, output: str | Path = "report.html", claims: Sequence[str | Path] = (),
           baseline: str | None = None, data_dir: str | Path | None = None,
           compare: Sequence[tuple[str, str]] = (), leaderboard: Sequence[str] = ()) -> Path:
    """Render the self-contained HTML audit report of ``runs``: one section per study (see :func:`analyze`),
    sweeps and decay fits, the claim verdicts of ``claims``, provenance, and a leaderboard section per dataset
    of ``leaderboard``. The file is written atomically.

    Parameters
    ----------
    runs : iterable of Run, str or Path
        Run directories (paths) or loaded runs.
    output : str or Path
        The HTML file to write.
    claims : sequence of str or Path
        Claims registry files whose verdicts the report shows.
    baseline, compare
        As in :func:`analyze`.
    data_dir : str or Path, optional
        Local benchmark files, for the benchmark-size checks of ``claims``.
    leaderboard : sequence of str
        Datasets to rank every arm of the runs on (see :func:`leaderboard`).

    Returns
    -------
    Path
        The report's path.

    Raises
    ------
    UsageError
        No runs.
    InputError
        A run or claims file that cannot be read, a leaderboard that cannot be made.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> runs = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings"
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = sotacheck.report([runs / "methods-qwen05b"], output=Path(folder) / "audit.html")
    ...     print(written.name, written.read_text().startswith("<!DOCTYPE html>"))
    audit.html True
    """
    from sotacheck.api.inputs import dataset_sizes
    from sotacheck.audit.report_inputs import report_inputs
    from sotacheck.reports.html import write_report

    loaded = runs_of(runs)
    files = [Path(f) for f in claims]
    inputs = report_inputs(loaded, files, baseline=baseline, dataset_sizes=dataset_sizes(files, data_dir),
                           compare=compare, leaderboards=leaderboard)
    return write_report(inputs, Path(output))

