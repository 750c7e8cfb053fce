"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp server) via
``langchain-openai``'s ``ChatOpenAI``."""

from __future__ import annotations

import os

from chops.llm.base import LLMError
from chops.llm.chat import ChatModelProvider
from chops.settings import RoleSettings

# A self-hosted server usually ignores the key, but the client insists on one.
_PLACEHOLDER_KEY = "not-needed"


def translate_openai_error(exc: Exception) -> LLMError | None:
    """An ``LLMError`` with a stable code for an ``openai`` (or langchain-wrapped) exception."""
    import openai

    chain, seen = [], exc
    while seen is not None and len(chain) < 5:  # langchain re-raises its own types `from` openai's
        chain.append(seen)
        seen = seen.__cause__
    for e in chain:
        if isinstance(e, openai.APITimeoutError):
            return LLMError("timeout", f"the endpoint did not answer in time: {e}")
        if isinstance(e, openai.APIConnectionError):
            return LLMError("unreachable", f"cannot reach the endpoint: {e}")
        if isinstance(e, openai.APIStatusError):
            status = e.status_code
            code = ("auth" if status in (401, 403) else "rate_limited" if status == 429
                    else "server_error" if status >= 500 else "bad_request")
            return LLMError(code, f"HTTP {status} from the endpoint: {e.message}")
    return None


class OpenAIProvider(ChatModelProvider):
    """A role served by an OpenAI-compatible endpoint; nothing is connected until the first call."""

    def __init__(self, settings: RoleSettings):
        """Build the (lazy) client from one role's settings: model, base URL, key env var, limits."""
        from langchain_openai import ChatOpenAI

        # The key is read from the env var the settings *name* (never stored in settings/logs).
        api_key = os.environ.get(settings.api_key_env) or None
        self.missing_key = api_key is None and settings.base_url is None
        chat = ChatOpenAI(
            model=settings.model,
            base_url=settings.base_url,
            api_key=api_key or _PLACEHOLDER_KEY,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout=settings.timeout_s,
            max_retries=0,  # retries are a policy decision of the caller, not hidden latency
        )
        super().__init__("openai", chat, settings, translate_openai_error)

    def complete(self, role, messages, schema):
        """See ``ChatModelProvider.complete``; refuses up front when api.openai.com has no key."""
        if self.missing_key:
            raise LLMError("no_api_key", f"set {self.settings.api_key_env} (or a base_url for a local server)",
                           role=role, provider=self.name)
        return super().complete(role, messages, schema)
