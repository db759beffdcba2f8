"""The unittest runner's file-system jail (standard library only): each task's process in a root of its own.

As root, the runner's child for a task (``_unittest_runner``), before it installs the seal or runs a line of the
program, enters a mount and a System V IPC namespace of its own and builds a fresh root on a size-capped tmpfs:

* read-only: ``/usr`` (and ``/bin``, ``/lib``... as on the host), the interpreter's installation and its
  site-packages (the BigCodeBench environment), ``/etc``, ``/proc`` and ``/sys`` (libraries read the machine's
  CPUs and limits there; ``/proc/*/mem`` and the like are refused by the seal, and other users' processes are not
  readable by the sandbox uid), ``/dev/{null,zero,full,random,urandom}``;
* writable, empty, fresh for every task: ``/tmp`` with the task's working directory, ``/dev/shm``
  (``multiprocessing``'s semaphores), ``/home/sandbox`` (``$HOME``); ``/`` itself is the root user's, as in
  BigCodeBench's image, where the tests run as a user who cannot create ``/non/existent/path`` (BigCodeBench/832
  expects that to fail);
* not there: the project's files and the benchmark's data (BigCodeBench's canonical solutions are in the file the
  tasks come from), ``/root`` but the interpreter's installation under it, the host's ``/tmp`` and ``/home``, and
  benchmark data inside the bound site-packages (``_hidden``, covered by empty mounts).

Then it ``chroot``s into that root and becomes the runner's sandbox uid (every capability dropped), so it cannot
undo any of it. The namespace, and every file the task wrote, ends with the task's last process. Where this
cannot be done (not root, or a kernel or container that refuses the namespaces) the task runs as today in a fresh
temporary working directory, as the judge's user (``docs/bigcodebench.md`` says what that leaves open).
"""

from __future__ import annotations

import ctypes
import os
import tempfile

from _hidden import hidden_data, package_dirs
from _mounts import (
    CLONE_NEWIPC,
    CLONE_NEWNS,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    bind_devices,
    bind_read_only,
    hide,
    link_usr_merged,
    mount,
    read_only_sources,
)

ROOT = "/run/sotacheck-unittest-root" if os.path.isdir("/run") else os.path.join(tempfile.gettempdir(),
                                                                              "sotacheck-unittest-root")
HOME = "/home/sandbox"
_LIBC = ctypes.CDLL(None, use_errno=True)


class Plan:
    """What every task's root binds, worked out once in the runner (before any fork)."""

    def __init__(self) -> None:
        self.binds = read_only_sources(package_dirs(["/usr"]))
        self.hidden = sorted({os.path.realpath(h) for h in hidden_data(package_dirs(self.binds))})


def prepare() -> Plan | None:
    """In the runner: the mount point and the plan, or None where a task cannot be jailed (not root, or no mount
    namespace: tried once here, in a throwaway child)."""
    if os.geteuid() != 0:
        return None
    try:
        os.makedirs(ROOT, 0o755, exist_ok=True)
        status = os.lstat(ROOT)
        if os.path.islink(ROOT) or status.st_uid != 0 or status.st_mode & 0o022:
            return None
    except OSError:
        return None
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _LIBC.unshare(CLONE_NEWNS | CLONE_NEWIPC) == 0 else 1)
    _, status_code = os.waitpid(pid, 0)
    return Plan() if status_code == 0 else None


def enter(plan: Plan, uid: int, size_mb: int) -> str:
    """In the task's process (forked, before the seal): build the fresh root, ``chroot`` into it, become ``uid``;
    the task's working directory, inside it.

    Raises
    ------
    OSError
        A step failed (the caller must not run the program then).
    """
    if _LIBC.unshare(CLONE_NEWNS | CLONE_NEWIPC) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", ROOT, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,nr_inodes=262144,mode=0755")
    link_usr_merged(ROOT)
    for source in plan.binds:
        bind_read_only(source, ROOT + source)
    for path in plan.hidden:
        hide(ROOT + path)
    bind_read_only("/etc", ROOT + "/etc")
    for system in ("/proc", "/sys"):
        bind_read_only(system, ROOT + system, recursive=True)
    bind_devices(ROOT)
    for directory in ("/tmp", "/dev/shm"):
        os.makedirs(ROOT + directory, exist_ok=True)
        os.chmod(ROOT + directory, 0o1777)
    os.makedirs(ROOT + HOME, 0o755)
    os.chown(ROOT + HOME, uid, uid)
    workdir = tempfile.mkdtemp(prefix="sotacheck", dir=ROOT + "/tmp")[len(ROOT):]
    os.chown(ROOT + workdir, uid, uid)
    os.chroot(ROOT)
    os.chdir(workdir)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    return workdir
