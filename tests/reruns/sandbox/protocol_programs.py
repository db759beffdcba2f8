"""The innocent programs and tests the protocol suites (test_hostile_protocol.py, test_channel_fuzz.py) run
after each hostile one on the same slot: a function task (``square``) and a standard-input program that
doubles its input."""

from __future__ import annotations

from sotacheck.reruns.sandbox.child._outputs import encode_test

TESTS = ["assert square(3) == 9", "assert square(4) == 16"]
GOOD = "def square(x):\n    return x * x\n"
PROGRAM_TESTS = [encode_test("21\n", ["42"])]
GOOD_PROGRAM = "print(int(input()) * 2)\n"
