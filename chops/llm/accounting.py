"""What every model call cost: one ``CallRecord`` per attempt, collected in a thread-safe ``Ledger``.

The paper measures cost in characters in/out; providers bill in tokens. We record both: characters
always, tokens when the provider reports them. Cost is computed from tokens; when a provider does not
report them, tokens are *estimated* as ``ceil(chars / 4)`` (the usual rule of thumb for English with
GPT-style tokenizers) so that a cost figure is never silently zero for a priced model.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Iterable

from pydantic import BaseModel

CHARS_PER_TOKEN = 4  # rule-of-thumb estimate, used only when a provider reports no token counts

_SUMMED = ("chars_in", "chars_out", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s")


class CallRecord(BaseModel):
    """One attempt at one model call (a structured call that was retried yields two records)."""

    role: str
    provider: str
    model: str
    tier: str | None = None  # the role's tier that answered (EcoAssistant's hierarchy), when known
    chars_in: int = 0
    chars_out: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    first_token_s: float | None = None  # streamed calls: seconds until the first piece of text
    cost_usd: float = 0.0
    cache_hit: bool | None = None
    cached_tokens: int | None = None  # prompt tokens reused from a prefix cache, when known
    retried: bool = False  # True on every attempt of a call that needed its retry
    error: str | None = None  # the LLMError code (or validation failure) of this attempt


def estimate_tokens(chars: int) -> int:
    """Estimated tokens for ``chars`` characters (``ceil(chars / 4)``), used when a provider reports none."""
    return math.ceil(chars / CHARS_PER_TOKEN)


def cost_usd(prices: tuple[float, float], prompt_tokens: int | None, completion_tokens: int | None,
             chars_in: int, chars_out: int) -> float:
    """USD for one call from ``prices`` = (input, output) per 1M tokens.

    Reported token counts are used when present; otherwise tokens are estimated from characters
    with :func:`estimate_tokens`.
    """
    tin = prompt_tokens if prompt_tokens is not None else estimate_tokens(chars_in)
    tout = completion_tokens if completion_tokens is not None else estimate_tokens(chars_out)
    return (tin * prices[0] + tout * prices[1]) / 1_000_000


def summarize(records: Iterable[CallRecord]) -> dict:
    """Sums over ``records``: calls, chars, tokens (unknown counts as 0), cost, latency, retried attempts, errors."""
    out: dict = {"calls": 0, **{k: 0 for k in _SUMMED}, "retried_attempts": 0, "errors": 0}
    out["cost_usd"] = 0.0
    out["latency_s"] = 0.0
    for rec in records:
        out["calls"] += 1
        for key in _SUMMED:
            out[key] += getattr(rec, key) or 0
        out["errors"] += rec.error is not None
        out["retried_attempts"] += rec.retried
    out["cost_usd"] = round(out["cost_usd"], 10)
    out["latency_s"] = round(out["latency_s"], 6)
    return out


class Ledger:
    """A thread-safe list of ``CallRecord``s: one per request (trace) and one per run (the LLM's own)."""

    def __init__(self, maxlen: int | None = None) -> None:
        """``maxlen`` keeps only the newest records (a long-running service's run-wide ledger)."""
        self._lock = threading.Lock()
        self._records: deque[CallRecord] = deque(maxlen=maxlen)

    def add(self, rec: CallRecord) -> None:
        """Append one record."""
        with self._lock:
            self._records.append(rec)

    @property
    def records(self) -> list[CallRecord]:
        """A snapshot copy of the records, oldest first."""
        with self._lock:
            return list(self._records)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def totals(self) -> dict:
        """Sums over all records: calls, chars_in, chars_out, prompt_tokens, completion_tokens,
        cost_usd, latency_s (plus retried_attempts and errors)."""
        return summarize(self.records)

    def by_role(self) -> dict[str, dict]:
        """``totals()`` per role, roles in order of first call."""
        groups: dict[str, list[CallRecord]] = {}
        for rec in self.records:
            groups.setdefault(rec.role, []).append(rec)
        return {role: summarize(recs) for role, recs in groups.items()}

    def by_role_and_model(self) -> dict[str, dict[str, dict]]:
        """``totals()`` per role and, within it, per model (a role with tiers calls several)."""
        groups: dict[str, dict[str, list[CallRecord]]] = {}
        for rec in self.records:
            groups.setdefault(rec.role, {}).setdefault(rec.model, []).append(rec)
        return {role: {model: summarize(recs) for model, recs in models.items()} for role, models in groups.items()}
