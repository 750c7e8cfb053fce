"""A user's thumbs up or down on one agent answer, stored with the turn (``chops_turn_rating``).

Only agent turns can be rated: a turn of the given conversation with a user message (a staff
decision appended to the conversation has none). Rating a turn again replaces the earlier rating.
"""

from __future__ import annotations

from datetime import datetime, timezone

import sqlalchemy as sa

from chops import tables as t


class RatingError(Exception):
    """A rating that cannot be stored; ``code`` is stable (``turn_not_found``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def rate_turn(engine: sa.Engine, conversation_id: str, turn_id: int, thumbs: str, comment: str | None) -> None:
    """Store (or replace) the rating of agent turn ``turn_id`` of ``conversation_id``, in one transaction.

    The caller has authorised the conversation; this checks that the turn belongs to it.
    """
    if thumbs not in t.RATING_THUMBS:
        raise ValueError(f"thumbs must be one of {t.RATING_THUMBS}")
    tc, r = t.turn.c, t.turn_rating
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    values = {"thumbs": thumbs, "comment": comment or None, "rated_at": now}
    # BEGIN IMMEDIATE on SQLite: this transaction reads, then writes (see ConversationStore._writer).
    writer = engine.execution_options(sqlite_begin="immediate")
    with writer.begin() as conn:
        found = conn.execute(sa.select(tc.id).where(tc.id == turn_id, tc.conversation_id == conversation_id,
                                                    tc.user_text != "")).first()
        if found is None:
            raise RatingError("turn_not_found", f"no agent answer {turn_id} in this conversation")
    try:
        with writer.begin() as conn:
            if not conn.execute(r.update().where(r.c.turn_id == turn_id).values(**values)).rowcount:
                conn.execute(r.insert().values(turn_id=turn_id, **values))
    except sa.exc.IntegrityError:  # a concurrent first rating of the same turn won: replace it
        with writer.begin() as conn:
            conn.execute(r.update().where(r.c.turn_id == turn_id).values(**values))
