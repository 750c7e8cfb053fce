"""Deterministic target check: a write only ever changes the sender's own account.

Operations act on the acting user of the authenticated conversation, never on a name in the
request. So "change Bob Brown's upload limit to 40" must not become "change MY upload limit to 40":
before a write's dry run, the request is searched for other members of the system, by nickname or
real name, and a write whose request names one that no argument value accounts for is refused
(``refused_other_person``) without running.

* Who counts: a member row (pending ones too) whose nickname or user name occurs in the request as
  a whole token, by the rules of ``chops.pipeline.grounding``: Latin names on word boundaries, CJK
  names as contiguous runs. A one-token name must match in its stored case (a member nicknamed
  "Will" is not named by "I will"); a name of several words matches in any case ("bob brown").
  The sender's own nickname and real name are not "another person".
* Accounted for: an occurrence lying inside an occurrence of an argument value of the call, at any depth (a
  booking's passenger who is also a customer is the booking's, not someone the request is about).
  "make me vice team leader of Lena Leader" names Lena Leader as TeamLeaderName; "add the school
  Lincoln High" names no person even if a member is called Lincoln.
* Which messages: the current one, the earlier ones of the same request (turns that ended asking
  for a missing argument), and any earlier message an argument value was taken from (grounding
  looks at the whole conversation, so "just do it" after a refusal brings the refused request back).
* Efficiency: the member table can be large (CPHOS has 900 rows; a real deployment more), so it is
  never scanned. The request is cut into the strings that could be a name — runs of one to four
  Latin words, CJK substrings of two to four characters, whitespace-separated tokens — and one
  indexed ``IN`` lookup per column (the pack's ``people_named``) returns the few members they name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from chops.domain.outcomes import OperationResult, Outcome
from chops.domain.system import SystemApi
from chops.domain.values import record_texts, scalars
from chops.pipeline.context import TurnContext, asked_for_value
from chops.pipeline.grounding import CJK, LATIN, TRIM, numbers_in, token_spans

MAX_WORDS = 4  # Latin words in one name ("Maria de la Cruz")
CJK_LENGTHS = range(2, 5)  # Chinese names have two to four characters
NAME_WIDTH = 64  # the width of cmf_tp_member.nickname and user_name: a longer string names no one
_WORD = re.compile(f"[{LATIN}]+")
_JOIN = re.compile(r"\s+|[-'’_.·]")  # what may stand between two words of one name or nickname
_CJK_RUN = re.compile(f"[{CJK}]+")

Span = tuple[int, int]


def name_candidates(text: str) -> set[str]:
    """Every substring of ``text`` that could be a member's nickname or name, with the usual case
    variants of Latin ones (the SQLite lookup compares case-sensitively)."""
    found: set[str] = {tok.strip(TRIM) for tok in text.split()} - {""}
    words = [m.span() for m in _WORD.finditer(text)]
    for i, (start, _) in enumerate(words):
        for j in range(i, min(i + MAX_WORDS, len(words))):
            if j > i and not _JOIN.fullmatch(text[words[j - 1][1]:words[j][0]]):
                break  # "Bob, Brown" or "Bob (Brown": not one name
            found.add(" ".join(text[start:words[j][1]].split()))
    for run in (m.group() for m in _CJK_RUN.finditer(text)):
        lengths = CJK_LENGTHS if len(run) > 1 else (1,)
        found |= {run[k:k + n] for n in lengths for k in range(len(run) - n + 1)}
    found |= {c.title() for c in found} | {c.lower() for c in found}
    return {c for c in found if len(c) <= NAME_WIDTH}


def name_spans(name: str, text: str) -> list[Span]:
    """Where member name ``name`` occurs in ``text`` (see the module docstring for the case rule)."""
    return token_spans(name, text, ignore_case=len(name.split()) > 1)


def request_texts(ctx: TurnContext, args: dict[str, Any]) -> list[str]:
    """The user's messages that make up the request a write carries out, newest first."""
    texts = [ctx.text]
    for turn in reversed(ctx.history):
        if not asked_for_value(turn):
            break  # an earlier request was finished (or refused): it is not this one
        texts.append(turn.user_text)
    for value in scalars(args):  # at any depth: a booking's passengers name people too
        source = next((t for t in ctx.user_texts if (value in numbers_in(t) if isinstance(value, int)
                                                     else token_spans(str(value), t, ignore_case=True))), None)
        if source is not None and source not in texts:
            texts.append(source)
    return texts


def others_named(api: SystemApi, ctx: TurnContext, args: dict[str, Any], seen: Sequence[Any] = ()) -> list[str]:
    """The other members the request names as the target of a write with (grounded) ``args``, as
    the user wrote them, in order of appearance; ``[]`` when the write may run. ``seen``: what the sender's own
    look-ups returned; a name of their records (a passenger of their reservation) is theirs to change."""
    texts = request_texts(ctx, args)
    own = set(ctx.profile.names) - {""}
    names = {name for person, person_names in api.people_named(set().union(*map(name_candidates, texts)))
             if person != ctx.profile.user_id for name in person_names if name and name not in own}
    if not names:
        return []
    values = [str(v) for v in scalars(args)] + record_texts(args) + record_texts(list(seen))
    found: list[str] = []
    for text in texts:
        covers = [s for v in [*values, *own] for s in token_spans(v, text, ignore_case=True)]
        spans = [s for name in names for s in name_spans(name, text)
                 if not any(c0 <= s[0] and s[1] <= c1 for c0, c1 in covers)]
        for s in sorted(_outermost(spans)):
            who = " ".join(text[s[0]:s[1]].split())
            if who not in found:
                found.append(who)
    return found


def refusal(operation: str, nickname: str, people: list[str]) -> OperationResult:
    """The result of a write refused because the request is about ``people``, not the sender."""
    return OperationResult(
        operation=operation, outcome=Outcome.REFUSED_OTHER_PERSON, data={"people": people},
        message=(f"Not run: the request names {', '.join(people)}, another member of the system. Operations "
                 f"only change the sender's own account ({nickname}); staff or an admin can help with another's."))


def _outermost(spans: list[Span]) -> set[Span]:
    # "Lena" inside "Lena Leader" is one person named once, not two.
    return {s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)}
