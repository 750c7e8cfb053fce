"""A scripted LLM for tests: replies are queued per role; an unscripted call fails loudly.

It goes through the same seam as the real providers (validation, retry, accounting), so a test
that scripts an invalid reply sees the real retry behaviour.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from chops.llm.base import LLM, Completion, Message, dumps_reply

STREAM_PIECE = 4  # characters per streamed piece: about one token of a real model
Reply = BaseModel | dict | str | Exception | Callable[[list[Message], "type[BaseModel] | None"], Any]


class ScriptExhausted(AssertionError):
    """A call came for a role that had nothing scripted: the test forgot a reply, or the code
    made a call it should not have."""


class ScriptedProvider:
    """Queues of replies per role, shared by every role of a ``ScriptedLLM``."""

    name = "scripted"
    model = "scripted"
    prices = (0.0, 0.0)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Reply]] = defaultdict(deque)
        self.calls: list[tuple[str, list[Message], type[BaseModel] | None]] = []

    def enqueue(self, role: str, reply: Reply) -> None:
        """Queue ``reply`` for the next call of ``role``."""
        with self._lock:
            self._queues[role].append(reply)

    def pending(self) -> dict[str, int]:
        """How many replies are still queued, per role (roles with none left are omitted)."""
        with self._lock:
            return {role: len(q) for role, q in self._queues.items() if q}

    def complete(self, role: str, messages: list[Message], schema: type[BaseModel] | None,
                 on_delta: Callable[[str], None] | None = None) -> Completion:
        """Pop the next reply of ``role``: raise it (an Exception), call it (a callable), or return it.

        With ``on_delta`` the reply text is also streamed to it in pieces of a few characters."""
        with self._lock:
            self.calls.append((role, list(messages), schema))
            queue = self._queues.get(role)
            if not queue:
                raise ScriptExhausted(
                    f"unscripted {'structured' if schema else 'text'} call for role {role!r} "
                    f"(schema {getattr(schema, '__name__', None)}); last message: {messages[-1][1][:200]!r}")
            reply = queue.popleft()
        if callable(reply) and not isinstance(reply, (BaseModel, type)):
            reply = reply(list(messages), schema)
        if isinstance(reply, BaseException):
            raise reply
        text = dumps_reply(reply)
        if on_delta is not None:
            for start in range(0, len(text), STREAM_PIECE):
                on_delta(text[start:start + STREAM_PIECE])
        return Completion(text=text, model=self.model)


class ScriptedLLM(LLM):
    """An ``LLM`` answering every role from scripted queues.

    ``enqueue(role, reply)`` with a pydantic instance, a dict, a str (raw reply text: invalid JSON
    exercises the retry), an Exception to raise, or ``callable(messages, schema) -> reply``.
    ``calls`` keeps ``(role, messages, schema)`` of every provider call, retries included.
    """

    def __init__(self, tiers: dict[str, list[str]] | None = None) -> None:
        """``tiers`` names fake tiers per role (e.g. ``{"executor": ["small", "large"]}``): every tier
        is answered by the same script, and each call records the name of the tier it was asked at."""
        self.script = ScriptedProvider()
        super().__init__({}, tiers={role: [(name, self.script) for name in names]
                                    for role, names in (tiers or {}).items()})

    def provider(self, role: str, tier: int = 0) -> ScriptedProvider:
        """Every role and tier, known or not, is answered by the script."""
        return self.script

    def enqueue(self, role: str, reply: Reply) -> "ScriptedLLM":
        """Queue ``reply`` for the next call of ``role``; returns self for chaining."""
        self.script.enqueue(role, reply)
        return self

    @property
    def calls(self) -> list[tuple[str, list[Message], type[BaseModel] | None]]:
        """Every call the code made: (role, messages, schema)."""
        return self.script.calls

    def pending(self) -> dict[str, int]:
        """Replies scripted but not consumed, per role (a test may assert this is empty)."""
        return self.script.pending()
