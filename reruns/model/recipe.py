"""A model client as data: what another process (a Ray gateway) needs to open the same client the driver
has, since a live client cannot be pickled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModelRecipe:
    """``kind`` is ``openai`` (an OpenAI-compatible endpoint, reopened from these fields) or ``replay`` (no
    client: every answer comes from the store)."""

    kind: str
    identity: str
    endpoint: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    retry: Any = None
    max_in_flight: int | None = None

    @classmethod
    def of(cls, model: Any) -> ModelRecipe:
        from sotacheck.reruns.model.openai_compat import OpenAICompatibleModel

        if isinstance(model, OpenAICompatibleModel):
            return cls("openai", model.identity, model.endpoint, model.base_url, model.api_key_env, model.retry,
                       model.max_in_flight)
        return cls("replay", model.identity, model.endpoint)

    def open(self) -> Any:
        """The client this recipe describes (None for ``replay``)."""
        if self.kind != "openai":
            return None
        from sotacheck.reruns.model.openai_compat import OpenAICompatibleModel

        return OpenAICompatibleModel(self.base_url or "", self.identity, api_key_env=self.api_key_env,
                                     retry=self.retry, endpoint_identity=self.endpoint,
                                     max_in_flight=self.max_in_flight)
