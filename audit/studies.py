"""Studies: the groups of arms that may be compared with each other.

A paired comparison, its baseline and its Holm family only make sense among arms measured under the same
conditions: the same dataset and problem set, the same model identity and endpoint, the same sampling
(temperature, top_p, max tokens) and the same judge. :func:`find_studies` groups the arms of a combined
table (:func:`sotacheck.audit.analysis.combine_runs`) by exactly that; everything an analysis compares
stays inside one study unless the user names a comparison across two.

A condition a run does not record is never taken to equal another run's: it is "not recorded", and the
arms of that run form their own study (two imports that both lack a model could be two models).

Where each condition is read from
---------------------------------
- model and endpoint: the manifest's ``model_identity`` (a rerun); else the ``model``/``endpoint`` of the
  manifest's ``files`` entry for the arm (an import whose source names its model, e.g. MapCoder's file
  names); else a top-level ``model``/``endpoint`` the manifest carries;
- sampling: the rerun's ``arm_sampling`` record of the arm (``max_tokens`` "none": no cap), else its
  ``spec`` (``temperature``, ``top_p``, ``max_tokens``); else a ``sampling`` object of the arm's ``files``
  entry or of the manifest;
- judge: a ``judge`` string in the manifest; else sotacheck's sandbox for ``sotacheck rerun`` and
  ``sotacheck judge`` (with the per-test timeout when recorded); else the source's own recorded verdicts;
- problem set: the problem ids the arm's run has on the dataset (any of its arms), and the dataset's
  content hash when recorded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from sotacheck.core.rundir import Run, sandbox_judge

SAMPLING_KEYS = ("temperature", "top_p", "max_tokens")
RUN_COLUMN = "run_index"  # added by combine_runs: which of the runs given a row came from
SANDBOX_SOURCES = ("sotacheck rerun", "sotacheck judge")


@dataclass(frozen=True)
class Condition:
    """One condition of a study as shown (``text``) and as compared (``key``: an unrecorded value carries
    its run, so it equals nothing outside that run)."""

    text: str
    key: str


@dataclass(frozen=True)
class Study:
    """Arms measured under the same conditions (see the module docstring); ``id`` is ``S1``, ``S2``, … in
    the order the runs were given."""

    id: str
    dataset: str
    n_problems: int
    model: str
    endpoint: str
    sampling: str
    judge: str
    arms: tuple[str, ...]
    runs: tuple[str, ...]
    run_indexes: tuple[int, ...] = ()  # the runs' positions in the list given (names may repeat)

    def describe(self) -> str:
        """One line naming every condition."""
        return (f"{self.dataset} ({self.n_problems} problems); model {self.model} @ {self.endpoint}; "
                f"sampling {self.sampling}; judge: {self.judge}")

    def differences(self, other: Study) -> list[str]:
        """The conditions on which ``other`` differs from this study, in words."""
        out = []
        for name in ("dataset", "n_problems", "model", "endpoint", "sampling", "judge"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out.append(f"{name.replace('n_problems', 'problems')} {mine} vs {theirs}")
        return out or ["conditions unrecorded in one of them"]


def _arm_file(run: Run, label: str) -> Mapping[str, Any]:
    for entry in run.manifest.files:
        if entry.get("arm") == label:
            return entry
    return {}


def _extra(run: Run, key: str) -> Any:
    return (run.manifest.model_extra or {}).get(key)


def _recorded(value: Any, run: Run) -> Condition:
    if value is None or value == "":
        return Condition("not recorded", f"not recorded in run {run.name}")
    return Condition(str(value), str(value))


def model_condition(run: Run, label: str) -> tuple[Condition, Condition]:
    """(model, endpoint) of one arm of ``run``."""
    identity = run.manifest.model_identity
    if identity is not None:
        return Condition(identity.model, identity.model), Condition(identity.endpoint, identity.endpoint)
    entry = _arm_file(run, label)
    return (_recorded(entry.get("model") or _extra(run, "model"), run),
            _recorded(entry.get("endpoint") or _extra(run, "endpoint"), run))


def sampling_condition(run: Run, label: str) -> Condition:
    """Temperature, top_p and max tokens of one arm; any one unrecorded makes the whole unrecorded-scoped."""
    spec = run.manifest.spec or {}
    if label in run.manifest.arm_sampling:  # a rerun's own record of each arm's sampling
        source: Any = run.manifest.arm_sampling[label]
    elif any(spec.get(k) is not None for k in SAMPLING_KEYS):
        source = spec
    else:
        source = _arm_file(run, label).get("sampling") or _extra(run, "sampling") or {}
    if not isinstance(source, Mapping) or not any(k in source for k in SAMPLING_KEYS):
        return Condition("not recorded", f"not recorded in run {run.name}")
    text = ", ".join(f"{k}={source[k]}" if source.get(k) is not None else f"{k} not recorded" for k in SAMPLING_KEYS)
    complete = all(source.get(k) is not None for k in SAMPLING_KEYS)
    return Condition(text, text if complete else f"{text} (run {run.name})")


def judge_condition(run: Run) -> Condition:
    """Which judge gave the verdicts of ``run``."""
    named = run.manifest.judge
    if isinstance(named, str) and named:
        return Condition(named, named)
    source = run.manifest.source
    if source in SANDBOX_SOURCES:
        text = sandbox_judge((run.manifest.spec or {}).get("test_timeout_s"))
        return Condition(text, text)
    if source in ("unknown", "csv", "", None):
        return Condition("not recorded", f"not recorded in run {run.name}")
    return Condition(f"verdicts as recorded by {source}", f"verdicts as recorded by {source}")


def _content_hash(run: Run) -> str | None:
    return run.manifest.dataset.content_hash if run.manifest.dataset else None


def _problem_key(problems: pd.Series, content_hash: str | None) -> str:
    ids = "\n".join(sorted(map(str, set(problems))))
    return hashlib.sha256(ids.encode()).hexdigest()[:16] + ":" + (content_hash or "no content hash")


def find_studies(runs: list[Run], table: pd.DataFrame) -> tuple[pd.Series, tuple[Study, ...]]:
    """The study of every row of ``table`` (as ``S1``, ``S2``, …) and the studies themselves.

    Parameters
    ----------
    runs : the runs ``table`` was combined from, in the same order.
    table : ``combine_runs(runs)``: it has the ``label`` (arm as its run names it) and ``run_index`` columns.

    Returns
    -------
    (pandas.Series, tuple of Study)
        The study id per row of ``table`` (same index), and the studies in order of first appearance.
    """
    keys: dict[tuple[str, ...], str] = {}
    members: dict[str, dict[str, Any]] = {}
    study_of: dict[tuple[str, str], str] = {}
    # A run's problem set on a dataset is every problem any of its arms has there: an arm of the run that
    # lacks a few (errors, an interrupted import) is missing data, paired on what it has, not another study.
    problem_sets: dict[tuple[int, str], tuple[str, int]] = {}
    for (index, data), cells in table.groupby([RUN_COLUMN, "dataset"], sort=False):
        run_number = int(str(index))
        problem_sets[(run_number, str(data))] = (_problem_key(cells["problem"], _content_hash(runs[run_number])),
                                                 int(cells["problem"].nunique()))
    groups = table.groupby([RUN_COLUMN, "arm", "dataset"], sort=False)
    for (run_index, arm, dataset), cells in groups:
        run = runs[int(str(run_index))]
        label = str(cells["label"].iloc[0])
        model, endpoint = model_condition(run, label)
        sampling, judge = sampling_condition(run, label), judge_condition(run)
        problems, n_problems = problem_sets[(int(str(run_index)), str(dataset))]
        key = (str(dataset), problems, model.key, endpoint.key, sampling.key, judge.key)
        study = keys.setdefault(key, f"S{len(keys) + 1}")
        info = members.setdefault(study, {"dataset": str(dataset), "n": n_problems,
                                          "model": model.text, "endpoint": endpoint.text, "sampling": sampling.text,
                                          "judge": judge.text, "arms": [], "runs": [], "indexes": []})
        info["arms"].append(str(arm))
        if int(str(run_index)) not in info["indexes"]:
            info["indexes"].append(int(str(run_index)))
            info["runs"].append(run.name)
        study_of[(str(arm), str(dataset))] = study
    ids = pd.Series([study_of[(str(a), str(d))] for a, d in zip(table["arm"], table["dataset"], strict=True)],
                    index=table.index, name="study", dtype="object")
    studies = tuple(Study(sid, m["dataset"], m["n"], m["model"], m["endpoint"], m["sampling"], m["judge"],
                          tuple(m["arms"]), tuple(m["runs"]), tuple(m["indexes"])) for sid, m in members.items())
    return ids, studies


def condition_differences(run_a: Run, arm_a: str, run_b: Run, arm_b: str) -> list[str]:
    """The conditions (model, endpoint, sampling, judge) on which arm ``arm_a`` of ``run_a`` and ``arm_b``
    of ``run_b`` differ or may differ, each as a clause: ``differ in model X vs Y`` where both runs record
    it; ``neither records the model`` or ``the model is recorded in one only (X)`` where one or both do not
    (then nobody can say that they differ, nor that they do not)."""
    first, second = (model_condition(run_a, arm_a), model_condition(run_b, arm_b))
    pairs = {"model": (first[0], second[0]), "endpoint": (first[1], second[1]),
             "sampling": (sampling_condition(run_a, arm_a), sampling_condition(run_b, arm_b)),
             "judge": (judge_condition(run_a), judge_condition(run_b))}
    clauses, neither = [], []
    for name, (a, b) in pairs.items():
        if a.key == b.key:
            continue
        unrecorded = [condition.text == "not recorded" for condition in (a, b)]
        if all(unrecorded):
            neither.append(name)
        elif a.text == b.text:  # the same words, recorded in part (a sampling setting missing in both)
            clauses.append(f"both record the {name} only in part ({a.text})")
        elif any(unrecorded):
            clauses.append(f"the {name} is recorded in one only ({b.text if unrecorded[0] else a.text})")
        else:
            clauses.append(f"differ in {name} {a.text} vs {b.text}")
    if neither:
        clauses.append(f"neither records the {', '.join(neither)}")
    return clauses
