"""The unittest test process's audit hooks, the **seal** (standard library only; ``_unittest_runner.py``'s
docstring, step 2): the reporting hook, which alone holds the nonce and writes the reports, and the refusing hook,
which refuses what would reach the judge or rewrite a running frame. Imported by ``_unittest_seal.py``, which
installs them (:func:`install`) in each test process before the program runs."""

from __future__ import annotations

import _thread
import ctypes
import gc
import json
import os
import sys
import types
from typing import Any

REPORT_EVENT = "sotacheck.unittest.report"
_ENCODE = json.encoder.encode_basestring_ascii  # the C function where the interpreter has it
NONCE_BYTES = 16
MAX_REPORT = 65536
# Audit events refused once sealed: each would reach the hook's closure or rewrite a running frame.
# (``gc.get_referents`` stays allowed, pandas and others use it: nothing the program can hold refers to a hook;
# it is refused, with ``sys._getframe`` and the frame attributes, only on a thread while it writes a report.)
_REFUSED = frozenset(("sys.settrace", "sys.setprofile", "sys.addaudithook", "gc.get_objects", "gc.get_referrers",
                      "ctypes.string_at", "ctypes.wstring_at", "ctypes.cdata", "sys._current_frames"))
# Symbols that would reach the interpreter's state or raw memory behind the hook's back: the interpreter's own
# (a prefix), and libc's memory copies, file reads and raw system calls (exact names: threadpoolctl, which
# scikit-learn loads, looks up ``openblas_get_num_threads`` and the like). BigCodeBench's ctypes tasks only load a
# library by its path.
_REFUSED_PREFIXES = ("Py", "_Py", "ptrace", "process_vm_")
_REFUSED_SYMBOLS = frozenset((
    "memcpy", "memmove", "memccpy", "mempcpy", "bcopy", "strcpy", "strncpy", "stpcpy", "stpncpy", "strdup", "strndup",
    "wmemcpy", "wmemmove", "wcscpy", "wcsncpy", "wcsdup", "open", "open64", "openat", "openat64", "read", "pread",
    "pread64", "readv", "preadv", "preadv2", "syscall", "dlsym", "dlvsym", "dlopen", "mmap", "mmap64", "mprotect",
    "fopen", "fopen64", "fread", "prctl",  # prctl: PR_SET_DUMPABLE would open /proc/self/mem to the process
    # a C signal handler calling back into Python would run the program at any instruction, a hook's included
    "signal", "sigaction", "__sigaction", "__libc_sigaction", "sigset", "bsd_signal", "sysv_signal", "__sysv_signal",
    "ssignal", "sigvec"))
_PROC_FILES = frozenset(("mem", "pagemap", "environ"))
_ALLOWED_SYMBOLS = frozenset(("_Py_HashSecret",))  # numba reads it when imported
_REFUSED_ATTRIBUTES = frozenset(("__code__",))
# ctypes's own helpers that read or write raw memory (called through ``ctypes.call_function``).
_RAW_MEMORY = frozenset(getattr(ctypes, name) for name in ("_memmove_addr", "_memset_addr", "_cast_addr",
                                                           "_string_at_addr", "_wstring_at_addr"))


class Sealed(RuntimeError):
    """What the seal raises for a refused operation."""


def install(main_frame: types.FrameType, report_fd: int, nonce_fd: int, first: int, judge: tuple[Any, ...],
            library_roots: tuple[str, ...] = ()) -> None:
    """Install the two audit hooks (they cannot be removed; module docstring, step 2). The *refusing* hook refuses
    what would reach the judge or rewrite a running frame, and holds no secret. The *reporting* hook alone holds
    the nonce and the report pipe; it writes one record per test method, in order from ``first``, each a line
    ``nonce pid index verdict-json``, only when asked from ``main_frame``. ``judge``: the functions whose defaults
    the refusing hook keeps anyone from replacing. ``library_roots``: the libraries' folders; compiling or building
    code under a file name there is refused (``_unittest_classes.py`` tells a library's code by it). Everything
    either reads is in its closure, bound now: the program can rebind this module's globals through a frame, but
    never reaches a hook.

    No program code can run while the reporting hook's frame, which shows the nonce, is on a stack: it returns at
    once for any other event, allocating nothing; for a report it turns the collector off (no ``gc.callbacks``,
    no finalizer of the program's runs on this thread meanwhile) and, while it writes, the refusing hook refuses
    every way to a frame on this thread; the tests run on a thread of their own (:func:`run_in_a_thread`), where
    the program cannot install a signal handler (whose frame argument would be whatever frame ran); and no thread
    reads another's frames (``sys._current_frames`` is refused)."""
    nonce = b""
    while len(nonce) < NONCE_BYTES:
        chunk = os.read(nonce_fd, NONCE_BYTES - len(nonce))
        if not chunk:
            os._exit(71)
        nonce += chunk
    os.close(nonce_fd)
    hex_nonce = nonce.hex()
    del nonce
    expected = [first]  # the index of the one report the runner's frame may write next
    writing: set[int] = set()  # the thread writing a report, if any
    getframe, write, exit_now, getpid, stat, get_ident = (sys._getframe, os.write, os._exit, os.getpid, os.stat,
                                                          _thread.get_ident)
    gc_enabled, gc_enable, gc_disable = gc.isenabled, gc.enable, gc.disable
    encode = _ENCODE  # the C encoder, captured now: json's module globals are the program's to rebind
    report_event, refused, sealed, max_report = REPORT_EVENT, _REFUSED, Sealed, MAX_REPORT
    allowed_symbols, refused_symbols, refused_prefixes = _ALLOWED_SYMBOLS, _REFUSED_SYMBOLS, _REFUSED_PREFIXES
    raw_memory, refused_attributes, proc_files = _RAW_MEMORY, _REFUSED_ATTRIBUTES, _PROC_FILES
    frozen_attributes = frozenset(("__defaults__", "__kwdefaults__"))
    to_a_frame = frozenset(("sys._getframe", "object.__getattr__", "gc.get_referents"))
    type_, len_, str_, int_, tuple_, bytes_, oserror = type, len, str, int, tuple, bytes, OSError
    id_event = "builtins.id"
    code_events, roots = frozenset(("compile", "code.__new__")), tuple(library_roots)
    open_fd, read_fd, close_fd, read_only = os.open, os.read, os.close, os.O_RDONLY

    def the_files_source(path: str, source: Any) -> bool:
        """Whether ``source`` is the bytes of the file at ``path``: the import system compiling a library's module
        that has no cached bytecode (xlwt's), not code put under a library's name."""
        if type_(source) is not bytes_:
            return False
        try:
            fd = open_fd(path, read_only)
        except (oserror, ValueError):
            return False
        try:
            chunks, size = [], 0
            while size <= len_(source):
                chunk = read_fd(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len_(chunk)
            return b"".join(chunks) == source
        finally:
            close_fd(fd)
    # this process's own /proc files that expose its memory, by device and inode: a path that leads to one through a
    # link is refused as the path itself is, with no call into Python code (``os.path.realpath`` reads posixpath's
    # globals, which the program can rebind, and would run them with this hook's frame on the stack)
    inodes = []
    for name in sorted(_PROC_FILES):
        try:
            found = os.stat(f"/proc/self/{name}")
        except OSError:  # no /proc here: nothing to reach through it
            continue
        inodes.append((found.st_dev, found.st_ino))
    proc_inodes = frozenset(inodes)

    def refusing(event: str, args: tuple[Any, ...]) -> None:
        if event == id_event:  # the most frequent event by far (matplotlib: 30,000 a task), and harmless
            return
        # a report is being written on this thread: only the reporting hook's own look at its caller passes
        if writing and get_ident() in writing and event in to_a_frame and \
                (event != "sys._getframe" or len_(args) != 1 or args[0] is not main_frame):
            raise sealed(f"the judge refuses {event} while it reports")
        if event in refused:
            raise sealed(f"the judge refuses {event}")
        if event in code_events and roots and len_(args) > 1 and type_(args[1]) is str_ \
                and args[1].startswith(roots) and not (event == "compile" and the_files_source(args[1], args[0])):
            raise sealed(f"the judge refuses code under a library's file name ({args[1][:200]})")
        if event == "ctypes.dlsym" and len_(args) > 1 and type_(args[1]) is str_ and args[1] not in allowed_symbols \
                and (args[1] in refused_symbols or args[1].startswith(refused_prefixes)):
            raise sealed(f"the judge refuses ctypes access to {args[1]}")
        if event == "ctypes.call_function" and args and type_(args[0]) is int_ and args[0] in raw_memory:
            raise sealed("the judge refuses ctypes's raw memory helpers")
        if event == "object.__setattr__" and len_(args) > 1 and type_(args[1]) is str_:
            if args[1] in refused_attributes:
                raise sealed(f"the judge refuses replacing {args[1]}")
            if args[1] in frozen_attributes:
                for function in judge:
                    if args[0] is function:
                        raise sealed(f"the judge refuses replacing its own {args[1]}")
        if event == "open" and args and type_(args[0]) in (str_, bytes_):
            path = args[0] if type_(args[0]) is str_ else args[0].decode(errors="replace")
            # by its last component wherever it is (a dir_fd, //proc), and by where a link leads
            if path.rstrip("/").rsplit("/", 1)[-1] in proc_files:
                raise sealed(f"the judge refuses opening {path}")
            try:
                found = stat(args[0])
            except (oserror, ValueError):
                return
            if (found.st_dev, found.st_ino) in proc_inodes:
                raise sealed(f"the judge refuses opening {path}")

    def reporting(event: str, args: tuple[Any, ...]) -> None:
        if event != report_event:
            return
        me = get_ident()
        was_enabled = gc_enabled()
        gc_disable()
        writing.add(me)
        try:
            if getframe(1) is not main_frame or len_(args) != 2 or type_(args[0]) is not int_ \
                    or args[0] != expected[0]:
                raise sealed("a report may only come from the runner")
            expected[0] = expected[0] + 1
            # the writer's pid: a copy the program forked holds the same nonce, but only the runner's own child counts
            verdict = args[1]
            if type_(verdict) is not tuple_:
                raise sealed("a report is a verdict")
            body = ", ".join([f"{encode(key)}: {encode(value)}" for key, value in verdict
                              if type_(key) is str_ and type_(value) is str_])
            payload = f"{hex_nonce} {getpid()} {args[0]} {{{body}}}\n".encode()
            if len_(payload) > max_report:
                exit_now(72)
            write(report_fd, payload)
        finally:
            writing.discard(me)
            if was_enabled:
                gc_enable()

    sys.addaudithook(reporting)
    sys.addaudithook(refusing)  # last: once it is in, it refuses any further hook (silently: a RuntimeError)
