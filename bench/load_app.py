"""The app the load benchmark runs under gunicorn: the real service with a zero-latency model.

``gunicorn 'bench.load_app:create_bench_app()'`` (settings from ``CHOPS_*`` as usual). The model
answers every call at once from the schema it is asked for (route → profile, a passing verdict), so
what the benchmark measures is the service's own overhead: HTTP, JSON, token checks, the profile
query, storing the turn and its trace, metrics.

Tags in the user's message script the fault suite (``bench.faults``): the profile answer repeats the
profile's nickname and the message's last ``[c:...]`` tag (so a reply shows whose it is);
``[write N]`` proposes setting the sender's upload limit to N; ``slow=S`` in a write tag makes the
verifier take S seconds, ``timeout`` / ``killed`` make it fail as a timed-out / unreachable model.
"""

from __future__ import annotations

import json
import re
import time

from chops.llm import LLM, Completion, LLMError
from chops.settings import get_settings

_TAG = re.compile(r"\[(?:c:|write |person)[^\]\n]*\]")  # the suite's tags only: prompts hold other brackets
_NICK = re.compile(r"\(nickname ([^)]+)\)")
_REPLIES = {
    "SmallTalkGate": {"route": "about_the_platform"},
    "Level1Decision": {"route": "own_fact"},
    "OneLevelDecision": {"route": "own_fact"},
    "Level2Decision": {"route": "do_operation"},
    "Verdict": {"reason": "it does what was asked", "score": 10},
}


def _reply(schema_name: str, text: str) -> dict:
    tags = _TAG.findall(text)
    tag = tags[-1] if tags else ""
    write = re.match(r"\[write (\d+)", tag)
    if tag == "[person]" and schema_name in ("SmallTalkGate", "ConversationKind"):  # asks for a person
        return {"route": "small_talk" if schema_name == "SmallTalkGate" else "ask_for_person"}
    if schema_name in ("Level1Decision", "OneLevelDecision") and write:
        return {"route": "something_else" if schema_name == "Level1Decision" else "do_operation"}
    if schema_name == "OperationPlan":
        return {"calls": [{"operation": "ChangeAllTypesUploadLimit", "args": {"Limit": int(write[1]) if write else 1}}]}
    if schema_name == "ProfileAnswer":
        nick = _NICK.search(text)
        return {"answer": f"{nick[1] if nick else '?'} {tag}"}
    if schema_name == "Verdict" and write:
        if slow := re.search(r"slow=([\d.]+)", tag):
            time.sleep(float(slow[1]))
        if "timeout" in tag:
            raise LLMError("timeout", "the bench model timed out", role="verifier")
        if "killed" in tag:
            raise LLMError("unreachable", "the bench model process is gone", role="verifier")
    return _REPLIES[schema_name]


class ZeroLatencyProvider:
    """Answers every role instantly and forever (unlike the test ``ScriptedLLM``, which runs dry)."""

    name = "scripted"
    model = "zero-latency"
    prices = (0.0, 0.0)

    def complete(self, role, messages, schema, on_delta=None) -> Completion:
        """The canned reply for ``schema`` (free text: "ok"); nothing is streamed."""
        if schema is None:
            return Completion(text="ok", model=self.model)
        text = "\n".join(content for _, content in messages)
        return Completion(text=json.dumps(_reply(schema.__name__, text)), model=self.model)


def create_bench_app():
    """The service over ``CHOPS_DATABASE_URL`` with the zero-latency model and no guide index."""
    from chops.web.app import create_app

    provider = ZeroLatencyProvider()
    llm = LLM({role: provider for role in ("classifier", "executor", "verifier", "chooser", "judge")})
    return create_app(get_settings(), llm=llm, index=None)
