"""Whether a standard-input program's output is accepted: the rules of ExecEval (standard library only), and
how such a test is written into a job (:func:`encode_test`).

MapCoder and CodeSim judge APPS (and CodeContests, xCodeEval) with ExecEval (ntunlp/ExecEval, the
execution engine of xCodeEval): their ``contest_evaluate`` posts the program and the unit tests to its
``/api/execute_code``, which runs the program once per test with the input on stdin and checks its stdout
with ``validate_outputs`` in ``execution_engine/execution_engine.py``. These are those rules, re-implemented
from reading that code (it is not copied; it needs ``gmpy2``, which this does without):

* every ``\\r`` is removed from the test's input and from each accepted output (its ``convert_crlf_to_lf``);
* the program's stdout is decoded as UTF-8, undecodable bytes dropped, and stripped of surrounding whitespace;
* the output is accepted if it matches **any** of the accepted outputs;
* it matches an accepted output when, both stripped and split at ``\\n``, they have the same number of lines
  and each pair of lines is equal once stripped (trailing spaces, blank lines at either end, indentation);
* failing that, when both split at whitespace have the same number of tokens and each pair matches: two
  *numbers* differ by at most 1e-12 (absolute; ExecEval reads each as a 129-bit binary float first, so
  rounding is emulated here, and a NaN, whose difference is never *greater* than 1e-12, matches any number);
  ``yes``, ``no``, ``true``, ``false`` in any case match themselves in any case; any other tokens must be
  equal. (So whitespace never matters: any line-equal pair is also token-equal, and a blank line inside or
  a run of spaces passes by tokens.) A number is what gmpy2's ``mpfr(token)`` reads: after dropping ``_``,
  a decimal with optional sign, fraction and exponent (``e``, ``E`` or ``@``), ``inf``/``infinity``/``nan``
  in any case, or ``0x``/``0b`` followed by hexadecimal/binary digits (``mpfr``'s base 0). A token with a
  non-ASCII character is a word.

**Two rule sets.** ``execeval`` is ExecEval's, NaN included (``apps-execeval``, and the sample-I/O feedback
pipelines get, as MapCoder's ``evaluate_sample_io`` did). ``strict`` (the default, ``apps``) is the same
but for two rules: a NaN matches only a NaN, so no fixed output (``print("nan")``) matches arbitrary
expected numbers; and two tokens that are both integers (:func:`integer_text`) match only when they are the
same integer, digit for digit and of any length (ExecEval rounds both to 129 bits, about 39 digits, so a
58-digit answer whose last 18 digits are zeros matched). No other rule lets a fixed output match more than
the outputs equal to it token by token (within 1e-12 for other numbers, any case for yes/no/true/false).
``_stdin_tests`` marks a test passed by ``execeval`` whose output ``strict`` rejects (``execeval_only``).

Where this differs from ExecEval: magnitudes beyond about 10**±4000 (a DoS guard here: such a number is
taken as ±infinity or zero instead of being rounded in MPFR's huge exponent range) and digits past the
first 200 significant ones (read as one sticky digit: the same rounding unless a 129-bit rounding boundary
falls among them); the final difference is compared exactly, where gmpy2 rounds it to 53 bits first (it
matters only within 1e-28 of the tolerance); and ExecEval failed the whole request (the problem unsolved)
for an input with a non-ASCII character or an accepted output that is not a string, which is outside these
rules (``sotacheck.reruns.benchmarks.apps``).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

PROGRAM_TEST_PREFIX = "%sotacheck program test\n"  # not Python: the supervisor's test compiler stops at once
RULES = ("strict", "execeval")

TOLERANCE = Fraction(1e-12)  # ExecEval's PRECISION is mpfr(1e-12): the double nearest 1e-12, exactly
_MPFR_BITS = 129
_MAX_DECIMAL_EXPONENT = 4000
_MAX_BITS = 13_300  # 2 ** 13_300 is about 10 ** 4004: the same guard for 0x and 0b numbers
_KEPT_DIGITS = 200
_INTEGER = re.compile(r"[+-]?[0-9]+")
_CASELESS_WORDS = frozenset({"yes", "no", "true", "false"})
_DECIMAL = re.compile(r"([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE@]([+-]?[0-9]+))?")
_SPECIAL = re.compile(r"([+-]?)(inf|infinity|nan|@inf@|@nan@)", re.IGNORECASE)
_PREFIXED = re.compile(r"0(?:x([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)|b([01]+\.?[01]*|\.[01]+))")
_INFINITY = "inf"
_NAN = "nan"


def encode_test(stdin: str, outputs: list[str] | tuple[str, ...], rules: str = "strict") -> str:
    """A program test as a job's test (``_stdin_tests``): the input, the accepted outputs and the rule set
    they are compared by (``strict`` or ``execeval``), as JSON behind a marker line."""
    if rules not in RULES:
        raise ValueError(f"rules must be one of {RULES}, got {rules!r}")
    return PROGRAM_TEST_PREFIX + json.dumps({"input": stdin, "outputs": list(outputs), "rules": rules},
                                            ensure_ascii=False)


def normalise_text(text: str) -> str:
    """A test's input or accepted output as ExecEval hands it on: every carriage return removed."""
    return text.replace("\r", "")


def decode_output(raw: bytes) -> str:
    """The program's stdout as ExecEval reads it: UTF-8 with undecodable bytes dropped, stripped."""
    return raw.decode("utf-8", errors="ignore").strip()


def _round_to_bits(value: Fraction, bits: int = _MPFR_BITS) -> Fraction:
    """``value`` rounded to the nearest binary float of ``bits`` significant bits (ties to even), as MPFR
    rounds a string it reads."""
    if value == 0:
        return value
    sign = -1 if value < 0 else 1
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:  # the bit lengths can overestimate the exponent by one
        exponent -= 1
    scale = Fraction(2) ** (bits - 1 - exponent)
    return sign * Fraction(round(magnitude * scale)) / scale


def _kept(significant: str, exponent: int, base: int) -> Fraction:
    """The number ``significant`` (digits in ``base``, no leading zero) times ``base ** exponent``, with only
    its first ``_KEPT_DIGITS`` digits and a sticky digit for the rest: the same 129-bit rounding (a rounding
    boundary would have to fall among the dropped digits) at a bounded cost (no ``int()`` of a
    million digits, no gcd of million-bit numbers)."""
    if len(significant) > _KEPT_DIGITS:
        sticky = "1" if significant[_KEPT_DIGITS:].strip("0") else "0"
        exponent += len(significant) - _KEPT_DIGITS - 1
        significant = significant[:_KEPT_DIGITS] + sticky
    return Fraction(int(significant, base)) * Fraction(base) ** exponent


def parse_number(token: str) -> Fraction | str | None:
    """The number a token is to gmpy2's ``mpfr`` (rounded to 129 bits), ``"inf"``/``"-inf"``/``"nan"`` for
    the special values, or None when it is not a number. Its cost is bounded whatever the token's length: a
    magnitude beyond about 10**±4000 is infinite or zero here (a DoS guard; MPFR's range is wider), and only
    the first ``_KEPT_DIGITS`` significant digits are read (:func:`_kept`)."""
    if not token.isascii():
        return None
    text = token.replace("_", "")
    special = _SPECIAL.fullmatch(text)
    if special:
        if "nan" in special.group(2).lower():
            return _NAN
        return "-" + _INFINITY if special.group(1) == "-" else _INFINITY
    prefixed = _PREFIXED.fullmatch(text) if len(text) > 2 else None
    if prefixed:
        digits, base = (prefixed.group(1), 16) if prefixed.group(1) is not None else (prefixed.group(2), 2)
        whole, _, fraction = digits.partition(".")
        significant = (whole + fraction).lstrip("0")
        magnitude_bits = (len(significant) - len(fraction)) * (4 if base == 16 else 1)
        if not significant or magnitude_bits < -_MAX_BITS:
            return Fraction(0)
        if magnitude_bits > _MAX_BITS:
            return _INFINITY
        return _round_to_bits(_kept(significant, -len(fraction), base))
    decimal = _DECIMAL.fullmatch(text)
    if not decimal:
        return None
    sign, digits, exponent_text = decimal.groups()
    whole, _, fraction = digits.partition(".")
    significant = (whole + fraction).lstrip("0")
    exponent_digits = (exponent_text or "0").lstrip("+-").lstrip("0") or "0"
    if not significant or (len(exponent_digits) > 9 and (exponent_text or "").startswith("-")):
        return Fraction(0)
    if len(exponent_digits) > 9:
        return "-" + _INFINITY if sign == "-" else _INFINITY
    exponent = int(exponent_text or "0") - len(fraction)
    magnitude = exponent + len(significant)  # the number is below 10 ** magnitude, at least 10 ** (magnitude - 1)
    if magnitude > _MAX_DECIMAL_EXPONENT:
        return "-" + _INFINITY if sign == "-" else _INFINITY
    if magnitude < -_MAX_DECIMAL_EXPONENT:
        return Fraction(0)
    value = _kept(significant, exponent, 10)
    return _round_to_bits(-value if sign == "-" else value)


def integer_text(token: str) -> str | None:
    """A token that is an integer (an optional sign and decimal digits, ``_`` dropped as gmpy2 drops it) in
    normal form: no ``+``, no leading zero, ``0`` for ``-0``; None for any other token. Linear in its length:
    no ``int()``, whatever its number of digits."""
    text = token.replace("_", "")
    if not token.isascii() or _INTEGER.fullmatch(text) is None:
        return None
    digits = text.lstrip("+-").lstrip("0") or "0"
    return "-" + digits if text.startswith("-") and digits != "0" else digits


def _numbers_match(left: Fraction | str, right: Fraction | str, nan_matches_any: bool) -> bool:
    if left == _NAN or right == _NAN:
        # ExecEval fails a pair only when |a - b| > 1e-12, which is never true of a NaN
        return nan_matches_any or left == right
    if isinstance(left, str) or isinstance(right, str):
        # an infinity: inf - inf is NaN (a match), inf minus a finite number or -inf is infinite (no match)
        return left == right
    return abs(left - right) <= TOLERANCE


def _tokens_match(expected: str, actual: str, rules: str) -> bool:
    if expected == actual:  # the same text is the same number, or the same word
        return True
    if rules == "strict":
        integers = integer_text(expected), integer_text(actual)
        if integers[0] is not None and integers[1] is not None:
            return integers[0] == integers[1]  # two integers: equal, digit for digit
    left, right = parse_number(expected), parse_number(actual)
    if left is not None and right is not None:
        return _numbers_match(left, right, rules == "execeval")
    if expected.lower() in _CASELESS_WORDS:
        expected = expected.lower()
    if actual.lower() in _CASELESS_WORDS:
        actual = actual.lower()
    return expected == actual


def output_matches(expected: str, actual: str, rules: str = "strict") -> bool:
    """Whether ``actual`` (the program's decoded stdout) matches one accepted output by ``rules`` (module
    docstring)."""
    expected_lines, actual_lines = expected.strip().split("\n"), actual.strip().split("\n")
    if len(expected_lines) == len(actual_lines) and all(
            e.strip() == a.strip() for e, a in zip(expected_lines, actual_lines, strict=True)):
        return True
    expected_tokens, actual_tokens = expected.split(), actual.split()
    return len(expected_tokens) == len(actual_tokens) and all(
        _tokens_match(e, a, rules) for e, a in zip(expected_tokens, actual_tokens, strict=True))


def accepted(outputs: list[str] | tuple[str, ...], actual: str, rules: str = "strict") -> bool:
    """Whether ``actual`` matches any of the accepted ``outputs`` (each normalised as ExecEval does)."""
    return any(output_matches(normalise_text(expected), actual, rules) for expected in outputs)
