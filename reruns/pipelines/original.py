"""The authors' released code as pipelines: each ``NAME@original`` runs one of their prompting classes,
unmodified, from a checkout the run names (``--original-code mapcoder=PATH``, or ``original_code`` in a
spec), in a child process of its own (``reruns.original``). Nothing of their code or prompts is in
sotacheck: the class is loaded at run time, and ``run.json`` records the checkout's path, commit or content
hash, and the class.

- ``mapcoder@original``: Md-Ashraful-Pramanik/MapCoder, ``promptings.MapCoder.MapCoder(k, t)``;
- ``direct@original``, ``cot@original``, ``selfplanning@original``, ``analogical@original``: the same
  repository's ``DirectStrategy``, ``CoTStrategy``, ``SelfPlanningStrategy``, ``AnalogicalStrategy``;
- ``codesim@original``: kagnlp/CodeGenerator, ``promptings.CodeSIM.CodeSIM`` with p → ``max_plan_try`` and
  d → ``max_debug_try``; ``codesim-wd@original``, ``codesim-wpv@original``, ``codesim-wpvd@original``: its
  ablations ``promptings.variations.CodeSIMWD`` (no debugging), ``CodeSIMWPV`` (no plan verification) and
  ``CodeSIMWPVD`` (neither), same parameters.

Their other CodeSim variants are not offered: ``CodeSIMA`` runs tests the model writes itself, in their own
process (the harness runs only a problem's visible tests), and ``CodeSIMC`` is their competitive-programming
setting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import Field

from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.original.checkout import OriginalClass
from sotacheck.reruns.original.runner import run_original
from sotacheck.reruns.pipelines.registry import CODESIM_SAMPLING, MAPCODER_SAMPLING, Pipeline, PipelineParams


class MapCoderParams(PipelineParams):
    k: int = Field(default=3, ge=1, le=9, description="exemplars recalled (their prompt spells 1..9 out)")
    t: int = Field(default=5, ge=0, description="their improvement loop: t sample-I/O tests and t improvements")


class CodeSimParams(PipelineParams):
    p: int = Field(default=5, ge=1, description="max_plan_try")
    d: int = Field(default=5, ge=0, description="max_debug_try")


class NoParams(PipelineParams):
    pass


P = TypeVar("P", bound=PipelineParams)


def _original(name: str, original: OriginalClass, params: type[P],
              constructor: Callable[[P], dict[str, Any]]) -> Pipeline[P]:
    async def run(ctx: PipelineContext, values: P) -> None:
        await run_original(ctx, original, constructor(values))

    sampling = CODESIM_SAMPLING if original.repository == "codegenerator" else MAPCODER_SAMPLING
    return Pipeline(name, params, run, original=original, sampling=sampling)


def _mapcoder_class(module: str, name: str) -> OriginalClass:
    return OriginalClass("mapcoder", module, name)


def _codesim_class(module: str, name: str) -> OriginalClass:
    return OriginalClass("codegenerator", module, name)


def _no_arguments(values: NoParams) -> dict[str, Any]:
    return {}


def _codesim_arguments(values: CodeSimParams) -> dict[str, Any]:
    return {"max_plan_try": values.p, "max_debug_try": values.d}


MAPCODER = _original("mapcoder@original", _mapcoder_class("promptings.MapCoder", "MapCoder"), MapCoderParams,
                     lambda values: {"k": values.k, "t": values.t})
DIRECT = _original("direct@original", _mapcoder_class("promptings.Direct", "DirectStrategy"), NoParams, _no_arguments)
COT = _original("cot@original", _mapcoder_class("promptings.CoT", "CoTStrategy"), NoParams, _no_arguments)
SELFPLANNING = _original("selfplanning@original", _mapcoder_class("promptings.SelfPlanning", "SelfPlanningStrategy"),
                         NoParams, _no_arguments)
ANALOGICAL = _original("analogical@original", _mapcoder_class("promptings.Analogical", "AnalogicalStrategy"),
                       NoParams, _no_arguments)
CODESIM = _original("codesim@original", _codesim_class("promptings.CodeSIM", "CodeSIM"), CodeSimParams,
                    _codesim_arguments)
CODESIM_WD = _original("codesim-wd@original", _codesim_class("promptings.variations.CodeSIMWD", "CodeSIMWD"),
                       CodeSimParams, _codesim_arguments)
CODESIM_WPV = _original("codesim-wpv@original", _codesim_class("promptings.variations.CodeSIMWPV", "CodeSIMWPV"),
                        CodeSimParams, _codesim_arguments)
CODESIM_WPVD = _original("codesim-wpvd@original", _codesim_class("promptings.variations.CodeSIMWPVD", "CodeSIMWPVD"),
                         CodeSimParams, _codesim_arguments)
