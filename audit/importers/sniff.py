"""Which kind a file is: so that a file given under the wrong import kind is an error that says what it is.

:func:`sniff` asks every registered importer whether it recognises the file (each reads at most the
file's first bytes, its JSON document or first JSONL object, or a table's header, all read once here and
cached); a few files that no importer reads but users give (lm-eval's ``results_*.json``, samples not yet
judged) are named too.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

ZIP_MAGIC = b"PK\x03\x04"
PARQUET_MAGIC = b"PAR1"
# The columns of a long table that name the system (sotacheck.audit.importers.table).
SYSTEM_COLUMNS = frozenset({"arm", "system", "model"})
# A JSON document larger than this is not parsed just to name its format (lm-eval sample logs are JSONL).
_SNIFF_LIMIT = 64 << 20


def _stamp(path: Path) -> tuple[str, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path), stat.st_mtime_ns, stat.st_size) if path.is_file() else None


def head_bytes(path: Path, count: int = 4) -> bytes:
    """The file's first ``count`` bytes (empty where it cannot be read)."""
    try:
        with path.open("rb") as fh:
            return fh.read(count)
    except OSError:
        return b""


def first_document(path: Path) -> Any:
    """A ``.json`` file's document (up to 64 MiB), a ``.jsonl`` file's first object (plain or ``.gz``), or None."""
    stamp = _stamp(path)
    return None if stamp is None else _first_document(*stamp)


@lru_cache(maxsize=32)
def _first_document(name: str, mtime_ns: int, size: int) -> Any:
    path = Path(name)
    bare = path.name.removesuffix(".gz")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        if bare.endswith(".jsonl"):
            with opener(path, "rt", encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        return json.loads(line)
        elif bare.endswith(".json") and size <= _SNIFF_LIMIT:
            with opener(path, "rt", encoding="utf-8") as fh:
                return json.load(fh)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return None


def eval_layout(document: Any) -> str | None:
    """Which tool wrote a result file of the shape ``{"eval": {task: [result, ...]}}``, from its first result:
    ``bigcodebench`` (a ``status``), ``evalplus`` (EvalPlus 0.2+: ``base_status``), else None."""
    tasks = document.get("eval") if isinstance(document, dict) else None
    results = next(iter(tasks.values()), None) if isinstance(tasks, dict) else None
    result = results[0] if isinstance(results, list) and results else None
    if not isinstance(result, dict):
        return None
    if "base_status" in result:
        return "evalplus"
    return "bigcodebench" if "status" in result else None


def table_columns(path: Path) -> frozenset[str]:
    """The lower-cased column names of a CSV's header, a JSONL file's first object or a Parquet file's schema."""
    bare = path.name.removesuffix(".gz")
    if bare.endswith(".jsonl"):
        document = first_document(path)
        return frozenset(str(k).strip().lower() for k in document) if isinstance(document, dict) else frozenset()
    if bare.endswith(".parquet"):
        if head_bytes(path) != PARQUET_MAGIC:
            return frozenset()
        try:
            import pyarrow.parquet as pq

            return frozenset(name.strip().lower() for name in pq.read_schema(path).names)
        except (OSError, ValueError):
            return frozenset()
    if bare.endswith(".csv"):
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rt", encoding="utf-8") as fh:
                header = fh.readline()
        except (OSError, EOFError, UnicodeDecodeError):
            return frozenset()
        return frozenset(c.strip().strip('"').lower() for c in header.split(","))
    return frozenset()


def _hint(path: Path) -> str | None:
    """Files no importer reads, named so that the message says what to do instead."""
    document = first_document(path)
    if not isinstance(document, dict):
        return None
    if "results" in document and ("configs" in document or "versions" in document):
        return "lm-eval (its results_*.json; import the folder or the samples_*.jsonl beside it)"
    if "task_id" in document and ("completion" in document or "solution" in document) and "passed" not in document:
        return "samples to judge (`sotacheck judge --samples`), not results"
    return None


def sniff(path: Path) -> str | None:
    """The import kind that reads ``path`` (the first registered importer that recognises it), a description
    of what it is where no importer reads it, or None."""
    from sotacheck.audit.importers import IMPORTERS

    if _stamp(path) is None:
        return None
    for importer in IMPORTERS.load_all():
        if importer.recognises(path):
            return importer.name
    return _hint(path)


def guess_format(path: Path, other_than: str | None = None) -> str:
    """`` (it looks like ...)``: the tail of an error message about a file of the wrong kind; empty when the
    format is not recognised, or is ``other_than`` (the kind whose reader is failing: a damaged file of its own)."""
    kind = sniff(path)
    if kind is None or kind == other_than:
        return ""
    return f" (it looks like {kind!r} input: `sotacheck import {kind} ...`)" if " " not in kind \
        else f" (it looks like {kind})"
