"""Adding a benchmark is one new file and one registry line: the module below (two problems, written only in
this test) defines its loader and its card in one ``Benchmark``; ``load_dataset``, ``sotacheck datasets`` and
``sotacheck judge`` pick it up, and a hub id is refused because it does not read a hub."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from sotacheck.cli.main import main
from sotacheck.core.errors import InputError
from sotacheck.core.registry import Entry
from sotacheck.reruns.benchmarks import BENCHMARKS, load_dataset
from sotacheck.reruns.benchmarks.registry import card, hub_datasets

NEW_BENCHMARK = '''
"""Two arithmetic problems, for the test of adding a benchmark."""

from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.benchmarks.registry import Benchmark


def _problem(index, name, body, test):
    prompt = f"def {name}(a, b):\\n    \\"\\"\\"{name} of a and b.\\"\\"\\"\\n"
    return Problem(id=f"Tiny/{index}", dataset="tiny", prompt=prompt, entry_point=name, visible_tests=(test,),
                   hidden_tests=(test,), source="inline", canonical_solution=f"    return {body}\\n")


def load(data_dir=None):
    problems = (_problem(0, "add", "a + b", "assert add(2, 3) == 5"),
                _problem(1, "mul", "a * b", "assert mul(2, 3) == 6"))
    return Dataset("tiny", problems, ("inline",))


BENCHMARK = Benchmark("tiny", "two problems written in a test", "public domain", load)
'''


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "tiny_benchmark.py").write_text(textwrap.dedent(NEW_BENCHMARK))  # the one new file
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(BENCHMARKS.entries, "tiny", Entry("tiny_benchmark:BENCHMARK", "two problems"))  # the line
    yield "tiny"
    sys.modules.pop("tiny_benchmark", None)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


def test_a_new_benchmark_loads_lists_and_judges(tiny: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert [p.entry_point for p in load_dataset(tiny).problems] == ["add", "mul"]
    assert card(tiny).licence == "public domain" and tiny not in hub_datasets()
    code, out, _ = _cli(capsys, "datasets")
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[0] == tiny)
    assert "    2 problems  sha256:" in lines[at] and lines[at + 1].split(maxsplit=1) == ["source:", "two problems "
                                                                                          "written in a test"]
    code, out, err = _cli(capsys, "judge", "--canonical", "--dataset", tiny, "--workers", "1")
    assert code == 0 and "tiny: 2/2 passed" in out, out + err


def test_a_hub_id_is_refused_for_a_benchmark_that_reads_none(tiny: str) -> None:
    with pytest.raises(InputError, match=r"--hub-id 'someone/tiny': dataset 'tiny' is not read from a hub \(only "
                                         r"humaneval-plus, mbpp-et, mbpp-et-rows, mbpp-plus are\)"):
        load_dataset(tiny, hub_id="someone/tiny")


def test_a_wrongly_registered_benchmark_is_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BENCHMARKS.entries, "other", Entry("sotacheck.reruns.benchmarks.catalog:HUMANEVAL", "x"))
    with pytest.raises(TypeError, match="must be registered to a Benchmark named 'other'"):
        load_dataset("other")


PROGRAM_BENCHMARK = '''
"""One standard-input problem (print the sum of two numbers), compared by the rules its card names."""

from sotacheck.reruns.benchmarks.problem import Dataset, IOTest, Problem
from sotacheck.reruns.benchmarks.registry import Benchmark


def load(data_dir=None):
    test = IOTest(input="1.5 2\\n", outputs=("3.5",))
    problem = Problem(id="Sum/0", dataset="{name}", prompt="Print the sum of two numbers.", entry_point="",
                      visible_tests=(), hidden_tests=(), source="inline", kind="program", visible_io=(test,),
                      hidden_io=(test,))
    return Dataset("{name}", (problem,), ("inline",))


BENCHMARK = Benchmark("{name}", "one problem written in a test", "public domain", load, output_rules="{rules}")
'''


@pytest.mark.parametrize("rules", ["strict", "execeval"])
def test_the_judge_compares_outputs_by_the_rules_on_the_card(
        rules: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The output rule is a fact of the benchmark, on its card: no module of the judge names a dataset. Under
    ExecEval's rules a printed NaN matches any number (MapCoder's verdicts), under the strict ones it fails."""
    name = f"sum-{rules}"
    (tmp_path / "sum_benchmark.py").write_text(PROGRAM_BENCHMARK.replace("{name}", name).replace("{rules}", rules))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(BENCHMARKS.entries, name, Entry("sum_benchmark:BENCHMARK", "one problem"))
    try:
        assert card(name).output_rules == rules
        samples = tmp_path / "samples.jsonl"
        samples.write_text('{"task_id": "Sum/0", "completion": "print(float(\\"nan\\"))"}\n')
        code, out, err = _cli(capsys, "judge", "--samples", str(samples), "--dataset", name, "--workers", "1")
        assert code == 0, err  # a judge run that judged every sample succeeds, whatever the verdicts
    finally:
        sys.modules.pop("sum_benchmark", None)
    passed = "1/1 passed" if rules == "execeval" else "0/1 passed"
    assert f"{name}: {passed}" in out and f"outputs compared by the {rules} rules" in out, out + err


def test_no_module_of_the_judge_the_loaders_the_authors_code_or_the_importers_tests_a_dataset_name() -> None:
    """Benchmark facts live on the card (``Benchmark``): the sandbox, the benchmarks' loaders (APPS's reads its
    output rules there), the runner of the authors' code and the importers (MapCoder's reads APPS's numeric ids
    from the row) never compare a dataset's name with a string."""
    import re

    root = Path(__file__).resolve().parents[3]
    pattern = re.compile(r"""dataset\s*(==|!=|\bin\b|\bnot in\b)\s*[("'{\[]""")
    folders = ("reruns/sandbox", "reruns/benchmarks", "reruns/original", "audit/importers")
    found = [f"{path.relative_to(root)}:{number}: {line.strip()}"
             for folder in folders for path in sorted((root / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, found
