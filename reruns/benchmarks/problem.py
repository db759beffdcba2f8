"""The one problem type every benchmark loader produces."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One benchmark problem.

    ``visible_tests`` are what a pipeline may see and run (docstring examples, sample I/O);
    ``hidden_tests`` judge the final submission once and must never reach a prompt. Each test is a
    self-contained snippet of Python (an ``assert`` line, or a ``check`` definition plus its call).
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

    @property
    def content_hash(self) -> str:
        """SHA-256 over everything that defines the problem (not its provenance)."""
        payload = json.dumps(
            [self.id, self.prompt, self.entry_point, list(self.visible_tests), list(self.hidden_tests),
             self.test_setup],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ProblemView:
    """What a pipeline sees of a problem: the prompt, the entry point and the visible tests. It has no
    hidden tests, no canonical solution and no test set-up, so a pipeline cannot read them by accident; the
    leakage check over the stored requests stays as the second line of defence."""

    id: str
    prompt: str
    entry_point: str
    visible_tests: tuple[str, ...]

    @classmethod
    def of(cls, problem: Problem) -> ProblemView:
        return cls(problem.id, problem.prompt, problem.entry_point, problem.visible_tests)


@dataclass(frozen=True)
class Dataset:
    """A named, ordered collection of problems with a content hash over all of them."""

    name: str
    problems: tuple[Problem, ...]
    sources: tuple[str, ...]

    @property
    def content_hash(self) -> str:
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
