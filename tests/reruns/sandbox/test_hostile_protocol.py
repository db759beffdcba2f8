"""Wrong programs that speak the channel's protocol themselves (issue #45), run through the real judge, by
class, several variants each: impersonation of every message of both protocols (the loading report, call
replies, a standard-input program's exit report; at import, from a thread, at exit, after a fork), decoder
cost bombs of each container type, trusted-side exceptions from every text and number the candidate
controls, and slot poisoning (each hostile program is followed by a correct one on the same slot, which must
pass). No wrong program passes; every DoS verdict comes within the test limit plus 2 s."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sotacheck.reruns.sandbox import ExecutionResult, SandboxLimits, execute
from sotacheck.reruns.sandbox.child._procs import live_processes_of
from sotacheck.reruns.sandbox.execution import SANDBOX_UID_BASE
from sotacheck.reruns.sandbox.slots import SlotLease
from tests.reruns.sandbox.protocol_programs import GOOD, GOOD_PROGRAM, PROGRAM_TESTS, TESTS

IS_ROOT = os.geteuid() == 0
LIMIT_S = 2.0
LIMITS = SandboxLimits(test_timeout_s=LIMIT_S, problem_timeout_s=20, memory_mb=1024)
_LEASE = SlotLease(1)
SLOT = _LEASE.slots[0]
UID = SANDBOX_UID_BASE + SLOT


def run(code: str, tests: list[str] | None = None, entry_point: str | None = "square") -> tuple[ExecutionResult, float]:
    started = time.monotonic()
    result = execute(textwrap.dedent(code), tests or TESTS, entry_point=entry_point, limits=LIMITS, slot=SLOT)
    return result, time.monotonic() - started


def run_program(code: str) -> tuple[ExecutionResult, float]:
    return run(code, PROGRAM_TESTS, entry_point=None)


def assert_safe_text(result: ExecutionResult) -> None:
    """Every text of the result encodes to UTF-8 and holds no control character but newline and tab."""
    texts = [result.exception_type, result.message, result.feedback, result.output_tail,
             *(part for test in result.tests for part in (test.exception_type, test.message, test.feedback, test.output))]
    for text in filter(None, texts):
        text.encode("utf-8")
        assert not any(ord(char) < 32 and char not in "\n\t" for char in text), repr(text[:200])


def assert_not_passed_and_slot_clean(result: ExecutionResult, elapsed: float, program: bool = False) -> None:
    assert result.status != "passed", result
    assert result.exception_type != "SandboxFailure", result  # no exception on the trusted side
    assert elapsed <= LIMIT_S + 2, f"{elapsed:.1f} s"
    assert_safe_text(result)
    after = run_program(GOOD_PROGRAM) if program else run(GOOD)
    assert after[0].status == "passed", after[0]  # the slot is clean for the next program


# --- impersonation: function tasks -----------------------------------------------------------------------

# The candidate process's own protocol code, used by the program to serve the tests itself: a loading report
# naming what it likes (a ``math`` of its own, which a test reading ``math`` unimported would otherwise get),
# then every call answered by the real answering code, on its own objects.
IMPOSTOR = """
import marshal, os, _wire, _candidate
class Liar:
    def isclose(self, *args, **kwargs):
        return True
def square(x):
    return x + x
def impostor():
    objects = _candidate._Objects()
    names = [["square", objects.handle(square)], ["math", objects.handle(Liar())], ["expected", 9]]
    _wire.send(3, _wire.dumps(["loaded", names]))
    decode = _wire.decoder(objects.lookup, _candidate._import)
    while True:
        request = _wire.receive(3, 1 << 28)
        if request is None:
            os._exit(0)
        call = (marshal.loads(request[len(_wire.CALL_MARKER):]) if request.startswith(_wire.CALL_MARKER)
                else decode(request))
        _wire.send(3, _wire.dumps(_candidate._answer(call, objects, 2000)))
"""
MATH_TESTS = ["assert math.isclose(square(3), 9)", "assert math.isclose(square(4), 16)"]
WRITE = "import os\ndef forge(message):\n    data = message.encode()\n    os.write(3, len(data).to_bytes(4, 'little') + data)\n"
FUNCTION_IMPERSONATION = {
    "a loading report naming a module of its own, at import": IMPOSTOR + "impostor()\n",
    "the same from a thread, the main thread waiting": IMPOSTOR + (
        "import threading, time\nthreading.Thread(target=impostor).start()\ntime.sleep(60)\n"),
    "the same from a forked child, the parent waiting": IMPOSTOR + (
        "import time\nif os.fork() == 0:\n    impostor()\ntime.sleep(60)\n"),
    "the same after the genuine report, from the function": IMPOSTOR.replace("def square(x):\n    return x + x",
                                                                           "def square(x):\n    impostor()"),
    "a second loading report at import, as the genuine one follows": WRITE + (
        "forge('[\"loaded\",[[\"expected\",9]]]')\ndef square(x):\n    return x + x\n"),
    "a loading report from an atexit function": WRITE + (
        "import atexit\natexit.register(forge, '[\"loaded\",[]]')\ndef square(x):\n    return x + x\n"),
    "a reply with the right value, ahead of the call, from a thread": WRITE + (
        "import threading\nthreading.Thread(target=forge, args=('[\"ok\",1,9,[]]',)).start()\n"
        "def square(x):\n    return x + x\n"),
    "a reply with the right value, then the genuine one": WRITE + (
        "def square(x):\n    forge('[\"ok\",1,9,[]]')\n    return x + x\n"),
    "a reply of another call's number": WRITE + (
        "def square(x):\n    forge('[\"ok\",7,9,[]]')\n    import time; time.sleep(60)\n"),
    "a reply from a forked child, the parent returning": WRITE + (
        "def square(x):\n    if os.fork() == 0:\n        forge('[\"ok\",1,9,[]]')\n        os._exit(0)\n    return x + x\n"),
    "a reply that changes an argument it was not given": WRITE + (
        "def square(x):\n    forge('[\"ok\",1,9,[[5,[1]]]]')\n    import time; time.sleep(60)\n"),
    "a reply and then an exit": WRITE + "def square(x):\n    forge('[\"ok\",1,9,[]]')\n    os._exit(0)\n",
}


@pytest.mark.parametrize("name", list(FUNCTION_IMPERSONATION))
def test_a_program_speaking_for_the_candidate_process_is_not_passed(name: str) -> None:
    tests = MATH_TESTS if "module of its own" in name else TESTS
    result, elapsed = run(FUNCTION_IMPERSONATION[name], tests)
    assert_not_passed_and_slot_clean(result, elapsed)


def test_the_tests_see_only_the_names_the_job_allows() -> None:
    """The impostor's ``math`` and ``expected`` never reach the tests, even with a correct function: the
    loading report is checked on the trusted side (an error, since the genuine process never names them)."""
    result, _ = run(IMPOSTOR.replace("return x + x", "return x * x") + "impostor()\n", MATH_TESTS)
    assert (result.status, result.exception_type) == ("error", "ProtocolError"), result
    assert "math" in (result.message or "")


# --- impersonation: standard-input programs ---------------------------------------------------------------

RAN = "'[\"ran\",0,null,false]'"
PROGRAM_IMPERSONATION = {
    "an exit report, then a loop": WRITE + f"print(42, flush=True)\nforge({RAN})\nwhile True:\n    pass\n",
    "an exit report, then status 3": WRITE + f"print(42, flush=True)\nforge({RAN})\nos._exit(3)\n",
    "an exit report, then a crash": WRITE + (
        f"print(42, flush=True)\nforge({RAN})\nimport signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"),
    "an exit report from a thread, the main thread looping": WRITE + (
        f"import threading\nprint(42, flush=True)\nthreading.Thread(target=forge, args=({RAN},)).start()\n"
        "while True:\n    pass\n"),
    "an exit report from a forked child, the parent looping": WRITE + (
        f"print(42, flush=True)\nif os.fork() == 0:\n    forge({RAN})\n    os._exit(0)\nwhile True:\n    pass\n"),
    "an exit report at exit, then status 3": WRITE + (
        f"import atexit, sys\nprint(42)\natexit.register(forge, {RAN})\nsys.exit(3)\n"),
    "a second loading report, then the right answer": WRITE + "forge('[\"loaded\",[]]')\nprint(42)\n",
    "an exception's description, then status 0": WRITE + (
        "forge('[\"raised\",{\"~\":\"d\",\"v\":[[\"exception_type\",\"E\"]]},false]')\nprint(42)\n"),
    "garbage on the channel, then the right answer": WRITE + "forge('not json')\nprint(42)\n",
    "half a message, then the right answer": "import os\nos.write(3, (100).to_bytes(4, 'little') + b'[')\nprint(42)\n",
    "the right answer and a raise, the description replaced": WRITE + (
        "import _wire\n_wire.send = lambda fd, data: forge('[\"ran\",0,null,false]')\nprint(42)\nraise SystemExit(4)\n"),
}


@pytest.mark.parametrize("name", list(PROGRAM_IMPERSONATION))
def test_a_program_reporting_its_own_exit_is_not_passed(name: str) -> None:
    """Each prints the right answer: only its real end (observed by the launcher) decides."""
    result, elapsed = run_program(PROGRAM_IMPERSONATION[name])
    assert_not_passed_and_slot_clean(result, elapsed, program=True)


def test_a_program_that_ends_badly_is_judged_by_how_it_ended() -> None:
    """The status comes from the process's real end; a forged report beside it is a ``ProtocolError``."""
    looping = run_program(PROGRAM_IMPERSONATION["an exit report, then a loop"])[0]
    assert looping.status == "timeout", looping
    forged = run_program(PROGRAM_IMPERSONATION["an exit report, then status 3"])[0]
    assert (forged.status, forged.exception_type) == ("error", "ProtocolError"), forged
    three = run_program("import os\nprint(42, flush=True)\nos._exit(3)\n")[0]
    assert (three.status, three.exception_type) == ("error", "NonZeroExit"), three
    crash = run_program("import os, signal\nprint(42, flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)\n")[0]
    assert (crash.status, crash.exception_type) == ("crashed", "SIGSEGV"), crash
    raised = run_program("print(42)\nraise KeyError('k')\n")[0]
    assert (raised.status, raised.exception_type) == ("error", "KeyError"), raised
    assert run_program("import os, sys\nprint(42)\nsys.stdout.flush()\nif os.fork() == 0:\n    raise ValueError\n")[0].passed
    assert run_program("import os\nprint(42, flush=True)\nos._exit(0)\n")[0].passed


# --- decoder cost bombs ------------------------------------------------------------------------------------

P = 2 ** 61 - 1  # every multiple of it hashes to 0
COLLIDING = f"[i * {P} for i in range(1, 100_000)]"  # unchecked, a set of them: ~5e9 probes
BOMB_VALUES = {  # each a Python expression of the JSON a forged reply carries, every member of one hash
    "a set": f"{{'~': 's', 'v': {COLLIDING}}}",
    "a frozenset": f"{{'~': 'f', 'v': {COLLIDING}}}",
    "a dict's keys": f"{{'~': 'd', 'v': [[k, 0] for k in {COLLIDING}]}}",
    "an OrderedDict's keys": f"{{'~': 'od', 'v': [[k, 0] for k in {COLLIDING}]}}",
    "a Counter's keys": f"{{'~': 'C', 'v': [[k, 1] for k in {COLLIDING}]}}",
    "a defaultdict's keys": f"{{'~': 'dd', 'v': ['int', [[k, 0] for k in {COLLIDING}]]}}",
    "a set of tuples": f"{{'~': 's', 'v': [{{'~': 't', 'v': [k]}} for k in {COLLIDING}]}}",
    # hash(complex) is hash(real) + 1000003 * hash(imag): every complex(1000003 i, -i) hashes to 0
    "a set of complex numbers": "{'~': 's', 'v': [{'~': 'c', 'v': [1000003.0 * i, -float(i)]} for i in range(100_000)]}",
    # hash(Fraction(a, b)) is a * b**-1 mod P: every (kP + 1) / 2 hashes alike
    "a set of Fractions": f"{{'~': 's', 'v': [{{'~': 'Q', 'v': [k + 1, 2]}} for k in {COLLIDING}]}}",
    "a set of frozensets": f"{{'~': 's', 'v': [{{'~': 'f', 'v': [k]}} for k in {COLLIDING}]}}",
}
BOMBS = {name: ("import json, os\ndef square(x):\n"
                f"    data = json.dumps(['ok', 1, {value}, []]).encode()\n"
                "    os.write(3, len(data).to_bytes(4, 'little') + data)\n"
                "    __import__('time').sleep(60)\n") for name, value in BOMB_VALUES.items()}
# Test code that builds a set of what the candidate returned (as many benchmarks' tests do): the list is
# plain data, the hashing is the test's; the backstop ends it.
HASHING_TESTS = ["assert set(square(3)) == {9}"]
BOMBS["a list the test makes a set of"] = f"def square(x):\n    return {COLLIDING}\n"


FAST_BOMBS = ("a set", "a Counter's keys", "a set of tuples", "a list the test makes a set of")


@pytest.mark.parametrize("name", [name if name in FAST_BOMBS else pytest.param(name, marks=pytest.mark.slow)
                                  for name in BOMBS])
def test_a_hash_flood_is_refused_within_the_limit(name: str) -> None:
    """Refused by the decoder before the work (a ``ProtocolError``); the test's own ``set()`` of a plain list
    is ended by the backstop (a ``timeout``)."""
    result, elapsed = run(BOMBS[name], HASHING_TESTS if "the test makes" in name else None)
    expected = ("timeout", "Timeout") if "the test makes" in name else ("error", "ProtocolError")
    assert (result.status, result.exception_type) == expected, result
    assert_not_passed_and_slot_clean(result, elapsed)


def test_a_set_reply_of_one_hash_is_a_protocol_error() -> None:
    result, elapsed = run(BOMBS["a set"])
    assert (result.exception_type, elapsed < LIMIT_S) == ("ProtocolError", True), (result, elapsed)


# --- trusted-side exceptions from the candidate's text and numbers ----------------------------------------

TEXTS = {
    "a lone surrogate in an exception message": "def square(x):\n    raise ValueError('\\ud800 \\x1b[2J')\n",
    "a lone surrogate in a cached source line": (
        "import linecache\ndef square(x):\n    raise ValueError('boom')\n"
        "linecache.cache['<candidate>'] = (1, None, ['\\ud800\\n'] * 5, '<candidate>')\n"),
    "a lone surrogate in the exception's type name": (
        "def square(x):\n    raise type('E\\ud800', (Exception,), {})('m')\n"),
    "a lone surrogate in the value an assert shows": "def square(x):\n    return '\\ud800\\r\\x07'\n",
    "a lone surrogate while loading": "raise ValueError('\\udcff')\ndef square(x):\n    return x * x\n",
    "control characters printed": (
        "import sys\ndef square(x):\n    sys.stdout.write('\\x1b]0;owned\\x07\\r\\x00')\n    return x + x\n"),
    "undecodable bytes printed": "import os\ndef square(x):\n    os.write(1, b'\\xff\\xfe\\xed\\xa0\\x80')\n    return x + x\n",
}
FORGED_REPLIES = {  # each a raise or load report with fields of the wrong type or size
    "a 5,000-digit line number": '["raise",1,"ValueError","m",[["<candidate>",' + "9" * 5000 + ',"f","x",null,null,null]],false]',
    "an infinite line number": '["raise",1,"ValueError","m",[["<candidate>",1e999,"f","x",null,null,null]],false]',
    "a message that is a number": '["raise",1,"ValueError",' + "7" * 5000 + ',[],false]',
    "a type name that is a list": '["raise",1,["E"],"m",[],false]',
    "a frame that is a string": '["raise",1,"ValueError","m",["frame"],false]',
    "a memory flag that is a string": '["raise",1,"MemoryError","m",[],"yes"]',
    "a huge column": '["raise",1,"ValueError","m",[["<candidate>",1,"f","x",1,' + "9" * 30 + ',2]],false]',
}
TEXTS.update({name: WRITE + f"def square(x):\n    forge({reply!r})\n    import time; time.sleep(60)\n"
              for name, reply in FORGED_REPLIES.items()})
# A well-formed reply whose every text is unsafe: made safe, not refused.
TEXTS["a reply of surrogate file, function and line"] = WRITE + (
    "def square(x):\n"
    "    forge('[\"raise\",1,\"ValueError\",\"m\",[[\"\\\\ud800\",1,\"\\\\udc00\",\"\\\\ud800x\",1,0,1]],false]')\n"
    "    os._exit(0)\n")
ASSERT_MESSAGES = ["assert square(3) == 9, square(3)", "assert square(4) == 16, f'got {square(4)}'"]


@pytest.mark.parametrize("name", list(TEXTS))
def test_the_candidates_text_and_numbers_never_raise_on_the_trusted_side(name: str) -> None:
    result, elapsed = run(TEXTS[name], ASSERT_MESSAGES if "assert shows" in name else None)
    assert_not_passed_and_slot_clean(result, elapsed)
    if name in FORGED_REPLIES:
        assert result.exception_type == "ProtocolError", result


PROGRAM_TEXTS = {
    "a 5,000-digit number": "print('4' + '2' * 5000)\n",
    "a 5,000-digit number with a fraction": "print('42' + '0' * 5000 + '.5')\n",
    "a huge exponent": "print('42e' + '9' * 5000)\n",
    "a million hexadecimal digits": "print('0x' + 'f' * 1_000_000)\n",
    "a million binary fraction digits": "print('0b1.' + '1' * 1_000_000)\n",
    "control characters and surrogates": "import os\nos.write(1, b'4\\x1b[2J\\r\\xed\\xa0\\x80 2')\n",
    "a lone surrogate in the exception": "print(42)\nraise ValueError('\\ud800')\n",
}


@pytest.mark.parametrize("name", list(PROGRAM_TEXTS))
def test_a_programs_output_never_raises_on_the_trusted_side(name: str) -> None:
    result, elapsed = run_program(PROGRAM_TEXTS[name])
    assert_not_passed_and_slot_clean(result, elapsed, program=True)


# --- written against the new code, by one who read it ----------------------------------------------------

AGAINST_THE_NEW_CODE = {
    "the genuine loading report rewritten in its own process to add a name": IMPOSTOR + (
        "_send = _wire.send\n"
        "def _rewrite(fd, data):\n"
        "    message = json.loads(data)\n"
        "    if message[0] == 'loaded':\n"
        "        message[1].append(['math', {'~': 'h', 'v': _candidate._Objects().handle(Liar())['v'], 'n': 'Liar'}])\n"
        "        data = _wire.dumps(message)\n"
        "    _send(fd, data)\n"
        "import json\n_wire.send = _rewrite\n"),
    "a change to an argument the call did not name": WRITE + (
        "def square(x):\n    forge('[\"ok\",1,9,[[0,[1]]]]')\n    import time; time.sleep(60)\n"),
    "a sequence number that is True": WRITE + "def square(x):\n    forge('[\"ok\",true,9,[]]')\n    os._exit(0)\n",
    "a load error claiming it passed": WRITE + "forge('[\"load_error\",\"passed\",{}]')\nos._exit(0)\n",
    "an exit report sent on every other descriptor": (
        "import os\ndata = b'{\"exited\": 0, \"cpu_s\": 0}'\nfor fd in range(4, 1024):\n    try:\n"
        "        os.write(fd, data)\n    except OSError:\n        pass\ndef square(x):\n    while True:\n        pass\n"),
    "a reply of the right value for every call, from a thread reading the calls": WRITE + (
        "import threading, _wire, marshal\n"
        "def answer():\n"
        "    while True:\n"
        "        request = _wire.receive(3, 1 << 20)\n"
        "        if request is None:\n            return\n"
        "        call = marshal.loads(request[len(_wire.CALL_MARKER):])\n"
        "        forge(_wire.dumps(['ok', call[5], 9, []]).decode())\n"
        "threading.Thread(target=answer, daemon=True).start()\n"
        "def square(x):\n    return x + x\n"),
}
PROGRAMS_AGAINST_THE_NEW_CODE = {
    "the harness's exit made to report status 0 after the wrong answer's crash": (
        "import _stdin_tests, os\nprint(41)\n_stdin_tests._finish = lambda streams: os._exit(0)\n"
        "raise ValueError\n"),
    "a main thread that ends while another prints the answer late": (
        "import ctypes, threading, time, os\n"
        "def late():\n    time.sleep(0.2)\n    os.write(1, b'42\\n')\n    time.sleep(30)\n"
        "threading.Thread(target=late).start()\n"
        "ctypes.CDLL(None).syscall({'x86_64': 60, 'aarch64': 93}.get(os.uname().machine, 60), 0)\n"),
    "the answer printed by a daemon child after the program exits": (
        "import os, time\nif os.fork() == 0:\n    time.sleep(0.3)\n    print(42, flush=True)\n    os._exit(0)\n"),
}


@pytest.mark.parametrize("name", list(AGAINST_THE_NEW_CODE))
def test_wrong_programs_written_against_the_new_code_are_not_passed(name: str) -> None:
    tests = MATH_TESTS if "add a name" in name else TESTS
    result, elapsed = run(AGAINST_THE_NEW_CODE[name], tests)
    assert_not_passed_and_slot_clean(result, elapsed)


@pytest.mark.parametrize("name", list(PROGRAMS_AGAINST_THE_NEW_CODE))
def test_programs_written_against_the_new_code_are_not_passed(name: str) -> None:
    result, elapsed = run_program(PROGRAMS_AGAINST_THE_NEW_CODE[name])
    assert_not_passed_and_slot_clean(result, elapsed, program=True)


# --- after the judge exits, and in the command's plain text ------------------------------------------------

@pytest.mark.slow  # ~10 s: three judge processes
@pytest.mark.skipif(not IS_ROOT, reason="the slot's own uid needs root")
def test_no_process_of_a_sandbox_uid_is_left_after_the_judge_exits() -> None:
    """The stalling and poisoning programs, each in a judge process of its own that exits right after: no
    process of the slot's uid is left (the launcher stops them when its supervisor goes)."""
    script = ("import sys, textwrap\nfrom sotacheck.reruns.sandbox import SandboxLimits, execute\n"
              "from sotacheck.reruns.sandbox.slots import SlotLease\n"
              "code, tests = sys.argv[1], sys.argv[2:]\n"
              "with SlotLease(1) as lease:\n"
              "    print(lease.slots[0] + 61000, execute(code, tests, entry_point='square', slot=lease.slots[0],"
              " limits=SandboxLimits(test_timeout_s=2)).status)\n")
    for code, tests in [(BOMBS["a list the test makes a set of"], HASHING_TESTS), (BOMBS["a set"], TESTS),
                        ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n"
                         "def square(x):\n    while True:\n        pass\n", TESTS)]:
        done = subprocess.run([sys.executable, "-c", script, code, *tests], capture_output=True, text=True, timeout=60)
        uid, status = done.stdout.split()
        assert status != "passed"
        time.sleep(0.3)
        assert live_processes_of(int(uid)) == [], status


def test_the_plain_text_listing_prints_whatever_the_candidates_text(tmp_path) -> None:
    """``sotacheck judge`` writes its listing to a pipe (strict UTF-8): every verdict is printed."""
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion":
                                   "    raise ValueError('\\ud800 \\x1b[31m')\n"}) + "\n")
    done = subprocess.run([str(Path(sys.executable).parent / "sotacheck"), "judge", "--dataset", "humaneval", "--samples",
                           str(samples), "--workers", "1"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    listing = done.stdout.decode("utf-8")
    assert "HumanEval/0: error: ValueError: \\ud800 \\x1b[31m" in listing, listing


# --- as another user ---------------------------------------------------------------------------------------

NOBODY = 65534
AS_ANOTHER_USER = """
import json, sys
from sotacheck.reruns.sandbox import SandboxLimits, execute
from sotacheck.reruns.sandbox.child._outputs import encode_test
limits = SandboxLimits(test_timeout_s=2, problem_timeout_s=20)
seen = []
for code, tests, entry_point, good, good_tests in json.loads(sys.argv[1]):
    hostile = execute(code, tests, entry_point=entry_point, limits=limits)
    after = execute(good, good_tests, entry_point=entry_point, limits=limits)
    seen.append([hostile.status, hostile.exception_type, after.status])
print(json.dumps(seen))
"""


@pytest.mark.slow  # ~15 s
@pytest.mark.skipif(not IS_ROOT or shutil.which("setpriv") is None,
                    reason="needs root and setpriv (util-linux) to run as another user")
def test_as_another_user_every_class_is_closed() -> None:
    """The judge run by an ordinary user (uid 65534; no jail, no uid of its own): a variant of each class,
    each followed by a correct program on the same slot."""
    cases = [(textwrap.dedent(FUNCTION_IMPERSONATION[name]), MATH_TESTS if "module" in name else TESTS, "square",
              GOOD, TESTS) for name in ("a loading report naming a module of its own, at import",
                                        "a reply with the right value, then the genuine one")]
    cases += [(PROGRAM_IMPERSONATION[name], PROGRAM_TESTS, None, GOOD_PROGRAM, PROGRAM_TESTS)
              for name in ("an exit report, then a loop", "an exit report from a forked child, the parent looping")]
    cases += [(BOMBS[name], HASHING_TESTS if "the test makes" in name else TESTS, "square", GOOD, TESTS)
              for name in ("a set", "a Counter's keys", "a list the test makes a set of")]
    cases += [(TEXTS[name], TESTS, "square", GOOD, TESTS) for name in ("a lone surrogate in a cached source line",
                                                                        "a 5,000-digit line number")]
    cases += [(PROGRAM_TEXTS["a 5,000-digit number"], PROGRAM_TESTS, None, GOOD_PROGRAM, PROGRAM_TESTS)]
    started = time.monotonic()
    done = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
                           "--inh-caps", "+dac_read_search", "--ambient-caps", "+dac_read_search",
                           sys.executable, "-c", AS_ANOTHER_USER, json.dumps(cases)],
                          cwd="/tmp", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert [index for index, (status, kind, after) in enumerate(seen)
            if status == "passed" or kind == "SandboxFailure" or after != "passed"] == [], seen
    assert time.monotonic() - started < len(cases) * (LIMIT_S + 2) + 20
    time.sleep(0.3)
    assert live_processes_of(NOBODY) == []
