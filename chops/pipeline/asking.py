"""Whether a request only asks about something, and which words ask for a change.

Asked "what's the price of the speaker I bought?", the 1.5B proposed the order's address change; asked which two
t-shirts an order held, a t-shirt's item change; asked "what's the storage of the tablet I ordered?", its exchange. A
request that only asks about something and names no change is looked up and answered (``only_asks``), and a write
proposed for it is refused (``unasked_write``; a swap: ``chops.pipeline.kinds.unasked_swap``). A request may also ask
to hear the options to choose from before a swap is made (``asks_options``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chops.domain.operations import Operation, named

ASKED = "know something"  # the kind of a request that names no change at all ("what's the tablet's storage?")
# Words that ask for some change in any shop's English or Chinese, beside the swaps' own kinds ("exchange", "modify").
_CHANGE_WORDS = ("chang", "swap", "switch", "replac", "upgrad", "downgrad", "instead", "换", "改")
# Words of a change that is no swap, in any shop's English, beside the kinds of its operations ("return", "cancel").
_UNDO_WORDS = ("refund", "money back", "send back", "send it back", "get rid", "don't want", "don't need",
               "no longer need", "退", "取消")
_QUESTION = re.compile(r"[?？]\s*$|^\s*(?:what|which|how|is|are|does|do|did|has|have|was|were|where|when|why|who)\b"
                       r"|吗|什么|多少|哪", re.IGNORECASE)
# A question that asks about something ("what's the price …?", "One more thing: is it …?"), not a request put as one
# ("can you …?").
_ASKS = (r"(?:what|which|how much|how many|how long|where|when|why|who|is|are|does|did|has|have|was|were)\b",
         "什么|多少|哪")
# What may put a question indirectly: "Check how much I paid …", "Please tell me where it was sent".
_LEAD = r"(?:(?:please|can you|could you|i want to|i'd like to|i would like to)\s+)?" \
        r"(?:check|tell me|let me know|find out|know|see|show me)\s+"
_ASKING_ABOUT = re.compile(rf"(?:^|[.:;!?]\s)\s*(?:{_LEAD})?{_ASKS[0]}|{_ASKS[1]}", re.IGNORECASE)
# A clause of a message, and one that asks about something: "What's the tracking number, and how much did I pay?"
_CLAUSE = re.compile(r"[.;!?？。；]|,\s*(?=(?:and|but|also)\b)|，")
_ASKING = re.compile(rf"^\s*(?:(?:and|but|also)\s+)?(?:{_LEAD})?{_ASKS[0]}|{_ASKS[1]}", re.IGNORECASE)
# A change only supposed in a question: "how much would I get back if I returned the watch?", "what would the refund
# be on the grinder?" ask what it would do, not for it (own6: the 1.5B proposed the watch's return).
_SUPPOSED = re.compile(r"\b(?:if (?:i|we)|would)\b[^,.;!?]*", re.IGNORECASE)
_SENTENCES = re.compile(r"[^.;!?？。；]+[.;!?？。；]*")


def unasked_write(op: Operation, request: str, operations: Iterable[Operation]) -> bool:
    """Whether the write ``op`` that is no swap answers a ``request`` that only asks about something ("what's the price
    of the speaker I bought, and its battery life?") and names no change: no kind of a write, no word of a change
    (``_CHANGE_WORDS``, ``_UNDO_WORDS``), none of ``op``'s own words (``Operation.asked_by``: "address", "ship"). Asked
    so, the 1.5B proposed the order's address change (train task 63)."""
    return not op.choice_pairs() and asks_only(request, operations, op.asked_by)


def only_asks(request: str, operations: Iterable[Operation]) -> bool:
    """Whether ``request`` only asks about something and names no change (``unasked_write``), nor any write's own words:
    then no write is offered at all, only the look-ups and the answer. Asked which two t-shirts an order held and what
    they were made of, the 1.5B, shown the order, proposed a t-shirt's item change, then its return, then answered
    "I can't help with that" (train task 24)."""
    operations = list(operations)
    return asks_only(request, operations, [w for op in operations if op.writes for w in op.asked_by])


def asks_only(request: str, operations: Iterable[Operation], own: Iterable[str]) -> bool:
    """Whether ``request`` asks about something and names no change (``names_change``; a change only supposed in a
    clause that asks, ``_SUPPOSED``, is none), nor one of the words ``own`` outside the clauses that ask about
    something."""
    asked = "".join(_SUPPOSED.sub(" ", c) if _ASKING_ABOUT.search(c) or question(c) else c
                    for c in _SENTENCES.findall(request))
    if not _ASKING_ABOUT.search(request) and not _ASKING_ABOUT.search(asked.lstrip(" ,")):
        return False
    # A write's own words count outside what is asked about: "how much did I pay for the camera?" asks for no change
    # of a payment method (our own conversations: the 1.5B, offered the writes, proposed the camera's exchange).
    rest = " ".join(c for c in _CLAUSE.split(asked) if not _ASKING.search(c))
    return not names_change(asked, operations) and not any(named(w, rest) for w in own)


def names_change(text: str, operations: Iterable[Operation]) -> bool:
    """Whether ``text`` holds a word that asks for some change: a write's ``kind_words``, ``_CHANGE_WORDS``,
    ``_UNDO_WORDS``."""
    words = [*(w for o in operations if o.writes for w in o.kind_words), *_CHANGE_WORDS, *_UNDO_WORDS]
    return any(named(w, text) for w in words)


def question(request: str) -> bool:
    """Whether ``request`` is a question ("what's the storage of …?", "is it …", 什么 …), not a wish said tersely
    ("jigsaw to the easiest one": a customer's later message, after they had asked for the change)."""
    return bool(_QUESTION.search(request))


def swap_word(request: str, operations: Iterable[Operation]) -> bool:
    """Whether ``request`` names a swap's kind or a word that asks for a change (``_CHANGE_WORDS``)."""
    words = [w for op in operations if op.writes and op.choice_pairs() for w in op.kind_words] + list(_CHANGE_WORDS)
    return any(named(w, request) for w in words)


_CHOICES = r"(?:options|choices|alternatives|variants|versions|models)"
_KINDS = rf"(?:{_CHOICES}|ones)"
# "tell me all the options and their prices", "what are my choices?", "list the available ones", "show me what's
# available", "let me see the alternatives", "what options do I have", 有哪些选项, 告诉我所有款式和价格.
_ASKS = re.compile(
    rf"\b(?:tell|show|list|give|send|read|let)\s+(?:me\s+)?(?:know\s+|see\s+|hear\s+)?(?:about\s+)?"
    rf"(?:all\s+|each\s+of\s+|every\s+)?(?:of\s+)?(?:the\s+|my\s+|your\s+|what\s+)?(?:different\s+|possible\s+|"
    rf"available\s+)?(?:{_KINDS}|(?:[\w-]+\s+){{1,2}}{_CHOICES})\b"  # "all the 13-inch options", not "the new ones"
    rf"|\bwhat(?:\s+are|'re)?\s+(?:all\s+)?(?:the\s+|my\s+)?(?:available\s+|possible\s+)?{_KINDS}\b"
    rf"|\b(?:what|which)\s+{_CHOICES}\b"  # not "I forget which ones"
    rf"|\b(?:show|tell|list|give)\s+(?:me\s+)?what(?:'s|\s+is|\s+are)?\s+(?:there|available|in stock)\b"
    rf"|\b{_KINDS}\s+(?:and|with)\s+(?:their\s+|the\s+)?prices\b"
    r"|\bbefore\s+I\s+(?:choose|decide|pick)\b"
    r"|(?:哪些|什么|所有|全部|列出|告诉我).{0,8}(?:选项|选择|款式|型号|款)",
    re.IGNORECASE)


def asks_options(request: str) -> bool:
    """Whether ``request`` asks to hear the options to choose from ("If there are several, tell me all the options
    and their prices", "what are my choices?", "list the available ones before I decide")."""
    return bool(_ASKS.search(request))
