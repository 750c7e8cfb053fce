"""Shared pieces of the desk tests: the scripted "ask for a person" decision, an agent that records
the history it is given, and staff members over the staff API."""

from __future__ import annotations

from chops.i18n import translate
from chops.pipeline.replies import CONVERSATION_REPLIES
from tests.unit.pipeline_support import small_talk

HANDOFF_REPLY = translate("en", CONVERSATION_REPLIES["handoff"])
STAFF = {"erin": "Erin", "sam": "Sam", "rita": "Rita"}  # account name -> display name


def script_handoff(llm, times: int = 1) -> None:
    """Script the classifier's "the user asks for a person" decision (the hand-off route)."""
    for _ in range(times):
        small_talk(llm, "ask_for_person")


class RecordingAgent:
    """Wraps the real ``Agent``; ``seen`` keeps the history each turn was given."""

    def __init__(self, agent) -> None:
        self.agent = agent
        self.seen: list[list] = []

    def handle(self, nickname, text, *, history=(), **kwargs):
        self.seen.append(list(history))
        return self.agent.handle(nickname, text, history=history, **kwargs)


def desk_app(app, names=tuple(STAFF)) -> RecordingAgent:
    """Staff accounts ``names`` in the app's database and a ``RecordingAgent`` in front of its agent."""
    from tests.unit.web_support import add_staff

    for name in names:
        add_staff(app, name, STAFF.get(name, name))
    svc = app.extensions["chops"]
    wrapper = RecordingAgent(svc.conversations.agent)
    svc.conversations.agent = wrapper
    return wrapper


def staff_headers(name: str = "erin") -> dict:
    """The staff API headers of member ``name`` (an account)."""
    from tests.unit.web_support import STAFF_KEY

    return {"X-Staff-Key": STAFF_KEY, "X-Staff-Name": name}
