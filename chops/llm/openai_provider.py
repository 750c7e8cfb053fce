"""A role served by any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, ``chops model serve``)."""

from __future__ import annotations

import os

from chops.llm.base import LLMError
from chops.llm.chat import ChatProvider, Endpoint

# A self-hosted server usually ignores the key, but the client insists on one.
_PLACEHOLDER_KEY = "not-needed"


class OpenAIProvider(ChatProvider):
    """The endpoint named by the role's settings; nothing is connected until the first call."""

    name = "openai"

    def endpoint(self) -> Endpoint:
        """``base_url`` and the key from the env var the settings *name* (never stored in settings or logs)."""
        s = self.settings
        api_key = os.environ.get(s.api_key_env) or None
        if api_key is None and s.base_url is None:
            raise LLMError("no_api_key", f"set {s.api_key_env} (or a base_url for a local server)")
        # A llama.cpp server (``chops model serve``) also keeps each prompt's KV cache for reuse.
        extra = {"cache_prompt": True} if s.llama_cpp else {}
        return Endpoint(base_url=s.base_url, api_key=api_key or _PLACEHOLDER_KEY, llama_cpp=s.llama_cpp,
                        extra_body=extra)
