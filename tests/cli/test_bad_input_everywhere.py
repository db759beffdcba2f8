"""Every importer and every command that reads files, fed malformed input: empty, truncated, binary garbage,
the wrong kind of file, wrong cell types, and a directory where a file is expected. Each is exit 2 with one
line that names the file (or folder), and nothing is written (no run directory, no report, no table, a run
directory left byte for byte as it was).

Runs through ``sotacheck.cli.main.main`` in-process (the console entry point's own error handling). The
gate's own cases, with its report files, are in ``test_gate_inputs.py``."""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from sotacheck.cli.main import main
from sotacheck.core.rundir import write_run

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
GARBAGE = bytes(range(256)) * 8
MAPCODER = REPO / "data/published/mapcoder/ChatGPT/HumanEval/ChatGPT-CoT-Python3-0-1.jsonl.gz"
LMEVAL = next((FIXTURES / "lmeval" / "logs").rglob("samples_*.jsonl"))
INSPECT_JSON = next((FIXTURES / "inspect" / "logs").glob("*.json"))
INSPECT_EVAL = next((FIXTURES / "inspect" / "logs").glob("*.eval"))
EVALPLUS = FIXTURES / "evalplus" / "samples_eval_results.json"
CSV = "arm,dataset,problem,repeat,passed\n" + "".join(f"a,humaneval,HumanEval/{i},0,{i % 2}\n" for i in range(6))


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    captured = capsys.readouterr()
    return int(exit_.value.code or 0), captured.err


def _assert_one_line_naming(code: int, err: str, path: Path) -> None:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert str(path) in err, err


# --- importers -------------------------------------------------------------------------------------------

def _valid(kind: str, folder: Path) -> Path:
    """A valid input for ``kind`` (a copy, so it can be damaged), named as that tool names it."""
    if kind == "mapcoder":
        target = folder / "HumanEval" / "ChatGPT-CoT-Python3-0-1.jsonl"
        target.parent.mkdir()
        target.write_bytes(gzip.decompress(MAPCODER.read_bytes()))
    elif kind == "humaneval-results":
        target = folder / "samples.jsonl_results.jsonl"
        target.write_text("".join(f'{{"task_id": "HumanEval/{i}", "passed": {str(i % 2 == 0).lower()}}}\n'
                                  for i in range(6)))
    elif kind == "csv":
        target = folder / "outcomes.csv"
        target.write_text(CSV)
    else:
        source = {"lm-eval": LMEVAL, "inspect": INSPECT_JSON, "inspect-eval": INSPECT_EVAL, "evalplus": EVALPLUS}[kind]
        target = folder / source.name
        shutil.copyfile(source, target)
    return target


def _wrong_types(kind: str, path: Path) -> None:
    """The right kind of file with a cell of the wrong type in it."""
    text = path.read_text() if path.suffix != ".eval" else ""
    if kind == "mapcoder":
        path.write_text(text.replace('"is_solved": true', '"is_solved": "maybe"', 1)
                        .replace('"is_solved": false', '"is_solved": "maybe"', 1))
    elif kind == "humaneval-results":
        path.write_text(text.replace('"passed": true', '"passed": [1]', 1))
    elif kind == "csv":
        path.write_text(text.replace("HumanEval/1,0,1", "HumanEval/1,one,1"))
    elif kind == "evalplus":
        path.write_text(text.replace('"eval": {', '"eval": [', 1).replace("}}", "]}", 1) if '"eval": {' in text
                        else "[1, 2, 3]")
    else:
        path.write_text('{"version": "two", "samples": 7}' if kind.startswith("inspect") else
                        '{"doc_id": "zero", "target": 1}\n')


def _cut(data: bytes) -> bytes:
    """The first half, cut inside a line (a file cut exactly at a line end is a shorter valid file)."""
    half = data[: len(data) // 2]
    return half[:-2] if half.endswith(b"\n") else half


DAMAGE: dict[str, Callable[[str, Path], None]] = {
    "empty": lambda kind, p: p.write_bytes(b""),
    "truncated": lambda kind, p: p.write_bytes(_cut(p.read_bytes())),
    "garbage": lambda kind, p: p.write_bytes(GARBAGE),
    "wrong kind": lambda kind, p: p.write_text(CSV if kind != "csv" else '{"task_id": "HumanEval/0"}\n'),
    "wrong types": _wrong_types,
}
def _tool(kind: str) -> str:
    return "inspect" if kind == "inspect-eval" else kind


SIMPLE_DAMAGE = ["empty", "truncated", "garbage", "wrong kind", "directory"]
KINDS = ["mapcoder", "humaneval-results", "evalplus", "lm-eval", "inspect", "inspect-eval", "csv"]


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("kind", KINDS)
def test_every_importer_on_a_damaged_file(tmp_path, capsys, kind: str, damage: str) -> None:
    path = _valid(kind, tmp_path)
    DAMAGE[damage](kind, path)
    out = tmp_path / "runs" / "imported"
    code, err = cli(capsys, "import", _tool(kind), str(path), "--out", str(out))
    _assert_one_line_naming(code, err, path)
    assert not out.exists() and not out.parent.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_every_importer_on_a_directory_it_cannot_use(tmp_path, capsys, kind: str) -> None:
    """A directory where a file is expected (csv, human-eval results), or one with nothing of that kind."""
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "notes.txt").write_text("nothing to import\n")
    out = tmp_path / "runs" / "imported"
    code, err = cli(capsys, "import", _tool(kind), str(folder), "--out", str(out))
    _assert_one_line_naming(code, err, folder)
    assert not out.parent.exists()


def test_a_missing_input_file(tmp_path, capsys) -> None:
    missing = tmp_path / "nowhere.jsonl"
    code, err = cli(capsys, "import", "mapcoder", str(missing), "--out", str(tmp_path / "r"))
    _assert_one_line_naming(code, err, missing)
    assert "does not exist" in err


# --- commands that read run directories ------------------------------------------------------------------

def _run(folder: Path) -> Path:
    frame = pd.DataFrame({"arm": ["a"] * 6 + ["b"] * 6, "dataset": "humaneval",
                          "problem": [f"HumanEval/{i}" for i in range(6)] * 2, "repeat": 0,
                          "passed": [i % 2 == 0 for i in range(12)]})
    return write_run(folder / "run", frame, {"name": "run"})


def _damage(path: Path, damage: str, wrong_kind: str) -> None:
    """``damage`` done to ``path``; ``wrong_kind`` is the text of a file of another kind."""
    if damage == "directory":
        path.unlink()
        path.mkdir()
    elif damage == "wrong kind":
        path.write_text(wrong_kind)
    else:
        DAMAGE[damage]("file", path)


def _damage_table(run: Path, damage: str) -> Path:
    target = run / "outcomes.parquet"
    if damage == "wrong kind":
        pd.DataFrame({"x": [1, 2]}).to_parquet(target)
    elif damage == "wrong types":
        pd.DataFrame({"arm": ["a"], "dataset": ["humaneval"], "problem": ["HumanEval/0"], "repeat": [0],
                      "passed": [7]}).to_parquet(target)
    else:
        _damage(target, damage, "")
    return target


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "analyze": lambda run, out: ["analyze", str(run)],
    "table": lambda run, out: ["table", str(run), "--output", str(out / "table.tex")],
    "report": lambda run, out: ["report", str(run), "--output", str(out / "report.html")],
    "migrate": lambda run, out: ["migrate", str(run)],
    "claims": lambda run, out: ["claims", str(REPO / "data/claims/mapcoder.yaml"), "--runs", str(run)],
}


@pytest.mark.parametrize(("name", "damage"), [*(("outcomes.parquet", d) for d in [*sorted(DAMAGE), "directory"]),
                                             *(("run.json", d) for d in SIMPLE_DAMAGE)])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_reading_a_run_on_a_damaged_file(tmp_path, capsys, command: str, name: str, damage: str) -> None:
    run = _run(tmp_path)
    target = _damage_table(run, damage) if name == "outcomes.parquet" else run / name
    if name == "run.json":
        _damage(target, damage, "[1, 2, 3]\n")
    before = _snapshot(run)
    out = tmp_path / "out"
    out.mkdir()
    code, err = cli(capsys, *COMMANDS[command](run, out))
    _assert_one_line_naming(code, err, target)
    assert list(out.iterdir()) == [] and _snapshot(run) == before


# --- other files commands read ---------------------------------------------------------------------------

@pytest.mark.parametrize("damage", SIMPLE_DAMAGE)
def test_claims_on_a_damaged_registry(tmp_path, capsys, damage: str) -> None:
    registry = tmp_path / "claims.yaml"
    shutil.copyfile(REPO / "data/claims/mapcoder.yaml", registry)
    _damage(registry, damage, CSV)
    code, err = cli(capsys, "claims", str(registry))
    _assert_one_line_naming(code, err, registry)


@pytest.mark.parametrize("damage", SIMPLE_DAMAGE)
def test_judge_on_a_damaged_samples_file(tmp_path, capsys, damage: str) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(f'{{"task_id": "HumanEval/{i}", "completion": "    return 1\\n"}}\n' for i in range(3)))
    _damage(samples, damage, CSV)
    out = tmp_path / "runs" / "judged"
    code, err = cli(capsys, "judge", "--dataset", "humaneval", "--samples", str(samples), "--run-out", str(out))
    _assert_one_line_naming(code, err, samples)
    assert not out.parent.exists()
