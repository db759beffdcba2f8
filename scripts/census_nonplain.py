"""Census for issue #18: what crosses the boundary between the tests and the candidate, on canonical solutions.

For every problem of HumanEval, HumanEval-ET and MBPP, runs the canonical program and its hidden tests
in-process (a forked child per problem, 20 s alarm), with every callable name the tests can see wrapped,
and records per test: arguments that are not plain data (callables, other objects), mutable arguments
the call changed, return values that are not plain data. Not part of sotacheck: a measurement script.
Run: .venv/bin/python scripts/census_nonplain.py > census.json (figures: README, "What the judge guarantees")
"""

import collections
import copy
import datetime
import decimal
import fractions
import json
import os
import signal
import sys
import types

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.sandbox.completion import assemble_program

EXACT = {
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    list,
    tuple,
    dict,
    set,
    frozenset,
    fractions.Fraction,
    decimal.Decimal,
    datetime.date,
    datetime.datetime,
    datetime.time,
    datetime.timedelta,
    collections.OrderedDict,
    collections.Counter,
    collections.deque,
    collections.defaultdict,
}


def nonplain(value, depth=0):
    if depth > 60:
        return "deep"
    t = type(value)
    if t not in EXACT:
        return t.__name__
    if t in (list, tuple, set, frozenset, collections.deque):
        for v in value:
            r = nonplain(v, depth + 1)
            if r:
                return r
    if isinstance(value, dict):
        for k, v in value.items():
            r = nonplain(k, depth + 1) or nonplain(v, depth + 1)
            if r:
                return r
    return None


def census(problem):
    program = assemble_program(problem.prompt, problem.canonical_solution or "", problem.entry_point)
    ns = {"__name__": "candidate"}
    exec(compile(program, "<candidate>", "exec"), ns)
    log = []

    def wrap(name, fn):
        def wrapper(*args, **kwargs):
            entry = {"name": name}
            bad = [nonplain(a) for a in list(args) + list(kwargs.values())]
            bad = [b for b in bad if b]
            if bad:
                entry["arg_nonplain"] = bad
            try:
                before = copy.deepcopy((args, kwargs))
            except Exception:
                before = None
            result = fn(*args, **kwargs)
            if before is not None and repr(before) != repr((args, kwargs)):
                entry["mutated_args"] = True
            r = nonplain(result)
            if r:
                entry["result_nonplain"] = r
            if len(entry) > 1:
                log.append(entry)
            return result

        return wrapper

    test_ns = {"__name__": "__test__"}
    for name, value in ns.items():
        if name.startswith("__"):
            continue
        test_ns[name] = wrap(name, value) if callable(value) and not isinstance(value, types.ModuleType) else value
    out = []
    for index, test in enumerate(problem.hidden_tests):
        log.clear()
        try:
            if index == 0 and problem.test_setup:
                exec(problem.test_setup, test_ns)
            exec(compile(test, "<test>", "exec"), test_ns)
            status = "passed"
        except BaseException as exc:
            status = type(exc).__name__
        out.append({"test": index, "status": status, "events": list(log)})
    return out


def run(problem):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(20)
        try:
            res = census(problem)
        except BaseException as exc:
            res = [{"error": repr(exc)}]
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.waitpid(pid, 0)
    return json.loads(data) if data else [{"error": "no report"}]


summary = {}
for name in ("humaneval", "humaneval-et", "mbpp"):
    data = load_dataset(name)
    per = {}
    for p in data.problems:
        res = run(p)
        hits = [t for t in res if t.get("events") or t.get("error")]
        if hits:
            per[p.id] = hits
    kinds = collections.Counter()
    for hits in per.values():
        for t in hits:
            for e in t.get("events", []):
                for k in ("arg_nonplain", "mutated_args", "result_nonplain"):
                    if k in e:
                        kinds[(k, str(e[k]))] += 1
    summary[name] = {
        "problems_with_events": len(per),
        "tests_with_events": sum(len(h) for h in per.values()),
        "kinds": {f"{k}={v}": n for (k, v), n in kinds.items()},
        "detail": per,
    }
    print(name, len(per), dict(kinds), file=sys.stderr)
json.dump(summary, sys.stdout, indent=1)
