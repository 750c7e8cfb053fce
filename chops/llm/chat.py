"""The one provider code path: OpenAI-style chat completions through ``langchain-openai``'s ``ChatOpenAI``.

Every real provider is an OpenAI-compatible endpoint: OpenAI itself, vLLM, Ollama, a llama.cpp
server started by ``chops model serve``, or the embedded engine (``chops.llm.engine``), which is a
llama.cpp server inside this process. ``ChatProvider`` turns our ``Message`` tuples into a request,
asks for the schema as ``response_format`` (json_schema), optionally streams, and turns the reply
and its usage into a ``Completion``. Subclasses only say where the endpoint is (``endpoint``).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from pydantic import BaseModel

from chops.llm.base import Completion, LLMError, Message
from chops.settings import RoleSettings

_LC_TYPES = {"system": "SystemMessage", "user": "HumanMessage", "assistant": "AIMessage"}
# llama.cpp's own JSON-schema grammar lets the model write whitespace between tokens (its ``space`` rule); with
# that rule empty the reply is compact JSON and the model spends no tokens on newlines and indentation (an
# operation call: 36 tokens -> 19). The engine is built without llguidance (which is fetched from git), so the
# grammar is llama.cpp's GBNF, converted here by llama.cpp's own converter.
_SPACE_RULE = re.compile(r"^space ::= .*$", re.MULTILINE)


@dataclass
class Endpoint:
    """Where and how to reach an OpenAI-compatible chat-completions API."""

    base_url: str | None  # None: api.openai.com
    api_key: str
    llama_cpp: bool = False  # llama.cpp's server: compact-JSON GBNF grammar, prompt cache
    extra_body: dict = field(default_factory=dict)

    def structure(self, schema: type[BaseModel]) -> dict:
        """Request fields that constrain the reply to ``schema``: the standard ``response_format``, or
        for llama.cpp a compact-JSON ``grammar`` (GBNF, sent in the request's extra body) — except
        for a one-field choice (see ``is_single_choice``), which keeps the standard format."""
        if not self.llama_cpp or is_single_choice(schema):
            return {"response_format": response_format(schema)}
        return {"extra_body": {**self.extra_body, "grammar": compact_grammar(schema)}}


@lru_cache(maxsize=64)
def compact_grammar(schema: type[BaseModel]) -> str:
    """The GBNF grammar of ``schema`` (llama.cpp's converter), for JSON without optional whitespace. Cached: it is
    asked for on every call and the operation-call union's schema is the largest the pipeline builds."""
    from xllamacpp import json_schema_to_grammar  # llama.cpp's converter; only a llama.cpp endpoint needs it

    body = copy.deepcopy(schema.model_json_schema())
    _closed(body)
    grammar, found = _SPACE_RULE.subn('space ::= ""', json_schema_to_grammar(json.dumps(body)))
    if found != 1:  # the converter changed: without this rule the replies would not be compact
        raise RuntimeError(f"unexpected grammar for {schema.__name__}: not one space rule to empty")
    return grammar


@lru_cache(maxsize=64)
def is_single_choice(schema: type[BaseModel]) -> bool:
    """Whether ``schema`` is a single required enum field (a classifier's route, the chooser's pick).

    Why such a decision keeps the JSON with whitespace the model likes to write (``{\n  "route": "…"``):
    on the 102 visible CPHOS questions the level-1 classifier was right on 100 that way, 97 with
    compact JSON, and 101 asked for the bare value — but in the full evaluation the bare value let a
    retry with the verifier's feedback flip look-ups ("tell me about the user Bob") to the profile
    route (4 of 68 system rows wrong). The route decision costs ~6 more tokens this way.
    """
    body = schema.model_json_schema()
    props = body.get("properties", {})
    return len(props) == 1 and body.get("required") == list(props) and "enum" in next(iter(props.values()))


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
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": body, "strict": strict}}


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


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)


class ChatProvider:
    """One role's view of an OpenAI-compatible endpoint: ``complete`` → ``Completion``.

    The ``ChatOpenAI`` client is built on the first call, from ``endpoint()``, so building a provider
    connects to nothing (and the embedded engine starts only when a role first needs it).
    """

    name = "openai"

    def __init__(self, settings: RoleSettings):
        """Decoding settings (model, temperature, token limit, timeout, prices) of one role."""
        self.model = settings.model
        self.prices = settings.prices()
        self.settings = settings
        self._chat = None
        self._endpoint: Endpoint | None = None

    def endpoint(self) -> Endpoint:
        """Where the endpoint is; may start it (the embedded engine). Raises ``LLMError``."""
        raise NotImplementedError

    def _client(self):
        if self._chat is None:
            from langchain_openai import ChatOpenAI

            ep = self._endpoint = self.endpoint()
            s = self.settings
            self._chat = ChatOpenAI(
                model=s.model, base_url=ep.base_url, api_key=ep.api_key, temperature=s.temperature,
                max_tokens=s.max_tokens, timeout=s.timeout_s, stream_usage=True,
                max_retries=0,  # retries are a policy decision of the caller, not hidden latency
                extra_body=ep.extra_body or None)
        return self._chat

    def complete(self, role: str, messages: list[Message], schema: type[BaseModel] | None,
                 on_delta: Callable[[str], None] | None = None) -> Completion:
        """Send ``messages`` (with ``schema`` as ``response_format``); ``on_delta`` streams the text."""
        try:
            chat = self._client()
            kwargs = self._endpoint.structure(schema) if schema is not None else {}
            lc_messages = to_langchain(messages)
            reply = chat.invoke(lc_messages, **kwargs) if on_delta is None else \
                self._stream(chat, lc_messages, kwargs, on_delta)
        except LLMError as exc:
            exc.role, exc.provider = exc.role or role, exc.provider or self.name
            raise
        except Exception as exc:
            err = translate_openai_error(exc)
            if err is None:
                raise
            err.role, err.provider = role, self.name
            raise err from exc
        usage = reply.usage_metadata or {}
        cached = (usage.get("input_token_details") or {}).get("cache_read")
        return Completion(
            text=_text_of(reply.content),
            model=(reply.response_metadata or {}).get("model_name") or self.model,
            prompt_tokens=usage.get("input_tokens"),
            completion_tokens=usage.get("output_tokens"),
            cache_hit=None if cached is None else cached > 0,
            cached_tokens=cached,
        )

    @staticmethod
    def _stream(chat, lc_messages: list, kwargs: dict, on_delta: Callable[[str], None]):
        """Stream the reply, handing each text piece to ``on_delta``; returns the whole message."""
        whole = None
        for chunk in chat.stream(lc_messages, **kwargs):
            piece = _text_of(chunk.content)
            if piece:
                on_delta(piece)
            whole = chunk if whole is None else whole + chunk
        if whole is None:
            raise LLMError("server_error", "the endpoint streamed no reply")
        return whole
