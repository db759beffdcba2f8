"""The replay back-end: a model that serves nothing. In replay every call must be found in the run's own
store (a miss is an error naming the call); the model and endpoint identities are the recorded ones, so the
cache keys a replay derives are the recorded keys."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from sotacheck.core.errors import InputError, SotacheckError
from sotacheck.reruns.model.base import ChatRequest, ChatResponse

if TYPE_CHECKING:
    from sotacheck.reruns.model.registry import ModelTarget


class ReplayModel:
    """Serves nothing: in replay every call must be found in the store (a miss is an error naming it)."""

    def __init__(self, identity: str, endpoint: str) -> None:
        self._identity, self._endpoint = identity, endpoint

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def endpoint(self) -> str:
        return self._endpoint

    async def complete(self, request: ChatRequest) -> ChatResponse:  # pragma: no cover - never reached
        raise SotacheckError("replay model cannot answer")


@asynccontextmanager
async def open_replay(target: ModelTarget) -> AsyncIterator[ReplayModel]:
    if target.recorded_identity is None:
        raise InputError("replay needs a run that recorded its model identity")
    yield ReplayModel(*target.recorded_identity)
