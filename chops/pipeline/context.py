"""What one turn carries through the loop: the request, the caller's profile, history, feedback,
and the candidates the executor produced."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chops.domain.outcomes import Outcome
from chops.i18n import reply_language
from chops.pipeline.prompting import clip, fragment, section
from chops.pipeline.tally import done_lines
from chops.pipeline.trace import Trace
from chops.pipeline.walk import made_of, words_of
from chops.records import Solution, TurnRecord

LANGUAGE_NAMES = {"zh": "Chinese (简体中文)"}  # languages other than English that answers are asked in
DONE_LINES, DONE_CLIP = 6, 300  # the newest changes the history section lists (five returns and the total)
HISTORY_TURNS = 3  # earlier turns shown to the executor; enough to finish a request it asked about
HISTORY_CLIP = 200
# Words by which a request asks for what a finished one did ("the blender too", "same for #W2", "同样"); not "also",
# which adds a request of its own ("I also want the watch in black").
_BACK = re.compile(r"\b(?:too|as well|same (?:for|with|to|thing|change|again)|again|likewise)\b|同样|也[要改换]",
                   re.IGNORECASE)


@dataclass
class Step:
    """One operation call of a plan: the model's arguments, the grounded ones, and what running it gave."""

    operation: str
    proposed_args: dict[str, Any]  # as the model wrote them
    args: dict[str, Any]  # after grounding
    dropped: list[str] = field(default_factory=list)
    writes: bool = False
    description: str = ""  # the registry's one line on what the operation does (the verifier shows it)
    result: Any | None = None  # an OperationResult: this step of the plan's dry run, or the real read

    @property
    def outcome(self) -> str | None:
        """The step's outcome code, once it ran."""
        return str(self.result.outcome) if self.result is not None else None

    def describe(self) -> str:
        """``Operation(Arg='value') -> outcome``."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.operation}({args}) -> {self.outcome}"

    def record(self, nickname: str, others: list[str]) -> dict[str, Any]:
        """What the trace keeps of this step, once it ran (``nickname``: the sender, whom a write acts for;
        ``others``: the people the request named)."""
        res = self.result
        return {"operation": self.operation, "proposed_args": self.proposed_args, "args": self.args,
                "ungrounded": self.dropped, "writes": self.writes, "target": nickname if self.writes else None,
                "others_named": others, "dry_run": res.dry_run, "outcome": str(res.outcome), "message": res.message,
                "diff": [c.model_dump() for c in res.diff]}


@dataclass
class Candidate:
    """One attempt: an answer (basic_info/guide) or a plan of operation calls with their results.

    ``operation``, ``args``, ``result``… are the first step's (what a one-call attempt always had);
    ``plan`` is the dry run of all the write steps together (a ``PlanResult``)."""

    iteration: int
    route: str
    answer: str | None = None
    source: Any | None = None  # the cited Chunk of a guide answer
    steps: list[Step] = field(default_factory=list)
    plan: Any | None = None
    score: int | None = None
    threshold: float | None = None
    reason: str | None = None
    tier: str | None = None  # the executor tier that produced it
    lookups: list[Step] = field(default_factory=list)  # reads the executor made and read before this proposal
    sums: list[str] = field(default_factory=list)  # the sums its question asks of the look-ups (``fields.sums_asked``)
    typed: bool = False  # made by the typed reading (``chops.pipeline.read``): a pack's refusal of it is not redone
    invented: list[str] = field(default_factory=list)  # numbers, or changes made, the answer states that nothing
    # it was given holds (``verifier.invented_numbers``, ``claims.claimed_changes``)

    @property
    def asks(self) -> bool:
        """A typed reading's question for the values its request misses, every value it holds grounded: code asks,
        nothing was proposed that a verifier could judge."""
        return self.typed and len(self.steps) == 1 and not self.steps[0].dropped and self.steps[0].result is not None \
            and self.steps[0].result.outcome == Outcome.REFUSED_MISSING_ARGS

    @property
    def changes_nothing(self) -> bool:
        """Every write of the plan ran and changed nothing (``ok_noop``)."""
        writes = [s for s in self.steps if s.writes and s.result is not None]
        return bool(writes) and all(s.result.outcome == Outcome.OK_NOOP for s in writes)

    @property
    def operation(self) -> str | None:
        """The first step's operation, or None for an answer."""
        return self.steps[0].operation if self.steps else None

    @property
    def args(self) -> dict[str, Any] | None:
        """The first step's grounded arguments."""
        return self.steps[0].args if self.steps else None

    @property
    def proposed_args(self) -> dict[str, Any] | None:
        """The first step's arguments as the model wrote them."""
        return self.steps[0].proposed_args if self.steps else None

    @property
    def dropped(self) -> list[str]:
        """The first step's ungrounded argument names."""
        return self.steps[0].dropped if self.steps else []

    @property
    def writes(self) -> bool:
        """Whether any step writes."""
        return any(s.writes for s in self.steps)

    @property
    def result(self) -> Any | None:
        """The first step's result."""
        return self.steps[0].result if self.steps else None

    @property
    def outcome(self) -> str | None:
        """The first step's outcome code, if an operation ran."""
        return self.steps[0].outcome if self.steps else None

    def describe(self) -> str:
        """One line for feedback and the chooser: what this attempt did."""
        first = [f"looked up {s.describe()}" for s in self.lookups]
        if self.steps:
            return "; ".join(first + [s.describe() for s in self.steps])
        return "; ".join(first + [f"answer {clip(self.answer or '', 120)!r}"])


# A result's data key: the agent's own question or refusal, told the customer as it is (``as_told``).
FINAL = "final"


def as_told(step: Step) -> bool:
    """Whether ``step``'s result is the agent's own question or refusal (``FINAL``: which line is meant, a whole record
    asked for a part of it): no redo offers the model another go, and no verifier judges it (nothing runs)."""
    return step.result is not None and isinstance(step.result.data, dict) and bool(step.result.data.get(FINAL))


def asked_for_value(turn: TurnRecord) -> bool:
    """True when ``turn`` ended asking the user for a missing value: the next message most likely answers it
    ("40", "Lincoln High") and belongs to the same request."""
    return turn.outcome == Outcome.REFUSED_MISSING_ARGS


@dataclass
class TurnContext:
    """The request being handled. ``nickname`` comes from the caller, never from a model."""

    nickname: str
    text: str
    profile: Any  # the pack's Profile (chops.domain.system)
    history: list[TurnRecord]
    trace: Trace
    feedback: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)  # the checks' refusals of the plans redone (``tiers.redo``)
    chunks: dict[str, list] = field(default_factory=dict)  # retrieval results per size, reused on retries
    guides: Any | None = None  # the guide index version this turn reads (taken at its first search)
    verdicts: dict[str, tuple[int, str]] = field(default_factory=dict)  # verifier results per identical attempt
    tier: int = 0  # the model tier of this iteration's calls: 0 first, one up after each rejection
    demonstrations: list[Solution] = field(default_factory=list)  # recalled from the solution memory
    routed: Any | None = None  # the embedding router's ``Decision`` on this attempt, if it was asked
    shortlist: tuple[str, ...] | None = None  # the operations tool retrieval offers this turn (None: not ranked)
    # The look-ups the executor starts from: the earlier turns', then this turn's, kept across its attempts
    # (a retry does not read the same order again). None until the operations route first runs.
    lookups: list[Step] | None = None
    # A route whose look-ups hold what was asked, where its answer left it out or gave like records one feature
    # (``fields.unstated``, ``fields.unlike``): the redo keeps it.
    held: str | None = None
    refusal_redone: bool = False  # a refused plan was already redone once this turn (Agent)
    invalid_redone: bool = False  # a reply cut off or off the schema was already redone once this turn (Agent)
    barred: set[str] = field(default_factory=set)  # operations refused against a precondition: not offered again
    instead: str | None = None  # the write a redo must propose: the request's, for the record's state (tiers.redo)
    refused: Candidate | None = None  # a plan refused against a precondition: the reply where the redo only answers
    insisting: bool = False  # the message repeats the last, which the operations route did not do (classifier)
    message: str | None = None  # the customer's whole message, where ``text`` is one request of it (pipeline.agenda)
    asked: str | None = None  # the request the last turn asked a value for, where ``text`` is it with the answer
    replaced: dict[str, str] = field(default_factory=dict)  # argument values refused, which this message replaces
    currency: str | None = None  # the pack's: the conversation's total of refunds and charges is said in it
    dropped: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # the waiting change this message dropped
    now: datetime | None = None  # the pack's clock: the day "tomorrow" and "May 20" are read against (None: the wall's)

    def router_sure_of(self, route: str) -> bool:
        """True when this attempt's route came from the embedding router, sure of it (``chops.router``)."""
        return self.routed is not None and self.routed.sure and self.routed.route == route

    @property
    def user_texts(self) -> list[str]:
        """Every user message of the conversation, newest first (grounding looks at all of them)."""
        whole = [self.message] if self.message is not None else []
        return [self.text, *whole] + [t.user_text for t in reversed(self.history)]

    @property
    def request_texts(self) -> list[str]:
        """``user_texts`` without the whole message where ``text`` is one request split off it, and without what the
        customer said before their last change was made: what asks for this request. "Change my LA order to my NYC
        address. Also exchange the speaker for a green one" split in two; for the speaker's request the 1.5B proposed
        the order's address change again, offered it for the message's "address" (train task 96)."""
        # Nor a message of a request finished before: the messages up to a committed (or queued) change asked for it.
        # An "address" said in turn 1 kept the address change offered in turn 7, and the watch's change the customer
        # asked for there became an address change again (train task 112).
        # Unless this request points back at it ("the blender too", "same for #W2").
        finished = -1 if _BACK.search(self.text) else max(
            (i for i, t in enumerate(self.history) if t.committed or t.queued), default=-1)
        since = [t.user_text for t in reversed(self.history[finished + 1:])]
        if self.message is None:
            return [self.text, *since]
        # Nor an earlier message it was split off (a request of the agenda, taken up after the customer's yes): "For
        # order #W…, change the address …. Also exchange the Makeup Kit …" had the address change proposed again for
        # the kit (train task 78).
        return [self.text] + [t for t in since if t != self.text and t != self.message and not self._split_off(t)]

    def _split_off(self, message: str) -> bool:
        """Whether ``text`` may be a request split off ``message``: made of its words (``walk.made_of``); so may one
        answered now (``asked``): answered which reason, the cancel split off "… cancel it. Also, for #W…, change the
        shipping address …" was proposed as that address change, offered for the message's "address" (train task 59)."""
        own = self.asked or self.text
        return bool(words_of(own)) and made_of(own, message)

    def language_section(self) -> str:
        """An instruction to answer in the user's language when it is not English, else "" (so English
        prompts stay as they were): the 1.5B model answered a Chinese question about its English profile
        or excerpts in English."""
        lang = reply_language(self.user_texts)
        return fragment("answer_language", language=LANGUAGE_NAMES[lang]) if lang in LANGUAGE_NAMES else ""

    def profile_text(self) -> str:
        """The profile rendered for prompts."""
        return self.profile.describe()

    def today_line(self) -> str:
        """What now is, for a prompt that reads the dates customers say ("" without the pack's clock)."""
        return fragment("today", today=self.now.strftime("%Y-%m-%d %H:%M, %A")) if self.now is not None else ""

    def done(self) -> list[str]:
        """What this conversation's commits did, newest ``DONE_LINES`` (``chops.pipeline.tally.done_lines``)."""
        return [clip(line, DONE_CLIP) for line in done_lines(self.history, self.currency)[-DONE_LINES:]]

    def history_section(self, turns: int = HISTORY_TURNS) -> str:
        """The last ``turns`` exchanges, compact, then what the conversation's commits did (``done``), or "" for a
        new conversation."""
        lines: list[str] = []
        for t in list(self.history)[-turns:] if turns else []:
            if t.user_text:
                lines.append(fragment("history_user", text=clip(t.user_text, HISTORY_CLIP)))
            if t.reply and t.staff:  # a person from support wrote this, not the assistant
                lines.append(fragment("history_staff", name=clip(t.staff, 40), text=clip(t.reply, HISTORY_CLIP)))
            elif t.reply:
                lines.append(fragment("history_agent", text=clip(t.reply, HISTORY_CLIP)))
        if done := self.done():
            lines.append(fragment("history_done", lines="\n".join(f"- {line}" for line in done)))
        return section("history", lines)

    def feedback_section(self, *, last: bool = False) -> str:
        """The verifier's reasons for earlier rejected attempts, or "". ``last``: worded for the end of the prompt,
        where the executors put it: everything before it is the same on a retry, so the engine reads only the
        reasons (a retail retry reread ~2,000 tokens of look-ups after them, 70 s on two cores)."""
        # The last two are enough to steer a retry.
        return section("feedback_last" if last else "feedback", self.feedback[-2:])

    def add_feedback(self, cand: Candidate) -> None:
        """Remember why ``cand`` was rejected, for the next classifier and executor prompts."""
        what = f"{cand.route}: {cand.describe()}"
        self.feedback.append(fragment("feedback_line", n=cand.iteration, what=what, reason=cand.reason or ""))


def dumps(value: Any) -> str:
    """Compact JSON for prompts and the trace."""
    return json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))


def since_cancel(history: Sequence[TurnRecord]) -> list[TurnRecord]:
    """The turns after the user's last "never mind": a dropped request must not be taken up again
    (e.g. a value given later is not the missing argument it was asked for)."""
    cut = max((i + 1 for i, t in enumerate(history) if t.route == "cancel"), default=0)
    return list(history[cut:])
