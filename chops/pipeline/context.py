"""What one turn carries through the loop: the request, the caller's profile, history, feedback,
and the candidates the executor produced."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from chops.pipeline.prompting import clip, fragment, section
from chops.records import TurnRecord
from chops.pipeline.trace import Trace

HISTORY_TURNS = 3  # earlier turns shown to the executor; enough to finish a request it asked about
HISTORY_CLIP = 200


@dataclass
class Candidate:
    """One attempt: an answer (basic_info/guide) or an operation with its dry-run/read result."""

    iteration: int
    route: str
    answer: str | None = None
    source: Any | None = None  # the cited Chunk of a guide answer
    operation: str | None = None
    proposed_args: dict[str, Any] | None = None  # as the model wrote them
    args: dict[str, Any] | None = None  # after grounding
    dropped: list[str] = field(default_factory=list)
    writes: bool = False
    result: Any | None = None  # apis OperationResult: dry run for writes, the real read otherwise
    score: int | None = None
    threshold: float | None = None
    reason: str | None = None

    @property
    def outcome(self) -> str | None:
        """The operation's outcome code, if an operation ran."""
        return str(self.result.outcome) if self.result is not None else None

    def describe(self) -> str:
        """One line for feedback and the chooser: what this attempt did."""
        if self.operation:
            args = ", ".join(f"{k}={v!r}" for k, v in (self.args or {}).items())
            return f"{self.operation}({args}) -> {self.outcome}"
        return f"answer {clip(self.answer or '', 120)!r}"


@dataclass
class TurnContext:
    """The request being handled. ``nickname`` comes from the caller, never from a model."""

    nickname: str
    text: str
    profile: Any  # apis.profile.Profile
    history: list[TurnRecord]
    trace: Trace
    feedback: list[str] = field(default_factory=list)
    chunks: dict[str, list] = field(default_factory=dict)  # retrieval results per size, reused on retries
    verdicts: dict[str, tuple[int, str]] = field(default_factory=dict)  # verifier results per identical attempt

    @property
    def user_texts(self) -> list[str]:
        """Every user message of the conversation, newest first (grounding looks at all of them)."""
        return [self.text] + [t.user_text for t in reversed(self.history)]

    def profile_text(self) -> str:
        """The profile rendered for prompts."""
        return self.profile.describe()

    def history_section(self, turns: int = HISTORY_TURNS) -> str:
        """The last ``turns`` exchanges, compact, or "" for a new conversation."""
        lines: list[str] = []
        for t in list(self.history)[-turns:] if turns else []:
            lines.append(fragment("history_user", text=clip(t.user_text, HISTORY_CLIP)))
            if t.reply:
                lines.append(fragment("history_agent", text=clip(t.reply, HISTORY_CLIP)))
        return section("history", lines)

    def feedback_section(self) -> str:
        """The verifier's reasons for earlier rejected attempts, or ""."""
        return section("feedback", self.feedback[-2:])  # the last two are enough to steer a retry

    def add_feedback(self, cand: Candidate) -> None:
        """Remember why ``cand`` was rejected, for the next classifier and executor prompts."""
        what = f"{cand.route}: {cand.describe()}"
        self.feedback.append(fragment("feedback_line", n=cand.iteration, what=what, reason=cand.reason or ""))


def dumps(value: Any) -> str:
    """Compact JSON for prompts and the trace."""
    return json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
