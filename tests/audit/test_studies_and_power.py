"""Studies (#20 item 1) and power with repeats (#20 item 2).

Studies are checked against the manifests read here independently (model identity, sampling in the spec
or the MapCoder file name); Holm within a study against statsmodels; the power of the sign-flip test at
its stated MDD by a seeded simulation with its Monte-Carlo error; the K = 1 figure against the exact
McNemar MDD of before.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special
from statsmodels.stats.multitest import multipletests

from sotacheck.audit.analysis import analyze, combine_runs
from sotacheck.audit.gate import gate, power_note
from sotacheck.audit.importers.mapcoder import import_mapcoder
from sotacheck.audit.paired import sign_flip_test
from sotacheck.audit.power import mdd_paired, mdd_paired_exact
from sotacheck.core.rundir import Run, load_run, normalise, write_run
from tests.sotacheck_command import SOTACHECK

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "recordings"


@pytest.fixture(scope="module")
def every_run(tmp_path_factory) -> list[Run]:
    """recordings/* and MapCoder's released ChatGPT HumanEval logs, as the issue's report combined them."""
    frame, meta = import_mapcoder(REPO / "data/published/mapcoder/ChatGPT/HumanEval")
    mapcoder = write_run(tmp_path_factory.mktemp("studies") / "mapcoder-he", frame, meta)
    return [*(load_run(p) for p in sorted(RUNS.iterdir()) if p.is_dir()), load_run(mapcoder)]


def _conditions(runs: list[Run]) -> dict[tuple[str, str], tuple[object, ...]]:
    """(model, sampling, problems) of every (arm, dataset) of the combined table, read straight from the
    manifests: an arm name is unique per dataset only (two runs on different datasets may both say 'direct')."""
    table = combine_runs(runs)
    out = {}
    for (index, arm, dataset), cells in table.groupby(["run_index", "arm", "dataset"]):
        manifest = runs[int(index)].manifest
        label = cells["label"].iloc[0]
        if manifest.model_identity is not None:
            model = (manifest.model_identity.model, manifest.model_identity.endpoint)
            recorded = manifest.arm_sampling.get(label) or manifest.spec or {}  # per arm since #19
            sampling = tuple(recorded.get(k) for k in ("temperature", "top_p", "max_tokens"))
        else:
            entry = next(f for f in manifest.files if f["arm"] == label)
            model = (entry["model"], None)
            sampling = (entry["sampling"]["temperature"],)
        problems = frozenset(table.loc[(table["run_index"] == index) & (table["dataset"] == dataset), "problem"])
        out[arm, dataset] = (model, sampling, problems)
    return out


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
def test_no_comparison_pairs_arms_of_different_models_or_sampling(every_run) -> None:
    result = analyze(every_run, baseline="direct", n_resamples=200)
    conditions = _conditions(every_run)
    assert result.comparisons
    for c in result.comparisons:
        assert conditions[c.a, c.dataset] == conditions[c.b, c.dataset], (c.a, c.b, c.dataset)
        assert c.study == c.family
    # one study per set of conditions, counted from the manifests (recordings/ grows; no fixed count)
    assert len(result.studies) == len(set(conditions.values()))
    for study in result.studies:
        assert len({conditions[arm, study.study.dataset] for arm in study.study.arms}) == 1, study.study.id
    # the authors' four baselines on 5 problems (paper sampling) are a study of their own
    originals = next(s for s in result.studies if s.study.n_problems == 5)
    assert sorted(originals.study.arms) == [f"{name}@original"
                                            for name in ("analogical", "cot", "direct", "selfplanning")]
    # ours beside the authors' MapCoder and CodeSim on 10 problems (paper sampling): a study of its own, in which
    # the authors' MapCoder, every cell an error, has no pass rate and enters no comparison
    beside = next(s for s in result.studies if "originals-qwen05b" in s.study.runs)
    assert beside.study.n_problems == 10 and "top_p=0.95, max_tokens=none" in beside.study.sampling
    assert [u.arm for u in result.unscored if u.study == beside.study.id] == [
        "originals-qwen05b:mapcoder@original[k=3,t=5]"]
    # the APPS rerun, at the methods' paper sampling (no reply cap), is a study of its own
    apps = next(s for s in result.studies if s.study.dataset == "apps")
    assert "top_p=0.95, max_tokens=none" in apps.study.sampling and apps.study.n_problems == 10
    # the BigCodeBench slice: its six arms on their 20 tasks, a study of its own beside the HumanEval ones
    bigcodebench = next(s for s in result.studies if s.study.dataset == "bigcodebench-complete")
    assert bigcodebench.study.n_problems == 20 and len(bigcodebench.study.arms) == 6
    # the temperature-0.8 sweep is a study of its own, never paired with a temperature-0 arm
    hot = [s for s in result.studies if "temperature=0.8" in s.study.sampling]
    assert len(hot) == 1 and all(a.startswith("sweep-pycapsule-attempts-t08") for a in hot[0].study.arms)
    chatgpt = next(s for s in result.studies if s.study.model == "ChatGPT")
    assert chatgpt.study.n_problems == 164 and "temperature=0.0" in chatgpt.study.sampling
    assert chatgpt.baseline == "Analogical" and "no arm 'direct' in this study" in chatgpt.notes[0]
    # Holm within each study: statsmodels over that study's p-values only
    for study in result.studies:
        family = [c for c in result.comparisons if c.family == study.study.id]
        if family:
            expected = multipletests([c.pvalue for c in family], method="holm")[1]
            assert [c.pvalue_adjusted for c in family] == pytest.approx(list(expected), rel=1e-12)


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
def test_a_comparison_across_studies_only_by_name_and_labelled(every_run) -> None:
    result = analyze(every_run, baseline="direct", n_resamples=200, compare=[("MapCoder-5-5", "direct")])
    requested = result.requested
    assert len(requested) == 1 and " vs " in requested[0].study
    assert requested[0].notes[0].startswith("across studies, asked for by name")
    assert "model ChatGPT vs qwen2.5-coder-0.5b-instruct-q4_k_m" in requested[0].notes[0]
    assert requested[0].pvalue_adjusted == requested[0].pvalue  # a family of one
    with pytest.raises(ValueError, match="compare: no arm 'nope'"):
        analyze(every_run, n_resamples=200, compare=[("nope", "direct")])


def test_unrecorded_conditions_never_make_two_runs_one_study() -> None:
    cells = [{"arm": arm, "dataset": "d", "problem": f"p{i}", "repeat": 0, "passed": bool(i % 2)}
             for arm in ("a", "b") for i in range(10)]
    one = Run(None, normalise(pd.DataFrame(cells), "x"), {"name": "one", "source": "csv"})
    two = Run(None, normalise(pd.DataFrame(cells), "x"), {"name": "two", "source": "csv"})
    result = analyze([one, two], n_resamples=200)
    assert [s.study.model for s in result.studies] == ["not recorded", "not recorded"]
    assert [(c.a, c.b) for c in result.comparisons] == [("b", "a"), ("two:b", "two:a")]


def test_cli_analyze_prints_each_study_with_its_conditions() -> None:
    done = subprocess.run([*SOTACHECK, "analyze", str(RUNS / "methods-qwen05b"),
                           str(RUNS / "sweep-pycapsule-attempts-t08-qwen05b"), "--baseline", "direct",
                           "--resamples", "200"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "S1: humaneval (20 problems)" in done.stdout and "S2: humaneval (68 problems)" in done.stdout
    assert "temperature=0.8" in done.stdout
    assert "Holm across the 5 comparisons of S1" in done.stdout


def test_mdd_at_one_repeat_is_the_exact_mcnemar_figure_of_before() -> None:
    rng = np.random.default_rng(11)
    a = (rng.random((164, 1)) < 0.6).astype(float)
    b = (rng.random((164, 1)) < 0.6).astype(float)
    discordance = float(np.mean(a[:, 0] != b[:, 0]))
    assert mdd_paired(a, b).mdd == mdd_paired_exact(164, discordance)
    assert mdd_paired(a, b, alternative="greater").mdd == mdd_paired_exact(164, discordance, alternative="greater")
    assert mdd_paired(a, a).mdd == float("inf")


def _runs_pair(p: np.ndarray, q: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return (rng.random((p.size, k)) < p[:, None]).astype(float), (rng.random((q.size, k)) < q[:, None]).astype(float)


def test_sign_flip_power_at_the_stated_mdd_by_simulation() -> None:
    """n = 120, K = 3, difficulty Beta(0.5, 0.5), the candidate's drop on the logit scale (seed 5): at the
    drop equal to the mean stated one-sided MDD, the one-sided sign-flip test (999 resamples) rejects in
    80 % of 400 runs, within 3 Monte-Carlo standard errors (sd 2.0 points: tolerance ±6)."""
    rng = np.random.default_rng(5)
    p = np.clip(rng.beta(0.5, 0.5, 120), 1e-4, 1 - 1e-4)

    def shifted(drop: float) -> np.ndarray:
        from scipy import optimize

        theta = optimize.brentq(lambda t: float(np.mean(p - special.expit(special.logit(p) - t))) - drop, 0, 50)
        return special.expit(special.logit(p) - theta)

    drop = 0.07
    for _ in range(2):
        drop = float(np.mean([mdd_paired(*_runs_pair(p, shifted(drop), 3, rng), alternative="greater").mdd
                              for _ in range(100)]))
    q = shifted(drop)
    hits = sum(sign_flip_test(*_runs_pair(p, q, 3, rng), alternative="greater", n_resamples=999, rng=rng).pvalue < 0.05
               for _ in range(400))
    assert abs(hits / 400 - 0.80) <= 0.06, (drop, hits)


def test_gate_power_note_is_in_pass_rate_points() -> None:
    rng = np.random.default_rng(2)
    p = rng.beta(0.5, 0.5, 60)

    def run(name: str) -> Run:
        outcomes = rng.random((60, 3)) < p[:, None]
        frame = pd.DataFrame({"arm": name, "dataset": "d", "problem": np.repeat([f"p{i}" for i in range(60)], 3),
                              "repeat": np.tile(np.arange(3), 60), "passed": outcomes.ravel()})
        return Run(None, normalise(frame, "x"), {"name": name})

    check = gate(run("base"), run("cand")).checks[0]
    note = power_note(check)
    assert "smallest drop in pass rate" in note and f"{100 * check.mdd:.1f} points" in note
    assert "spread of per-problem differences over 3 repeats" in note


def test_a_gate_between_runs_of_different_models_says_so() -> None:
    """The gate is asked by name, so it decides; its note says what else differs between the two runs."""
    cells = pd.DataFrame({"arm": "direct", "dataset": "d", "problem": [f"p{i}" for i in range(40)], "repeat": 0,
                          "passed": [i % 3 > 0 for i in range(40)]})
    spec = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 768}
    old = Run(None, normalise(cells, "x"), {"name": "old", "source": "sotacheck rerun", "spec": spec,
                                           "model_identity": {"model": "m-1", "endpoint": "e"}})
    new = Run(None, normalise(cells, "x"), {"name": "new", "source": "sotacheck rerun", "spec": spec,
                                           "model_identity": {"model": "m-2", "endpoint": "e"}})
    assert gate(old, new).checks[0].notes == ("baseline and candidate: differ in model m-1 vs m-2",)
    assert gate(old, old).checks[0].notes == ()
    bare, other = (Run(None, normalise(cells, "x"), {"name": name, "source": "csv", "spec": spec}) for name in "ab")
    assert gate(old, bare).checks[0].notes == ("baseline and candidate: the model is recorded in one only (m-1); "
                                               "the endpoint is recorded in one only (e); the judge is recorded in "
                                               "one only (sotacheck sandbox)",)
    assert gate(bare, other).checks[0].notes == ("baseline and candidate: neither records the model, endpoint, judge",)
