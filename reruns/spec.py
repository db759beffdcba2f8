"""The run spec: everything that defines a run (dataset, arms, model, sampling, seed schedule, harness
limits), validated once, frozen into the store at the start and checked on resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sotacheck.core.errors import InputError, SotacheckError, describe_validation_error
from sotacheck.reruns.model.base import SamplingParams
from sotacheck.reruns.model.native_server import NativeMode, misfit, server_settings
from sotacheck.reruns.model.registry import EMBEDDED_SCHEMES, scheme_of
from sotacheck.reruns.pipelines import Arm, get_pipeline


class PipelineSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class RunSpec(BaseModel):
    """Everything that defines a run; frozen into the store at the start and checked on resume."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    dataset: str
    pipelines: list[PipelineSpec]
    model: str = "local"
    model_name: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    # Sampling: unset (None), each arm uses its method's paper defaults (``Pipeline.sampling``); set, it
    # applies to every arm. ``max_tokens: none`` is no cap (the model's own limit).
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | Literal["none"] | None = Field(default=None)
    repeats: int = Field(default=1, ge=1)
    limit: int | None = Field(default=None, ge=1)
    seed: int = 0
    concurrency: int = Field(default=4, ge=1)
    request_timeout_s: float = Field(default=300.0, gt=0)
    max_tries: int = Field(default=6, ge=1)
    test_timeout_s: float = Field(default=5.0, gt=0)
    # The embedded model (``local``, ``gguf:PATH``) only: 0 evaluates every prompt from an empty cache; A > 0
    # reuses a cached prompt prefix up to a multiple of A tokens, which gave the same replies byte for byte
    # wherever it was compared (bench/RESULTS.md, "Prefix reuse"). Part of the endpoint's identity. On llama-server
    # only the micro-batch (512) is an alignment, used where its start-up probe finds it exact.
    prefix_reuse: int = Field(default=0, ge=0)
    # The embedded model's engine: llama-cpp-python's server, or llama.cpp's llama-server with ``slots`` sequences
    # in flight and ``speculative`` drafting (reruns/model/native_server.py, docs/embedded-model.md). Named in the
    # endpoint's identity.
    engine: Literal["llama-cpp-python", "llama-server"] = "llama-cpp-python"
    slots: int = Field(default=1, ge=1)
    speculative: Literal["off", "ngram-simple"] = "off"
    data_dir: str | None = None
    # A hub dataset to read the benchmark from instead of local files (the benchmarks not bundled: MBPP-ET,
    # HumanEval+, MBPP+; ``benchmarks.registry.hub_datasets``); checked when the spec is made.
    hub_id: str | None = None
    # The authors' code checkouts the ``@original`` pipelines run from: repository (``mapcoder``,
    # ``codegenerator``) → path. Checked when the spec is made, so a wrong path fails before any model call.
    original_code: dict[str, str] = Field(default_factory=dict)

    @field_validator("pipelines")
    @classmethod
    def _known(cls, value: list[PipelineSpec]) -> list[PipelineSpec]:
        if not value:
            raise ValueError("at least one pipeline is needed")
        for spec in value:
            Arm.of(spec.name, spec.params)  # the registry's one check: an unknown pipeline or a bad parameter
        return value

    @model_validator(mode="after")
    def _prefix_reuse_needs_the_embedded_model(self) -> RunSpec:
        if self.prefix_reuse and scheme_of(self.model) not in EMBEDDED_SCHEMES:
            raise InputError(f"--prefix-reuse {self.prefix_reuse}: only the embedded model (local, gguf:PATH) reuses "
                             f"prompt prefixes here; --model {self.model!r} is served elsewhere")
        return self

    @model_validator(mode="after")
    def _engine_settings_fit(self) -> RunSpec:
        wrong = misfit(self.engine, self.slots, self.speculative, self.prefix_reuse,
                       embedded=scheme_of(self.model) in EMBEDDED_SCHEMES, model=self.model)
        if wrong:
            raise InputError(wrong)
        return self

    @property
    def server_settings(self) -> tuple[int, NativeMode | None]:
        """llama-cpp-python's prefix reuse and llama-server's mode, as the embedded server starts for this spec."""
        return server_settings(self.engine, self.slots, self.speculative, self.prefix_reuse)

    @model_validator(mode="after")
    def _hub_id_has_a_source(self) -> RunSpec:
        from sotacheck.reruns.benchmarks.registry import check_hub_id

        if self.hub_id is not None:
            check_hub_id(self.dataset, self.hub_id)
        return self

    @model_validator(mode="after")
    def _checkouts(self) -> RunSpec:
        from sotacheck.reruns.original.checkout import require_class, source_dir
        from sotacheck.reruns.original.runner import dataset_class

        for repository, path in self.original_code.items():
            source_dir(repository, path)
        for spec in self.pipelines:
            original = get_pipeline(spec.name).original
            if original is None:
                continue
            if original.repository not in self.original_code:
                raise InputError(f"pipeline {spec.name!r} runs the authors' code: name the checkout with "
                                 f"--original-code {original.repository}=PATH (spec field original_code)")
            require_class(original.repository, self.original_code[original.repository], original)
            dataset_class(self.dataset)
        return self

    @field_validator("max_tokens")
    @classmethod
    def _positive(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("must be at least 1, or 'none' for no cap")
        return value

    def arms(self) -> list[Arm]:
        return [Arm.of(p.name, p.params) for p in self.pipelines]

    def sampling(self, arm: Arm) -> SamplingParams:
        """What ``arm``'s calls are sampled with: the spec's values where set, else its method's defaults."""
        defaults = arm.sampling_defaults()
        cap = defaults.max_tokens if self.max_tokens is None else (None if self.max_tokens == "none" else self.max_tokens)
        return SamplingParams(defaults.temperature if self.temperature is None else self.temperature,
                              defaults.top_p if self.top_p is None else self.top_p, cap)

    def pipeline_revisions(self) -> dict[str, int]:
        """The revision of every pipeline the run's arms run (``run.json``'s ``pipeline_revisions``)."""
        return {name: revision for arm in self.arms() for name, revision in sorted(arm.revisions().items())}

    def arm_sampling(self) -> dict[str, dict[str, Any]]:
        """Each arm's sampling and where it comes from (``run.json``'s ``arm_sampling``; ``max_tokens`` "none" is
        no cap): the method's paper defaults, or the spec for the values it sets."""
        recorded = {}
        for arm in self.arms():
            used = self.sampling(arm)
            overridden = [name for name in ("temperature", "top_p", "max_tokens") if getattr(self, name) is not None]
            source = arm.sampling_defaults().source
            recorded[arm.name] = {"temperature": used.temperature, "top_p": used.top_p,
                                  "max_tokens": "none" if used.max_tokens is None else used.max_tokens,
                                  "source": (f"run spec ({', '.join(overridden)}); otherwise {source}" if overridden
                                             else source)}
        return recorded


def load_spec(path: Path) -> RunSpec:
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: cannot read the run spec ({exc})") from None
    return validate_spec(raw, str(path))


def validate_spec(raw: Any, where: str) -> RunSpec:
    try:
        return RunSpec.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"{where}: {describe_validation_error(exc, '(spec)')}") from None
    except SotacheckError as exc:
        raise type(exc)(f"{where}: {exc}") from None
