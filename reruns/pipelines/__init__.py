"""Pipelines, one short file per method, each registered in :mod:`.registry` with its typed parameters;
an arm's name is the pipeline with all its parameters."""

from __future__ import annotations

from sotacheck.reruns.pipelines.registry import Arm, Pipeline, PipelineParams, get_pipeline, names

__all__ = ["Arm", "Pipeline", "PipelineParams", "get_pipeline", "names"]
