"""A checkout of the authors' released code, as the user names it (``--original-code mapcoder=PATH``).

sotacheck never copies their code or prompts; it runs them from the user's checkout. This module says
which repository a checkout must be, checks that the path is one (by its files: their modules are never
imported in sotacheck's own process, see ``_child.py``), that it holds the class a pipeline runs (by
parsing the file, not importing it), and what it holds: the git commit where it is a git checkout, and
always a content hash over its ``src/`` sources, so ``run.json`` says exactly which code ran.
"""

from __future__ import annotations

import ast
import hashlib
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sotacheck.core import pyast
from sotacheck.core.errors import InputError, UsageError

# The repositories whose code sotacheck can run, by the key a user names them with.
REPOSITORIES: dict[str, str] = {
    "mapcoder": "Md-Ashraful-Pramanik/MapCoder",
    "codegenerator": "kagnlp/CodeGenerator",
}
# Files (under src/) every checkout of the repository has; a path without them is not such a checkout.
_MARKERS: dict[str, tuple[str, ...]] = {
    "mapcoder": ("promptings/Base.py", "promptings/MapCoder.py", "datasets/HumanEvalDataset.py",
                 "evaluations/func_evaluate.py", "results/Results.py"),
    "codegenerator": ("promptings/Base.py", "promptings/CodeSIM.py", "datasets/HumanEvalDataset.py",
                      "evaluations/func_evaluate.py", "results/Results.py", "constants/verboseType.py"),
}
_HASHED_SUFFIXES = (".py", ".yaml")


@dataclass(frozen=True)
class OriginalClass:
    """One of the authors' prompting classes: ``promptings.MapCoder.MapCoder`` of the ``mapcoder`` repository.
    ``flavor`` is the repository's model interface (MapCoder's ``prompt`` returns text and two token counts;
    CodeGenerator's takes penalties and returns text and a ``run_details`` dict)."""

    repository: str
    module: str
    name: str

    @property
    def qualified_name(self) -> str:
        return f"{self.module}.{self.name}"

    @property
    def file(self) -> str:
        return self.module.replace(".", "/") + ".py"

    @property
    def flavor(self) -> str:
        return self.repository


@dataclass(frozen=True)
class Checkout:
    """A validated checkout: the path as named, its ``src/`` folder, commit (None outside git) and content hash."""

    repository: str
    path: Path
    src: Path
    commit: str | None
    dirty: bool | None
    content_hash: str

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` records of it."""
        return {"repository": REPOSITORIES[self.repository], "path": str(self.path), "src": str(self.src),
                "commit": self.commit, "dirty": self.dirty, "content_hash": self.content_hash}


def parse_original_code(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``mapcoder=PATH`` items (the ``--original-code`` option) as {repository: path}."""
    found: dict[str, str] = {}
    for item in items:
        key, sep, path = item.partition("=")
        if not sep or not path.strip():
            raise UsageError(f"--original-code {item!r}: expected REPOSITORY=PATH, e.g. mapcoder=../MapCoder")
        found[key.strip()] = path.strip()
    return found


def source_dir(repository: str, path: str | Path) -> Path:
    """The checkout's ``src/`` folder (``path`` may name the repository root or its ``src/``); a path that is
    not a checkout of ``repository`` is a one-line error naming what is missing."""
    if repository not in REPOSITORIES:
        raise UsageError(f"unknown original-code repository {repository!r}; known: {', '.join(REPOSITORIES)}")
    root = Path(path).expanduser()
    if not root.is_dir():
        raise InputError(f"original code {repository}={path}: no such directory")
    src = root / "src" if (root / "src" / "promptings").is_dir() else root
    missing = [marker for marker in _MARKERS[repository] if not (src / marker).is_file()]
    if missing:
        raise InputError(f"original code {repository}={path}: not a checkout of {REPOSITORIES[repository]} "
                         f"(no src/{missing[0]})")
    return src.resolve()


def require_class(repository: str, path: str | Path, original: OriginalClass) -> None:
    """The checkout defines ``original`` (read from its source with ``ast``; nothing is imported)."""
    file = source_dir(repository, path) / original.file
    try:
        with warnings.catch_warnings():  # their files have invalid escapes in prompt strings; not ours to report
            warnings.simplefilter("ignore")
            tree = pyast.parse(file.read_text(encoding="utf-8"), str(file))
    except FileNotFoundError:
        raise InputError(f"original code {repository}={path}: no {original.file}, so no class "
                         f"{original.name}") from None
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise InputError(f"original code {repository}={path}: cannot read {original.file} ({exc})") from None
    if not any(isinstance(node, ast.ClassDef) and node.name == original.name for node in tree.body):
        raise InputError(f"original code {repository}={path}: {original.file} defines no class {original.name}")


def open_checkout(repository: str, path: str | Path) -> Checkout:
    """Validate the checkout and read its provenance: commit (and whether ``src/`` has local changes) when it
    is a git checkout, and the SHA-256 over the relative path and bytes of every source file under ``src/``."""
    src = source_dir(repository, path)
    digest = hashlib.sha256()
    for file in sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in _HASHED_SUFFIXES
                       and "__pycache__" not in p.parts):
        digest.update(file.relative_to(src).as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    commit, dirty = _git_state(src.parent if src.name == "src" else src)
    return Checkout(repository, Path(path).expanduser().resolve(), src, commit, dirty, digest.hexdigest())


def _git_state(root: Path) -> tuple[str | None, bool | None]:
    """(commit, dirty) when ``root`` is itself the top of a git checkout; a copy that merely lies inside
    another repository has no commit of its own (that repository's HEAD would say nothing about it)."""
    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)

    try:
        top = git("rev-parse", "--show-toplevel")
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
            return None, None
        head, status = git("rev-parse", "HEAD"), git("status", "--porcelain", "--", ".")
        return head.stdout.strip() or None, bool(status.stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        return None, None
