"""The leakage check: proof, from the stored requests, that no hidden-test assert reached any prompt (for a
program problem: no hidden test's input or accepted output)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sotacheck.core.errors import InputError
from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.benchmarks.registry import load_dataset
from sotacheck.reruns.store.run_store import RunStore

_ASSERT = re.compile(r"^\s*assert\s+(.+?)\s*$", re.MULTILINE)


def _normalise(text: str) -> str:
    return re.sub(r"\s+", "", text)


def hidden_asserts(dataset: Dataset, problem_id: str) -> set[str]:
    """Each hidden assert of a problem that is neither a visible test nor already written in the problem's
    own statement (HumanEval/56's docstring shows ``correct_bracketing("<>")``, which its check() also
    asserts: a prompt quoting the statement leaks nothing), whitespace removed."""
    problem = dataset.by_id()[problem_id]
    if problem.kind == "program":
        return hidden_io_texts(problem)
    visible = {_normalise(m) for t in problem.visible_tests for m in _ASSERT.findall(t)}
    statement = _normalise(problem.prompt)
    hidden = set()
    for test in problem.hidden_tests:
        for found in _ASSERT.findall(test):
            hidden.add(_normalise(found))
            # HumanEval's check() calls `candidate(...)`; a leaked copy would name the function itself
            hidden.add(_normalise(re.sub(r"\bcandidate\(", f"{problem.entry_point}(", found)))
    return {h for h in hidden - visible if len(h) >= 12 and h not in statement}


def hidden_io_texts(problem: Problem) -> set[str]:
    """A program problem's hidden tests (APPS's ``test_list``) as the texts that must not reach a prompt:
    each hidden input and accepted output, whitespace removed, unless it is short (under 12 characters, such
    as ``3`` or ``YES``, which any prompt may contain by chance) or public anyway (in the statement, the
    starter code or a sample test)."""
    public = _normalise("\n".join([problem.prompt, problem.starter_code,
                                   *(t.input for t in problem.visible_io),
                                   *(o for t in problem.visible_io for o in t.outputs)]))
    hidden = {_normalise(text) for t in problem.hidden_io for text in (t.input, *t.outputs)}
    return {h for h in hidden if len(h) >= 12 and h not in public}


@dataclass(frozen=True)
class LeakageReport:
    requests_checked: int
    leaks: tuple[tuple[str, str, str], ...]  # (call id, problem, the hidden assert found)

    @property
    def clean(self) -> bool:
        return not self.leaks


def check_leakage(store: RunStore, dataset: Dataset) -> LeakageReport:
    """Every stored request's messages searched for its problem's hidden asserts. A prompt sent many times (a
    problem's repeats, a method's fixed first call) is searched once: its findings are kept by its text."""
    leaks: list[tuple[str, str, str]] = []
    checked = 0
    cache: dict[str, set[str]] = {}
    found: dict[tuple[str, str], tuple[str, ...]] = {}  # (problem, the messages' text) → the hidden asserts in it
    for call_id, problem, request in store.requests():
        checked += 1
        text = " ".join(m["content"] for m in request["messages"])
        hits = found.get((problem, text))
        if hits is None:
            if problem not in cache:
                cache[problem] = hidden_asserts(dataset, problem)
            prompt = _normalise(text)
            hits = found[(problem, text)] = tuple(hidden for hidden in cache[problem] if hidden in prompt)
        leaks.extend((call_id, problem, hidden) for hidden in hits)
    return LeakageReport(checked, tuple(leaks))


def check_run_leakage(run_dir: Path) -> LeakageReport:
    """The leakage check of a run directory's store, against the dataset the run recorded."""
    store = RunStore.open(run_dir)
    try:
        spec = store.get_meta("spec") or {}
        info = store.get_meta("dataset") or {}
        name = info.get("name") or spec.get("dataset")
        if not name:
            raise InputError(f"{run_dir}: the store does not say which dataset it ran")
        return check_leakage(store, load_dataset(str(name), spec.get("data_dir"), spec.get("hub_id")))
    finally:
        store.close()
