"""Claims files: read and validate them (from a path, or ``-`` for standard input), the JSON Schema editors
validate them with, and the registries that ship with sotacheck. The fields: :mod:`sotacheck.audit.claim_model`.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from sotacheck.audit.claim_model import CheckName, Claim, ClaimRegistry, Paper, Side
from sotacheck.core.deprecation import renamed_names
from sotacheck.core.errors import InputError

__all__ = ["CheckName", "Claim", "ClaimRegistry", "ClaimsError", "Paper", "Side", "bundled_registries",
           "claims_schema", "load_registry", "validation_message"]
__getattr__ = renamed_names(__name__, {"Registry": "ClaimRegistry"}, globals())  # the old name, for one release

STDIN = "-"


class ClaimsError(InputError, ValueError):
    """A claims file that cannot be used; the message names the file, the claim id and the field."""


def validation_message(exc: ValidationError, raw: Any) -> str:
    """``claim 'ID': field `a.b`: what is wrong`` for the first error of a registry's validation."""
    errors = exc.errors()
    # A misspelled field also leaves the real one missing: the misspelling is the error worth naming.
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    location = [part for part in error["loc"] if part not in ("published", "rank")]
    claim_id = None
    if len(location) >= 2 and location[0] == "claims" and isinstance(location[1], int):
        claims = raw.get("claims") if isinstance(raw, dict) else None
        if isinstance(claims, list) and location[1] < len(claims) and isinstance(claims[location[1]], dict):
            claim_id = claims[location[1]].get("id")
        where = f"claim {claim_id!r}" if claim_id else f"claim #{location[1] + 1}"
        location = location[2:]
    else:
        where = "registry"
    field_name = ".".join(str(p) for p in location) or "(claim)"
    return f"{where}: field `{field_name}`: {error['msg'].removeprefix('Value error, ')}"


def _read_text(path: str | Path) -> tuple[str, str]:
    if str(path) == STDIN:
        return "<stdin>", sys.stdin.read()
    file = Path(path)
    if file.is_dir():
        raise ClaimsError(f"{file}: a directory, where a claims file is expected")
    if not file.is_file():
        raise ClaimsError(f"{file}: claims file does not exist")
    try:
        return str(file), file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ClaimsError(f"{file}: not a YAML text file (not UTF-8)") from None


def load_registry(path: str | Path) -> ClaimRegistry:
    """Read and validate one claims file (``-``: standard input); errors name the file, the claim and the field."""
    name, text = _read_text(path)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ClaimsError(f"{name}: registry: not valid YAML{where} ({problem})") from None
    if not isinstance(raw, dict):
        found = "nothing" if raw is None else f"a {type(raw).__name__}"
        raise ClaimsError(f"{name}: registry: not a claims file: expected a mapping with `paper` and `claims`, "
                          f"got {found}")
    try:
        return ClaimRegistry.model_validate(raw)
    except ValidationError as exc:
        raise ClaimsError(f"{name}: {validation_message(exc, raw)}") from None


def claims_schema() -> dict[str, Any]:
    """The JSON Schema of a claims file, generated from the pydantic model (for editors and CI)."""
    schema = ClaimRegistry.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "sotacheck claims file"
    return schema


def bundled_registries() -> list[Path]:
    """The claim registries that ship with sotacheck (``sotacheck.data/claims/*.yaml``), by file name."""
    folder = Path(str(resources.files("sotacheck.data") / "claims"))
    return sorted(folder.glob("*.yaml"))
