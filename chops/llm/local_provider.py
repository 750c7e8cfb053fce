"""A role served by the embedded engine: the same ``ChatProvider`` pointed at the in-process server."""

from __future__ import annotations

from chops.llm.chat import ChatProvider, Endpoint
from chops.llm.engine import LocalEngine
from chops.settings import RoleSettings


class LocalProvider(ChatProvider):
    """One role on a shared ``LocalEngine`` (started by the first call of any role that uses it)."""

    name = "local"

    def __init__(self, engine: LocalEngine, settings: RoleSettings):
        """Wrap the shared ``engine`` with one role's decoding settings."""
        super().__init__(settings)
        self.engine = engine

    def endpoint(self) -> Endpoint:
        """The engine's loopback address and private key (starts the engine)."""
        return Endpoint(base_url=self.engine.base_url, api_key=self.engine.api_key, llama_cpp=True,
                        extra_body={"cache_prompt": True})

    def warm(self, system: str) -> None:
        """Evaluate ``system`` (a role's static prompt head) so later calls find it in a slot's cache."""
        from langchain_core.messages import HumanMessage, SystemMessage

        self._client().invoke([SystemMessage(content=system), HumanMessage(content="-")], max_tokens=1)

    def close(self) -> None:
        """Stop the shared engine."""
        self.engine.close()
        self._chat = None
