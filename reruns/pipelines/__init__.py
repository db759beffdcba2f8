"""Pipelines, one short file per method; an arm's name is the pipeline with all its parameters."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.pipelines import codesim, cot, direct, gate, mapcoder, pycapsule

MODULES: dict[str, ModuleType] = {"direct": direct, "cot": cot, "pycapsule": pycapsule, "codesim": codesim,
                                  "mapcoder": mapcoder, "gate": gate}


@dataclass(frozen=True)
class Arm:
    pipeline: str
    params: tuple[tuple[str, Any], ...]

    @property
    def name(self) -> str:
        if not self.params:
            return self.pipeline
        return f"{self.pipeline}[{','.join(f'{k}={v}' for k, v in self.params)}]"

    @property
    def run(self) -> Callable[..., Awaitable[None]]:
        run: Callable[..., Awaitable[None]] = MODULES[self.pipeline].run
        return run

    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)


def make_arm(pipeline: str, params: dict[str, Any] | None = None) -> Arm:
    """Validate a pipeline name and its parameters (unknown ones are an error naming them)."""
    if pipeline not in MODULES:
        raise SotacheckError(f"unknown pipeline {pipeline!r}; known: {', '.join(MODULES)}")
    defaults: dict[str, Any] = dict(MODULES[pipeline].DEFAULTS)
    unknown = sorted(set(params or {}) - set(defaults))
    if unknown:
        raise SotacheckError(f"pipeline {pipeline!r} has no parameter(s) {', '.join(unknown)}; "
                             f"its parameters: {', '.join(defaults) or 'none'}")
    merged = {**defaults, **(params or {})}
    for name, value in merged.items():
        if isinstance(defaults[name], int) and (not isinstance(value, int) or value < 0):
            raise SotacheckError(f"pipeline {pipeline!r}: parameter {name} must be a non-negative integer, got {value!r}")
    if pipeline == "gate" and (merged["base"] not in MODULES or merged["base"] == "gate"):
        raise SotacheckError(f"pipeline 'gate': base must be one of {', '.join(m for m in MODULES if m != 'gate')}, "
                             f"got {merged['base']!r}")
    return Arm(pipeline, tuple(sorted(merged.items())))
