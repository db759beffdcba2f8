"""The API of the CI regression gate: its settings, checked, and its decision on two runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sotacheck.api.inputs import runs_of

if TYPE_CHECKING:
    from sotacheck.audit.gate import GateResult, GateSettings
    from sotacheck.core.rundir import Run


def gate(baseline: Run | str | Path, *, candidate: Run | str | Path, baseline_arm: str | None = None,
         candidate_arm: str | None = None, dataset: str | None = None, settings: GateSettings | None = None
         ) -> GateResult:
    """The CI regression gate: does ``candidate`` pass fewer problems than ``baseline``, beyond noise?

    Parameters
    ----------
    baseline : Run, str or Path
        The reference run (the main branch's).
    candidate : Run, str or Path
        The run to judge (the change's).
    baseline_arm, candidate_arm : str, optional
        The arm of each run to compare; needed when a run holds several.
    dataset : str, optional
        Gate one dataset only (default: every dataset of the baseline).
    settings : sotacheck.audit.gate.GateSettings, optional
        Alpha, the drop allowed, the smallest problem count, the mode and the resampling
        (:func:`gate_settings`; default: its defaults).

    Returns
    -------
    sotacheck.audit.gate.GateResult
        A check per dataset and the ``exit_code``: 0 (pass) or 1 (regression).

    Raises
    ------
    sotacheck.audit.gate.GateInputError
        Unusable input (a problem of the baseline the candidate lacks, unless ``settings.missing_as_failure``;
        too few shared problems; an ambiguous arm): the CLI's exit 2.

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> methods = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings" / "methods-qwen05b"
    >>> verdict = sotacheck.gate(methods, candidate=methods, baseline_arm="direct", candidate_arm="cot",
    ...                          settings=sotacheck.gate_settings(min_n=20))
    >>> verdict.exit_code
    0
    """
    from sotacheck.audit.gate import GateSettings
    from sotacheck.audit.gate import gate as run_gate

    base, cand = runs_of([baseline]), runs_of([candidate])
    return run_gate(base[0], cand[0], baseline_arm=baseline_arm, candidate_arm=candidate_arm, dataset=dataset,
                    settings=settings or GateSettings())


def gate_settings(*, alpha: float = 0.05, max_drop: float = 0.0, min_n: int = 30, mode: str = "significance",
                  max_error_rate: float = 0.05, n_resamples: int = 9_999, seed: int = 0, missing_as_failure: bool = False,
                  candidate_problems_only: bool = False) -> GateSettings:
    """The settings of :func:`gate`, checked: what counts as a regression, and what input it refuses.

    Parameters
    ----------
    alpha : float
        One-sided significance level, in (0, 0.5).
    max_drop : float
        The drop allowed in ``noninferiority`` mode, as a fraction (0.02: two points), in [0, 1).
    min_n : int
        The fewest shared problems the gate decides on (fewer: unusable input).
    mode : str
        ``significance`` (fail on a significant drop) or ``noninferiority`` (fail unless the drop is shown to
        be below ``max_drop``).
    max_error_rate : float
        The largest share of errored cells tolerated, in [0, 1].
    n_resamples, seed : int
        Resampling of the tests that resample (several repeats per problem).
    missing_as_failure : bool
        Count a baseline problem the candidate has no result for as a failure (otherwise: unusable input).
    candidate_problems_only : bool
        Gate only the baseline's problems the candidate has (a slice); not with ``missing_as_failure``.

    Returns
    -------
    sotacheck.audit.gate.GateSettings
        The settings, for :func:`gate`'s ``settings``.

    Raises
    ------
    sotacheck.audit.gate.GateInputError
        A value out of its range, ``noninferiority`` without ``max_drop``, or both ``missing_as_failure`` and
        ``candidate_problems_only``.

    Examples
    --------
    >>> import sotacheck
    >>> sotacheck.gate_settings(min_n=20).min_n
    20
    >>> sotacheck.gate_settings(mode="noninferiority")
    Traceback (most recent call last):
    sotacheck.audit.gate.GateInputError: noninferiority mode needs the largest drop you accept, `max_drop` above 0 ...
    """
    from sotacheck.audit.gate import GateSettings

    return GateSettings(alpha=alpha, max_drop=max_drop, min_n=min_n, mode=mode, max_error_rate=max_error_rate,  # type: ignore[arg-type]
                        n_resamples=n_resamples, seed=seed, missing_as_failure=missing_as_failure,
                        candidate_problems_only=candidate_problems_only)
