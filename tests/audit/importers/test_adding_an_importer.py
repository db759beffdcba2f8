"""Adding an import format is one new file and one registry line: the importer below (a per-model grades
file, written only in this test) is listed by ``sotacheck import --help``, imports end to end through the
command line, is named when its file is given under another kind, and its runs are analysed like any other.
Also the registry itself (sotacheck.core.registry): lazy, its errors, and every built-in importer's protocol."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import sotacheck
from sotacheck.audit.importers import IMPORTERS, kind_names, run_importer
from sotacheck.audit.importers.base import Importer
from sotacheck.cli.main import main
from sotacheck.core.errors import UsageError
from sotacheck.core.outcomes import OutcomeError
from sotacheck.core.registry import Entry, Registry

NEW_IMPORTER = '''
"""Per-model grades: {"model": NAME, "grades": {problem: [0/1 per sample]}}."""

import json
from pathlib import Path

import pandas as pd

from sotacheck.audit.importers.base import FunctionImporter
from sotacheck.audit.importers.sniff import first_document
from sotacheck.core.outcomes import normalise


def read(path, options):
    payload = json.loads(Path(path).read_text())
    rows = [{"arm": options.arm or payload["model"], "dataset": options.dataset or "grades", "problem": problem,
             "repeat": repeat, "passed": bool(grade)}
            for problem, grades in payload["grades"].items() for repeat, grade in enumerate(grades)]
    return normalise(pd.DataFrame(rows), str(path)), {"source": "grades", "files": [{"file": str(path)}]}


def recognises(path):
    document = first_document(path)
    return isinstance(document, dict) and "grades" in document


IMPORTER = FunctionImporter("grades", "per-model grades JSON", frozenset({"arm", "dataset"}), recognises, read)
'''


@pytest.fixture
def grades_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The format's module written as ``grades_importer.py`` on the path, and its registry line."""
    (tmp_path / "grades_importer.py").write_text(textwrap.dedent(NEW_IMPORTER))  # the one new file
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(IMPORTERS.entries, "grades", Entry("grades_importer:IMPORTER", "per-model grades JSON"))
    yield "grades"
    sys.modules.pop("grades_importer", None)


def _grades(path: Path, model: str, grades: dict[str, list[int]]) -> Path:
    path.write_text(json.dumps({"model": model, "grades": grades}))
    return path


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


def test_a_new_format_imports_end_to_end(grades_kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "import", "--help")
    assert code == 0 and "grades             per-model grades JSON" in out
    first = _grades(tmp_path / "a.json", "model-a", {"P/0": [1, 1], "P/1": [0, 1], "P/2": [0, 0]})
    second = _grades(tmp_path / "b.json", "model-b", {"P/0": [1, 0], "P/1": [0, 0], "P/2": [0, 0]})
    code, out, _ = _cli(capsys, "import", grades_kind, str(first), "--out", str(tmp_path / "a"))
    assert code == 0 and out.startswith(f"wrote {tmp_path / 'a'}: 6 cells")
    code, _, _ = _cli(capsys, "import", grades_kind, str(second), "--out", str(tmp_path / "b"))
    run = sotacheck.load_run(tmp_path / "a")
    assert run.manifest.source == "grades" and run.outcomes["passed"].sum() == 3
    code, _, err = _cli(capsys, "import", "evalplus", str(first), "--out", str(tmp_path / "c"))
    assert code == 2 and "it looks like 'grades' input: `sotacheck import grades ...`" in err, err
    code, _, err = _cli(capsys, "import", grades_kind, str(first), "--out", str(tmp_path / "c"), "--sample-count", "2")
    assert code == 2 and "--sample-count: not an option of import kind 'grades'" in err
    table = sotacheck.analyze([tmp_path / "a", tmp_path / "b"], resamples=100)
    assert table is not None


def test_the_registry_is_lazy_and_its_errors_list_the_choices() -> None:
    code = ("import sys; from sotacheck.audit.importers import IMPORTERS; IMPORTERS.names(); "
            "IMPORTERS.descriptions(); print(sorted(m for m in ('pandas', 'numpy', 'sotacheck.audit.importers.table')"
            " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    with pytest.raises(UsageError, match="unknown import kind 'xlsx'; choose one of mapcoder, humaneval-results"):
        run_importer("xlsx", "t.xlsx")
    registry: Registry[int] = Registry("widget", {"w": "json:nothing_here", "d": Entry("json:dumps", "dumps")},
                                       check=lambda name, found: found if callable(found) else int("x"))
    assert registry.names() == ("w", "d") and registry.descriptions()["d"] == "dumps" and "d" in registry
    assert registry.get("d") is json.dumps
    with pytest.raises(TypeError, match="widget 'w': json has no nothing_here"):
        registry.get("w")
    with pytest.raises(TypeError, match="names no attribute"):
        Registry("widget", {"m": "json"}).get("m")


def test_every_builtin_importer_keeps_the_protocol() -> None:
    for name in kind_names():
        importer = IMPORTERS.get(name)
        assert isinstance(importer, Importer) and importer.name == name
        assert importer.reads == IMPORTERS.descriptions()[name]
        assert importer.accepts <= {"arm", "dataset", "sample_count", "instances"}
    assert {"csv", "jsonl", "parquet", "table", "swebench", "evalplus", "bigcodebench", "lm-eval", "inspect"} <= set(kind_names())


def test_an_unregistered_object_is_a_bug_not_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(IMPORTERS.entries, "wrong", Entry("sotacheck.audit.importers.table:CSV", "x"))
    with pytest.raises(TypeError, match="must be registered to an Importer named 'wrong'"):
        IMPORTERS.get("wrong")
    with pytest.raises(OutcomeError, match="does not exist"):
        run_importer("table", "no-such.csv")
