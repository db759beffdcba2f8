"""Rank claims against a leaderboard: supported only when the system is alone in the top group; not
significant naming the systems it cannot be separated from; contradicted naming those significantly better;
unverifiable without the runs. The board is the reference example of statistics.md ("Leaderboards"): top
group {0, 1}; system 0 beats 2 and 3, system 1 beats 3."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from sotacheck.audit.claim_registry import ClaimsError, claims_schema, load_registry
from sotacheck.audit.claims import audit_claims
from sotacheck.core.rundir import Run
from tests.audit.test_leaderboard import REFERENCE, board_run


def _runs() -> list[Run]:
    x = np.array([[int(ch) for ch in row] for row in REFERENCE])
    board = board_run(x)
    lone = board_run(np.vstack([np.ones((1, 40), dtype=int), x[2:]]), ["perfect", "s2", "s3"])
    return [Run(None, board.outcomes, {"name": "board", "source": "csv"}),
            Run(None, lone.outcomes, {"name": "lone", "source": "csv"})]


def _claim(claim_id: str, system: str, runs: list[str]) -> dict[str, object]:
    return {"kind": "rank", "id": claim_id, "statement": f"{system} is the best", "benchmark": "bench",
            "system": system, "leaderboard": {"runs": runs}}


def _verdicts(tmp_path, claims: list[dict[str, object]]):  # type: ignore[no-untyped-def]
    path = tmp_path / "rank.yaml"
    path.write_text(yaml.safe_dump({"paper": {"id": "p"}, "claims": claims}))
    return {v.id: v for v in audit_claims([path], _runs())}


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
