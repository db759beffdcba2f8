"""Rank claims. ``test: leaderboard``: supported only when the system is alone in the top group; not
significant naming the systems it cannot be separated from; contradicted naming those significantly better;
unverifiable without the runs. The board is the reference example of statistics.md ("Leaderboards"): top
group {0, 1}; system 0 beats 2 and 3, system 1 beats 3. ``test: intersection-union`` (the default): one-sided
paired tests against each competitor, each at α, all must reject (statistics.md, pitfall 11), checked against
scipy.stats.binomtest on MapCoder's released MBPP logs (bundled) and on the reference example."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from sotacheck.audit.claim_registry import ClaimsError, claims_schema, load_registry
from sotacheck.audit.claims import check_claims
from sotacheck.core.rundir import Run
from tests.audit.test_leaderboard import REFERENCE, board_run


def _runs() -> list[Run]:
    x = np.array([[int(ch) for ch in row] for row in REFERENCE])
    board = board_run(x)
    lone = board_run(np.vstack([np.ones((1, 40), dtype=int), x[2:]]), ["perfect", "s2", "s3"])
    return [Run(None, board.outcomes, {"name": "board", "source": "csv"}),
            Run(None, lone.outcomes, {"name": "lone", "source": "csv"})]


def _claim(claim_id: str, system: str, runs: list[str], test: str = "leaderboard", **extra: object
           ) -> dict[str, object]:
    return {"kind": "rank", "id": claim_id, "statement": f"{system} is the best", "benchmark": "bench",
            "system": system, "leaderboard": {"runs": runs}, "test": test, **extra}


def _verdicts(tmp_path, claims: list[dict[str, object]]):  # type: ignore[no-untyped-def]
    path = tmp_path / "rank.yaml"
    path.write_text(yaml.safe_dump({"paper": {"id": "p"}, "claims": claims}))
    return {v.id: v for v in check_claims([path], _runs())}


def test_the_four_verdicts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdicts = _verdicts(tmp_path, [_claim("tied", "s0", ["board"]), _claim("worse", "s2", ["board"]),
                                    _claim("alone", "perfect", ["lone"]), _claim("no-runs", "s0", ["elsewhere"])])
    assert verdicts["tied"].verdict == "not significant"
    assert "cannot be separated from s1" in verdicts["tied"].reason
    assert verdicts["tied"].numbers["top_group"] == ["s0", "s1"]
    assert verdicts["worse"].verdict == "contradicted" and "significantly worse than s0" in verdicts["worse"].reason
    assert verdicts["alone"].verdict == "supported" and verdicts["alone"].numbers["rank_interval"] == [1, 1]
    assert verdicts["no-runs"].verdict == "unverifiable from what was published"
    assert "--runs runs/elsewhere" in verdicts["no-runs"].reason
    assert all(v.check == "rank" for v in verdicts.values())


def test_a_system_not_on_the_board_is_one_line_naming_the_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ClaimsError, match=r"claim 'x': field `system`: 'nobody' is not on the leaderboard"):
        _verdicts(tmp_path, [_claim("x", "nobody", ["board"])])


def test_rank_claims_are_in_the_schema_and_validated(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import jsonschema

    document = {"paper": {"id": "p"}, "claims": [_claim("a", "s0", ["board"])]}
    jsonschema.validate(document, claims_schema())
    bad = json.loads(json.dumps(document))
    bad["claims"][0]["leaderbord"] = bad["claims"][0].pop("leaderboard")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, claims_schema())
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ClaimsError, match="leaderbord"):
        load_registry(path)


def _iu(claim_id: str, system: str, runs: list[str], **extra: object) -> dict[str, object]:
    claim = _claim(claim_id, system, runs, **extra)
    del claim["test"]  # intersection-union is the default
    return claim


def test_intersection_union_on_the_reference_example(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """s0 vs s1 (b = 7, c = 5): one-sided p = 0.387, not shown better; s0 better than s2 and s3 alone: supported;
    s2 is beaten by s0 at α / 3: contradicted. p's from scipy.stats.binomtest(b, b + c, alternative='greater')."""
    from scipy import stats

    verdicts = _verdicts(tmp_path, [_iu("best", "s0", ["board"]), _iu("some", "s0", ["board"], better_than=["s2", "s3"]),
                                    _iu("worse", "s2", ["board"])])
    assert verdicts["best"].verdict == "not significant" and "not shown better than s1" in verdicts["best"].reason
    assert verdicts["best"].numbers["pvalues"]["s1"] == pytest.approx(stats.binomtest(7, 12, alternative="greater").pvalue,
                                                                      rel=1e-12)
    assert verdicts["some"].verdict == "supported"
    assert verdicts["some"].numbers["pvalues"] == pytest.approx(
        {"s2": stats.binomtest(14, 16, alternative="greater").pvalue,
         "s3": stats.binomtest(22, 25, alternative="greater").pvalue}, rel=1e-12)
    assert verdicts["worse"].verdict == "contradicted" and "significantly worse than s0" in verdicts["worse"].reason


def test_one_of_two_tied_systems_is_not_supported_as_the_best(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two systems with the same results on every problem, both far ahead of a third: neither is the best."""
    x = np.array([[int(ch) for ch in row] for row in REFERENCE])
    tied = board_run(np.vstack([x[0], x[0], x[3]]), ["a", "b", "c"])
    path = tmp_path / "tied.yaml"
    path.write_text(yaml.safe_dump({"paper": {"id": "p"}, "claims": [_iu("a-best", "a", ["tied"])]}))
    verdict = check_claims([path], [Run(None, tied.outcomes, {"name": "tied", "source": "csv"})])[0]
    assert verdict.verdict == "not significant" and verdict.numbers["pvalues"]["b"] == 1.0
    assert verdict.numbers["pvalues"]["c"] < 0.05


def test_mapcoder_is_best_on_mbpp_by_intersection_union(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """MapCoder's released ChatGPT MBPP logs (bundled): MapCoder-3-5 vs Reflexion-10 (54 problems only MapCoder
    solved, 33 only Reflexion) and vs Analogical (55, 24). One-sided p = 0.0157 and 3.2e-4 (issue 44), both below
    0.05: supported, though the all-pairs Holm board keeps Reflexion in MapCoder's top group (Holm p = 0.063)."""
    from pathlib import Path

    from scipy import stats

    from sotacheck.audit.claim_registry import load_registry
    from sotacheck.audit.claims import check_registries
    from sotacheck.audit.importers.mapcoder import import_mapcoder

    repo = Path(__file__).resolve().parents[2]
    frame, meta = import_mapcoder(repo / "data/published/mapcoder/ChatGPT/MBPP")
    run = Run(None, frame, {**meta, "name": "mapcoder-mbpp"})
    wide = frame.pivot_table(index="problem", columns="arm", values="passed", aggfunc="mean")
    expected = {}
    for other in ("Reflexion-10", "Analogical"):
        b = int(((wide["MapCoder-3-5"] == 1) & (wide[other] == 0)).sum())
        c = int(((wide["MapCoder-3-5"] == 0) & (wide[other] == 1)).sum())
        expected[other] = stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue
    assert expected["Reflexion-10"] == pytest.approx(0.0157, abs=5e-4)
    assert expected["Analogical"] == pytest.approx(3.2e-4, abs=5e-6)
    registry = load_registry(repo / "data/claims/mapcoder.yaml")
    verdicts = {v.id: v for v in check_registries([("mapcoder.yaml", registry)], [run])}
    best = verdicts["mapcoder-best-mbpp"]
    assert best.verdict == "supported"
    assert best.numbers["pvalues"] == pytest.approx(expected, rel=1e-10)
    holm = _verdicts_of(tmp_path, _claim("holm", "MapCoder-3-5", ["mapcoder-mbpp"]), [run])
    assert holm.verdict == "not significant" and "Reflexion-10" in holm.reason


def _verdicts_of(tmp_path, claim: dict[str, object], runs: list[Run]):  # type: ignore[no-untyped-def]
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump({"paper": {"id": "p"}, "claims": [claim]}))
    return check_claims([path], runs)[0]
