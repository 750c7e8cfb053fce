"""The one conversation service: load history → run the agent → store the turn.

The web API, ``chops ask`` and the eval all answer a message through ``ConversationService.run_turn``
(DESIGN.md: "never through copies of that flow"). Failure contract, the same for every caller:

* ``LLMError`` (model down, timeout, bad output) propagates before anything is written: the agent
  calls every model before its only write, and no turn row is stored;
* a database error (``sqlalchemy.exc.DBAPIError``) propagates; a write the agent already committed
  is keyed by the turn (``<conversation>:<seq>``), and the turn is not stored, so a retry gets the
  same ``seq`` and replays the write through its idempotency key instead of writing twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from chops.records import TurnResult

HISTORY_TURNS = 10  # turns of context handed to the agent; keeps a long conversation cheap


@dataclass(frozen=True)
class StoredTurn:
    """A turn as answered and stored: its row id, its number in the conversation and the result."""

    turn_id: int
    seq: int
    user_text: str
    result: TurnResult


class ConversationService:
    """Runs turns of conversations over one ``ConversationStore`` and one ``Agent``."""

    def __init__(self, store: Any, agent: Any, *, history_turns: int = HISTORY_TURNS) -> None:
        """``store``: a ``chops.store.ConversationStore``; ``agent``: anything with ``Agent.handle``."""
        self.store, self.agent, self.history_turns = store, agent, history_turns

    def start(self, nickname: str, channel: str) -> str:
        """A new conversation of ``nickname`` on ``channel`` (``widget``, ``cli``, ``eval``...); its id."""
        return self.store.create(nickname, channel)

    def run_turn(self, conversation_id: str, nickname: str, text: str,
                 on_event: Callable[[str, dict], None] | None = None) -> StoredTurn:
        """Answer ``text`` as ``nickname`` (the conversation's authenticated user) and store the turn.

        Raises ``LLMError`` (nothing written) or the database's error; see the module docstring.
        """
        history = self.store.history(conversation_id, limit=self.history_turns)
        seq = history[-1].seq + 1 if history else 1
        result = self.agent.handle(nickname, text, history=history, turn_key=f"{conversation_id}:{seq}",
                                   on_event=on_event, conversation_id=conversation_id)
        try:
            turn_id = self.store.append_turn(conversation_id, text, result, seq=seq)
        except sa.exc.IntegrityError:
            # A staff note took ``seq`` meanwhile; the turn's write (if any) is committed already, so
            # the turn must be stored: it takes the next free number.
            turn_id = self.store.append_turn(conversation_id, text, result)
            seq = next((t.seq for t in self.store.history(conversation_id, limit=5) if t.id == turn_id),
                       self.store.next_seq(conversation_id) - 1)
        return StoredTurn(turn_id=turn_id, seq=seq, user_text=text, result=result)
