"""Pipeline parameters and sweep grids as a user writes them (``codesim.p=3``, ``p=1,2,3``,
``max_attempts=0..8``), read into the plain values a run spec validates."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import yaml

from sotacheck.core.errors import UsageError


def parse_assignment(text: str, option: str = "--param") -> tuple[str, Any]:
    """``NAME=VALUE`` with the value read as YAML (``3`` an integer, ``direct`` a string)."""
    if "=" not in text:
        raise UsageError(f"{option} {text!r}: expected NAME=VALUE")
    key, value = text.split("=", 1)
    return key.strip(), yaml.safe_load(value)


def pipeline_params(items: Sequence[str], pipelines: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``PIPELINE.NAME=VALUE`` items, grouped by pipeline; each must name one of ``pipelines``."""
    params: dict[str, dict[str, Any]] = {}
    for item in items:
        key, value = parse_assignment(item)
        if "." not in key:
            raise UsageError(f"--param {item!r}: expected PIPELINE.NAME=VALUE")
        pipeline, name = key.split(".", 1)
        params.setdefault(pipeline, {})[name] = value
    unknown = sorted(set(params) - set(pipelines))
    if unknown:
        raise UsageError(f"--param names pipeline(s) not in --pipelines: {', '.join(unknown)}")
    return params


def parse_grid(items: Sequence[str]) -> list[dict[str, Any]]:
    """``p=1,2,3 d=1,3`` or ``max_attempts=0..8`` → every combination, in order."""
    axes: dict[str, list[Any]] = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--grid {item!r}: expected NAME=V1,V2,... or NAME=LOW..HIGH")
        name, values = item.split("=", 1)
        if ".." in values:
            low, high = values.split("..", 1)
            try:
                axes[name.strip()] = list(range(int(low), int(high) + 1))
            except ValueError:
                raise UsageError(f"--grid {item!r}: a range needs integers, e.g. max_attempts=0..8") from None
        else:
            axes[name.strip()] = [yaml.safe_load(v) for v in values.split(",") if v.strip()]
        if not axes[name.strip()]:
            raise UsageError(f"--grid {item!r}: no values")
    if not axes:
        raise UsageError("--grid is empty: give at least one NAME=VALUES")
    names = list(axes)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(axes[n] for n in names))]
