"""Compiled test code for the supervisor: in memory, and on disk across runs (standard library only).

Each list of tests is kept with what the tests' namespace needs to know of its source: the
standard-library module names the tests read and those they bind (``_namespace``: a module a test reads
without importing it is the supervisor's own), so that no execution parses its tests again.

Compiling a problem's tests costs the supervisor about a tenth of a millisecond per problem (HumanEval;
an ET problem's hundred tests ten times that), and the same tests come back again and again: a pipeline's visible tests for
every attempt, a benchmark's hidden tests for every samples file judged on this machine. Like Python's
own bytecode cache, the compiled tests are therefore kept on disk, one file per list of tests, named by
a hash of the tests, the interpreter's version and the sources of ``_strict.py``, which compiles them,
and of this file, which reads their names (so a change to any never reads a stale entry); an entry that
cannot be read is compiled again.

The disk cache is used only by a supervisor running as root, in a directory only root can write, and
only for jobs whose candidate runs as a sandbox uid: a candidate cannot plant a compiled test that a
later run would trust. Clearing it is always safe (``rm -r`` the directory).
"""

from __future__ import annotations

import functools
import marshal
import opcode
import os
import sys
import types
from importlib._bootstrap_external import MAGIC_NUMBER
from typing import Any, NamedTuple

import _strict

# The cache's names: BLAKE2b's own module rather than ``hashlib``, whose import starts OpenSSL (2 ms of every
# supervisor's start, for a few hashes a problem); ``MAGIC_NUMBER`` from where ``importlib.util`` takes it.
try:
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

MEMORY_ENTRIES = 256  # lists of tests; small, because every cached code object is memory each fork maps


class CompiledTests(NamedTuple):
    """A list of tests, each compiled (None where it does not compile, for the child to report), and the
    standard-library module names the tests read and bind (see :func:`stdlib_names`)."""

    codes: list[Any]
    stdlib_read: tuple[str, ...]
    stdlib_bound: tuple[str, ...]


_LOAD_GLOBAL = opcode.opmap["LOAD_GLOBAL"]  # its argument is the name's index shifted left by one (3.11 on)
_LOADS = frozenset(opcode.opmap[name] for name in ("LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS") if name in opcode.opmap)
_STORES = frozenset(opcode.opmap[name] for name in ("STORE_NAME", "STORE_GLOBAL"))
_EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]


def _global_names(code: types.CodeType, read: set[str], bound: set[str]) -> None:
    """The global names ``code`` and the code nested in it read and bind, from the bytecode (a scan of the
    compiled code costs a tenth of parsing the source again)."""
    raw, names, arg = code.co_code, code.co_names, 0
    for offset in range(0, len(raw), 2):
        op, arg = raw[offset], arg | raw[offset + 1]
        if op == _EXTENDED_ARG:
            arg <<= 8
            continue
        if op == _LOAD_GLOBAL:
            read.add(names[arg >> 1])
        elif op in _LOADS:
            read.add(names[arg])
        elif op in _STORES:
            bound.add(names[arg])
        arg = 0
    for const in code.co_consts:
        if type(const) is types.CodeType:
            _global_names(const, read, bound)


def stdlib_names(codes: list[Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The standard-library module names the compiled tests read as globals, and those they bind at the
    top level (assign, import, define); a test that did not compile (None) adds none."""
    read: set[str] = set()
    bound: set[str] = set()
    for code in codes:
        if code is not None:
            _global_names(code, read, bound)
    stdlib = sys.stdlib_module_names
    return tuple(sorted(read & stdlib)), tuple(sorted(bound & stdlib))


def _salt() -> bytes:
    sources = b""
    for module_file in (_strict.__file__, __file__):
        with open(module_file, "rb") as fh:
            sources += fh.read()
    return blake2b(sys.version.encode() + MAGIC_NUMBER + sources, digest_size=32).digest()


def _compile_each(tests: tuple[str, ...]) -> CompiledTests:
    compiled = []
    for index, source in enumerate(tests):
        try:
            compiled.append(_strict.compile_test(source, index))
        except _strict.COMPILE_ERRORS:
            compiled.append(None)
    return CompiledTests(compiled, *stdlib_names(compiled))


def _is_entry(loaded: Any, n_tests: int) -> bool:
    """Whether what a cache file held is a whole entry for ``n_tests`` tests."""
    if not (type(loaded) is tuple and len(loaded) == 3 and type(loaded[0]) is list and len(loaded[0]) == n_tests):
        return False
    return (all(code is None or type(code) is types.CodeType for code in loaded[0])
            and all(type(names) is tuple and all(type(name) is str for name in names) for names in loaded[1:]))


class TestCache:
    """``compiled(tests, use_disk)``: the tests' :class:`CompiledTests`; ``use_disk`` False keeps a job's
    tests out of the disk cache (and the disk cache out of it)."""

    def __init__(self, directory: str | None) -> None:
        self.directory = self._usable(directory)
        self._salt = _salt() if self.directory else b""
        self.compiled = functools.lru_cache(maxsize=MEMORY_ENTRIES)(self._load_or_compile)

    @staticmethod
    def _usable(directory: str | None) -> str | None:
        """The directory, made if missing, when it belongs to us and no one else can write it."""
        if not directory or os.geteuid() != 0:
            return None
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            status = os.stat(directory)
        except OSError:
            return None
        return directory if status.st_uid == os.geteuid() and not status.st_mode & 0o022 else None

    def _load_or_compile(self, tests: tuple[str, ...], use_disk: bool) -> CompiledTests:
        if not (self.directory and use_disk):
            return _compile_each(tests)
        digest = blake2b(self._salt, digest_size=32)
        for source in tests:
            encoded = source.encode("utf-8", "surrogatepass")
            digest.update(len(encoded).to_bytes(8, "little") + encoded)
        path = os.path.join(self.directory, digest.hexdigest() + ".marshal")
        try:
            with open(path, "rb") as fh:
                loaded = marshal.loads(fh.read())
            if _is_entry(loaded, len(tests)):
                return CompiledTests(*loaded)
        except (OSError, EOFError, ValueError, TypeError):
            pass
        compiled = _compile_each(tests)
        self._store(path, compiled)
        return compiled

    @staticmethod
    def _store(path: str, compiled: CompiledTests) -> None:
        """Written in place, with one ``open``: a temporary file and a rename cost five times as much on
        ext4 (0.10-0.16 ms against 0.02 ms per entry), which a first run pays for every problem. A reader
        that meets a half-written entry (another supervisor storing the same tests) cannot mistake it for a
        whole one: a truncated marshal stream does not load, and one that loads must hold a code object or
        None per test and two tuples of names; it then compiles the tests itself. Nobody else can write here (``_usable``)."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        except OSError:
            return
        try:
            data = memoryview(marshal.dumps(tuple(compiled)))
            while data:
                data = data[os.write(fd, data):]
        except (OSError, ValueError):
            try:
                os.unlink(path)
            except OSError:
                pass
        finally:
            os.close(fd)
