"""The one conversation service: load history → run the agent → store the turn; and the hand-off.

The web API, ``chops ask`` and the eval all answer a message through ``ConversationService.run_turn``
(DESIGN.md: "never through copies of that flow"). Failure contract, the same for every caller:

* ``LLMError`` (model down, timeout, bad output) propagates before anything is written: the agent
  calls every model before its only write, and no turn row is stored;
* a database error (``sqlalchemy.exc.DBAPIError``) propagates; a write the agent already committed
  is keyed by the turn (``<conversation>:<seq>``), and the turn is not stored, so a retry gets the
  same ``seq`` and replays the write through its idempotency key instead of writing twice.

The support desk (``chops.desk``): a turn on the agent's ``handoff`` route moves the conversation to
``waiting`` in the turn's own transaction; while it is ``waiting`` or ``staff``, ``hold`` stores the
user's messages for staff and no model is called; after a release the agent's history holds the
user's and the staff's messages. A turn that leaves the request unfinished offers a person
(``chops.desk.notices``); a hand-off while no staff member is active says a person will answer later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from chops.desk import Desk, Presence
from chops.desk.log import Event, recent_events
from chops.desk.notices import LATER, OFFER, notice, offer_reason, unfinished
from chops.desk.states import State
from chops.i18n import reply_language
from chops.pipeline.replies import opening_reply
from chops.records import TurnRecord, TurnResult

HISTORY_TURNS = 10  # turns of context handed to the agent; keeps a long conversation cheap
ANSWERED_LOOKBACK = 20  # recent turns searched for a resent message's client key


@dataclass(frozen=True)
class StoredTurn:
    """A turn as answered and stored: its row id, its number in the conversation and the result."""

    turn_id: int
    seq: int
    user_text: str
    result: TurnResult


class ConversationService:
    """Runs turns of conversations over one ``ConversationStore`` and one ``Agent``."""

    def __init__(self, store: Any, agent: Any, *, history_turns: int = HISTORY_TURNS, desk: Desk | None = None,
                 presence: Presence | None = None) -> None:
        """``store``: a ``chops.store.ConversationStore``; ``agent``: anything with ``Agent.handle``;
        ``desk``/``presence`` default to ones over the store's engine (presence window: the settings')."""
        self.store, self.agent, self.history_turns = store, agent, history_turns
        self.desk = desk or Desk(store.engine)
        if presence is None:
            from chops.settings import get_settings

            presence = Presence(store.engine, get_settings().staff_presence_s)
        self.presence = presence

    def start(self, nickname: str, channel: str) -> str:
        """A new conversation of ``nickname`` on ``channel`` (``widget``, ``cli``, ``eval``...); its id."""
        return self.store.create(nickname, channel)

    @staticmethod
    def greeting(lang: str) -> str:
        """The agent's opening line in ``lang``: the agent speaks first (the widget shows it when it opens,
        the conversation evaluation plays it to the user). A fixed line of the catalog: no model call."""
        return opening_reply(lang)

    def hold(self, conversation_id: str, nickname: str, text: str) -> tuple[Event, State] | None:
        """While staff have the conversation (waiting/staff), store ``text`` for them: (event, state);
        None when the agent answers it (``run_turn``). A closed conversation is ``DeskError``."""
        return self.desk.hold(conversation_id, nickname, text)

    def history(self, conversation_id: str) -> list[TurnRecord]:
        """The agent's view of the conversation: its turns and the messages to and from staff, in order
        (the newest ``history_turns`` of them)."""
        # With traces: the look-ups earlier turns made ground this turn's ids (chops.pipeline.lookups).
        turns = self.store.history(conversation_id, limit=self.history_turns, with_trace=True)
        events = recent_events(self.store.engine, conversation_id, ("turn", "user", "staff"), self.history_turns * 3)
        order = {e.turn_id: e.id for e in events if e.kind == "turn"}
        # Turns stored before the event log existed have no event: they come first, by number.
        keyed = [((1, order[t.id]) if t.id in order else (0, t.seq), t) for t in turns]
        keyed += [((1, e.id), TurnRecord(conversation_id=conversation_id, created_at=e.created_at,
                                         user_text=e.text if e.kind == "user" else "",
                                         reply=e.text if e.kind == "staff" else None,
                                         staff=e.body.get("display_name") or e.actor if e.kind == "staff" else None))
                  for e in events if e.kind != "turn"]
        return [record for _, record in sorted(keyed, key=lambda kv: kv[0])][-self.history_turns:]

    def run_turn(self, conversation_id: str, nickname: str, text: str,
                 on_event: Callable[[str, dict], None] | None = None, *, client_key: str | None = None) -> StoredTurn:
        """Answer ``text`` as ``nickname`` (the conversation's authenticated user) and store the turn.

        ``client_key`` (the client's ``Idempotency-Key``) is kept in the turn's trace: ``answered`` finds
        the turn by it, so a resent message is answered from the store, not run twice.
        Raises ``LLMError`` (nothing written) or the database's error; see the module docstring.
        """
        history = self.history(conversation_id)
        seq = max((t.seq for t in history if t.id is not None), default=self.store.next_seq(conversation_id) - 1) + 1
        result = self.agent.handle(nickname, text, history=history, turn_key=f"{conversation_id}:{seq}",
                                   on_event=on_event, conversation_id=conversation_id)
        if client_key is not None:
            result = result.model_copy(update={"trace": {**(result.trace or {}), "client_key": client_key}})
        result, also = self._desk_part(conversation_id, nickname, text, result, history)
        try:
            turn_id = self.store.append_turn(conversation_id, text, result, seq=seq, also=also)
        except sa.exc.IntegrityError:
            # A staff note took ``seq`` meanwhile; the turn's write (if any) is committed already, so
            # the turn must be stored: it takes the next free number.
            turn_id = self.store.append_turn(conversation_id, text, result, also=also)
            seq = next((t.seq for t in self.store.history(conversation_id, limit=5) if t.id == turn_id),
                       self.store.next_seq(conversation_id) - 1)
        return StoredTurn(turn_id=turn_id, seq=seq, user_text=text, result=result)

    def answered(self, conversation_id: str, client_key: str) -> TurnRecord | None:
        """The stored turn of the conversation that answered the message sent with ``client_key``, if any
        (among its recent turns: a client resends within seconds, not days)."""
        recent = self.store.history(conversation_id, with_trace=True, limit=ANSWERED_LOOKBACK)
        return next((t for t in reversed(recent) if (t.trace or {}).get("client_key") == client_key), None)

    def _desk_part(self, conversation_id: str, nickname: str, text: str, result: TurnResult,
                   history: list[TurnRecord]) -> tuple[TurnResult, Callable | None]:
        """The reply's added lines and the state change to store with the turn (None: no change)."""
        lang = reply_language([text, *(t.user_text for t in reversed(history))])
        if result.route == "handoff":
            active = self.presence.anyone_active()
            result = self._with_lines(result, [] if active else [notice(lang, LATER)], staff_active=active)
            return result, lambda conn: self.desk.request_person(conn, conversation_id, nickname)
        previous = None
        if unfinished(result):
            earlier = [t for t in self.store.history(conversation_id, with_trace=True, limit=3) if t.user_text]
            previous = earlier[-1] if earlier else None
        reason = offer_reason(result, previous)
        if reason is not None:  # said once: the model, reading its earlier replies, may have written it itself
            offer = notice(lang, OFFER)
            result = self._with_lines(result, [] if offer in result.reply else [offer], handoff_offered=reason)
        return result, None

    @staticmethod
    def _with_lines(result: TurnResult, lines: list[str], **info: Any) -> TurnResult:
        trace = {**(result.trace or {}), **info}  # read by the console, the queue summary and the analytics
        return result.model_copy(update={"reply": "\n\n".join([result.reply, *lines]).strip(), "trace": trace})
