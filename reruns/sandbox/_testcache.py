"""Compiled test code for the supervisor: in memory, and on disk across runs (standard library only).

Compiling a problem's tests costs the supervisor about a tenth of a millisecond per problem (HumanEval;
an ET problem's hundred tests ten times that), and the same tests come back again and again: a pipeline's visible tests for
every attempt, a benchmark's hidden tests for every samples file judged on this machine. Like Python's
own bytecode cache, the compiled tests are therefore kept on disk, one file per list of tests, named by
a hash of the tests, the interpreter's version and the source of ``_strict.py``, which compiles them (so
a change to either never reads a stale entry); an entry that cannot be read is compiled again.

The disk cache is used only by a supervisor running as root, in a directory only root can write, and
only for jobs whose candidate runs as a sandbox uid: a candidate cannot plant a compiled test that a
later run would trust. Clearing it is always safe (``rm -r`` the directory).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import marshal
import os
import sys
import types
from typing import Any

import _strict

MEMORY_ENTRIES = 256  # lists of tests; small, because every cached code object is memory each fork maps


def _salt() -> bytes:
    with open(_strict.__file__, "rb") as fh:
        compiler = fh.read()
    return hashlib.sha256(sys.version.encode() + importlib.util.MAGIC_NUMBER + compiler).digest()


def _compile_each(tests: tuple[str, ...]) -> list[Any]:
    compiled = []
    for index, source in enumerate(tests):
        try:
            compiled.append(_strict.compile_test(source, index))
        except _strict.COMPILE_ERRORS:
            compiled.append(None)
    return compiled


class TestCache:
    """``compiled(tests, use_disk)``: each test compiled (None where it does not compile, for the child to
    report); ``use_disk`` False keeps a job's tests out of the disk cache (and the disk cache out of it)."""

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

    def _load_or_compile(self, tests: tuple[str, ...], use_disk: bool) -> list[Any]:
        if not (self.directory and use_disk):
            return _compile_each(tests)
        digest = hashlib.sha256(self._salt)
        for source in tests:
            encoded = source.encode("utf-8", "surrogatepass")
            digest.update(len(encoded).to_bytes(8, "little") + encoded)
        path = os.path.join(self.directory, digest.hexdigest() + ".marshal")
        try:
            with open(path, "rb") as fh:
                loaded = marshal.loads(fh.read())
            if (isinstance(loaded, list) and len(loaded) == len(tests)
                    and all(code is None or type(code) is types.CodeType for code in loaded)):
                return loaded
        except (OSError, EOFError, ValueError, TypeError):
            pass
        compiled = _compile_each(tests)
        self._store(path, compiled)
        return compiled

    @staticmethod
    def _store(path: str, compiled: list[Any]) -> None:
        """Written in place, with one ``open``: a temporary file and a rename cost five times as much on
        ext4 (0.10-0.16 ms against 0.02 ms per entry), which a first run pays for every problem. A reader
        that meets a half-written entry (another supervisor storing the same tests) cannot mistake it for a
        whole one: a truncated marshal stream does not load, and one that loads must hold a code object or
        None per test; it then compiles the tests itself. Nobody else can write here (``_usable``)."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        except OSError:
            return
        try:
            data = memoryview(marshal.dumps(compiled))
            while data:
                data = data[os.write(fd, data):]
        except (OSError, ValueError):
            try:
                os.unlink(path)
            except OSError:
                pass
        finally:
            os.close(fd)
