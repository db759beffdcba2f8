"""The API on published claims: the verdicts of claims files, one comparison from published numbers, and
the claims files' schema."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sotacheck.api.inputs import dataset_sizes, runs_of
from sotacheck.core.deprecation import renamed_names

if TYPE_CHECKING:
    from sotacheck.audit.claims import ClaimVerdict
    from sotacheck.core.rundir import Run


def check_claims(files: Sequence[str | Path] = (), *, runs: Iterable[Run | str | Path] = (),
                 data_dir: str | Path | None = None) -> list[ClaimVerdict]:
    """A verdict for every published claim in the claims ``files``: every check that what was published
    allows, and one verdict by the rule of :mod:`sotacheck.audit.claims` (``docs/claims.md``).

    Parameters
    ----------
    files : sequence of str or Path
        Claims files (``-``: standard input); none: the registries bundled with sotacheck.
    runs : iterable of Run, str or Path
        Runs whose per-problem results the claims' checks may use (reruns of the claimed methods).
    data_dir : str or Path, optional
        Local benchmark files, for the benchmark-size checks.

    Returns
    -------
    list of sotacheck.audit.claims.ClaimVerdict
        One per claim, in the files' order: the verdict, the deciding check and every check run.

    Raises
    ------
    sotacheck.audit.claim_registry.ClaimsError
        A claims file that does not validate (the message names the file and the field).

    Examples
    --------
    >>> import sotacheck
    >>> from sotacheck.audit.claim_registry import bundled_registries
    >>> pycapsule = [path for path in bundled_registries() if path.stem == "pycapsule"]
    >>> verdicts = sotacheck.check_claims(pycapsule)
    >>> len(verdicts), verdicts[0].verdict
    (9, 'not significant')
    """
    from sotacheck.audit.claim_registry import bundled_registries, load_registry
    from sotacheck.audit.claims import check_registries

    paths: list[str | Path] = [Path(f) for f in files] or list(bundled_registries())
    registries = [(path, load_registry(path)) for path in paths]  # standard input is read once, here
    sizes = dataset_sizes([registry for _, registry in registries], data_dir)
    return check_registries(registries, runs=runs_of(runs) if runs else [], dataset_sizes=sizes)


def compare(a: float, *, b: float, n: int, runs: int | None = None, sd: float | None = None, se: float | None = None,
            spread: float | None = None, discordant: tuple[int, int] | None = None, unit: str | None = None,
            assumptions: Sequence[str] = ()) -> ClaimVerdict:
    """Is ``a`` (a pass rate in percent) significantly above ``b`` on ``n`` problems? The claim "A beats B"
    through the checks and rule of claims files.

    Parameters
    ----------
    a : float
        The method's pass rate, in percent.
    b : float
        The baseline's pass rate, in percent.
    n : int
        Problems in the benchmark.
    runs : int, optional
        How many runs ``a`` averages; needs one of ``sd``, ``se``, ``spread``.
    sd, se : float, optional
        The standard deviation, or the standard error, of ``a`` over its runs.
    spread : float, optional
        A published ± not said to be an SD or an SE.
    discordant : (int, int), optional
        ``(b, c)``: problems only A solved, only B solved, when the per-problem results are known.
    unit : {"percent", "fraction"}, optional
        How ``a``, ``b`` and the spread are given. None (default): percent, and two rates both at most 1
        (``0.951, 0.939``) are refused as looking like fractions.
    assumptions : sequence of str
        Named assumptions that narrow the pairings the totals allow (``"nonnegative-correlation"``: the two
        systems' per-problem results are not negatively correlated); none by default, named in the verdict.

    Returns
    -------
    sotacheck.audit.claims.ClaimVerdict
        The verdict, the deciding check (``.check``) and every check run (``.checks``, the minimum
        detectable difference among them).

    Raises
    ------
    sotacheck.audit.claim_registry.ClaimsError
        A rate outside 0..100 or not finite, two rates that look like fractions, ``n`` below 1, a spread
        without ``runs`` (one line naming the argument).

    Examples
    --------
    >>> import sotacheck
    >>> verdict = sotacheck.compare(40.0, b=35.0, n=164)
    >>> verdict.verdict, verdict.check
    ('unverifiable from what was published', 'paired-reconstruction')
    >>> [round(p, 4) for p in verdict.pvalue_range]
    [0.0039, 0.4709]
    """
    from sotacheck.audit.compare import compare as compare_numbers

    return compare_numbers(a, b, n, runs=runs, sd=sd, se=se, spread=spread, discordant=discordant,
                           unit=unit, assumptions=assumptions)  # type: ignore[arg-type]


def claims_schema() -> dict[str, Any]:
    """The JSON Schema of a claims file, generated from its pydantic model.

    Returns
    -------
    dict
        The schema, JSON-ready.

    Raises
    ------
    Nothing
        The schema is generated from code.

    Examples
    --------
    >>> import sotacheck
    >>> schema = sotacheck.claims_schema()
    >>> schema["type"], sorted(schema["properties"])[:2]
    ('object', ...)
    """
    from sotacheck.audit.claim_registry import claims_schema as schema

    return schema()


__getattr__ = renamed_names(__name__, {"audit_claims": "check_claims"}, globals())  # the old name, for one release
