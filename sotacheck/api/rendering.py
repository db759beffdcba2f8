"""The API that renders results as text: a leaderboard (text, paper tables, an HTML page), claim verdicts,
and the gate's decision (a paragraph, Markdown, JUnit XML). What the CLI prints is these strings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.errors import UsageError

if TYPE_CHECKING:
    from sotacheck.audit.claims import ClaimVerdict
    from sotacheck.audit.gate import GateResult
    from sotacheck.audit.leaderboard_results import Leaderboard

LEADERBOARD_FORMATS = ("text", "latex", "markdown", "csv", "html")
"""The forms :func:`render_leaderboard` writes."""
GATE_FORMATS = ("text", "markdown", "junit")
"""The forms :func:`render_gate` writes (:func:`render_gate_error`: the last two)."""


def check_choice(parameter: str, value: str, known: tuple[str, ...] | list[str]) -> None:
    """Refuse ``value`` of ``parameter`` unless it is one of ``known``: a one-line :class:`UsageError` naming the
    parameter (the CLI prints it with the parameter's flag) and the choices."""
    if value not in known:
        raise UsageError(f"{{{parameter}}} must be one of {', '.join(known)}, got {value!r}", parameters=(parameter,))


def render_leaderboard(board: Leaderboard, *, format: str = "text", pairs: bool = False) -> str:
    """A leaderboard (:func:`sotacheck.leaderboard`) as text, as a paper table, or as a self-contained HTML page.

    Parameters
    ----------
    board : sotacheck.audit.leaderboard_results.Leaderboard
        The leaderboard to render.
    format : str
        One of :data:`LEADERBOARD_FORMATS`: ``text`` (what ``sotacheck leaderboard`` prints), ``latex``
        (booktabs), ``markdown``, ``csv`` (one number per column) or ``html`` (a whole page).
    pairs : bool
        Text: add a line per tested pair; a table: the pairs table instead of the systems table. The HTML page
        shows both either way.

    Returns
    -------
    str
        The rendered text.

    Raises
    ------
    UsageError
        An unknown ``format``.

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> runs = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings"
    >>> board = sotacheck.leaderboard([runs / "methods-qwen05b"])
    >>> print(sotacheck.render_leaderboard(board).splitlines()[0])
    leaderboard: humaneval, 20 problems shared by 6 systems (one sample per problem)
    >>> sotacheck.render_leaderboard(board, format="html").startswith("<!DOCTYPE html>")
    True
    >>> sotacheck.render_leaderboard(board, format="pdf")
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: `format` must be one of text, latex, markdown, csv, html, got 'pdf'
    """
    check_choice("format", format, LEADERBOARD_FORMATS)
    if format == "text":
        from sotacheck.reports.leaderboard_text import render_text

        return render_text(board, pairs=pairs)
    if format == "html":
        from sotacheck.reports.leaderboard_html import render_leaderboard_page

        return render_leaderboard_page(board)
    from sotacheck.reports.leaderboard_tables import render_leaderboard_table

    return render_leaderboard_table(board, format, pairs=pairs)


def render_verdicts(verdicts: list[ClaimVerdict]) -> str:
    """Claim verdicts (:func:`sotacheck.check_claims`) as text: a count per verdict, then each claim with its
    verdict, the check that decided it and every other check.

    Parameters
    ----------
    verdicts : list of sotacheck.audit.claims.ClaimVerdict
        The verdicts, in the order they are shown.

    Returns
    -------
    str
        What ``sotacheck claims`` prints.

    Raises
    ------
    Nothing
        Every verdict can be rendered.

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> pycapsule = Path(sotacheck.data.__file__).with_name("claims") / "pycapsule.yaml"
    >>> print(sotacheck.render_verdicts(sotacheck.check_claims([pycapsule])).splitlines()[0])
    9 claims: 5 unverifiable from what was published, 2 contradicted, 1 not significant, 1 supported
    """
    from sotacheck.reports.claims_text import render_verdicts as render

    return render(verdicts)


def render_comparison(verdict: ClaimVerdict) -> str:
    """One comparison's verdict (:func:`sotacheck.compare`) as text: the verdict and the deciding test first,
    then the other tests and the smallest detectable difference.

    Parameters
    ----------
    verdict : sotacheck.audit.claims.ClaimVerdict
        The verdict of :func:`sotacheck.compare`.

    Returns
    -------
    str
        What ``sotacheck compare`` prints.

    Raises
    ------
    Nothing
        Every verdict of :func:`sotacheck.compare` can be rendered.

    Examples
    --------
    >>> import sotacheck
    >>> print(sotacheck.render_comparison(sotacheck.compare(70, b=65, n=164)).splitlines()[0])
    UNVERIFIABLE FROM WHAT WAS PUBLISHED (decided by paired-reconstruction, p from 0.00781 to 0.497)
    """
    from sotacheck.reports.claims_text import render_comparison as render

    return render(verdict)


def render_gate(result: GateResult, *, format: str = "text") -> str:
    """The gate's decision (:func:`sotacheck.gate`) as a paragraph, a Markdown summary or JUnit XML.

    Parameters
    ----------
    result : sotacheck.audit.gate.GateResult
        The decision to render.
    format : str
        One of :data:`GATE_FORMATS`: ``text`` (what ``sotacheck gate`` prints), ``markdown`` (a CI job
        summary page) or ``junit`` (a CI test report).

    Returns
    -------
    str
        The rendered text.

    Raises
    ------
    UsageError
        An unknown ``format``.

    Examples
    --------
    >>> from pathlib import Path
    >>> import sotacheck, sotacheck.data
    >>> methods = Path(sotacheck.data.__file__).resolve().parents[1] / "recordings" / "methods-qwen05b"
    >>> verdict = sotacheck.gate(methods, candidate=methods, baseline_arm="direct", candidate_arm="cot",
    ...                          settings=sotacheck.gate_settings(min_n=20))
    >>> print(sotacheck.render_gate(verdict).splitlines()[0])
    sotacheck gate: PASS (exit 0); the gate fails on a drop significant at one-sided alpha = 0.05.
    >>> print(sotacheck.render_gate(verdict, format="markdown").splitlines()[0])
    ## sotacheck gate: ✅ pass
    """
    check_choice("format", format, GATE_FORMATS)
    from sotacheck.reports.gate import explanation, junit_xml, markdown

    return {"text": explanation, "markdown": markdown, "junit": junit_xml}[format](result)


def render_gate_error(reason: str, *, format: str = "markdown") -> str:
    """Input the gate cannot judge (exit 2), as a Markdown summary or JUnit XML: CI shows why instead of a
    pass or a regression.

    Parameters
    ----------
    reason : str
        Why the input is unusable (the message of the error :func:`sotacheck.gate` raised).
    format : str
        ``markdown`` or ``junit``.

    Returns
    -------
    str
        The rendered text.

    Raises
    ------
    UsageError
        An unknown ``format``.

    Examples
    --------
    >>> import sotacheck
    >>> print(sotacheck.render_gate_error("too few problems").splitlines()[0])
    ## sotacheck gate: ⚠️ unusable input (exit 2)
    >>> sotacheck.render_gate_error("too few problems", format="text")
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: `format` must be one of markdown, junit, got 'text'
    """
    check_choice("format", format, GATE_FORMATS[1:])
    from sotacheck.reports.gate import junit_error_xml, markdown_error

    return markdown_error(reason) if format == "markdown" else junit_error_xml(reason)
