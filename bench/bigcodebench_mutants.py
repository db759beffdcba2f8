"""Wrong programs for BigCodeBench's fidelity check: each task's canonical solution with one small change, made
deterministically (seeded) with ``ast``, written as a samples file both judges read (``task_id``, ``solution``).

One mutation per task where the task's own code offers a site (the entry point's body and the helpers after the
prompt; never the prompt's imports): a comparison flipped (``<`` and ``<=``, ``==`` and ``!=``...), an arithmetic
operator swapped (``+`` and ``-``, ``*`` and ``//``...), ``and`` and ``or`` swapped, an integer constant moved by
one, a ``not`` dropped, a returned value replaced by ``None``. Each mutant parses and differs from the canonical
program; some are equivalent to it (a test cannot tell), which both judges should then pass alike. Mutation
libraries (mutmut, cosmic-ray) drive a test runner over a project's files; here one mutant per program is wanted,
in memory, so the few operators are written out.

Usage: ``python bench/bigcodebench_mutants.py OUT.jsonl [--seed 0]``
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import random
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "data" / "benchmarks" / "bigcodebench" / "BigCodeBench.jsonl.gz"
_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
            ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
               ast.Div: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult}


def _sites(tree: ast.Module, first_line: int) -> list[tuple[str, ast.AST]]:
    """Every place one operator can change, in the program's own lines (from ``first_line`` on)."""
    found: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) < first_line:
            continue
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _COMPARE:
            found.append(("compare", node))
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            found.append(("arithmetic", node))
        elif isinstance(node, ast.BoolOp):
            found.append(("boolean", node))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            found.append(("constant", node))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            found.append(("not", node))
        elif isinstance(node, ast.Return) and node.value is not None and \
                not (isinstance(node.value, ast.Constant) and node.value.value is None):
            found.append(("return", node))
    return found


def _mutate(kind: str, node: ast.AST) -> None:
    if kind == "compare":
        assert isinstance(node, ast.Compare)
        node.ops[0] = _COMPARE[type(node.ops[0])]()
    elif kind == "arithmetic":
        assert isinstance(node, ast.BinOp)
        node.op = _ARITHMETIC[type(node.op)]()
    elif kind == "boolean":
        assert isinstance(node, ast.BoolOp)
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "constant":
        assert isinstance(node, ast.Constant)
        node.value = node.value + 1
    elif kind == "not":
        assert isinstance(node, ast.UnaryOp)
        node.op = ast.UAdd()  # ``+x`` for ``not x``: the truth test dropped (a non-number raises, as wrong code may)
    elif kind == "return":
        assert isinstance(node, ast.Return)
        node.value = ast.Constant(None)


def mutant(row: dict[str, str], rng: random.Random) -> tuple[str, str] | None:
    """One mutant of the task's canonical program and what was changed, or None where nothing can change."""
    program = row["complete_prompt"] + row["canonical_solution"]
    first_line = row["complete_prompt"].count("\n") + 1
    try:
        original = ast.unparse(ast.parse(program))
    except SyntaxError:
        return None
    order = list(range(len(_sites(ast.parse(program), first_line))))  # ast.walk lists sites in one order
    rng.shuffle(order)
    for index in order:
        tree = ast.parse(program)
        kind, node = _sites(tree, first_line)[index]
        _mutate(kind, node)
        changed = ast.unparse(ast.fix_missing_locations(tree))
        if changed != original:
            return changed, kind
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with gzip.open(BUNDLED, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    kinds: dict[str, int] = {}
    lines = []
    for number, row in enumerate(rows):
        made = mutant(row, random.Random(args.seed * 100_003 + number))
        if made is None:
            continue
        program, kind = made
        kinds[kind] = kinds.get(kind, 0) + 1
        lines.append(json.dumps({"task_id": row["task_id"], "solution": program, "mutation": kind}) + "\n")
    args.out.write_text("".join(lines))
    print(f"{len(lines)} mutants of {len(rows)} tasks in {args.out}: {dict(sorted(kinds.items()))}")


if __name__ == "__main__":
    main()
