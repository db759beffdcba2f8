"""The leakage check finds a hidden-test assert that reached a prompt, and stays quiet otherwise."""

from __future__ import annotations

import subprocess

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.leakage import check_leakage, hidden_asserts
from sotacheck.reruns.store.run_store import CellKey, RunStore
from tests.sotacheck_command import SOTACHECK


def _store_with_prompt(tmp_path, text: str) -> RunStore:
    store = RunStore.open(tmp_path, create=True)
    store.set_meta("spec", {"dataset": "humaneval", "pipelines": [{"name": "direct"}]})
    store.set_meta("dataset", {"name": "humaneval"})
    cell = CellKey("direct", "humaneval", "HumanEval/0", 0)
    store.prepare_call("c1", "k1", cell, "generate", "generate[0]", None, 1,
                       {"messages": [{"role": "user", "content": text}], "sampling": {}, "seed": 1})
    return store


def test_visible_examples_are_not_leaks_but_hidden_asserts_are(tmp_path, data_dir) -> None:
    dataset = load_dataset("humaneval", data_dir)
    problem = dataset.by_id()["HumanEval/0"]
    hidden = sorted(hidden_asserts(dataset, "HumanEval/0"))
    assert hidden and not any("[1.0, 2.0, 3.0], 0.5" in h for h in hidden)  # the docstring example is visible
    clean = _store_with_prompt(tmp_path / "clean", problem.prompt + "\n" + "\n".join(problem.visible_tests))
    assert check_leakage(clean, dataset).clean
    clean.close()
    leaked_text = problem.prompt + "\nassert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
    leaky = _store_with_prompt(tmp_path / "leaky", leaked_text)
    report = check_leakage(leaky, dataset)
    leaky.close()
    assert not report.clean and report.leaks[0][1] == "HumanEval/0"
    done = subprocess.run([*SOTACHECK, "leakage", str(tmp_path / "leaky")], capture_output=True, text=True)
    assert done.returncode == 2 and "leak(s) of hidden tests into prompts" in done.stderr
    done = subprocess.run([*SOTACHECK, "leakage", str(tmp_path / "clean")], capture_output=True, text=True)
    assert done.returncode == 0 and "clean" in done.stdout


def test_a_problem_statement_never_counts_as_a_leak(data_dir) -> None:
    """Six HumanEval docstrings (52, 56, 61, 63, ...) show calls that check() also asserts; a prompt that quotes
    the statement leaks nothing. Found by a Direct run over all 164 problems, which the check had failed."""
    dataset = load_dataset("humaneval", data_dir)
    statements = {p.id: "".join(p.prompt.split()) for p in dataset.problems}
    assert all(not any(h in statements[pid] for h in hidden_asserts(dataset, pid)) for pid in statements)
    assert sum(bool(hidden_asserts(dataset, pid)) for pid in statements) >= 160  # the check still has work to do
