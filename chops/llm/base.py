"""The one LLM seam the pipeline is handed: ``LLM.structured`` and ``LLM.text``.

Provider adapters (scripted, openai, local) only turn messages into raw reply text plus usage
(a ``Completion``); everything shared — JSON validation against the pydantic model, the single
retry with the validation error, error codes and accounting — lives here, so every provider
behaves the same to the caller.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from string import Template
from typing import Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from chops.llm.accounting import CallRecord, Ledger, cost_usd
from chops.settings import REPO_ROOT

Message = tuple[str, str]  # (role in {"system", "user", "assistant"}, content)
T = TypeVar("T", bound=BaseModel)

MESSAGE_ROLES = ("system", "user", "assistant")
RUN_LEDGER_RECORDS = 1000  # newest calls the run-wide ledger keeps; turns and eval cases keep their own
PROMPTS_DIR = REPO_ROOT / "prompts"
# The tier calls are asked at unless they name one: the agent sets it around each iteration
# (``LLM.at_tier``), so the classifier, executor and verifier need not pass it through every call.
# A context variable: each thread (a web request, an eval worker) has its own.
_TIER = contextvars.ContextVar("chops_llm_tier", default=0)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


OUTPUT_KEPT = 800  # characters of an invalid reply an ``LLMError`` keeps


class LLMError(Exception):
    """A model call failed. ``code`` is stable for callers and the API:

    ``timeout``, ``unreachable``, ``server_error``, ``rate_limited``, ``auth``, ``bad_request``,
    ``invalid_output`` (twice not valid for the schema), ``not_installed`` (local model file or engine missing),
    ``disabled`` (real local model switched off in tests), ``unknown_role``, ``no_api_key``,
    ``provider_error`` (anything else).
    """

    def __init__(self, code: str, message: str, *, role: str | None = None, provider: str | None = None,
                 output: str | None = None):
        """``output``: for ``invalid_output``, the end of what the model wrote (where it went wrong: a reply
        cut off at its token limit is long), which the trace keeps."""
        super().__init__(message)
        self.code = code
        self.message = message
        self.role = role
        self.provider = provider
        self.output = output

    def __str__(self) -> str:
        where = "/".join(x for x in (self.provider, self.role) if x)
        return f"[{self.code}] {self.message}" + (f" ({where})" if where else "")


@dataclass
class Completion:
    """One raw reply of a provider and what it reported about it."""

    text: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cache_hit: bool | None = None
    cached_tokens: int | None = None


class Provider(Protocol):
    """What an adapter offers for one role: a name, a model, prices and ``complete``."""

    name: str
    model: str
    prices: tuple[float, float]

    def complete(self, role: str, messages: list[Message], schema: type[BaseModel] | None,
                 on_delta: Callable[[str], None] | None = None) -> Completion:
        """Send ``messages``; with ``schema``, constrain the reply to its JSON schema; with ``on_delta``,
        stream: hand each piece of the reply text to it as it is generated. Raises LLMError."""
        ...


def load_prompt(name: str) -> str:
    """The text of ``prompts/<name>.txt``."""
    return (PROMPTS_DIR / f"{name}.txt").read_text(encoding="utf-8")


def parse_structured(text: str, schema: type[T]) -> T:
    """Validate a reply against ``schema`` (a surrounding markdown code fence is tolerated)."""
    match = _FENCE.match(text)
    return schema.model_validate_json(match.group(1) if match else text.strip())


def _check_messages(messages: list[Message]) -> list[Message]:
    msgs = [tuple(m) for m in messages]
    for m in msgs:
        if len(m) != 2 or m[0] not in MESSAGE_ROLES or not isinstance(m[1], str):
            raise ValueError(f"a message is (role in {MESSAGE_ROLES}, str content); got {m!r}")
    if not msgs:
        raise ValueError("no messages")
    return msgs  # type: ignore[return-value]


def _compact_errors(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "\n".join(f"- {'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors())
    return f"- {exc}"


class LLM:
    """Per-role providers behind one interface, with a run-wide ledger (``self.ledger``)."""

    def __init__(self, providers: Mapping[str, Provider],
                 tiers: Mapping[str, Sequence[tuple[str, Provider]]] | None = None):
        """``providers`` maps each role to its adapter (adapters may share one loaded model); ``tiers``
        maps a role to its ordered (name, adapter) tiers, cheapest first (EcoAssistant's hierarchy)."""
        self.providers = dict(providers)
        self.tiers = {role: list(ts) for role, ts in (tiers or {}).items() if ts}
        self.ledger = Ledger(maxlen=RUN_LEDGER_RECORDS)  # bounded: a service makes calls for months

    def provider(self, role: str, tier: int = 0) -> Provider:
        """The adapter of ``role`` at ``tier`` (0 = the first; past the last = the last); an
        unconfigured role is ``LLMError("unknown_role")``."""
        if role in self.tiers:
            return self.tiers[role][min(tier, len(self.tiers[role]) - 1)][1]
        try:
            return self.providers[role]
        except KeyError:
            raise LLMError("unknown_role", f"no model configured for role {role!r}", role=role) from None

    def tier_name(self, role: str, tier: int = 0) -> str | None:
        """The name of ``role``'s tier ``tier`` (clamped to the last); None for a role without tiers."""
        if role in self.tiers:
            return self.tiers[role][min(tier, len(self.tiers[role]) - 1)][0]
        return None

    def tier_count(self, role: str) -> int:
        """How many tiers ``role`` has (1 without a hierarchy)."""
        return len(self.tiers.get(role, ())) or 1

    @staticmethod
    @contextlib.contextmanager
    def at_tier(tier: int):
        """Within the block, calls that name no tier are asked at ``tier`` (in this thread only)."""
        token = _TIER.set(tier)
        try:
            yield
        finally:
            _TIER.reset(token)

    def structured(self, role: str, messages: list[Message], schema: type[T], *,
                   ledger: Ledger | None = None, on_delta: Callable[[str], None] | None = None,
                   tier: int | None = None) -> T:
        """Ask ``role``'s model for an instance of ``schema``.

        The provider constrains decoding to the schema; a reply that still fails pydantic validation
        is retried once with the validation errors appended, then ``LLMError("invalid_output")``.
        Every attempt is one ``CallRecord`` (both marked ``retried`` when a retry happened) naming the
        tier that answered (``tier``, default: the one set by ``at_tier``, else the first).
        ``on_delta`` receives the raw JSON text of the first attempt as it streams.
        """
        msgs = _check_messages(messages)
        tier = _TIER.get() if tier is None else tier
        prov, name = self.provider(role, tier), self.tier_name(role, tier)
        comp, rec = self._attempt(role, prov, msgs, schema, ledger=ledger, on_delta=on_delta, tier=name)
        try:
            result = parse_structured(comp.text, schema)
        except ValidationError as first:
            rec.error, rec.retried = "invalid_output", True
            self._record(rec, ledger)
            retry_msgs = msgs + [("assistant", comp.text),
                                 ("user", Template(load_prompt("llm_retry")).substitute(errors=_compact_errors(first)))]
            comp, rec = self._attempt(role, prov, retry_msgs, schema, ledger=ledger, retried=True, tier=name)
            rec.retried = True
            try:
                result = parse_structured(comp.text, schema)
            except ValidationError as second:
                rec.error = "invalid_output"
                self._record(rec, ledger)
                raise LLMError("invalid_output",
                               f"reply did not match {schema.__name__} twice:\n{_compact_errors(second)}",
                               role=role, provider=prov.name, output=comp.text[-OUTPUT_KEPT:]) from second
        self._record(rec, ledger)
        return result

    def text(self, role: str, messages: list[Message], *, ledger: Ledger | None = None,
             tier: int | None = None) -> str:
        """Ask ``role``'s model (at ``tier``, as in ``structured``) for free text; one ``CallRecord``."""
        msgs = _check_messages(messages)
        tier = _TIER.get() if tier is None else tier
        comp, rec = self._attempt(role, self.provider(role, tier), msgs, None, ledger=ledger,
                                  tier=self.tier_name(role, tier))
        self._record(rec, ledger)
        return comp.text

    def _all_providers(self) -> list[Provider]:
        """Every distinct adapter, of every role and tier."""
        every = [*self.providers.values(), *(p for ts in self.tiers.values() for _, p in ts)]
        return list({id(p): p for p in every}.values())

    @property
    def warmable(self) -> bool:
        """Whether any role's provider keeps prompt caches worth warming (the embedded engine)."""
        return any(hasattr(p, "warm") for p in self._all_providers())

    def load(self) -> None:
        """Start every embedded engine now. Call it from the main thread: see ``chops.llm.engine``."""
        for prov in self._all_providers():
            engine = getattr(prov, "engine", None)
            if engine is not None:
                engine.start()

    def warm(self, role: str, system: str) -> bool:
        """Have the engine of every tier of ``role`` cache the static prompt head ``system`` (providers
        that keep prompt caches; others ignore it). True when something was warmed. Raises ``LLMError``."""
        warmed = False
        for tier in range(self.tier_count(role)):
            warm = getattr(self.provider(role, tier), "warm", None)
            if warm is not None:
                warm(system)
                warmed = True
        return warmed

    def close(self) -> None:
        """Release provider resources (the local model); the LLM is unusable afterwards."""
        for prov in self._all_providers():
            close = getattr(prov, "close", None)
            if close:
                close()

    # --- internals -----------------------------------------------------------------------
    def _attempt(self, role: str, prov: Provider, msgs: list[Message], schema: type[BaseModel] | None,
                 *, ledger: Ledger | None = None, retried: bool = False, tier: str | None = None,
                 on_delta: Callable[[str], None] | None = None) -> tuple[Completion, CallRecord]:
        """One provider call; on failure the attempt is recorded and the error raised as LLMError."""
        chars_in = sum(len(c) for _, c in msgs)
        t0 = time.perf_counter()
        first: list[float] = []  # seconds to the first streamed piece (time to first token)

        def timed(piece: str) -> None:
            if not first:
                first.append(time.perf_counter() - t0)
            on_delta(piece)
        try:
            comp = prov.complete(role, msgs, schema, timed if on_delta else None)
        except (LLMError, AssertionError) as exc:
            # AssertionError = a scripted test double that ran out of replies: must fail loudly as is.
            self._record(CallRecord(role=role, provider=prov.name, model=prov.model, tier=tier, chars_in=chars_in,
                                    latency_s=time.perf_counter() - t0, retried=retried,
                                    error=getattr(exc, "code", type(exc).__name__)), ledger)
            raise
        except Exception as exc:
            self._record(CallRecord(role=role, provider=prov.name, model=prov.model, tier=tier, chars_in=chars_in,
                                    latency_s=time.perf_counter() - t0, retried=retried,
                                    error="provider_error"), ledger)
            raise LLMError("provider_error", f"{type(exc).__name__}: {exc}", role=role,
                           provider=prov.name) from exc
        latency = time.perf_counter() - t0
        rec = CallRecord(
            role=role, provider=prov.name, model=comp.model or prov.model, tier=tier, chars_in=chars_in,
            chars_out=len(comp.text), prompt_tokens=comp.prompt_tokens,
            completion_tokens=comp.completion_tokens, latency_s=latency,
            cost_usd=cost_usd(prov.prices, comp.prompt_tokens, comp.completion_tokens, chars_in, len(comp.text)),
            cache_hit=comp.cache_hit, cached_tokens=comp.cached_tokens, retried=retried,
            first_token_s=first[0] if first else None)
        return comp, rec

    def _record(self, rec: CallRecord, ledger: Ledger | None) -> None:
        self.ledger.add(rec)
        if ledger is not None and ledger is not self.ledger:
            ledger.add(rec)


def schema_json(schema: type[BaseModel]) -> dict:
    """The JSON schema of a pydantic model, as sent to providers."""
    return schema.model_json_schema()


def dumps_reply(reply: object) -> str:
    """Reply text for a scripted reply: pydantic instance or dict → JSON, str as is."""
    if isinstance(reply, BaseModel):
        return reply.model_dump_json(by_alias=True)
    if isinstance(reply, (dict, list)):
        return json.dumps(reply)
    if isinstance(reply, str):
        return reply
    raise TypeError(f"a scripted reply is a pydantic model, dict, str or Exception; got {type(reply).__name__}")
