"""Hostile programs at the judge's seams (issue #33), each class in several variants, run through the real
judge: processes that outlive their execution (a zombie leader with a live thread, daemons, a uid-wide
SIGKILL), state kept between executions through the kernel (keyrings, files, System V and POSIX IPC,
abstract sockets), names injected into the tests' namespace, and modules named by the candidate."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.sandbox import SandboxLimits, execute, judge_hidden
from sotacheck.reruns.sandbox.child._procs import OWN_KEYRINGS, keys_of, live_processes_of
from sotacheck.reruns.sandbox.execution import SANDBOX_UID_BASE
from sotacheck.reruns.sandbox.slots import SlotLease
from sotacheck.reruns.sandbox.supervisor import supervisor

IS_ROOT = os.geteuid() == 0
LIMITS = SandboxLimits(test_timeout_s=2, problem_timeout_s=10, memory_mb=512)
TESTS = ["assert square(3) == 9", "assert square(4) == 16"]
GOOD = "def square(x):\n    return x * x\n"
_LEASE = SlotLease(1)
SLOT = _LEASE.slots[0]
UID = SANDBOX_UID_BASE + SLOT
needs_root = pytest.mark.skipif(not IS_ROOT, reason="the slot's own uid and the jail need root")


def run(code: str, tests: list[str] | None = None) -> str:
    return execute(textwrap.dedent(code), tests or TESTS, entry_point="square", limits=LIMITS, slot=SLOT).status


def alive_after_a_while() -> list[int]:
    time.sleep(0.3)
    return live_processes_of(UID)


# A child in its own session that ends only its main thread (the raw exit system call, not exit_group): it
# shows as a zombie while its other thread runs on. The thread does what the variants did.
ZOMBIE_LEADER = """
    import ctypes, os, threading, time
    def _linger():
        for _ in range(400):
            {action}
            time.sleep(0.05)
    if os.fork() == 0:
        os.setsid()
        threading.Thread(target=_linger).start()
        time.sleep(0.05)
        ctypes.CDLL(None).syscall({exit_number}, 0)
    def square(x):
        time.sleep(0.2)
        return x * x
    """
SYS_EXIT = {"x86_64": 60, "aarch64": 93}.get(os.uname().machine, 60)
OUTLIVING = {
    "zombie leader whose thread writes files": ZOMBIE_LEADER.format(
        action="open('/tmp/was-here', 'w').close(); open('was-here', 'w').close()", exit_number=SYS_EXIT),
    "zombie leader whose thread kills every process of its uid": ZOMBIE_LEADER.format(
        action="os.kill(-1, 9)", exit_number=SYS_EXIT),
    "double-forked daemon": """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(30)
            os._exit(0)
        def square(x):
            return x * x
        """,
    "process that ignores SIGTERM in a new session": """
        import signal, subprocess
        subprocess.Popen(["sh", "-c", "trap '' TERM HUP; sleep 30"], start_new_session=True)
        def square(x):
            return x * x
        """,
}


@needs_root  # as another user, the uid-wide SIGKILL would hit the test run itself (see the non-root test)
@pytest.mark.parametrize("name", list(OUTLIVING))
def test_no_process_of_an_execution_outlives_it(name: str) -> None:
    run(OUTLIVING[name])
    assert alive_after_a_while() == []
    seen = ("import os\ndef square(x):\n"
            "    return 0 if os.path.exists('was-here') or os.path.exists('/tmp/was-here') else x * x\n")
    assert run(seen) == "passed"  # nothing it left reaches the next execution, nor kills it
    for _ in range(20):
        assert run(GOOD) == "passed"


NOBODY = 65534
AS_ANOTHER_USER = """
import sys
from sotacheck.reruns.sandbox import SandboxLimits, execute
limits = SandboxLimits(test_timeout_s=2, problem_timeout_s=10)
tests = ["assert square(3) == 9"]
for code in sys.argv[1:]:
    execute(code, tests, entry_point="square", limits=limits)
seen = "import os\\ndef square(x):\\n    return 0 if os.path.exists('was-here') else x * x\\n"
statuses = [execute(seen if i % 2 else "def square(x):\\n    return x * x\\n", tests, entry_point="square",
                    limits=limits).status for i in range(10)]
assert statuses == ["passed"] * 10, statuses
"""


@needs_root
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux) to run as another user")
def test_as_another_user_no_process_outlives_its_execution() -> None:
    """The judge run by an ordinary user (uid 65534; it keeps only the right to read files, to reach this
    checkout's interpreter): no jail, no uid of its own, yet every process an execution started is gone
    after it, and the next executions run. The uid-wide SIGKILL is left out: as the calling user it would
    reach the judge itself, which is the documented limit of that mode."""
    assert live_processes_of(NOBODY) == []
    programs = [textwrap.dedent(OUTLIVING[name]) for name in OUTLIVING if "kills every process" not in name]
    programs[0] = programs[0].replace("open('/tmp/was-here', 'w').close(); ", "")  # its working directory only
    done = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
                           "--inh-caps", "+dac_read_search", "--ambient-caps", "+dac_read_search",
                           sys.executable, "-c", AS_ANOTHER_USER, *programs],
                          cwd="/tmp", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    time.sleep(0.3)
    assert live_processes_of(NOBODY) == []


KEYCTL = """
    import ctypes, platform
    _libc = ctypes.CDLL(None, use_errno=True)
    _ADD_KEY, _KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
    def add(keyring):
        return _libc.syscall(_ADD_KEY, b"user", b"sotacheck-answer", b"42", 2, ctypes.c_long(keyring))
    def search(keyring):
        return _libc.syscall(_KEYCTL, 10, ctypes.c_long(keyring), b"user", b"sotacheck-answer", 0)
    def persistent():
        return _libc.syscall(_KEYCTL, 22, ctypes.c_long(-1), ctypes.c_long(-2))
    def setperm(keyring, mask):
        return _libc.syscall(_KEYCTL, 5, ctypes.c_long(keyring), ctypes.c_ulong(mask))
    def settimeout(keyring, seconds):
        return _libc.syscall(_KEYCTL, 15, ctypes.c_long(keyring), ctypes.c_ulong(seconds))
    def invalidate(keyring):
        return _libc.syscall(_KEYCTL, 21, ctypes.c_long(keyring))
    def attributes(keyring):  # what a later execution can read of a keyring: its serial and description
        buffer = ctypes.create_string_buffer(256)
        serial = _libc.syscall(_KEYCTL, 0, ctypes.c_long(keyring), 0)
        length = _libc.syscall(_KEYCTL, 6, ctypes.c_long(keyring), buffer, 256)
        return [serial, buffer.value.decode() if length > 0 else None]
    """
KEEPING = {  # what one execution stores, and how the next looks for it: square returns 0 if it finds it
    "user keyring": ("add(-4)", "search(-4) > 0"),
    "user session keyring": ("add(-5)", "search(-5) > 0"),
    "session keyring": ("add(-3)", "search(-3) > 0"),
    "persistent keyring": ("add(persistent())", "persistent() > 0 and search(persistent()) > 0"),
    "user keyring's permissions": ("setperm(-4, 0x3f3f0009)", "';3f3f0009;' in str(attributes(-4)[1])"),
    "user session keyring's permissions": ("setperm(-5, 0x3f3f0009)", "';3f3f0009;' in str(attributes(-5)[1])"),
    "file in the working directory": ("open('kept', 'w').write('42')", "os.path.exists('kept')"),
    "file in /tmp": ("open('/tmp/kept', 'w').write('42')", "os.path.exists('/tmp/kept')"),
    "directory in /tmp": ("os.mkdir('/tmp/kept.d')", "os.path.exists('/tmp/kept.d')"),
    "System V shared memory": ("_libc.shmget(4242, 4096, 0o1666)", "_libc.shmget(4242, 4096, 0o666) >= 0"),
    "System V message queue": ("_libc.msgget(4242, 0o1666)", "_libc.msgget(4242, 0o666) >= 0"),
    "System V semaphore": ("_libc.semget(4242, 1, 0o1666)", "_libc.semget(4242, 1, 0o666) >= 0"),
    "POSIX message queue": ("ctypes.CDLL('librt.so.1').mq_open(b'/kept', 0o100 | 2, 0o666, None)",
                            "ctypes.CDLL('librt.so.1').mq_open(b'/kept', 2) >= 0"),
    "POSIX shared memory": ("open('/dev/shm/kept', 'w').write('42')", "os.path.exists('/dev/shm/kept')"),
    "abstract socket held by a daemon": (
        "__import__('subprocess').Popen([__import__('sys').executable, '-c', 'import socket, time; "
        "s = socket.socket(socket.AF_UNIX); s.bind(chr(0) + \"kept\"); s.listen(); time.sleep(30)'], "
        "start_new_session=True)", "_connects()"),
}


@needs_root
@pytest.mark.parametrize("channel", list(KEEPING))
def test_nothing_persists_to_the_next_execution(channel: str) -> None:
    store, look = KEEPING[channel]
    helpers = textwrap.dedent(KEYCTL) + textwrap.dedent("""
        import os, socket
        def _connects():
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(chr(0) + "kept")
                return True
            except OSError:
                return False
        """)
    keeper = helpers + f"def square(x):\n    try:\n        {store}\n    except Exception:\n        pass\n    return x * x\n"
    finder = helpers + f"def square(x):\n    return 0 if {look} else x * x\n"
    assert run(keeper) == "passed"
    time.sleep(0.2)  # a daemon that would keep a channel open has had time to start
    assert run(finder) == "passed", f"{channel}: the next execution found what the last one kept"
    assert alive_after_a_while() == []


@needs_root
def test_a_keyring_keeps_no_attribute_from_one_execution_to_the_next() -> None:
    """Bits kept without a key: the user keyrings' permissions, timeout, or a new serial number after
    invalidating them. What the next execution reads of them is what the one before the keeper read."""
    helpers = textwrap.dedent(KEYCTL)
    reader = helpers + "def square(x):\n    return [attributes(-4), attributes(-5)]\n"
    keeper = helpers + ("def square(x):\n    for k in (-4, -5):\n        setperm(k, 0x3f3f0009); settimeout(k, 5000);"
                        " invalidate(k)\n    return x * x\n")

    def read() -> str:
        result = execute(reader, ["r = square(1)\nassert r == 0, repr(r)"], entry_point="square", limits=LIMITS,
                         slot=SLOT)
        return result.tests[0].message or ""

    before = read()
    assert run(keeper) == "passed"
    assert read() == before


@needs_root
def test_no_keyring_entry_is_left_after_the_judge_exits() -> None:
    program = textwrap.dedent(KEYCTL) + "def square(x):\n    add(-4); add(-5)\n    return x * x\n"
    for _ in range(5):
        assert run(program) == "passed"
    supervisor(SLOT, LIMITS.isolate_network).close()  # the judge's supervisor for the slot exits
    time.sleep(0.5)  # the kernel collects unlinked keys in the background
    assert keys_of(UID) <= OWN_KEYRINGS  # at most the uid's own two (empty) keyrings
    assert alive_after_a_while() == []


# Benchmark problems whose tests read a name they never define, and what a program adds to its own globals
# for them: MBPP/596's ``sys`` (with a wrong function), and the HumanEval-ET tests whose names are undefined
# (their canonical solutions error there), each after the canonical solution.
NAMESPACE = {
    ("mbpp", "MBPP/596"): (False, "class sys:\n    @staticmethod\n    def getsizeof(value):\n        return 0\n"
                                  "def tuple_size(t):\n    return 0\n"),
    ("humaneval-et", "HumanEval/53"): (True, "x, y = 1, 2\n"),
    ("humaneval-et", "HumanEval/151"): (True, "lst, odd_sum = [1, 3], 10\n"),
    ("humaneval-et", "HumanEval/44"): (True, "x = 5\n"),
}


@pytest.mark.parametrize(("dataset", "task"), list(NAMESPACE))
def test_names_a_program_defines_do_not_reach_the_tests(pool, dataset: str, task: str) -> None:
    problem = load_dataset(dataset).by_id()[task]
    after_canonical, names = NAMESPACE[(dataset, task)]
    program = f"{problem.canonical_solution}\n{names}" if after_canonical else names
    assert judge_hidden(pool, problem, program).status != "passed"
    if after_canonical:  # the canonical solution alone errors on the same test
        assert judge_hidden(pool, problem, problem.canonical_solution).status == "error"


def test_a_module_the_candidate_returns_stays_its_own() -> None:
    returns_module = "import fractions\ndef square(x):\n    return fractions\n"
    tampering = "m = square(0)\nm.Fraction = None\nassert m.Fraction is None"
    execute(returns_module, [tampering], entry_point="square", limits=LIMITS, slot=SLOT)
    sane = "import fractions\nassert fractions.Fraction(1, 2) == 0.5"
    assert execute(GOOD, [sane], entry_point="square", limits=LIMITS, slot=SLOT).status == "passed"
    forged = ("import os\ndef square(x):\n    reply = b'[\"ok\",{\"~\":\"m\",\"v\":\"sys\"},[]]'\n"
              "    os.write(3, len(reply).to_bytes(4, 'little') + reply)\n    os._exit(0)\n")
    assert execute(forged, ["assert square(0).modules is not None"], entry_point="square", limits=LIMITS,
                   slot=SLOT).status == "error"

