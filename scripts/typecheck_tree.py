"""Build the tree mypy checks: ``build/typecheck/sotacheck`` laid out as the installed package is, with
symbolic links to the repository's folders as pyproject.toml's ``package-dir`` maps them (mypy does not
follow setuptools' mapping itself). Run by ``make check``; safe to delete."""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(target: Path) -> Path:
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    package = target / "sotacheck"
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    for entry in (ROOT / mapping["sotacheck"]).iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in mapping.items():
        if name != "sotacheck":
            (package / name.removeprefix("sotacheck.")).symlink_to(ROOT / folder, target_is_directory=True)
    return package


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "typecheck"))
