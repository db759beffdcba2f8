"""The channel between the test process and the candidate process: plain data only (standard library).

A message is a 4-byte length and a JSON text. JSON is read by the test process with the standard
library's parser (written to be fed untrusted text), never with ``pickle`` or ``marshal``, so whatever
the candidate writes on the channel can at worst be a malformed message, never code. The exception runs
the other way only, from the test process to the candidate process: the job (the first message, read
before any candidate code runs, :func:`job_message`) and each call whose values marshal keeps exactly
(:func:`call_message`) go with ``marshal``, several times faster to read than tagged JSON. Values keep their
exact types: JSON gives ``None``, ``bool``, ``int``, ``float`` (including NaN, infinities and ``-0.0``),
``str`` and ``list``; every other type is a tagged object ``{"~": tag, "v": ...}``:

=======  =====================================  =======  ===================================
tag      type                                   tag      type
=======  =====================================  =======  ===================================
``t``    tuple                                  ``od``   collections.OrderedDict
``s``    set                                    ``C``    collections.Counter
``f``    frozenset                              ``dq``   collections.deque
``d``    dict (a list of pairs: any key type)   ``dd``   collections.defaultdict (builtin factory)
``b``    bytes                                  ``Q``    fractions.Fraction
``ba``   bytearray                              ``D``    decimal.Decimal
``c``    complex                                ``r``    range
``i``    int too long for JSON's text form      ``T``    a builtin type (``int``, ``str``, ...)
``h``    a handle (see below)                   ``m``    a module, by name
=======  =====================================  =======  ===================================

Anything else (a function, a class, an instance of a class the candidate defined, a generator, a
cyclic structure) is not data: the candidate process keeps the object and sends a *handle* (its number
and type name), which the test process may send back as an argument or operate on remotely.
"""

from __future__ import annotations

import builtins
import collections
import decimal
import fractions
import json
import marshal
import os
from collections.abc import Callable
from typing import Any

# This module's functions look builtins up in a copy taken at import, before any candidate code ran:
# a candidate that rebinds ``builtins.type`` changes what its own code sees, not what this code does.
__builtins__ = dict(vars(builtins))  # type: ignore[assignment]

HEADER = 4
MAX_DEPTH = 200
_SCALARS = (type(None), bool, int, float, str)
_BIG_INT_BITS = 12_000  # below Python's 4,300-digit limit on int <-> str conversion
_FACTORIES = {None: None, int: "int", float: "float", str: "str", list: "list", dict: "dict", set: "set",
              tuple: "tuple", bool: "bool", complex: "complex"}
_BUILTIN_TYPES: dict[str, Any] = {kind.__name__: kind for kind in (
    int, float, str, bool, bytes, bytearray, list, tuple, dict, set, frozenset, complex, type, object, range,
    slice)}
_DUMPS = json.JSONEncoder(separators=(",", ":"), check_circular=True).encode


class NotData(Exception):
    """A value that has no plain-data form (the candidate side then sends a handle instead)."""


def encode_value(value: Any, handle: Callable[[Any], Any], depth: int = 0) -> Any:
    """``value`` as JSON-ready data; ``handle(obj)`` gives the tagged handle of an object that is not data
    (or raises :class:`NotData`)."""
    kind = type(value)
    if kind in _SCALARS:
        if kind is int and value.bit_length() > _BIG_INT_BITS:
            return {"~": "i", "v": format(value, "x")}
        return value
    if depth > MAX_DEPTH:
        raise NotData("nested too deeply")
    deeper = depth + 1
    if kind is list:
        return [encode_value(item, handle, deeper) for item in value]
    if kind is tuple:
        return {"~": "t", "v": [encode_value(item, handle, deeper) for item in value]}
    if kind is dict or kind is collections.OrderedDict or kind is collections.Counter:
        pairs = [[encode_value(k, handle, deeper), encode_value(v, handle, deeper)] for k, v in value.items()]
        return {"~": {dict: "d", collections.OrderedDict: "od", collections.Counter: "C"}[kind], "v": pairs}
    if kind is set or kind is frozenset:
        return {"~": "s" if kind is set else "f", "v": [encode_value(item, handle, deeper) for item in value]}
    if kind is bytes or kind is bytearray:
        return {"~": "b" if kind is bytes else "ba", "v": value.hex()}
    if kind is complex:
        return {"~": "c", "v": [value.real, value.imag]}
    if kind is fractions.Fraction:
        return {"~": "Q", "v": [encode_value(value.numerator, handle), encode_value(value.denominator, handle)]}
    if kind is decimal.Decimal:
        return {"~": "D", "v": str(value)}
    if kind is range:
        return {"~": "r", "v": [encode_value(x, handle) for x in (value.start, value.stop, value.step)]}
    if kind is collections.deque:
        return {"~": "dq", "v": [[encode_value(item, handle, deeper) for item in value], value.maxlen]}
    if kind is collections.defaultdict and value.default_factory in _FACTORIES:
        pairs = [[encode_value(k, handle, deeper), encode_value(v, handle, deeper)] for k, v in value.items()]
        return {"~": "dd", "v": [_FACTORIES[value.default_factory], pairs]}
    name = str(getattr(value, "__name__", "")) if kind is type else ""
    if name and _BUILTIN_TYPES.get(name) is value:
        return {"~": "T", "v": name}
    return handle(value)


# At most this many members of one decoded set, or keys of one dict, may share a hash value. Numbers'
# hashes are public arithmetic (``n % (2**61 - 1)``), and tuples', complex numbers' and frozensets' are
# computed from their members': a forged message can name a million distinct values of one hash, which a
# set or dict builds in quadratic time, inside C, where no deadline can stop it. Counting the hashes first
# is linear (a ``Counter`` of the hash values, which are distinct numbers for distinct hashes); with at most
# 64 of each, building costs at most 64 comparisons a member. (``str`` and ``bytes`` hashes are keyed.)
MAX_SHARED_HASH = 64


def _hashed(members: list[Any]) -> list[Any]:
    """``members`` (of a set, or a dict's keys), refused when more than ``MAX_SHARED_HASH`` share a hash."""
    if len(members) > MAX_SHARED_HASH and max(collections.Counter(map(hash, members)).values()) > MAX_SHARED_HASH:
        raise ValueError(f"more than {MAX_SHARED_HASH} members of a set or keys of a dict share one hash")
    return members


def _pairs(items: list[Any]) -> list[tuple[Any, Any]]:
    pairs = [(key, value) for key, value in items]
    _hashed([key for key, _ in pairs])
    return pairs


# What one decoded value may cost the test process, checked before the work (a forged message can ask for
# anything): an int's hex digits (int() of them is linear), a Fraction's parts (made in lowest terms with
# gcd, quadratic: 2**16 bits cost about 10 ms), a Decimal's text, a deque's maxlen.
MAX_INT_HEX_DIGITS = 1 << 18
MAX_FRACTION_BITS = 1 << 16
MAX_DECIMAL_CHARS = 1 << 16


def _big_int(text: Any) -> int:
    if type(text) is not str or len(text) > MAX_INT_HEX_DIGITS:
        raise ValueError("an int tag over the size limit")
    return int(text, 16)


def _fraction(parts: Any) -> fractions.Fraction:
    numerator, denominator = parts
    if type(numerator) is not int or type(denominator) is not int or max(
            numerator.bit_length(), denominator.bit_length()) > MAX_FRACTION_BITS:
        raise ValueError("a Fraction over the size limit")
    return fractions.Fraction(numerator, denominator)


def _decimal(text: Any) -> decimal.Decimal:
    if type(text) is not str or len(text) > MAX_DECIMAL_CHARS:
        raise ValueError("a Decimal over the size limit")
    return decimal.Decimal(text)


def _deque(parts: Any) -> collections.deque[Any]:
    items, maxlen = parts
    if maxlen is not None and (type(maxlen) is not int or not 0 <= maxlen < 1 << 62):
        raise ValueError("a deque with a forged maxlen")
    return collections.deque(items, maxlen)


_UNTAG: dict[str, Callable[[Any], Any]] = {
    "t": tuple, "s": lambda v: set(_hashed(v)), "f": lambda v: frozenset(_hashed(v)), "d": lambda v: dict(_pairs(v)),
    "od": lambda v: collections.OrderedDict(_pairs(v)), "C": lambda v: collections.Counter(dict(_pairs(v))),
    "b": bytes.fromhex, "ba": bytearray.fromhex, "c": lambda v: complex(float(v[0]), float(v[1])),
    "Q": _fraction, "D": _decimal,
    "r": lambda v: range(int(v[0]), int(v[1]), int(v[2])), "i": _big_int,
    "dq": _deque,
    "dd": lambda v: collections.defaultdict(_BUILTIN_TYPES[v[0]] if v[0] else None, _pairs(v[1])),
    "T": lambda v: _BUILTIN_TYPES[v],
}


def decoder(handle: Callable[[dict[str, Any]], Any], module: Callable[[dict[str, Any]], Any]) -> Callable[[bytes], Any]:
    """A function from a message's bytes to its value; ``handle`` and ``module`` turn those tags into
    objects. Raises ``ValueError`` on a malformed message, whatever the error inside."""

    def untag(obj: dict[str, Any]) -> Any:
        tag = obj.get("~")
        if tag == "h":
            return handle(obj)
        if tag == "m":
            return module(obj)
        if not isinstance(tag, str) or tag not in _UNTAG:
            raise ValueError(f"unknown tag {tag!r}")
        return _UNTAG[tag](obj["v"])

    json_decode = json.JSONDecoder(object_hook=untag).decode

    def decode(payload: bytes) -> Any:
        try:
            return json_decode(payload.decode("utf-8", "surrogatepass"))
        except (ValueError, KeyError, TypeError, IndexError, RecursionError, ArithmeticError,
                decimal.InvalidOperation) as exc:
            raise ValueError(str(exc)[:200]) from None

    return decode


def job_message(job: dict[str, Any]) -> bytes:
    """The first message, from the test process to the candidate process: the job (program, limits, uid...)
    with ``marshal``, which reads it several times faster than this module's tagged JSON. Safe in this one
    direction only: the candidate process reads it before any candidate code runs, from the trusted side; what
    the candidate sends back is always read as JSON."""
    return JOB_MARKER + marshal.dumps(job)


JOB_MARKER = b"\x00job\x00"
CALL_MARKER = b"\x00call\x00"
# Types ``marshal`` carries exactly (a subclass, a bytearray or a ``collections`` type does not qualify).
_MARSHAL_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
_MARSHAL_CONTAINERS = frozenset({tuple, list, set, frozenset})
_MARSHAL_DEPTH = 100


def _marshal_exact(value: Any, depth: int = 0) -> bool:
    kind = type(value)
    if kind in _MARSHAL_SCALARS:
        return True
    if depth >= _MARSHAL_DEPTH:
        return False
    if kind is dict:
        return _all_exact(value.keys(), depth) and _all_exact(value.values(), depth)
    return kind in _MARSHAL_CONTAINERS and _all_exact(value, depth)


def _all_exact(items: Any, depth: int) -> bool:
    """Whether every item of a container at ``depth`` is marshal-exact: one pass in C over the items' types
    when all are scalars (the usual case: a list of numbers or strings), else item by item."""
    return _MARSHAL_SCALARS.issuperset(map(type, items)) or all(_marshal_exact(item, depth + 1) for item in items)


def call_message(request: list[Any]) -> bytes | None:
    """A call from the test process to the candidate process with ``marshal``, when every value in it is of
    a type marshal keeps exactly (the usual case: numbers, strings and containers of them); None otherwise,
    and then the call goes as tagged JSON. As for :func:`job_message`, only in this direction."""
    return CALL_MARKER + marshal.dumps(request) if _marshal_exact(request) else None


def dumps(message: Any) -> bytes:
    """The message's JSON text (lone surrogates escaped, so any ``str`` crosses exactly)."""
    return _DUMPS(message).encode()


def send(fd: int, payload: bytes) -> None:
    """One length-prefixed message, written whole."""
    data = memoryview(len(payload).to_bytes(HEADER, "little") + payload)
    while data:
        data = data[os.write(fd, data):]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunk = os.read(fd, size)
    if len(chunk) == size or not chunk:
        return chunk or None
    parts = [chunk]
    left = size - len(chunk)
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


class MessageTooLarge(Exception):
    """A message over the receiver's size limit."""


def receive(fd: int, max_bytes: int) -> bytes | None:
    """The next message's bytes; None at end of stream. Raises :class:`MessageTooLarge`."""
    header = _read_exactly(fd, HEADER)
    if header is None or len(header) < HEADER:
        return None
    size = int.from_bytes(header, "little")
    if size > max_bytes:
        raise MessageTooLarge(f"a message of {size} bytes, over the {max_bytes}-byte limit")
    return _read_exactly(fd, size) if size else b""
