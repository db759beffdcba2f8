"""The one problem type every benchmark loader produces."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Literal

ProblemKind = Literal["function", "program", "unittest"]


@dataclass(frozen=True)
class IOTest:
    """A standard-input test of a program: the text given on stdin and every output accepted (any one of
    them passes; how an output is compared: ``sotacheck.reruns.sandbox.child._outputs``)."""

    input: str
    outputs: tuple[str, ...]
    judgeable: bool = True  # False: the evaluator reproduced could not read this test, which then fails

    def as_list(self) -> list[object]:
        return [self.input, list(self.outputs)] + ([] if self.judgeable else [False])


@dataclass(frozen=True)
class Problem:
    """One benchmark problem, of one of two kinds.

    A ``function`` problem (HumanEval, MBPP): ``visible_tests`` are what a pipeline may see and run
    (docstring examples, sample I/O); ``hidden_tests`` judge the final submission once and must never reach
    a prompt. Each test is a self-contained snippet of Python (an ``assert`` line, or a ``check`` definition
    plus its call).

    A ``program`` problem (APPS): the submission is a whole program that reads standard input and writes
    standard output, run once per test; its tests are ``visible_io`` (sample I/O, which a pipeline may see
    and run) and ``hidden_io`` (never in a prompt), and ``visible_tests``/``hidden_tests`` are empty.
    ``prompt`` is then the problem statement as the benchmark gives it, ``starter_code`` the function a
    function-call problem names (its arguments come on stdin, one per line) and ``entry_point`` that
    function's name (empty for a plain stdin problem).

    A ``unittest`` problem (BigCodeBench): ``hidden_tests`` holds one test module's source defining a
    ``unittest.TestCase`` class, judged in the same process as the program (``reruns/sandbox/unittest_judge.py``);
    ``starter_code`` is the code a completion is calibrated with (the imports and the ``def`` line), ``libs`` the
    libraries the task is about (for a per-library breakdown); there are no visible tests.
    """

    id: str
    dataset: str
    prompt: str
    entry_point: str
    visible_tests: tuple[str, ...]
    hidden_tests: tuple[str, ...]
    source: str
    canonical_solution: str | None = None
    test_setup: str = ""
    kind: ProblemKind = "function"
    visible_io: tuple[IOTest, ...] = ()
    hidden_io: tuple[IOTest, ...] = ()
    starter_code: str = ""
    difficulty: str | None = None
    libs: tuple[str, ...] = ()

    @property
    def content_hash(self) -> str:
        """SHA-256 over everything that defines the problem (not its provenance). A function problem's hash
        covers what it always did (recorded runs replay against those hashes); a program problem's also
        covers its kind, its I/O tests, starter code and difficulty."""
        fields: list[object] = [self.id, self.prompt, self.entry_point, list(self.visible_tests),
                                list(self.hidden_tests), self.test_setup]
        if self.kind != "function" or self.visible_io or self.hidden_io or self.starter_code:
            fields += [self.kind, [t.as_list() for t in self.visible_io], [t.as_list() for t in self.hidden_io],
                       self.starter_code, self.difficulty]
        if self.libs:
            fields.append(list(self.libs))
        payload = json.dumps(fields, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ProblemView:
    """What a pipeline sees of a problem: the prompt, the entry point and the visible tests. It has no
    hidden tests, no canonical solution and no test set-up, so a pipeline cannot read them by accident; the
    leakage check over the stored requests stays as the second line of defence.

    For a program problem ``visible_tests`` holds each sample test as text a prompt can show
    (:func:`describe_io_test`), ``visible_io`` the same tests as data."""

    id: str
    prompt: str
    entry_point: str
    visible_tests: tuple[str, ...]
    kind: ProblemKind = "function"
    visible_io: tuple[IOTest, ...] = ()
    starter_code: str = ""

    @classmethod
    def of(cls, problem: Problem) -> ProblemView:
        if problem.kind == "program":
            return cls(problem.id, problem.prompt, problem.entry_point,
                       tuple(describe_io_test(t) for t in problem.visible_io), problem.kind, problem.visible_io,
                       problem.starter_code)
        return cls(problem.id, problem.prompt, problem.entry_point, problem.visible_tests)


def describe_io_test(test: IOTest) -> str:
    """A sample test as a prompt shows it: the input, then the (first) expected output."""
    expected = test.outputs[0] if test.outputs else ""
    return f"Input:\n{test.input.rstrip()}\nExpected output:\n{expected.rstrip()}"


@dataclass(frozen=True)
class Dataset:
    """A named, ordered collection of problems with a content hash over all of them."""

    name: str
    problems: tuple[Problem, ...]
    sources: tuple[str, ...]

    @functools.cached_property
    def content_hash(self) -> str:
        """SHA-256 over the problems' hashes, in order; computed once (a report, the judge's jobs and the run
        directory each name it)."""
        digest = hashlib.sha256()
        for problem in self.problems:
            digest.update(problem.content_hash.encode())
        return digest.hexdigest()

    def __len__(self) -> int:
        return len(self.problems)

    def by_id(self) -> dict[str, Problem]:
        return {p.id: p for p in self.problems}

    def head(self, limit: int | None) -> Dataset:
        """The first ``limit`` problems (all of them when ``limit`` is None)."""
        if limit is None:
            return self
        if limit < 1:
            raise ValueError(f"`limit` must be at least 1, got {limit}")
        return Dataset(self.name, self.problems[:limit], self.sources)
