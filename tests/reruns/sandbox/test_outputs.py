"""ExecEval's output comparison as sotacheck re-implements it (``reruns/sandbox/child/_outputs.py``). Each expected
value is reasoned from ExecEval's ``validate_outputs`` (execution_engine.py, ntunlp/ExecEval) by hand, never
computed with the code under test: its line rule, its whitespace-token rule, gmpy2's number syntax and
129-bit rounding, the 1e-12 absolute tolerance, the caseless yes/no/true/false."""

from __future__ import annotations

import pytest

from sotacheck.reruns.sandbox.child._outputs import accepted, decode_output, normalise_text, output_matches, parse_number

BIG = 2 ** 133  # at this size a 129-bit float's spacing is 2**5 = 32: +1 and +2 both round down to BIG


@pytest.mark.parametrize(("expected", "actual", "matches"), [
    ("3\n", "3", True),                          # trailing newline (the output is stripped)
    ("1 2 \n3\n", "1 2\n3  \n\n", True),         # trailing spaces and blank lines at the end
    ("  1 2\n3", "1 2\n   3", True),            # indentation: each line is stripped
    ("1\n\n2", "1\n2", True),                    # a blank line inside: lines differ, the tokens agree
    ("1 2", "1  2", True),                      # runs of spaces: the tokens agree
    ("1 2", "1 2 3", False),                    # one token more
    ("12", "1 2", False),                       # tokens are not concatenated
    ("0.1", "0.1000000000001", True),           # differs by 1e-13
    ("0.1", "0.100000000002", False),           # differs by 2e-12
    ("1000", "1e3", True),                      # exponent syntax is a number
    ("2.0", "2", True),
    ("-0", "0", True),
    (str(BIG + 1), str(BIG + 2), True),         # both round to 2**133 at 129 bits
    (str(2 ** 20 + 1), str(2 ** 20 + 2), False),
    ("1000", "1_000", True),                    # gmpy2 drops underscores
    ("16", "0x10", True),                       # mpfr's base 0: a 0x prefix is hexadecimal
    ("5", "nan", True),                         # |5 - nan| > 1e-12 is false: ExecEval accepts it
    ("inf", "INF", True),
    ("inf", "-inf", False),
    ("inf", "1e5000", True),                    # both infinite (the exponent guard)
    ("YES", "yes", True), ("Yes", "YES", True), ("True", "true", True), ("FALSE", "false", True),
    ("Hello", "hello", False),                  # only yes/no/true/false are caseless
    ("１", "1", False),                          # a non-ASCII digit is a word, not a number
    ("é", "é", True),
    ("[1, 2]", "[1, 2]", True),
    ("[1, 2]", "[1,2]", False),
])
def test_execeval_rules(expected: str, actual: str, matches: bool) -> None:
    assert output_matches(expected, actual, "execeval") is matches


@pytest.mark.parametrize(("expected", "actual", "matches"), [
    ("5", "nan", False), ("nan", "5", False), ("-3.5 2", "nan nan", False),  # a NaN is no number but a NaN
    ("nan", "NaN", True), ("nan", "nan", True),
    ("0.1", "0.1000000000001", True), ("YES", "yes", True), ("inf", "-inf", False),  # the other rules stay
])
def test_strict_rules_drop_the_nan_rule(expected: str, actual: str, matches: bool) -> None:
    assert output_matches(expected, actual) is matches  # strict: the default
    assert output_matches(expected, actual, "execeval") is (matches or "nan" in (expected + actual).lower())


FIFTY_EIGHT = "1" + "0" * 57  # 10**57: at 129 bits (about 39 digits) 10**57 + 10**17 rounds to it


@pytest.mark.parametrize(("expected", "actual", "strict", "execeval"), [
    (FIFTY_EIGHT, "1" + "0" * 39 + "1" + "0" * 17, False, True),  # the 58-digit case
    (str(BIG + 1), str(BIG + 2), False, True),                    # both round to 2**133 at 129 bits
    ("9" * 5000, "9" * 4999 + "8", False, True),                  # no int() digit limit, either rule
    ("9" * 5000, "9" * 5000, True, True),
    ("007", "7", True, True), ("+7", "7", True, True), ("-0", "0", True, True), ("-0", "+000", True, True),
    ("1000", "1_000", True, True),                                # underscores dropped, as gmpy2 does
    ("-7", "7", False, False),
    ("5", "5.0", True, True),                                     # an integer and a float: compared as numbers
    (FIFTY_EIGHT, "1e57", True, True),
])
def test_strict_rules_compare_integers_digit_for_digit(expected: str, actual: str, strict: bool, execeval: bool) -> None:
    assert output_matches(expected, actual) is strict
    assert output_matches(expected, actual, "execeval") is execeval


@pytest.mark.parametrize("token", ["4" + "2" * 5000, "42" + "0" * 5000 + ".5", "1e" + "9" * 5000, "1e-" + "9" * 5000,
                                   "0x" + "f" * 200_000, "0b1." + "1" * 200_000, "0." + "0" * 5000 + "1",
                                   "1." + "0" * 5000 + "1"])
def test_any_token_is_read_at_a_bounded_cost(token: str) -> None:
    """No ``int()`` digit limit, no million-bit gcd: each is read (or refused) in well under a second."""
    import time

    started = time.perf_counter()
    for rules in ("strict", "execeval"):
        output_matches("42", token, rules)
        parse_number(token)
    assert time.perf_counter() - started < 1.0


def test_digits_past_the_first_two_hundred_round_as_a_sticky_digit() -> None:
    """1 + 10**-300 and 1 read the same at 129 bits; 4,001 fraction digits are not a magnitude of 10**-4001
    (the magnitude guard looks at the number, not at its last digit)."""
    assert parse_number("1." + "0" * 299 + "1") == parse_number("1")
    assert parse_number("1." + "0" * 4001) == parse_number("1")
    assert parse_number("0." + "0" * 4001 + "5") == 0


def test_several_accepted_outputs_and_carriage_returns() -> None:
    assert accepted(["1", "2"], "2") and not accepted(["1"], "2") and not accepted([], "2")
    assert accepted(["1\r\n2\r\n"], "1\n2")  # ExecEval removes every \r from the accepted outputs
    assert normalise_text("a\r\nb\r") == "a\nb"


def test_the_program_output_is_decoded_as_execeval_does() -> None:
    assert decode_output(b"  3\xff\n\n") == "3"  # an undecodable byte is dropped, then stripped
    assert decode_output("é\n".encode()) == "é"


def test_number_syntax() -> None:
    assert parse_number("12") == 12 and parse_number("-1.5e1") == -15 and parse_number(".5") == parse_number("0.5")
    assert parse_number("1@2") == 100  # MPFR's exponent marker for any base
    assert parse_number("nan") == "nan" and parse_number("-Infinity") == "-inf"
    for word in ("abc", "1.2.3", "e5", "--1", "0x", "1e", "0b2", "+", ""):
        assert parse_number(word) is None, word
