"""HumanEval+ and MBPP+ from EvalPlus's release files, judged as EvalPlus judges them, base and plus.

**The files.** EvalPlus publishes each benchmark as one JSONL file (``HumanEvalPlus.jsonl.gz``,
``MbppPlus.jsonl.gz``; EvalPlus keeps its downloaded copy as ``~/.cache/evalplus/HumanEvalPlus-v0.1.10.jsonl``
and so on). A row has ``task_id``, ``prompt``, ``entry_point``, ``canonical_solution``, ``base_input`` (the
original benchmark's test inputs, each a list of arguments), ``plus_input`` (EvalPlus's extra inputs) and
``atol`` (the task's float tolerance; 0 for none), beside fields this loader does not need (``contract``,
MBPP+'s ``assertion``...). They carry no expected outputs: as EvalPlus does, the loader runs the canonical
solution on every input to get them (in child processes, never here, cached: ``_evalplus_oracle.py``).
MBPP+ inputs are first converted as EvalPlus's ``mbpp_deserialize_inputs`` does (JSON has no tuples, sets or
complex numbers: the tasks listed in ``_MBPP_INPUTS`` get theirs back), and MBPP+'s not-None tasks expect only
whether the output is None.

**Where a file is found.** ``benchmarks/humaneval/HumanEvalPlus.jsonl`` or ``benchmarks/mbpp/MbppPlus.jsonl``
(plain or ``.gz``) under ``--data-dir``, then ``$SOTACHECK_DATA`` (no copy is bundled); a ``--data-dir`` that is
a file is that file; a hub id (``hub_id``) is read through ``datasets``, and must have the same fields.

**The tests.** Each input is one hidden test, the base inputs first, then the plus inputs, each marked on its
first line (``# evalplus base[3]``, ``# evalplus plus[0]``: ``suites.py``)::

    # evalplus plus[3]
    assert __evalplus__.same(truncate_number(2.0005), 0.000500000000000167, 1e-06)

``__evalplus__`` comes from the problems' ``test_setup``, the rules of ``_evalplus_rules.py``: exact
equality, EvalPlus's float tolerance (the effective ``atol`` of each input is written into its test,
including EvalPlus's switch to 1e-6 once a float was expected in the suite) and its special oracles. A
problem's verdict over all its tests is what EvalPlus calls *plus* (base and extra inputs all pass: the
HumanEval+ / MBPP+ number); its verdict over the ``base`` tests alone is EvalPlus's *base*
(``suites.base_tests`` says which tests those are), and ``sotacheck judge`` reports both.

**Not as EvalPlus.** The limits are the sandbox's (5 s per input, 60 s per problem, both suites in one
process), not EvalPlus's per-input ``max(1 s, 4 × the canonical solution's time)`` and a process per suite;
the plus inputs run after the base ones in the same candidate process.
"""

from __future__ import annotations

import collections
import decimal
import fractions
import gzip
import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sotacheck.core.errors import DataFileNotFound, SotacheckError, describe_json_error
from sotacheck.reruns.benchmarks import _evalplus_oracle as oracle
from sotacheck.reruns.benchmarks import _evalplus_rules as rules
from sotacheck.reruns.benchmarks.datadir import ENV_VAR, find_data_file
from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.benchmarks.suites import SUITES, marker

REQUIRED = ("task_id", "prompt", "entry_point", "canonical_solution", "base_input", "plus_input", "atol")
_RULES_SOURCE = Path(rules.__file__).read_text()
TEST_SETUP = (
    "__evalplus_rules__ = {'__name__': '__evalplus_rules__'}\n"
    f"exec(compile({_RULES_SOURCE!r}, '<evalplus rules>', 'exec'), __evalplus_rules__)\n"
    "__evalplus__ = __evalplus_rules__['EXPORTS']\n"
)
# MBPP+'s tasks that EvalPlus checks its own way, by entry point (``evalplus/eval/_special_oracle.py``).
_MBPP_SET_TASKS = ("similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly", "larg_nnum",
                   "intersection_array", "find_dissimilar", "Diff")
MBPP_NOT_NONE_TASKS = ("check_str", "text_match_three", "text_starta_endb")
_MBPP_ORACLES = {"are_equivalent": "any", "sum_div": "or_zero", "surface_Area": "surface_area",
                 "digit_distance_nums": "digit_distance", **dict.fromkeys(_MBPP_SET_TASKS, "set"),
                 **dict.fromkeys(MBPP_NOT_NONE_TASKS, "not_none")}
_ORACLES_WITH_ARGUMENTS = ("zero", "surface_area", "digit_distance")
Examples = Callable[[str, str], tuple[str, ...]]  # (prompt, entry point) -> visible tests


@dataclass(frozen=True)
class Flavour:
    """One EvalPlus benchmark: the dataset name, its file in a data folder, its task ids, its oracles."""

    dataset: str
    relative: str
    release_name: str
    id_prefix: str
    oracles: Mapping[str, str]


FLAVOURS = {
    "humaneval": Flavour("humaneval-plus", "benchmarks/humaneval/HumanEvalPlus.jsonl", "HumanEvalPlus.jsonl.gz",
                         "HumanEval/", {"find_zero": "zero"}),
    "mbpp": Flavour("mbpp-plus", "benchmarks/mbpp/MbppPlus.jsonl", "MbppPlus.jsonl.gz", "Mbpp/", _MBPP_ORACLES),
}


def _deep_tuple(value: Any) -> Any:
    return tuple(_deep_tuple(v) for v in value) if isinstance(value, list) else value


def _tasks(numbers: str, convert: Callable[[Any], Any]) -> dict[int, Callable[[Any], Any]]:
    return {int(n): convert for n in numbers.split()}


# How MBPP+ inputs get back the types JSON lost, by task number, as EvalPlus's ``mbpp_deserialize_inputs``
# converts them (each function takes one input, the list of arguments). Task 115's empty sets become ``{}``
# (an empty dict) there too.
_MBPP_INPUTS: dict[int, Callable[[Any], Any]] = {
    **_tasks("2 116 132 143 222 261 273 394 399 421 424 429 470 560 579 596 616 630 726 740 744 809",
             lambda args: [tuple(a) for a in args]),
    **_tasks("63 64 70 94 120 237 272 299 400 409 417 438 473 614 780",
             lambda args: [[tuple(x) for x in a] for a in args]),
    **_tasks("75 413 444 753", lambda args: [[tuple(x) for x in args[0]], args[1]]),
    **_tasks("106 750", lambda args: [args[0], tuple(args[1])]),
    115: lambda args: [[set(x) if isinstance(x, list) and x else {} for x in args[0]]],
    124: lambda args: (float(args[0]), complex(args[1])),
    **_tasks("250 405 446 617 720 763 808", lambda args: [tuple(args[0]), args[1]]),
    **_tasks("259 401 445", lambda args: [tuple(tuple(x) for x in a) for a in args]),
    278: lambda args: [tuple(tuple(x) if isinstance(x, list) else x for x in args[0])],
    307: lambda args: [tuple(args[0]), args[1], args[2]],
    722: lambda args: [{key: tuple(value) for key, value in args[0].items()}, *args[1:]],
    252: lambda args: [complex(args[0])],
    **_tasks("580 615 791", _deep_tuple),
}


def literal(value: Any) -> str:
    """Python source that evaluates, in a hidden test, to ``value`` with its exact type (constructors through
    ``__evalplus__``; infinities as ``1e999``), the same text in every process; TypeError for a value that has
    no such form."""
    kind = type(value)
    if value is None or kind is bool or kind is str or kind is bytes:
        return repr(value)
    if kind is int:
        return repr(value) if value.bit_length() <= 12_000 else ("-" if value < 0 else "") + hex(abs(value))
    if kind is float:
        if math.isnan(value):
            return "(1e999 - 1e999)"
        return repr(value) if math.isfinite(value) else ("1e999" if value > 0 else "-1e999")
    if kind is list:
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if kind is tuple:
        return "(" + ", ".join(literal(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if kind is set:  # in a fixed order: a set's own order depends on the process's hash seed
        return "{" + ", ".join(sorted(literal(v) for v in value)) + "}" if value else "{*()}"
    if kind is dict:
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    maker = _MAKERS.get(kind)
    if maker is None:
        raise TypeError(f"a value of type {kind.__name__!r}")
    return f"__evalplus__.{maker(value)}"


_MAKERS: dict[type, Callable[[Any], str]] = {
    complex: lambda v: f"complex({literal(v.real)}, {literal(v.imag)})",
    frozenset: lambda v: f"frozenset({literal(set(v))})",
    bytearray: lambda v: f"bytearray({bytes(v)!r})",
    range: lambda v: f"range({v.start}, {v.stop}, {v.step})",
    fractions.Fraction: lambda v: f"Fraction({literal(v.numerator)}, {literal(v.denominator)})",
    decimal.Decimal: lambda v: f"Decimal({str(v)!r})",
    collections.Counter: lambda v: f"Counter({literal(dict(v))})",
    collections.OrderedDict: lambda v: f"OrderedDict({literal(dict(v))})",
    collections.deque: lambda v: f"deque({literal(list(v))}, {v.maxlen!r})",
    collections.defaultdict: lambda v: "defaultdict({}, {})".format(
        "None" if v.default_factory is None else f"__evalplus__.types[{v.default_factory.__name__!r}]",
        literal(dict(v))),
    type: lambda v: f"types[{v.__name__!r}]",
}


@dataclass(frozen=True)
class _Row:
    where: str
    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    inputs: dict[str, list[Any]]
    atol: float


def _release_file(flavour: Flavour, data_dir: str | os.PathLike[str] | None) -> Path:
    if data_dir is not None and Path(data_dir).is_file():
        return Path(data_dir)
    try:
        return find_data_file(flavour.relative, data_dir)
    except DataFileNotFound as exc:
        exc.args = (f"{exc.args[0]} (EvalPlus's release file {flavour.release_name} is not bundled: put it there, "
                    f"under --data-dir or ${ENV_VAR}, or give the file itself as --data-dir)",)
        raise


def _file_rows(path: Path) -> tuple[list[tuple[str, Any]], str]:
    """(where, row) of each non-blank line, and the SHA-256 of the (decompressed) content."""
    try:
        content = path.read_bytes()
        if path.suffix == ".gz":
            content = gzip.decompress(content)
        text = content.decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise SotacheckError(f"{path}: cannot read as an EvalPlus release file ({exc})") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append((f"{path}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise SotacheckError(f"{path}:{number}: not an EvalPlus release file: invalid JSON "
                                     f"({describe_json_error(exc)})") from None
    return rows, hashlib.sha256(content).hexdigest()


def _hub_rows(hub_id: str) -> tuple[list[tuple[str, Any]], str]:
    import datasets  # heavy, and only for a hub id

    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    try:
        rows = [dict(row) for row in datasets.load_dataset(hub_id, split="test")]
    except Exception as exc:  # datasets raises many types; the user needs the source named
        raise SotacheckError(f"cannot load {hub_id!r} through datasets: {exc}") from None
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()
    return [(f"{hub_id} row {number}", row) for number, row in enumerate(rows, start=1)], digest


def _parse_row(flavour: Flavour, where: str, row: Any) -> _Row:
    if not isinstance(row, dict):
        raise SotacheckError(f"{where}: not an EvalPlus release file: expected a JSON object, got {type(row).__name__}")
    task_id = row.get("task_id")
    where = f"{where} (task_id {task_id!r})" if task_id is not None else where
    missing = [field for field in REQUIRED if field not in row]
    if missing:
        raise SotacheckError(f"{where}: not an EvalPlus {flavour.dataset} row: no " +
                             ", ".join(f"`{field}`" for field in missing))
    if not isinstance(task_id, str) or not task_id.startswith(flavour.id_prefix):
        raise SotacheckError(f"{where}: not a {flavour.dataset} task id (expected {flavour.id_prefix}N)")
    for field in ("prompt", "entry_point", "canonical_solution"):
        if not isinstance(row[field], str):
            raise SotacheckError(f"{where}: `{field}` must be a string, got {type(row[field]).__name__}")
    if not row["entry_point"].isidentifier():
        raise SotacheckError(f"{where}: `entry_point` {row['entry_point']!r} is not a function name")
    atol = row["atol"]
    if type(atol) not in (int, float) or not atol >= 0:
        raise SotacheckError(f"{where}: `atol` must be a number of at least 0, got {atol!r}")
    number = task_id.rpartition("/")[2]
    convert = _MBPP_INPUTS.get(int(number)) if flavour.id_prefix == "Mbpp/" and number.isdigit() else None
    inputs = {}
    for suite in SUITES:
        field = f"{suite}_input"
        value = row[field]
        if isinstance(value, str):  # a hub copy may store the inputs as JSON text
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise SotacheckError(f"{where}: `{field}` is text that is not JSON") from None
        if not isinstance(value, list) or not all(isinstance(args, list) for args in value):
            raise SotacheckError(f"{where}: `{field}` must be a list of argument lists")
        try:
            inputs[suite] = [convert(args) for args in value] if convert else value
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            raise SotacheckError(f"{where}: `{field}` does not have the shape EvalPlus converts for this task "
                                 f"({type(exc).__name__}: {exc})") from None
    return _Row(where, task_id, row["prompt"], row["entry_point"], row["canonical_solution"], inputs, atol)


def _expected(flavour: Flavour, rows: list[_Row], digest: str) -> dict[str, oracle.Outputs]:
    """The canonical solutions' outputs, from the cache or computed (one-line error naming the row)."""
    key = oracle.cache_key(digest, flavour.dataset, Path(__file__).read_text())
    cached = oracle.read_cache(key)
    if cached is not None and all(row.task_id in cached for row in rows):
        return cached
    jobs = [{"key": row.task_id, "code": row.prompt + row.canonical_solution, "entry_point": row.entry_point,
             "inputs": row.inputs, "not_none": row.entry_point in MBPP_NOT_NONE_TASKS and flavour.id_prefix == "Mbpp/"}
            for row in rows]
    outputs, failures = oracle.canonical_outputs(jobs)
    for row in rows:
        if row.task_id not in outputs:
            raise SotacheckError(f"{row.where}: cannot compute the expected outputs: {failures[row.task_id]}")
    oracle.write_cache(key, outputs)
    return outputs


def _hidden_tests(flavour: Flavour, row: _Row, expected: oracle.Outputs) -> tuple[str, ...]:
    check = flavour.oracles.get(row.entry_point)
    tests = []
    for suite in SUITES:
        atol: float = row.atol
        for index, (args, output) in enumerate(zip(row.inputs[suite], expected[suite], strict=True)):
            if check != "zero" and atol == 0 and rules.is_floats(output):
                atol = rules.ENFORCED_ATOL  # EvalPlus's tolerance, from here to the end of the suite
            try:
                call = f"{row.entry_point}({', '.join(literal(arg) for arg in args)})"
                if check is None:
                    body = f"__evalplus__.same({call}, {literal(output)}, {atol!r})"
                else:
                    arguments = literal(tuple(args)) if check in _ORACLES_WITH_ARGUMENTS else "()"
                    body = (f"__evalplus__.special({check!r}, {call}, {'None' if check == 'zero' else literal(output)}, "
                            f"{atol!r}, {arguments})")
            except TypeError as exc:
                raise SotacheckError(f"{row.where}: {suite}_input[{index}] or its expected output is {exc}, "
                                     "which a test cannot spell") from None
            tests.append(f"{marker(suite, index)}\nassert {body}\n")
    return tuple(tests)


def _visible_tests(flavour: Flavour, row: _Row, examples: Examples) -> tuple[str, ...]:
    """What the prompt itself shows: its ``>>>`` examples (HumanEval+), its ``assert`` lines (MBPP+)."""
    if flavour.id_prefix == "HumanEval/":
        return examples(row.prompt, row.entry_point)
    return tuple(line.strip() for line in row.prompt.splitlines() if line.strip().startswith("assert "))


def load_evalplus(benchmark: str, data_dir: str | os.PathLike[str] | None = None, hub_id: str | None = None, *,
                  examples: Examples) -> Dataset:
    """HumanEval+ (``benchmark="humaneval"``) or MBPP+ (``"mbpp"``) from an EvalPlus release file (see the
    module docstring for where it is looked up) or from ``hub_id``; one-line ``SotacheckError`` naming the
    file and row of anything it cannot use. ``examples(prompt, entry_point)`` gives a HumanEval+ prompt's
    visible tests from its ``>>>`` examples (the catalog, ``catalog.HUMANEVAL_PLUS``, passes the rule HumanEval's
    visible tests fall back to, ``loaders.docstring_examples``)."""
    flavour = FLAVOURS[benchmark]
    if hub_id:
        source = hub_id
        raw, digest = _hub_rows(hub_id)
    else:
        path = _release_file(flavour, data_dir)
        source = str(path)
        raw, digest = _file_rows(path)
    if not raw:
        raise SotacheckError(f"{source}: no rows: not an EvalPlus release file")
    rows = [_parse_row(flavour, where, row) for where, row in raw]
    seen: set[str] = set()
    for row in rows:
        if row.task_id in seen:
            raise SotacheckError(f"{row.where}: task_id {row.task_id!r} appears twice")
        seen.add(row.task_id)
    expected = _expected(flavour, rows, digest)
    problems = tuple(Problem(
        id=row.task_id, dataset=flavour.dataset, prompt=row.prompt, entry_point=row.entry_point,
        visible_tests=_visible_tests(flavour, row, examples), hidden_tests=_hidden_tests(flavour, row, expected[row.task_id]),
        source=source, canonical_solution=row.canonical_solution, test_setup=TEST_SETUP,
    ) for row in rows)
    return Dataset(flavour.dataset, problems, (source,))
