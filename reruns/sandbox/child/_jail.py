"""The candidate launcher: a process that forks one candidate process per execution, inside a minimal
file system (standard library only).

The supervisor forks the launcher at its start, before it has read a single job, so no test was ever
in the launcher's memory, nor is in any candidate process it forks. On a socket that also carries
descriptors, the launcher sends the supervisor a *spare*: the channel and output pipe of a candidate
process forked ahead, which waits (as root, unconfined, running only ``_candidate.serve``) for its job;
the job says how to confine itself. The supervisor's one command, ``stop`` (with the uid), ends that
process and everything it started, cleans up, answers its wait status; then the launcher forks the next
spare and sends it, off the path of the executions. Before it, ``watch`` has the launcher report the
candidate process's end as soon as it happens (its wait status and CPU time, from ``wait4``): a
standard-input program's end and status are what the launcher observes, never what the candidate's
process says (``_protocol``). When the supervisor is gone (its socket closes), the launcher stops the
candidate process and everything it started, and exits.

**The jail** (root, with mount namespaces available). At start the launcher enters its own mount and
System V IPC namespaces and builds a root directory on a small read-only tmpfs holding only: ``/usr``
(and ``/bin``, ``/lib``... as on the host), the interpreter's installation and its site-packages,
read-only, ``/etc/ld.so.cache`` and ``/etc/localtime``, ``/dev/{null,zero,full,random,urandom}``, an
empty working directory ``/candidate`` and ``/tmp`` (each a size-capped tmpfs, replaced by a fresh one
after any execution that changed it). Each candidate process ``chroot``s into it and drops every
capability with its uid. Not there: ``/proc``, ``/sys``, ``/home``, ``/root`` (but the interpreter
under it), ``/etc``, the project's files and any data beside its checkout, the compiled-test cache, other packages'
benchmark data (``_hidden.py``: in every site-packages directory of the tree, those under ``/tmp`` again
inside each fresh ``/tmp``, covered by empty mounts). System V IPC objects are removed after each
execution; POSIX message queues are refused by ``RLIMIT_MSGQUEUE``. The launcher is a child subreaper:
after each execution it kills its children until none is left (every descendant of the execution ends up
its child), so nothing the candidate started outlives it; its own session keyring, which every candidate
inherits, is new and only root may change it.

Without the jail (not root, or a kernel or container that refuses the mounts) the candidate process
runs in a fresh temporary working directory, removed afterwards, and sees the file system as its user.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` itself costs 7 ms to import, in every supervisor
import array
import ctypes
import gc
import marshal
import os
import select
import signal
from typing import Any

import _candidate
from _hidden import hidden_data, package_dirs
from _mounts import (
    CLONE_NEWIPC,
    CLONE_NEWNS,
    MNT_DETACH,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    bind_devices,
    bind_read_only,
    hide,
    link_usr_merged,
    mount,
    read_only_sources,
)
from _procs import OWN_KEYRINGS, clear_keyrings_of, keys_of, kill_uid, lock_session_keyring, remove_ipc_objects

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
KILL_GRACE_S = 0.2
WORKDIR, TMPDIR = "/candidate", "/tmp"
_LIBC = ctypes.CDLL(None, use_errno=True)
_DEVNULL = os.open(os.devnull, os.O_RDWR)
# The control socket carries ``marshal`` (both ends are trusted, and no candidate process holds it): json's
# decoder and encoder would touch some 40 pages of the launcher a cycle, each a copy-on-write fault while a
# candidate process shares them. A command is a small dict; the spare's message only carries its descriptors.
CONTROL_BYTES = 4096
SPARE_MESSAGE = marshal.dumps({"spare": True})


def socketpair(kind: int) -> tuple[Any, Any]:
    return _socket.socketpair(_socket.AF_UNIX, kind)


def send_fds(sock: Any, message: bytes, fds: list[int]) -> None:
    """One message with descriptors attached (SCM_RIGHTS), as ``socket.send_fds`` does."""
    sock.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", fds).tobytes())])


def recv_fds(sock: Any, buffer: memoryview, max_fds: int) -> tuple[bytes, list[int]]:
    """One message (read into ``buffer``, made once by the caller: ``recvmsg`` would make a new object of the
    buffer's size for every message) and the descriptors attached to it, as ``socket.recv_fds`` does."""
    size, ancillary, _, _ = sock.recvmsg_into([buffer], _socket.CMSG_LEN(max_fds * 4))
    message = bytes(buffer[:size])
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    return message, list(fds)


class Jail:
    """The minimal root and its two per-execution tmpfs mounts (see the module docstring)."""

    def __init__(self, root: str, site_dirs: list[str]) -> None:
        self.root = root
        mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
        link_usr_merged(root)
        binds = read_only_sources(site_dirs)
        # Binds under /tmp are made again inside each fresh /tmp (a clone under /tmp keeps its venv there).
        self.tmp_binds = [s for s in binds if s.startswith(TMPDIR + "/")]
        for source in binds:
            if source not in self.tmp_binds:
                bind_read_only(source, root + source)
        # Benchmark data is covered wherever the environment lives; under /tmp again in each fresh /tmp.
        self.hidden = sorted({os.path.realpath(h) for h in hidden_data(sorted({*site_dirs, *package_dirs(binds)}))})
        for path in self.hidden:
            if not path.startswith(TMPDIR + "/"):
                hide(root + path)
        for etc in ("/etc/ld.so.cache", "/etc/localtime"):
            if os.path.isfile(etc):
                bind_read_only(os.path.realpath(etc), root + etc)
        bind_devices(root)
        for directory in (WORKDIR, TMPDIR):
            os.makedirs(root + directory, 0o755, exist_ok=True)
        mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
        self._fresh: dict[str, tuple[Any, ...]] = {}
        self._size = 0

    def _signature(self, directory: str) -> tuple[Any, ...]:
        fs, top = os.statvfs(self.root + directory), os.stat(self.root + directory)
        return fs.f_bfree, fs.f_ffree, top.st_mode, top.st_uid, top.st_mtime_ns, top.st_ctime_ns

    def prepare(self, size_bytes: int) -> None:
        """Fresh /candidate and /tmp (each ``size_bytes`` at most, mode 1777) unless the last execution
        left them exactly as they were made."""
        for directory in (WORKDIR, TMPDIR):
            target = self.root + directory
            if self._size == size_bytes and self._fresh.get(directory) == self._signature(directory):
                continue
            if directory in self._fresh:
                _LIBC.umount2(target.encode(), MNT_DETACH)
            mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_bytes},nr_inodes=4096,mode=1777")
            if directory == TMPDIR:
                for source in self.tmp_binds:
                    bind_read_only(source, self.root + source)
                for path in self.hidden:
                    if path.startswith(TMPDIR + "/"):
                        hide(self.root + path)
            self._fresh[directory] = self._signature(directory)
        self._size = size_bytes


def _make_jail(site_dirs: list[str]) -> Jail | None:
    """The jail, or None where it cannot be made (not root, no mount namespaces)."""
    if os.geteuid() != 0:
        return None
    if os.path.isdir("/run"):
        root = "/run/sotacheck-jail"
    else:
        import tempfile  # rarely: every candidate process would map what it imports

        root = os.path.join(tempfile.gettempdir(), "sotacheck-jail")
    try:
        os.makedirs(root, 0o755, exist_ok=True)
        status = os.lstat(root)
        if not os.path.isdir(root) or os.path.islink(root) or status.st_uid != 0 or status.st_mode & 0o022:
            return None
        if _candidate.UNSHARE(CLONE_NEWNS | CLONE_NEWIPC) != 0:
            return None
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        return Jail(root, site_dirs)
    except OSError:
        return None


def _wait(pid: int, timeout: float) -> int | None:
    """The process's wait status once it has exited, or None after ``timeout`` seconds."""
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        return status
    if timeout > 0:
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
        if pidfd is not None:
            waiting = select.poll()
            waiting.register(pidfd, select.POLLIN)
            waiting.poll(timeout * 1000)
            os.close(pidfd)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
    return None


def _children() -> list[int]:
    """The launcher's children (every thread's list, from /proc)."""
    children: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as fh:
                children += [int(pid) for pid in fh.read().split()]
    except OSError:
        pass
    return children


def _end_descendants() -> bool:
    """Kill and reap every descendant of the launcher; whether there was any. The launcher is a child
    subreaper: a descendant whose parent ends becomes its child, and nothing leaves its tree, so once it
    has no child left no process of the execution is left, zombie leaders with live threads included
    (``waitpid`` reaps a thread group only once every thread of it ended)."""
    found = False
    for _ in range(2000):
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return found
        found = True
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        select.select([], [], [], 0.0005)
    return found


class Launcher:
    """The launcher's state between commands: the spare candidate process, the running one, its uid."""

    def __init__(self, site_dirs: list[str]) -> None:
        self.jail = _make_jail(site_dirs)
        if os.geteuid() != 0:  # same uid as its candidates: none may trace it (or the spares it forks)
            _candidate.PRCTL(PR_SET_DUMPABLE, 0, 0, 0, 0)
        self.subreaper = _candidate.PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        lock_session_keyring()  # inherited by every candidate process: none can keep a key in it
        self.pid: int | None = None  # the candidate process of the current execution
        self.exited: int | None = None  # its wait status, once ``watch`` reaped it
        self.uid: int | None = None
        self.spare: int | None = None  # forked ahead, waiting (as root, unconfined) for its job
        self.workdir: str | None = None

    def fork_spare(self, size_bytes: int) -> tuple[int, int]:
        """Fork the next candidate process ahead of its job; the supervisor's ends of its channel and
        output pipe. It runs nothing but ``_candidate.serve`` until the job comes, then confines itself."""
        if self.jail is not None:
            self.jail.prepare(size_bytes)
            workdir = WORKDIR
        else:  # the candidate process gives it to its uid
            import tempfile  # imported here: without a jail only (0.8 MB every candidate process would map)

            workdir = self.workdir = tempfile.mkdtemp(prefix="sotacheck-sandbox-")
        ours, theirs = socketpair(_socket.SOCK_STREAM)
        channel, supervisor_channel = ours.detach(), theirs.detach()
        output_r, output_w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            pid = None
        if pid == 0:
            try:
                os.setsid()
                os.dup2(_DEVNULL, 0)
                os.dup2(output_w, 1)
                os.dup2(output_w, 2)
                os.dup2(channel, _candidate.CHANNEL_FD)
                os.closerange(_candidate.CHANNEL_FD + 1, 4096)
                _candidate.serve(_candidate.CHANNEL_FD, self.jail.root if self.jail else None, workdir)
            finally:
                os._exit(1)
        os.close(channel)
        os.close(output_w)
        self.spare = pid  # None when the fork failed: the supervisor sees the channel close at once
        return supervisor_channel, output_r

    def watch(self, control: Any) -> None:
        """Until the candidate process ends (then reap it and tell the supervisor its wait status and CPU
        time) or the supervisor sends its next command."""
        if self.pid is None:
            control.sendall(marshal.dumps({"exited": None, "cpu_s": 0.0}))
            return
        waiting = select.poll()
        waiting.register(control, select.POLLIN)
        pidfd: int | None = None
        try:
            pidfd = os.pidfd_open(self.pid)
            waiting.register(pidfd, select.POLLIN)
        except OSError:
            pass  # no pidfd (an old kernel): poll the process every 10 ms
        try:
            while True:
                ready = [fd for fd, _ in waiting.poll(None if pidfd is not None else 10)]
                pid, status, usage = os.wait4(self.pid, os.WNOHANG)
                if pid:
                    self.exited = status
                    control.sendall(marshal.dumps({"exited": status, "cpu_s": usage.ru_utime + usage.ru_stime}))
                    return
                if control.fileno() in ready:
                    return  # the supervisor's next command (a stop at the deadline)
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def stop(self, grace: bool) -> dict[str, Any]:
        """End the candidate process (after ``grace`` for one that is ending by itself) and all it
        started; its wait status, and whether it ended by itself (``own``) rather than by this kill."""
        status, own = self.exited, self.exited is not None
        if self.pid is not None and not own:
            status = _wait(self.pid, KILL_GRACE_S if grace else 0)
            own = status is not None
            try:
                os.killpg(self.pid, signal.SIGKILL)  # it, and its children still in its group
            except OSError:
                pass
            if status is None:
                _, status = os.waitpid(self.pid, 0)
        if (_end_descendants() if self.subreaper else True) and self.uid is not None:
            kill_uid(self.uid, helper=True)  # any process of the uid outside the tree (none is expected)
            _end_descendants()
        if self.uid is not None and keys_of(self.uid) > OWN_KEYRINGS:
            clear_keyrings_of(self.uid)
        if self.jail is not None:
            remove_ipc_objects()
        elif self.workdir is not None:
            try:
                os.rmdir(self.workdir)  # the usual case: the candidate left nothing behind
            except OSError:
                import shutil

                shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
        self.pid, self.exited = None, None
        return {"status": status, "own": own}


def serve(control: Any, site_dirs: list[str]) -> None:
    """The launcher's loop (in the process the supervisor forked at its start); ends with the socket.

    After its greeting, and after answering each ``stop``, it forks the spare for the next execution and
    sends its descriptors: the fork is off the path of the executions."""
    launcher = Launcher(site_dirs)
    _candidate.warm_up()
    gc.freeze()  # what the launcher made since the supervisor's freeze: the collector leaves it alone too
    control.sendall(marshal.dumps({"jail": launcher.jail is not None,
                                   "hidden": launcher.jail.hidden if launcher.jail else []}))
    tmp_bytes = 32 << 20
    while True:
        fds = launcher.fork_spare(tmp_bytes)
        send_fds(control, SPARE_MESSAGE, list(fds))
        for fd in fds:
            os.close(fd)
        launcher.pid, launcher.spare = launcher.spare, None  # the execution's candidate process, once its job comes
        while True:
            message = control.recv(CONTROL_BYTES)
            if not message:  # the supervisor is gone: so are the candidate process and all it started
                launcher.stop(False)
                os._exit(0)
            command = marshal.loads(message)
            if command.get("op") == "watch":
                launcher.watch(control)
                continue
            launcher.uid = command.get("uid")
            tmp_bytes = int(command.get("tmp_bytes", tmp_bytes))
            control.sendall(marshal.dumps(launcher.stop(bool(command.get("grace")))))
            break
