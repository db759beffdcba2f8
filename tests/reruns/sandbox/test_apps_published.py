"""MapCoder's released ChatGPT APPS runs (``published-runs/mapcoder/ChatGPT/APPS``: 5 files x 150 rows with
``source_codes`` and ``is_solved``), re-judged with sotacheck's standard-input judge under ExecEval's limits.

Measured (2 sandbox workers, 2 shared cores): every verdict agrees on ``apps-execeval`` (750/750), and on
``apps`` 675/750 (90.0 %) agree, the 75 others all for one cause: the problem has an accepted output that is not
a string (a Codewars function's return value, ``100``, ``True``, a list), which ExecEval could not read (the
request failed, MapCoder counted it unsolved), and the program prints that value right. No disagreement comes
from a timeout, nondeterminism or a comparison rule. Judging the 150 problems takes about 25-40 s per file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.benchmarks.apps import execeval_unjudgeable
from sotacheck.reruns.sandbox import SandboxPool, judge_many
from sotacheck.reruns.sandbox.stdin_programs import EXECEVAL_LIMITS

# file → (agreements on `apps`, problems where our pass is their non-pass); on `apps-execeval` all 150 agree.
AGREEMENT = {
    "ChatGPT-Analogical-APPS-Python3-0-1.jsonl": (137, {
        "APPS/3613", "APPS/4465", "APPS/4440", "APPS/3387", "APPS/3292", "APPS/3978", "APPS/4453", "APPS/3531",
        "APPS/1659", "APPS/1647", "APPS/1656#2", "APPS/1647#2", "APPS/1659#2"}),
    "ChatGPT-CoT-APPS-Python3-0-1.jsonl": (133, {
        "APPS/3613", "APPS/4465", "APPS/4440", "APPS/3387", "APPS/3292", "APPS/4344", "APPS/3856", "APPS/3978",
        "APPS/4453", "APPS/3616", "APPS/3155", "APPS/1659", "APPS/1647", "APPS/1656", "APPS/1656#2",
        "APPS/1647#2", "APPS/1659#2"}),
    "ChatGPT-Direct-APPS-Python3-0-1.jsonl": (134, {
        "APPS/4465", "APPS/2882", "APPS/4440", "APPS/4335", "APPS/3292", "APPS/3856", "APPS/3978", "APPS/4262",
        "APPS/4453", "APPS/3616", "APPS/1659", "APPS/1647", "APPS/1656", "APPS/1656#2", "APPS/1647#2",
        "APPS/1659#2"}),
    "ChatGPT-MapCoder-3-5-APPS-Python3-0-1.jsonl": (133, {
        "APPS/4465", "APPS/4440", "APPS/4335", "APPS/3387", "APPS/3978", "APPS/4453", "APPS/1668", "APPS/1659",
        "APPS/1647", "APPS/1666#2", "APPS/1656", "APPS/1627#2", "APPS/1656#2", "APPS/1621", "APPS/1621#2",
        "APPS/1647#2", "APPS/1659#2"}),
    "ChatGPT-SelfPlanning-APPS-Python3-0-1.jsonl": (138, {
        "APPS/3613", "APPS/4465", "APPS/4440", "APPS/4335", "APPS/3387", "APPS/3292", "APPS/3978", "APPS/4453",
        "APPS/3616", "APPS/1668", "APPS/1647", "APPS/1647#2"}),
}

# The verdicts of each file that pass on ``apps-execeval`` by ExecEval's rules alone (measured; see the docstring).
EXECEVAL_ONLY: dict[str, list[str]] = {name: [] for name in AGREEMENT}


@pytest.mark.slow
def test_rejudging_mapcoder_released_apps_runs(data_dir) -> None:
    folder = data_dir / "published-runs/mapcoder/ChatGPT/APPS"
    apps, execeval = load_dataset("apps", data_dir), load_dataset("apps-execeval", data_dir)
    raw = [json.loads(line) for line in (data_dir / "benchmarks/apps/selected150.jsonl").open()]
    files = sorted(Path(folder).glob("*.jsonl"))
    assert [f.name for f in files] == sorted(AGREEMENT)
    total = agree_apps = agree_execeval = 0
    execeval_only: dict[str, list[str]] = {}
    with SandboxPool(limits=EXECEVAL_LIMITS) as pool:
        for path in files:
            rows = [json.loads(line) for line in path.open()]
            assert [r["id"] for r in rows] == [r["id"] for r in raw]  # the dataset's order, duplicates included
            codes = [r["source_codes"][-1] for r in rows]
            ours = list(judge_many(pool, apps.content_hash, zip(apps.problems, codes, strict=True)))
            theirs = list(judge_many(pool, execeval.content_hash, zip(execeval.problems, codes, strict=True)))
            disagree = {v.problem_id for v, r in zip(ours, rows, strict=True) if v.passed != bool(r["is_solved"])}
            expected_agree, expected_disagree = AGREEMENT[path.name]
            assert (150 - len(disagree), disagree) == (expected_agree, expected_disagree), path.name
            # every disagreement: we pass a program whose problem ExecEval could not read; never the reverse
            by_id = {v.problem_id: (v, r, row) for v, r, row in zip(ours, rows, raw, strict=True)}
            for problem_id in disagree:
                verdict, row, data = by_id[problem_id]
                assert verdict.passed and not row["is_solved"]
                assert execeval_unjudgeable(data) == "an accepted output is not a string"
            assert all(v.passed == bool(r["is_solved"]) for v, r in zip(theirs, rows, strict=True)), path.name
            # a pass only ExecEval's rules give (a NaN for a number, integers equal at 129 bits) is named, and
            # the strict rules of ``apps`` do not give it
            lenient = {v.problem_id for v in theirs if v.result.execeval_only}
            assert not lenient & {v.problem_id for v in ours if v.passed}, path.name
            execeval_only[path.name] = sorted(lenient)
            total += len(rows)
            agree_apps += 150 - len(disagree)
            agree_execeval += sum(v.passed == bool(r["is_solved"]) for v, r in zip(theirs, rows, strict=True))
    assert total == 750
    assert agree_execeval == 750  # the tolerance: none; ExecEval's verdicts reproduced exactly
    assert agree_apps == 675 and agree_apps / total == pytest.approx(0.90)
    assert execeval_only == EXECEVAL_ONLY


def test_importing_them_names_the_loaders_problems(data_dir) -> None:
    from sotacheck.audit.importers.mapcoder import import_mapcoder

    table, manifest = import_mapcoder(data_dir / "published-runs/mapcoder/ChatGPT/APPS")
    apps = load_dataset("apps", data_dir)
    assert len(table) == 750 and set(table["dataset"]) == {"apps"}
    for _, rows in table.groupby("arm"):
        assert list(rows["problem"]) == [p.id for p in apps.problems]  # APPS/1604, APPS/1604#2, APPS/1604#3 ...
    assert table.groupby("arm")["passed"].sum().to_dict() == {
        "Analogical": 10, "CoT": 11, "Direct": 12, "MapCoder-3-5": 17, "SelfPlanning": 14}
    assert len(manifest["files"]) == 5
