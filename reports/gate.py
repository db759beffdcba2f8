"""Rendering a gate decision: a paragraph for stderr, JUnit XML for CI test reports, Markdown for a CI job
summary page. Renders only; every number comes from ``audit.gate``."""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from sotacheck.audit.gate import GateCheck, GateResult, power_note


def _line(check: GateCheck) -> str:
    return (f"{check.candidate_arm} vs {check.baseline_arm} on {check.dataset}: {check.candidate_rate:.3f} vs "
            f"{check.baseline_rate:.3f} ({check.diff:+.3f}, CI [{check.ci_low:+.3f}, {check.ci_high:+.3f}]) over "
            f"{check.n} problems x {check.n_repeats} repeat(s); {check.drops} lost, {check.gains} gained; "
            f"{check.test}, p = {check.pvalue:.3g}")


def explanation(result: GateResult) -> str:
    """The one-paragraph explanation printed on stderr."""
    verdict = "REGRESSION" if result.exit_code else "PASS"
    mode = ("a drop significant at alpha = " f"{result.settings.alpha}" if result.settings.mode == "significance"
            else f"a lower confidence bound below -{result.settings.max_drop}")
    parts = [f"sotacheck gate: {verdict} (exit {result.exit_code}); the gate fails on {mode}."]
    for check in result.checks:
        parts.append(f"{_line(check)}: {'REGRESSION' if check.regression else 'pass'}, {check.reason}. "
                     f"{power_note(check)}" + (f" Note: {'; '.join(check.notes)}." if check.notes else ""))
    return " ".join(parts)


def junit_xml(result: GateResult) -> str:
    """JUnit XML: one test case per arm and dataset; a regression is a <failure>."""
    failures = sum(c.regression for c in result.checks)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    suites = ET.Element("testsuites", name="sotacheck gate", tests=str(len(result.checks)),
                        failures=str(failures), errors="0", time="0")
    suite = ET.SubElement(suites, "testsuite", name="sotacheck gate", tests=str(len(result.checks)),
                          failures=str(failures), errors="0", skipped="0", time="0", timestamp=now,
                          hostname=socket.gethostname())
    for check in result.checks:
        case = ET.SubElement(suite, "testcase", classname=f"sotacheck.gate.{check.dataset}",
                             name=f"{check.candidate_arm} vs {check.baseline_arm} on {check.dataset}", time="0")
        if check.regression:
            failure = ET.SubElement(case, "failure", message=check.reason, type="regression")
            failure.text = _line(check)
        out = ET.SubElement(case, "system-out")
        out.text = f"{_line(check)}. {check.reason}. {power_note(check)}"
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def markdown(result: GateResult) -> str:
    """A Markdown summary for a CI job summary page."""
    verdict = "❌ regression" if result.exit_code else "✅ pass"
    lines = [f"## sotacheck gate: {verdict}", "",
             f"Mode: **{result.settings.mode}** (alpha = {result.settings.alpha}"
             + (f", allowed drop {result.settings.max_drop}" if result.settings.mode == "noninferiority" else "")
             + ").", "",
             "| dataset | baseline | candidate | problems × repeats | baseline | candidate | difference [CI] "
             "| lost / gained | test | p | verdict |",
             "|---|---|---|---|---:|---:|---|---|---|---:|---|"]
    for c in result.checks:
        lines.append(f"| {c.dataset} | {c.baseline_arm} | {c.candidate_arm} | {c.n} × {c.n_repeats} | "
                     f"{c.baseline_rate:.3f} | {c.candidate_rate:.3f} | {c.diff:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}] "
                     f"| {c.drops} / {c.gains} | {c.test} | {c.pvalue:.3g} | "
                     f"{'**regression**' if c.regression else 'pass'} |")
    lines.append("")
    for c in result.checks:
        lines.append(f"- **{c.dataset}**: {c.reason}. {power_note(c)}"
                     + (f" ({'; '.join(c.notes)})" if c.notes else ""))
    return "\n".join(lines) + "\n"
