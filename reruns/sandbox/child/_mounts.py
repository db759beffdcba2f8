"""Mount primitives of the sandbox's two jails (standard library only): the candidate launcher's (``_jail``) and
the unittest runner's (``_unittest_jail``). Each builds a root of its own out of these; both run as root in a
mount namespace of their own, so nothing here is seen outside it."""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
DEVICES = ("null", "zero", "full", "random", "urandom")
_LIBC = ctypes.CDLL(None, use_errno=True)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """``mount(2)``; OSError naming the target when it fails."""
    encoded = [None if value is None else value.encode() for value in (source, target, fstype, data)]
    if _LIBC.mount(encoded[0], encoded[1], encoded[2], flags, encoded[3]) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def bind_read_only(source: str, target: str, recursive: bool = False) -> None:
    """``source`` (a directory or a file) seen read-only at ``target``, made if missing."""
    if os.path.isdir(source):
        os.makedirs(target, 0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), 0o755, exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def hide(target: str) -> None:
    """An empty read-only directory over ``target``."""
    mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0555")


def bind_devices(root: str) -> None:
    """``root``/dev holding only :data:`DEVICES`, each the host's node bound."""
    for device in DEVICES:
        if os.path.exists("/dev/" + device):
            os.makedirs(root + "/dev", 0o755, exist_ok=True)
            os.close(os.open(f"{root}/dev/{device}", os.O_CREAT | os.O_WRONLY, 0o666))
            mount("/dev/" + device, f"{root}/dev/{device}", None, MS_BIND)


def link_usr_merged(root: str) -> None:
    """``/bin -> usr/bin`` and the like in ``root``, as on the host."""
    for top in sorted(os.listdir("/")):
        path = "/" + top
        if os.path.islink(path) and os.readlink(path).lstrip("/").startswith("usr/"):
            os.symlink(os.readlink(path), root + path)


def read_only_sources(extra: list[str]) -> list[str]:
    """The directories a jail binds read-only for the interpreter: ``/usr``, its installation and ``extra`` (site
    directories), real paths, none inside another."""
    sources = ["/usr", sys.base_prefix, sys.prefix, *extra]
    binds: list[str] = []
    for source in sorted({os.path.realpath(s) for s in sources if os.path.isdir(s)}):
        if not any(source.startswith(done + "/") for done in binds):
            binds.append(source)
    return binds
