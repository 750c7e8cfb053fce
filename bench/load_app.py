"""The app the load benchmark runs under gunicorn: the real service with a zero-latency model.

``gunicorn 'bench.load_app:create_bench_app()'`` (settings from ``CHOPS_*`` as usual). The model
answers every call at once from the schema it is asked for (route → profile, a short answer, a
passing verdict), so what the benchmark measures is the service's own overhead: HTTP, JSON,
token checks, the profile query, storing the turn and its trace, metrics.
"""

from __future__ import annotations

import json

from chops.llm import LLM, Completion
from chops.settings import get_settings

_REPLIES = {
    "Level1Decision": {"route": "profile"},
    "OneLevelDecision": {"route": "profile"},
    "ProfileAnswer": {"answer": "Your upload limit is in your profile."},
    "Verdict": {"reason": "answered from the profile", "score": 10},
}


class ZeroLatencyProvider:
    """Answers every role instantly and forever (unlike the test ``ScriptedLLM``, which runs dry)."""

    name = "scripted"
    model = "zero-latency"
    prices = (0.0, 0.0)

    def complete(self, role, messages, schema) -> Completion:
        """The canned reply for ``schema`` (free text: "ok")."""
        if schema is None:
            return Completion(text="ok", model=self.model)
        return Completion(text=json.dumps(_REPLIES[schema.__name__]), model=self.model)


def create_bench_app():
    """The service over ``CHOPS_DATABASE_URL`` with the zero-latency model and no guide index."""
    from chops.web.app import create_app

    provider = ZeroLatencyProvider()
    llm = LLM({role: provider for role in ("classifier", "executor", "verifier", "chooser", "judge")})
    return create_app(get_settings(), llm=llm, index=None)
