"""Claim verdicts as plain text: one verdict, the check that decided it, every other check with its question."""

from __future__ import annotations

from collections import Counter

from sotacheck.audit.claims import EVIDENCE_ONLY, ClaimVerdict

MDD = "minimum-detectable-difference"


def p_text(verdict: ClaimVerdict) -> str:
    """The p the verdict was decided on: the range's two ends, or the deciding test's one p."""
    if verdict.pvalue_range is not None:
        low, high = verdict.pvalue_range
        return f"p = {low:.3g} over every allowed pairing" if low == high else f"p from {low:.3g} to {high:.3g}"
    return "" if verdict.pvalue is None else f"p = {verdict.pvalue:.3g}"


def _check_lines(verdict: ClaimVerdict, skip: tuple[str, ...] = ()) -> list[str]:
    lines = []
    for check in verdict.checks:
        if check.name in skip:
            continue
        mark: str = "decides" if check.name == verdict.check else (check.verdict or "information")
        if check.name in EVIDENCE_ONLY and check.verdict is not None:
            mark = f"evidence only; alone it would say {check.verdict}"
        requested = ", requested" if check.name == verdict.requested else ""
        lines.append(f"  - {check.name} [{mark}{requested}]: {check.question}")
        lines.append(f"      {check.result}")
    return lines


def render_verdict(verdict: ClaimVerdict) -> str:
    """One claim: verdict, statement, reason, every check (the deciding one marked), notes."""
    p = f" ({p_text(verdict)})" if p_text(verdict) else ""
    lines = [f"[{verdict.verdict}] {verdict.paper}/{verdict.id}{p} — decided by {verdict.check}",
             f"  {verdict.statement}", f"  {verdict.reason}", "  checks:", *_check_lines(verdict)]
    lines += [f"  note: {note}" for note in verdict.notes]
    return "\n".join(lines)


def render_verdicts(verdicts: list[ClaimVerdict]) -> str:
    counts = Counter(v.verdict for v in verdicts)
    head = f"{len(verdicts)} claims: " + ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common())
    return "\n\n".join([head, *(render_verdict(v) for v in verdicts)])


def render_comparison(verdict: ClaimVerdict) -> str:
    """``sotacheck compare``: the verdict and the deciding test first, then the other tests and the smallest
    detectable difference."""
    deciding = verdict.check_named(verdict.check)
    assert deciding is not None
    p = f", {p_text(verdict)}" if p_text(verdict) else ""
    lines = [f"{verdict.verdict.upper()} (decided by {verdict.check}{p})", f"  {verdict.reason}"]
    others = [c.name for c in verdict.checks if c.name not in (verdict.check, MDD, "comparator-kind")]
    if others:
        lines += ["other tests:", *_check_lines(verdict, skip=(verdict.check, MDD, "comparator-kind"))]
    mdd = verdict.check_named(MDD)
    if mdd is not None:
        lines.append(f"smallest detectable difference: {mdd.result}")
    lines += [f"note: {note}" for note in verdict.notes]
    return "\n".join(lines)
