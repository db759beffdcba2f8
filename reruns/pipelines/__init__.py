"""Pipelines, one short file per method; an arm's name is the pipeline with all its parameters."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from reruns.errors import SotacheckError
from reruns.pipelines import cot, direct, pycapsule

MODULES: dict[str, ModuleType] = {"direct": direct, "cot": cot, "pycapsule": pycapsule}


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
    return Arm(pipeline, tuple(sorted(merged.items())))
