"""Finding and killing every process of a sandbox uid, emptying its kernel keyrings, and removing the System V
IPC objects of the launcher's namespace (standard library only: the judge's own process uses it too, as
``sotacheck.reruns.sandbox.child._procs``).

A process counts as alive until its whole thread group is gone: a zombie thread-group leader whose other
threads still run (a program that ends only its main thread) is alive, and killing it ends them all.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from collections.abc import Callable

# keyctl(2) has no libc wrapper: the system call by number.
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "i686": 288, "i386": 288, "ppc64le": 271, "s390x": 280,
               "riscv64": 219}.get(os.uname().machine)  # platform.machine(), without importing platform
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_SETPERM, KEYCTL_DESCRIBE, KEYCTL_CLEAR = 1, 5, 6, 7
KEYCTL_INVALIDATE, KEYCTL_GET_PERSISTENT = 21, 22
KEY_SPEC_THREAD_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -1, -4, -5
KEY_POS_VIEW, KEY_POS_SEARCH, KEY_USR_VIEW, KEY_USR_SEARCH = 0x01000000, 0x08000000, 0x00010000, 0x00080000
_LIBC = ctypes.CDLL(None, use_errno=True)
_SYSCALL = _LIBC.syscall
_SYSCALL.restype = ctypes.c_long
# The number and five arguments, each a C long (the arguments an operation does not use are ignored):
# declared once, so that a call makes no ctypes object (every candidate process makes two at its start).
_SYSCALL.argtypes = (ctypes.c_long,) * 6


def _keyctl(operation: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    if _SYS_KEYCTL is None:
        return -1
    return int(_SYSCALL(_SYS_KEYCTL, operation, arg2, arg3, arg4, arg5))


def lock_session_keyring() -> None:
    """Give this process (and every process it forks from now on) a new, empty session keyring that only
    root may change: a process of another uid that inherits it may look into it but link nothing there, so
    it carries nothing from one execution to the next (the judge's own session keyring is not inherited)."""
    keyring = _keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0)
    if keyring > 0:
        _keyctl(KEYCTL_SETPERM, keyring, KEY_POS_VIEW | KEY_POS_SEARCH | KEY_USR_VIEW | KEY_USR_SEARCH)


# The uid's user and user session keyrings, as each candidate process leaves them: its uid and possessor may
# only look at them. Without write, setattr and search permission a candidate can neither keep a key there
# nor change their permissions or timeout, nor invalidate them (so that the next has a new serial number):
# the keyrings carry nothing from one execution to the next.
LOCKED_PERMISSIONS = KEY_POS_VIEW | KEY_USR_VIEW
_DESCRIPTION = ctypes.create_string_buffer(256)  # made before any fork: one page written, not an object made


def _permissions(keyring: int) -> int | None:
    """A keyring's permission mask, from its description (``type;uid;gid;perm;name``); None if unreadable."""
    length = _keyctl(KEYCTL_DESCRIBE, keyring, ctypes.addressof(_DESCRIPTION), len(_DESCRIPTION))
    if length <= 0:
        return None
    fields = _DESCRIPTION.value.split(b";")
    try:
        return int(fields[3], 16)
    except (IndexError, ValueError):
        return None


def lock_own_keyrings() -> None:
    """Empty this uid's user and user session keyrings and leave them view-only (``LOCKED_PERMISSIONS``),
    unless they already are: a candidate process does this before it runs any of the program, so the first
    execution under a uid locks them and every later one finds them locked (two reads, ~0.06 ms). Best
    effort where the kernel has no keyrings."""
    for keyring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        if _permissions(keyring) != LOCKED_PERMISSIONS:
            _keyctl(KEYCTL_CLEAR, keyring)
            _keyctl(KEYCTL_SETPERM, keyring, LOCKED_PERMISSIONS)


def clear_own_keyrings() -> None:
    """Empty the user and user session keyrings of this process's uid and remove its persistent keyring:
    what an earlier process of the uid kept there is gone. Best effort where the kernel has no keyrings."""
    _keyctl(KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING)
    _keyctl(KEYCTL_CLEAR, KEY_SPEC_USER_SESSION_KEYRING)
    keyring = _keyctl(KEYCTL_GET_PERSISTENT, os.getuid(), KEY_SPEC_THREAD_KEYRING)
    if keyring > 0:
        _keyctl(KEYCTL_INVALIDATE, keyring)


# A uid's own keyrings (its user and user session keyrings) exist once made; more keys than these are
# keys a candidate kept.
OWN_KEYRINGS = 2


def keys_of(uid: int) -> int:
    """How many keys (keyrings included) the kernel holds for ``uid``: its row of /proc/key-users. Read as
    bytes, with no file object: the launcher asks after every execution, and each object made is a page
    written (copied, while a candidate process shares it)."""
    try:
        fd = os.open("/proc/key-users", os.O_RDONLY)
        try:
            chunks = [os.read(fd, 4096)]  # a row per uid with keys: one read, small enough to stay off the heap's top
            while chunks[-1]:
                chunks.append(os.read(fd, 4096))
        finally:
            os.close(fd)
        table = b"".join(chunks)
        prefix = b"%d:" % uid
        for row in table.split(b"\n"):
            fields = row.split()
            if fields and fields[0] == prefix:
                return int(fields[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _alive(proc_path: str) -> bool:
    """Whether a process (not a thread) is alive: not a zombie, or a zombie leader with threads left."""
    with open(f"{proc_path}/stat", "rb") as fh:
        if fh.read().rsplit(b")", 1)[1].split()[0] != b"Z":
            return True
    return len(os.listdir(f"{proc_path}/task")) > 1


def live_processes_of(uid: int) -> list[int]:
    """PIDs of the live processes owned by ``uid`` (see the module docstring for what counts as alive)."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid and _alive(entry.path):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def kill_uid(uid: int, helper: bool = False) -> None:
    """SIGKILL every process of ``uid`` (a sandbox slot's uid is used by nothing else), by pid until none is
    alive. With ``helper`` (as root, from a single-threaded process: it forks), first from a helper process
    that takes the uid and sends SIGKILL to every process it may signal (``kill(-1)``: one system call, so
    a fork bomb cannot outrun it)."""
    if helper and os.geteuid() == 0 and uid != 0:
        _as_uid(uid, lambda: os.kill(-1, signal.SIGKILL))
    for _ in range(200):
        victims = live_processes_of(uid)
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.002)


def clear_keyrings_of(uid: int) -> None:
    """As root: empty the keyrings ``uid`` keeps between processes (from a helper process that takes the uid)."""
    if os.geteuid() != 0 or uid == 0:
        return
    _as_uid(uid, clear_own_keyrings)


def _as_uid(uid: int, action: Callable[[], object]) -> None:
    """Run ``action`` in a forked helper process that has taken ``uid`` (and no groups), and wait for it; as
    root, from a single-threaded process."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            action()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


_IPC_INFO = ctypes.create_string_buffer(256)
_IPC_COUNTS = (ctypes.c_int.from_buffer(_IPC_INFO, 0), ctypes.c_int.from_buffer(_IPC_INFO, 4 * 7))
_SHMCTL, _MSGCTL, _SEMCTL = _LIBC.shmctl, _LIBC.msgctl, _LIBC.semctl


def _ipc_objects_exist() -> bool:
    """Whether any System V IPC object exists in this IPC namespace (three system calls: SHM_INFO's
    ``used_ids``, MSG_INFO's ``msgpool``, SEM_INFO's ``semusz``). The buffer and its views are made once:
    the launcher runs this after every execution, and every object it makes is a page it writes."""
    used, semusz = _IPC_COUNTS
    used.value = 0
    if _SHMCTL(0, 14, _IPC_INFO) < 0 or used.value:
        return True
    if _MSGCTL(0, 12, _IPC_INFO) < 0 or used.value:
        return True
    semusz.value = 0
    return _SEMCTL(0, 0, 19, _IPC_INFO) < 0 or bool(semusz.value)


def remove_ipc_objects() -> None:
    """Every System V IPC object in the launcher's own IPC namespace (only its candidates use it)."""
    if not _ipc_objects_exist():
        return
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                rows = [row.split() for row in fh.read().splitlines()[1:]]
        except OSError:
            continue
        for fields in rows:
            if len(fields) > 1:
                number = int(fields[1])
                if kind == "shm":
                    _LIBC.shmctl(number, 0, None)  # IPC_RMID
                elif kind == "msg":
                    _LIBC.msgctl(number, 0, None)
                else:
                    _LIBC.semctl(number, 0, 0, None)
