"""The pipeline registry. A pipeline is a name, a parameter model that holds its paper's defaults and
constraints, and an async ``run(ctx, params)``; an arm is a pipeline with every parameter set.

Adding a pipeline is one new file in this folder and one line in ``REGISTRY`` (a lazy
:class:`~sotacheck.core.registry.Registry`, like every other kind of plug-in)::

    class Params(PipelineParams):
        max_attempts: int = Field(default=5, ge=0)

    async def run(ctx: PipelineContext, params: Params) -> None:
        ...  # the paper's algorithm box; reads params.max_attempts

    PIPELINE = Pipeline("pycapsule", Params, run)

Parameters are validated once, when an arm is made (a run spec, a sweep grid, ``--param``); a bad one is
a one-line ``UsageError`` naming the pipeline and the parameter, and ``run`` receives the typed object.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from sotacheck.core.arms import arm_columns, arm_label
from sotacheck.core.errors import UsageError
from sotacheck.core.registry import Entry, Registry, named

if TYPE_CHECKING:
    from sotacheck.reruns.context import PipelineContext
    from sotacheck.reruns.original.checkout import OriginalClass


class PipelineParams(BaseModel):
    """The base of every pipeline's parameters: frozen, strict (an integer must be an integer, not ``"3"``),
    and no names other than the declared ones."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


P = TypeVar("P", bound=PipelineParams)


@dataclass(frozen=True)
class SamplingDefaults:
    """A method's sampling as its authors ran it, used unless the run spec overrides it. ``max_tokens`` None:
    no completion cap (the model's own limit: on the embedded server, its 4096-token context)."""

    temperature: float
    top_p: float
    max_tokens: int | None
    source: str


# MapCoder's released code (src/models/OpenAI.py: temperature 0, top_p 0.95, max_tokens None) for MapCoder and
# the baselines it runs; CodeSim's (CodeGenerator's main.py: temperature 0, top_p 0.95) the same, its model
# class capping replies at 4096 tokens, which the embedded model's 4096-token context reaches first
# (docs/fidelity.md). PyCapsule's paper states none; it gets this one too, so that all methods run alike.
MAPCODER_SAMPLING = SamplingDefaults(0.0, 0.95, None, "MapCoder's released code: temperature 0, top_p 0.95, "
                                     "no max_tokens (src/models/OpenAI.py)")
CODESIM_SAMPLING = SamplingDefaults(0.0, 0.95, None, "CodeSim's released code: temperature 0, top_p 0.95 "
                                    "(src/main.py); its 4096-token reply cap read as no cap (docs/fidelity.md)")
PYCAPSULE_SAMPLING = SamplingDefaults(0.0, 0.95, None, "not stated by the PyCapsule paper: MapCoder's and "
                                      "CodeSim's setting (temperature 0, top_p 0.95, no max_tokens)")


@dataclass(frozen=True)
class Pipeline(Generic[P]):
    """``original`` is set for a pipeline that runs one of the authors' classes from a checkout the run names.

    ``revision`` goes up by one whenever a change alters what the pipeline sends or does with a reply (its
    structure, prompts, parsing, feedback). A run records the revision of every pipeline it runs and refuses to
    resume or replay under another, since its stored calls would no longer answer; docs/fidelity.md lists what
    each revision changed."""

    name: str
    params: type[P]
    run: Callable[[PipelineContext, P], Awaitable[None]]
    original: OriginalClass | None = None
    sampling: SamplingDefaults = MAPCODER_SAMPLING
    revision: int = 1

    def parse(self, raw: Mapping[str, Any] | None = None) -> P:
        """The typed parameters: the paper's defaults, overridden by ``raw``, checked against the constraints."""
        try:
            return self.params.model_validate(dict(raw or {}))
        except ValidationError as exc:
            raise UsageError(self._explain(exc)) from None

    def defaults(self) -> P:
        return self.params()

    def _explain(self, exc: ValidationError) -> str:
        errors = exc.errors()
        first = errors[0]
        name = ".".join(str(part) for part in first["loc"]) or "(parameters)"
        if first["type"] == "extra_forbidden":
            known = ", ".join(self.params.model_fields) or "none"
            message = f"not a parameter of this pipeline (its parameters: {known})"
        elif first["type"] == "value_error":
            message = str(first.get("ctx", {}).get("error", first["msg"]))
        else:
            message = first["msg"]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"pipeline {self.name!r}: parameter {name}: {message}{more}"


_HERE = "sotacheck.reruns.pipelines"
_ORIGINAL = f"{_HERE}.original"
# A pipeline's name -> the module that defines its ``PIPELINE`` (imported on first use); ``module:NAME`` where a
# module defines several (the ``@original`` pipelines run the authors' own classes).
REGISTRY: Registry[Pipeline[Any]] = Registry("pipeline", {
    "direct": Entry(f"{_HERE}.direct", "direct prompting: one call"),
    "cot": Entry(f"{_HERE}.cot", "zero-shot chain of thought: one call"),
    "pycapsule": Entry(f"{_HERE}.pycapsule", "PyCapsule: a programmer agent and deterministic tools"),
    "codesim": Entry(f"{_HERE}.codesim", "CodeSim: simulation-driven planning and debugging"),
    "mapcoder": Entry(f"{_HERE}.mapcoder", "MapCoder: retrieval, planning, coding and debugging agents"),
    "gate": Entry(f"{_HERE}.evidence_gate", "the evidence-gated commitment wrapper around a base pipeline"),
    "cot-fewshot": Entry(f"{_HERE}.cot_fewshot", "few-shot chain of thought, as MapCoder and CodeSim ran it"),
    "mapcoder@original": Entry(f"{_ORIGINAL}:MAPCODER", "MapCoder's released class, from a checkout"),
    "direct@original": Entry(f"{_ORIGINAL}:DIRECT", "MapCoder's Direct baseline, from a checkout"),
    "cot@original": Entry(f"{_ORIGINAL}:COT", "MapCoder's CoT baseline, from a checkout"),
    "selfplanning@original": Entry(f"{_ORIGINAL}:SELFPLANNING", "MapCoder's Self-Planning, from a checkout"),
    "analogical@original": Entry(f"{_ORIGINAL}:ANALOGICAL", "MapCoder's Analogical, from a checkout"),
    "codesim@original": Entry(f"{_ORIGINAL}:CODESIM", "CodeSim's own class, from a checkout"),
    "codesim-wd@original": Entry(f"{_ORIGINAL}:CODESIM_WD", "CodeSim without debugging, from a checkout"),
    "codesim-wpv@original": Entry(f"{_ORIGINAL}:CODESIM_WPV", "CodeSim without plan verification, from a checkout"),
    "codesim-wpvd@original": Entry(f"{_ORIGINAL}:CODESIM_WPVD", "CodeSim without either, from a checkout"),
}, default_attribute="PIPELINE", check=named(Pipeline, "pipeline", "a Pipeline"))


def names() -> list[str]:
    """Every registered pipeline, in registry order."""
    return list(REGISTRY.names())


def get_pipeline(name: str) -> Pipeline[Any]:
    """The registered pipeline ``name`` (its module is imported on first use); an unknown name is a
    ``UsageError`` listing the registered ones."""
    return REGISTRY.get(name)


@dataclass(frozen=True)
class Arm:
    """One arm of a run: a pipeline with all its parameters (defaults filled in, validated)."""

    pipeline: str
    params: PipelineParams

    @classmethod
    def of(cls, pipeline: str, params: Mapping[str, Any] | None = None) -> Arm:
        """Validate a pipeline name and its parameters (once); errors name the pipeline and the parameter."""
        return cls(pipeline, get_pipeline(pipeline).parse(params))

    @property
    def name(self) -> str:
        """The display label, ``codesim[d=5,p=5]`` (parameters sorted by name; just ``direct`` without any)."""
        return arm_label(self.pipeline, self.params.model_dump())

    def param_dict(self) -> dict[str, Any]:
        """The parameters as plain values (what a Ray task or the store carries)."""
        return self.params.model_dump()

    def columns(self) -> dict[str, Any]:
        """The outcome-table columns that identify this arm (``arm``, ``pipeline``, ``param.<name>``)."""
        return arm_columns(self.pipeline, self.params.model_dump())

    def base(self) -> str | None:
        """The pipeline a wrapper (the gate) runs inside it, or None."""
        base = getattr(self.params, "base", None)
        return base if isinstance(base, str) and base in REGISTRY else None

    def sampling_defaults(self) -> SamplingDefaults:
        """The method's own sampling; a wrapper (the gate) runs with its base pipeline's."""
        return get_pipeline(self.base() or self.pipeline).sampling

    def revisions(self) -> dict[str, int]:
        """The revision of each pipeline the arm runs: its own and, for a wrapper (the gate), its base's."""
        base = self.base()
        return {name: get_pipeline(name).revision for name in (self.pipeline, *([base] if base else []))}

    async def run(self, ctx: PipelineContext) -> None:
        await get_pipeline(self.pipeline).run(ctx, self.params)
