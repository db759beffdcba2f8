"""Which tool wrote a log: so that a file given under the wrong import kind is an error that says what it is.

:func:`sniff` reads the file's first bytes (a zip's magic number, a JSON document's top-level keys, a JSONL
file's first object, a CSV header) and names the ``sotacheck import`` kind that reads it, or None.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

ZIP_MAGIC = b"PK\x03\x04"
# A JSON document larger than this is not parsed just to name its format (lm-eval sample logs are JSONL).
_SNIFF_LIMIT = 64 << 20


def _first_json_line(path: Path) -> Any:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    return json.loads(line)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return None


def kind_of_document(payload: Any) -> str | None:
    """The import kind of a parsed JSON document (or JSONL file's first object), or None."""
    if not isinstance(payload, dict):
        return None
    if isinstance(payload.get("eval"), dict) and "task" in payload["eval"] and "version" in payload:
        return "inspect"
    if isinstance(payload.get("eval"), dict):
        return "evalplus"
    if "results" in payload and ("configs" in payload or "versions" in payload):
        return "lm-eval (its results_*.json; import the folder or the samples_*.jsonl beside it)"
    if "doc_id" in payload and ("resps" in payload or "filtered_resps" in payload):
        return "lm-eval"
    if "task_id" in payload and "is_solved" in payload:
        return "mapcoder"
    if "task_id" in payload and "passed" in payload:
        return "humaneval-results"
    if "task_id" in payload and ("completion" in payload or "solution" in payload):
        return "samples to judge (`sotacheck judge --samples`), not results"
    return None


def sniff(path: Path, payload: Any = None) -> str | None:
    """The import kind that reads ``path`` (``payload``: its parsed JSON, when the caller has it), or None."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
        size = path.stat().st_size
    except OSError:
        return None
    if head == ZIP_MAGIC:
        return "inspect"
    if payload is not None:
        return kind_of_document(payload)
    name = path.name.removesuffix(".gz")
    if name.endswith(".jsonl"):
        return kind_of_document(_first_json_line(path))
    if name.endswith(".json") and size <= _SNIFF_LIMIT:
        try:
            return kind_of_document(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
    if name.endswith(".csv"):
        try:
            header = path.read_text(encoding="utf-8").split("\n", 1)[0]
        except (OSError, UnicodeDecodeError):
            return None
        return "csv" if {"arm", "problem", "passed"} <= {c.strip() for c in header.split(",")} else None
    return None


def guess_format(path: Path, payload: Any = None) -> str:
    """`` (it looks like ...)``: the tail of an error message about a file of the wrong kind; empty when the
    format is not recognised."""
    kind = sniff(path, payload)
    if kind is None:
        return ""
    return f" (it looks like {kind!r} input: `sotacheck import {kind.split(' ')[0]} ...`)" if " " not in kind \
        else f" (it looks like {kind})"
