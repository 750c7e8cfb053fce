"""What a request needs, built once by the app factory: blueprints read it through ``services()``
(as flaskr's ``get_db``), never by importing the app module."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from flask import current_app

from chops.settings import Settings


@dataclass
class Services:
    """Everything a request needs, built once per app (``app.extensions["chops"]``)."""

    settings: Settings
    engine: Any
    llm: Any
    index: Any
    api: Any
    agent: Any
    store: Any
    memory: Any  # chops.memory.SolutionMemory
    conversations: Any  # chops.conversation.ConversationService
    metrics: Any  # chops.web.metrics.Metrics
    secret: str  # HS256 key of user and conversation JWTs
    desk: Any = None  # chops.desk.Desk: conversation states and staff messages
    hub: Any = None  # chops.desk.EventHub: wakes this process's event streams
    presence: Any = None  # chops.desk.Presence: when staff were last active
    warm: Any = None  # chops.web.warmup.Warmup, when the model is warmed at start-up
    guides: Any = None  # chops.retrieval.GuideLibrary, when the index is the service's guide library
    admission: Any = None  # chops.admission.Admission: the queue in front of the model (None: off)
    limits: Any = None  # chops.web.limits.RateLimits
    conversation_locks: dict[str, threading.Lock] = field(default_factory=dict)
    locks_guard: threading.Lock = field(default_factory=threading.Lock)

    def conversation_lock(self, conversation_id: str) -> threading.Lock:
        """The in-process lock that serialises messages of one conversation."""
        with self.locks_guard:
            lock = self.conversation_locks.get(conversation_id)
            if lock is None:
                if len(self.conversation_locks) > 10_000:  # forget idle locks; keeps memory bounded
                    for key in [k for k, v in self.conversation_locks.items() if not v.locked()]:
                        del self.conversation_locks[key]
                lock = self.conversation_locks[conversation_id] = threading.Lock()
            return lock


def services() -> Services:
    """The ``Services`` of the current app."""
    return current_app.extensions["chops"]


