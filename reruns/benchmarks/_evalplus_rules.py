"""EvalPlus's rules for an output, in our own words (standard library only).

This file's source is the ``test_setup`` of every HumanEval+ and MBPP+ problem (see ``evalplus.py``): the
trusted test process runs it in a namespace of its own and each hidden test calls :func:`same` or
:func:`special` on what the candidate returned. A change here changes those problems' content hashes, as a
change to the rules must.

The rules are those of EvalPlus's ``evalplus/eval/__init__.py`` (``unsafe_execute``, release 0.3.1 and the
repository after it), re-implemented, not copied:

* an output is right when it equals the expected one (``==``);
* else, when the check has a tolerance ``atol`` (the task's own, or ``1e-6`` once an expected output of the
  suite has been a float or a non-empty list or tuple of floats), when it has the expected one's type, its
  length (for a list or tuple), and is close to it as ``numpy.allclose(out, exp, rtol=1e-07, atol=atol)``
  says: ``|out - exp| <= atol + rtol * |exp|`` for each number, after numpy's broadcasting of nested lists;
* the special oracles: HumanEval/32 (``find_zero``) is right when ``|poly(xs, out)| <= atol``; MBPP+'s
  ``are_equivalent`` accepts any output, ``sum_div`` also 0, ``surface_Area`` and ``digit_distance_nums``
  also the value of EvalPlus's own reading of the task, its set tasks compare ``set(out) == set(exp)`` and
  its not-None tasks only whether the output is None (a bool is compared as it is).

Where this differs from EvalPlus: a value that is not plain data (an object of a class the candidate
defined, which the channel carries as a handle) never equals anything, where EvalPlus would call its
``__eq__`` (only the not-None and ``are_equivalent`` checks accept one); closeness is computed without
numpy, for numbers and (nested, rectangular) lists and tuples of numbers, and anything else is not close
(numpy raises on strings, None and mixed objects, which EvalPlus counts as a failure too).
"""

from __future__ import annotations

import cmath
import collections
import decimal
import fractions
import itertools
import math
import types
from typing import Any

ENFORCED_ATOL = 1e-6  # what EvalPlus compares floats with when a task gives no tolerance
RTOL = 1e-07  # numpy.allclose's default relative tolerance, which EvalPlus passes explicitly
_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes, bytearray, range, fractions.Fraction,
                      decimal.Decimal, type})
_SEQUENCES = frozenset({list, tuple, set, frozenset, collections.deque})
_MAPPINGS = frozenset({dict, collections.OrderedDict, collections.Counter, collections.defaultdict})
_NUMBERS = frozenset({bool, int, float, complex})


def is_floats(value: Any) -> bool:
    """Whether EvalPlus treats an expected output as floating point: a float, or a non-empty list or
    tuple of floats only."""
    if isinstance(value, float):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, float) for v in value)


def _describe(value: Any) -> str:
    if _is_plain(value):
        text = repr(value)
        return text if len(text) <= 200 else text[:200] + "..."
    remote = getattr(type(value), "remote_type_name", None)  # a handle: name what it stands for
    return f"a value of type {remote(value) if callable(remote) else type(value).__name__!r}"


def _is_plain(value: Any, depth: int = 0) -> bool:
    """Plain data as the channel builds it (exact builtin and stdlib types); a handle is not."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if depth > 250:
        return False
    if kind in _SEQUENCES:
        return all(_is_plain(v, depth + 1) for v in value)
    if kind in _MAPPINGS:
        return all(_is_plain(k, depth + 1) and _is_plain(v, depth + 1) for k, v in value.items())
    return False


def _require_plain(value: Any) -> None:
    if not _is_plain(value):
        raise AssertionError(f"the function returned {_describe(value)}, which is not plain data")


def _array(value: Any) -> tuple[tuple[int, ...], list[Any]] | None:
    """(shape, numbers in row-major order) of a number or a rectangular nesting of lists and tuples of
    numbers, as numpy would make an array of it; None for anything numpy would not make a numeric array of."""
    kind = type(value)
    if kind in _NUMBERS:
        return (), [value]
    if kind is not list and kind is not tuple:
        return None
    parts = [_array(item) for item in value]
    if any(part is None for part in parts):
        return None
    shapes = {part[0] for part in parts if part is not None}
    if len(shapes) > 1:
        return None  # ragged: numpy refuses it
    inner = shapes.pop() if shapes else ()
    return (len(value), *inner), [number for part in parts if part is not None for number in part[1]]


def _close(x: Any, y: Any, atol: float) -> bool:
    """numpy.isclose for two numbers: equal, or ``|x - y| <= atol + rtol * |y|`` with ``y`` finite."""
    try:
        x = x if type(x) is complex else float(x)
        y = y if type(y) is complex else float(y)
    except OverflowError:
        return False
    if x == y:
        return True
    finite = cmath.isfinite(y) if type(y) is complex else math.isfinite(y)
    return finite and abs(x - y) <= atol + RTOL * abs(y)


def allclose(out: Any, exp: Any, atol: float) -> bool:
    """``numpy.allclose(out, exp, rtol=1e-07, atol=atol)`` for numbers and nested lists/tuples of them,
    shapes broadcast as numpy does; False for anything else (where numpy raises)."""
    left, right = _array(out), _array(exp)
    if left is None or right is None:
        return False
    (left_shape, left_numbers), (right_shape, right_numbers) = left, right
    rank = max(len(left_shape), len(right_shape))
    left_shape = (1,) * (rank - len(left_shape)) + left_shape
    right_shape = (1,) * (rank - len(right_shape)) + right_shape
    shape = []
    for a, b in zip(left_shape, right_shape, strict=True):
        if a != b and 1 not in (a, b):
            return False  # numpy cannot broadcast them
        shape.append(b if a == 1 else a)

    def flat(index: tuple[int, ...], of_shape: tuple[int, ...]) -> int:
        position = 0
        for i, size in zip(index, of_shape, strict=True):
            position = position * size + (0 if size == 1 else i)
        return position

    return all(_close(left_numbers[flat(index, left_shape)], right_numbers[flat(index, right_shape)], atol)
               for index in itertools.product(*(range(size) for size in shape)))


def _verdict(exact: bool, out: Any, exp: Any, atol: float) -> bool:
    """EvalPlus's last step: exact equality, or, with a tolerance, same type, same length and allclose."""
    if exact:
        return True
    if atol == 0:
        raise AssertionError(f"expected {_describe(exp)}, got {_describe(out)}")
    if type(out) is not type(exp):
        raise AssertionError(f"expected a {type(exp).__name__} (within atol {atol:g}), got {_describe(out)}")
    if isinstance(exp, (list, tuple)) and len(out) != len(exp):
        raise AssertionError(f"expected {len(exp)} items (within atol {atol:g}), got {len(out)}")
    if not allclose(out, exp, atol):
        raise AssertionError(f"expected {_describe(exp)} within atol {atol:g}, got {_describe(out)}")
    return True


def same(out: Any, exp: Any, atol: float) -> bool:
    """True when ``out`` is right for ``exp`` under tolerance ``atol``; else AssertionError saying why."""
    _require_plain(out)
    return _verdict(bool(out == exp), out, exp, atol)


def poly(xs: list[Any], x: Any) -> Any:
    """The polynomial with coefficients ``xs`` at ``x``, summed term by term as EvalPlus does."""
    return sum(coefficient * math.pow(x, power) for power, coefficient in enumerate(xs))


def surface_area(base_edge: Any, height: Any) -> int:
    """A square pyramid's surface area with ``height`` the apex's distance from the base, rounded: how
    EvalPlus reads MBPP/581."""
    slant = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 2 * (base_edge * slant))


def digit_distance(first: Any, second: Any) -> int:
    """The sum of the digit-wise distances of two numbers, the shorter padded with zeros on the left: how
    EvalPlus reads MBPP/558."""
    left, right = str(first), str(second)
    width = max(len(left), len(right))
    return sum(abs(int(a) - int(b)) for a, b in zip(left.zfill(width), right.zfill(width), strict=True))


def special(oracle: str, out: Any, exp: Any, atol: float, args: tuple[Any, ...]) -> bool:
    """A task EvalPlus checks its own way (see the module docstring); ``args`` are the call's arguments,
    given where the oracle needs them."""
    if oracle == "zero":
        _require_plain(out)
        value = abs(poly(args[0], out))
        if not value <= atol:
            raise AssertionError(f"|poly(xs, {_describe(out)})| = {value!r}, over atol {atol:g}")
        return True
    if oracle == "any":
        return True
    if oracle == "not_none":
        exact = out == exp if isinstance(out, bool) else exp == (out is not None)
        return _verdict(exact, out, exp, atol)
    _require_plain(out)
    if oracle == "set":
        exact = set(out) == set(exp)
    elif oracle == "or_zero":
        exact = out == exp or out == 0
    elif oracle == "surface_area":
        exact = out == exp or abs(out - surface_area(*args)) <= atol
    elif oracle == "digit_distance":
        exact = out == exp or out == digit_distance(*args)
    else:
        raise ValueError(f"unknown EvalPlus oracle {oracle!r}")
    return _verdict(bool(exact), out, exp, atol)


# What a hidden test reaches through its one name, ``__evalplus__``: the two checks, and the constructors its
# literals need (bound here, in this namespace, so a candidate function named ``complex`` changes nothing).
EXPORTS = types.SimpleNamespace(
    same=same, special=special, complex=complex, frozenset=frozenset, bytearray=bytearray, range=range,
    Fraction=fractions.Fraction, Decimal=decimal.Decimal, Counter=collections.Counter,
    OrderedDict=collections.OrderedDict, defaultdict=collections.defaultdict, deque=collections.deque,
    types={kind.__name__: kind for kind in (int, float, str, bool, bytes, bytearray, list, tuple, dict, set,
                                           frozenset, complex, type, object, range, slice)},
)
