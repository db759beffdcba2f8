"""Writing outputs atomically with the permissions the user's umask gives: a temporary sibling, then a
rename, so a reader never sees half a file and a run directory appears whole or not at all.

``tempfile.mkstemp`` and ``mkdtemp`` create their files 0600 and directories 0700 whatever the umask (they
are meant for private scratch space); renamed into place, they would leave outputs and run directories a
colleague or another CI user cannot read. Every output sotacheck writes through here gets the mode an
ordinary ``open``/``mkdir`` would (0644 and 0755 under umask 022).
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

_umask_lock = threading.Lock()


def umask() -> int:
    """The process's umask (read by setting and restoring it, under a lock)."""
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def write_atomically(path: Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary sibling renamed into place, with the
    mode the umask gives a new file; the parent folders are made if missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def staging_directory(target: Path) -> Path:
    """A new empty sibling of ``target`` to fill and then rename onto it, with the mode the umask gives a new
    directory."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    os.chmod(staging, 0o777 & ~umask())
    return staging


def check_replaceable(target: Path, overwrite: bool) -> None:
    """Refuse to replace a run directory (or any non-empty folder, or a file) at ``target`` unless
    ``overwrite``: call it before long work whose result ``rundir.write_run`` will write there (here, not in
    ``rundir``, so that the check costs no pandas import: ``sotacheck judge`` calls it at start-up)."""
    from sotacheck.core.outcomes import OutcomeError  # pandas, on the error path only

    if target.exists() and not target.is_dir():
        raise OutcomeError(f"{target} exists and is a file, not a run directory")
    if target.is_dir() and any(target.iterdir()) and not overwrite:
        raise OutcomeError(f"{target} already exists and is not empty; nothing was written (use --force to "
                           f"replace it)")
