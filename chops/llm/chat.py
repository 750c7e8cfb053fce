"""The adapter shared by every real provider: a langchain chat model behind ``Provider.complete``.

Both real providers are langchain ``BaseChatModel``s (``ChatOpenAI``; our ``ChatLlamaCppLocal``)
that accept an OpenAI-style ``response_format`` and report ``usage_metadata``; this module turns
our ``Message`` tuples into langchain messages and the reply into a ``Completion``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from pydantic import BaseModel

from chops.llm.base import Completion, LLMError, Message
from chops.settings import RoleSettings

_LC_TYPES = {"system": "SystemMessage", "user": "HumanMessage", "assistant": "AIMessage"}


def to_langchain(messages: list[Message]) -> list:
    """Our ``(role, content)`` tuples as langchain message objects."""
    from langchain_core import messages as lc

    return [getattr(lc, _LC_TYPES[role])(content=content) for role, content in messages]


def _closed(node: object) -> bool:
    """Close every object schema (no extra keys); True when every property is also required."""
    strict = True
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
            strict = set(node.get("required", ())) == set(node["properties"])
        for value in node.values():
            strict = _closed(value) and strict
    elif isinstance(node, list):
        for value in node:
            strict = _closed(value) and strict
    return strict


def response_format(schema: type[BaseModel]) -> dict:
    """The OpenAI ``response_format`` of type ``json_schema`` for a pydantic model.

    ``strict`` is requested only when the schema qualifies (OpenAI's strict mode needs every
    property required); servers like vLLM and llama.cpp constrain decoding either way.
    """
    body = copy.deepcopy(schema.model_json_schema())
    strict = _closed(body)
    return {"type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": body, "strict": strict}}


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)


class ChatModelProvider:
    """One role's view of a langchain chat model: ``complete`` → ``Completion``."""

    def __init__(self, name: str, chat_model, settings: RoleSettings,
                 translate_error: Callable[[Exception], LLMError | None]):
        """``translate_error`` maps a provider library exception to an ``LLMError`` (None: unknown)."""
        self.name = name
        self.model = settings.model
        self.prices = settings.prices()
        self.settings = settings
        self.chat = chat_model
        self._translate = translate_error

    def complete(self, role: str, messages: list[Message], schema: type[BaseModel] | None) -> Completion:
        """Invoke the chat model, with the schema as ``response_format`` when one is given."""
        kwargs = {"response_format": response_format(schema)} if schema is not None else {}
        try:
            reply = self.chat.invoke(to_langchain(messages), **kwargs)
        except LLMError as exc:
            exc.role, exc.provider = exc.role or role, exc.provider or self.name
            raise
        except Exception as exc:
            err = self._translate(exc)
            if err is None:
                raise
            err.role, err.provider = role, self.name
            raise err from exc
        usage = reply.usage_metadata or {}
        details = usage.get("input_token_details") or {}
        cached = details.get("cache_read")
        meta = reply.response_metadata or {}
        return Completion(
            text=_text_of(reply.content),
            model=meta.get("model_name") or self.model,
            prompt_tokens=usage.get("input_tokens"),
            completion_tokens=usage.get("output_tokens"),
            cache_hit=None if cached is None else cached > 0,
            cached_tokens=cached,
        )
