"""Rendering a gate decision: a paragraph for standard output, JUnit XML for CI test reports, Markdown for a CI job
summary page, and the JUnit and Markdown forms of an input the gate cannot judge (exit 2). Renders only;
every number comes from ``audit.gate``. Pass rates and differences are in percentage points."""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from sotacheck.audit.gate import GateCheck, GateResult, power_note

# How many problem ids a line names before it says "and N more".
SHOWN_IDS = 30


def _ids(ids: tuple[str, ...]) -> str:
    if not ids:
        return "none"
    more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    return ", ".join(ids[:SHOWN_IDS]) + more


def _pt(value: float, sign: bool = False) -> str:
    return f"{100 * value:+.1f}" if sign else f"{100 * value:.1f}"


def _line(check: GateCheck) -> str:
    return (f"{check.candidate_arm} vs {check.baseline_arm} on {check.dataset}: {_pt(check.candidate_rate)} % vs "
            f"{_pt(check.baseline_rate)} % ({_pt(check.diff, True)} points, [{_pt(check.ci_low, True)}, "
            f"{_pt(check.ci_high, True)}] = {check.interval_label}) over {check.n} problems{_of_baseline(check)} x "
            f"{check.n_repeats} repeat(s); {check.drops} lost, {check.gains} gained; {check.test}, p = {check.pvalue:.3g}")


def _of_baseline(check: GateCheck) -> str:
    return f" (of the baseline's {check.baseline_problems})" if check.baseline_problems > check.n else ""


def _problems(check: GateCheck) -> str:
    return f"Lost: {_ids(check.lost)}. Gained: {_ids(check.gained)}."


def _mode(result: GateResult) -> str:
    settings = result.settings
    if settings.mode == "significance":
        return f"a drop significant at one-sided alpha = {settings.alpha}"
    return (f"a one-sided {100 * (1 - settings.alpha):.0f} % lower bound below the allowed drop of "
            f"{100 * settings.max_drop:g} percentage points")


def explanation(result: GateResult) -> str:
    """The explanation printed on standard output: the verdict, then one line per dataset with its lost and gained
    problems."""
    verdict = "REGRESSION" if result.exit_code else "PASS"
    lines = [f"sotacheck gate: {verdict} (exit {result.exit_code}); the gate fails on {_mode(result)}."]
    for check in result.checks:
        lines.append(f"{_line(check)}: {'REGRESSION' if check.regression else 'pass'}, {check.reason}. "
                     f"{power_note(check)}" + (f" Note: {'; '.join(check.notes)}." if check.notes else ""))
        lines.append(f"  {_problems(check)}")
    return "\n".join(lines)


def _suites(tests: int, failures: int, errors: int) -> tuple[ET.Element, ET.Element]:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    counts = {"tests": str(tests), "failures": str(failures), "errors": str(errors), "time": "0"}
    suites = ET.Element("testsuites", {"name": "sotacheck gate", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": "sotacheck gate", "skipped": "0", "timestamp": now,
                                                "hostname": socket.gethostname(), **counts})
    return suites, suite


def _xml(suites: ET.Element) -> str:
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def junit_xml(result: GateResult) -> str:
    """JUnit XML: one test case per arm and dataset; a regression is a <failure>."""
    suites, suite = _suites(len(result.checks), sum(c.regression for c in result.checks), 0)
    for check in result.checks:
        case = ET.SubElement(suite, "testcase", classname=f"sotacheck.gate.{check.dataset}",
                             name=f"{check.candidate_arm} vs {check.baseline_arm} on {check.dataset}", time="0")
        if check.regression:
            failure = ET.SubElement(case, "failure", message=check.reason, type="regression")
            failure.text = f"{_line(check)}\n{_problems(check)}"
        out = ET.SubElement(case, "system-out")
        out.text = f"{_line(check)}. {check.reason}. {power_note(check)}\n{_problems(check)}"
    return _xml(suites)


def junit_error_xml(reason: str) -> str:
    """JUnit XML for input the gate cannot judge (exit 2): one test case with an <error> giving the reason."""
    suites, suite = _suites(1, 0, 1)
    case = ET.SubElement(suite, "testcase", classname="sotacheck.gate", name="gate input", time="0")
    error = ET.SubElement(case, "error", message=reason, type="unusable input")
    error.text = f"sotacheck gate: UNUSABLE INPUT (exit 2): {reason}"
    return _xml(suites)


def markdown(result: GateResult) -> str:
    """A Markdown summary for a CI job summary page."""
    verdict = "❌ regression" if result.exit_code else "✅ pass"
    lines = [f"## sotacheck gate: {verdict}", "",
             f"Mode: **{result.settings.mode}**: the gate fails on {_mode(result)}. Pass rates and differences "
             "in percentage points.", "",
             "| dataset | baseline | candidate | problems × repeats | baseline % | candidate % | difference "
             "[interval] | lost / gained | test | p | verdict |",
             "|---|---|---|---|---:|---:|---|---|---|---:|---|"]
    for c in result.checks:
        lines.append(f"| {c.dataset} | {c.baseline_arm} | {c.candidate_arm} | {c.n} × {c.n_repeats} | "
                     f"{_pt(c.baseline_rate)} | {_pt(c.candidate_rate)} | {_pt(c.diff, True)} "
                     f"[{_pt(c.ci_low, True)}, {_pt(c.ci_high, True)}] | {c.drops} / {c.gains} | {c.test} | "
                     f"{c.pvalue:.3g} | {'**regression**' if c.regression else 'pass'} |")
    lines.append("")
    for c in result.checks:
        lines.append(f"- **{c.dataset}**: {c.reason}. Interval: {c.interval_label}. {power_note(c)}"
                     + (f" ({'; '.join(c.notes)})" if c.notes else ""))
        lines.append(f"  - lost ({c.drops}): {_ids(c.lost)}")
        lines.append(f"  - gained ({c.gains}): {_ids(c.gained)}")
    return "\n".join(lines) + "\n"


def markdown_error(reason: str) -> str:
    """The Markdown summary for input the gate cannot judge (exit 2)."""
    return ("## sotacheck gate: ⚠️ unusable input (exit 2)\n\n"
            f"{reason}\n\nThe gate exits 2 rather than 0 or 1 so that CI does not mistake input it cannot judge "
            "for a pass or a regression.\n")
