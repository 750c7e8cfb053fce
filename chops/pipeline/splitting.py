"""A message split into the requests it makes (``chops.pipeline.agenda`` handles them one after the other).

The model writes each request as a sentence that stands alone (``pipeline_split``, ``Requests``). A split is only a
decision of order and boundaries, never of what is asked: a request made of other words than the message's (or adding
one that turns it around) gives the message's own sentences grouped by the requests, or the message whole; a
condition, a fallback, how to pay a difference or where a refund goes stays with the request before it; a sentence
holding an id no request holds joins the request nearest it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chops.domain.operations import Operation
from chops.llm import LLM, LLMError
from chops.pipeline.prompting import messages
from chops.pipeline.relative import COMPARING
from chops.pipeline.schemas import MAX_REQUESTS, Requests
from chops.pipeline.trace import Trace
from chops.pipeline.walk import HAN, SENTENCE, made_of, typed_ids, words_of

# A message that may ask for several things: a joining word between clauses, or a second sentence. Only such a
# message is split (one model call); "cancel #W1, I ordered it by mistake" is not asked about.
_JOINED = re.compile(r"\b(and|also|then|plus|as well|too|second(ly)?|another)\b|[;\n]|[.!?]\s+\S|[，。；另还]",
                     re.IGNORECASE)
MIN_WORDS = 12


def may_hold_several(text: str) -> bool:
    """Whether ``text`` is long enough (in words; two Chinese characters count as one) and joined enough to ask for
    more than one thing."""
    return len(text.split()) + len(HAN.findall(text)) // 2 >= MIN_WORDS and bool(_JOINED.search(text))


def split(llm: LLM, text: str, trace: Trace, operations: Iterable[Operation] = ()) -> list[str]:
    """The requests of ``text``, in the customer's order (one: the message as it is, also when the model's reply was
    no list of requests: the split only decides the order the requests are handled in). A split with words the
    message does not have gives the message's own sentences, grouped by the requests (``_own_sentences``), or, where
    they cannot be, the message whole. A request of two changes that ``operations`` asks for by words
    (``_gapped``) is two."""
    msgs = messages("pipeline_split", request=text)
    try:
        # The executor's role: its model and its token budget (four sentences run past a classifier's 32 tokens).
        out, step = trace.call("executor", lambda lg: llm.structured("executor", msgs, Requests, ledger=lg),
                               split=True)
    except LLMError as exc:
        if exc.code != "invalid_output":
            raise
        trace.step("split", error=exc.code)
        return [text]
    parts = _with_conditions([p.strip() for p in out.requests if p.strip()])[:MAX_REQUESTS]
    step["requests"] = parts
    if len(parts) < 2:
        return [text]
    if not all(_from(part, text) for part in parts):
        step["invented"] = True  # a request the message does not hold: its own sentences, or the message whole
        own = _own_sentences(parts, text)
        if own is None:
            return [text]
        step["own_sentences"] = parts = own
    kept = _with_lost(parts, text)
    if kept != parts:
        step["lost"] = sorted(set(typed_ids([text])) - set(typed_ids(parts)))
    operations = list(operations)
    kept = _with_kinds(kept, text, operations)
    return _elliptic(_with_topic(_gapped(kept, operations), text), text)


def _placed(parts: list[str], text: str) -> tuple[list[str], list[int]]:
    """The sentences of ``text`` and each part's place among them: the sentence its words (``walk.words_of``) match
    best."""
    sentences = [x.strip() for x in SENTENCE.split(text) if x.strip()]
    return sentences, [max(range(len(sentences)), key=lambda i: len(words_of(part) & words_of(sentences[i])))
                       for part in parts]


def _own_sentences(parts: list[str], text: str) -> list[str] | None:
    """The sentences of ``text`` grouped by ``parts``: each part's place is the sentence sharing most words with it
    (``walk.words_of``), and a request runs from its place to the next one's (the first from the message's start).
    None unless every part shares a word with its place and the places are distinct and in order (two requests of
    one sentence cannot be told apart by sentences). The 1.5B wrote "a replacement, exactly the same helmet" as
    "Replace the helmet with an identical one", the split was not taken, and the message's second request was
    never done (own5); the customer's own words cannot turn a request around."""
    sentences, places = _placed(parts, text)
    if any(not words_of(part) & words_of(sentences[i]) for part, i in zip(parts, places)) \
            or any(a >= b for a, b in zip(places, places[1:])):
        return None
    bounds = [0, *places[1:], len(sentences)]
    return [" ".join(sentences[a:b]) for a, b in zip(bounds, bounds[1:])]


def _with_lost(parts: list[str], text: str) -> list[str]:
    """``parts`` with each sentence of ``text`` holding an id (a token with a digit: ``walk.typed_ids``) that no part
    holds added to the part nearest it (the part whose words best match a sentence at or before it; none: the
    sentence is a preamble, "I just created my account, mei_patel_7272", and is left out).
    "For order #W…, change the address to be the same as order #W…" was split as "Change the address to be the same
    as order #W…", and the default address was changed (train task 78); "It should be 445 Maple Drive, Suite 394, …"
    was left out of the address change it was for (train task 41)."""
    held = set(typed_ids(parts))
    sentences, places = _placed(parts, text)
    out = list(parts)
    for i, sentence in enumerate(sentences):
        if set(typed_ids([sentence])) - held:
            before = [n for n, place in enumerate(places) if place <= i]
            if before:
                n = max(before, key=lambda k: places[k])
                out[n] = f"{out[n].rstrip()} {sentence}"
    return out


def _with_kinds(parts: list[str], text: str, operations: list[Operation]) -> list[str]:
    """``parts`` with each sentence of ``text`` that names a kind of write (``Operation.named_in``) no part names
    joined to the part sharing most of its words (``walk.words_of``; before it, where the sentence comes first): "And
    the yoga mat I received is going back; put its refund on my gift card." was split as "Put the refund on my gift
    card for the yoga mat.", and the 1.5B changed the delivered order's payment method (our own conversations)."""
    sentences, places = _placed(parts, text)
    out = list(parts)
    for i, sentence in enumerate(sentences):
        if not any(op.writes and op.named_in(sentence) and not any(op.named_in(p) for p in out) for op in operations):
            continue
        n = max(range(len(out)), key=lambda k: len(words_of(out[k]) & words_of(sentence)))
        if words_of(out[n]) & words_of(sentence):
            out[n] = f"{sentence} {out[n]}" if i < places[n] else f"{out[n].rstrip()} {sentence}"
    return out


# "And my pending order: change its item to red, and …": a short head before a colon names what the rest is about.
_TOPIC = re.compile(r"^(?:(?:and|also|then|plus|oh|now|finally|lastly|next|as for|about)\b[\s,]*)*"
                    r"(?P<head>[^:：]{3,80})(?<!\d)[:：]", re.IGNORECASE)  # not a time's "10:30"
_TOPIC_WORDS = 8


def _with_topic(parts: list[str], text: str) -> list[str]:
    """``parts`` with each one placed in a sentence of ``text`` that opens with a short head and a colon (``_TOPIC``),
    and that shares no word with the head (``walk.words_of``), opened by the head: "And my pending order: change its
    item to red, and its address to …" was split as "Change its item to red …", the order was lost, and the address
    change went to a cancelled order (train task 104)."""
    sentences, places = _placed(parts, text)
    out = []
    for part, place in zip(parts, places):
        found = _TOPIC.match(sentences[place])
        head = found["head"].strip() if found else ""
        if head and len(head.split()) <= _TOPIC_WORDS and words_of(head) and not words_of(head) & words_of(part):
            part = f"{head[0].upper()}{head[1:]}: {part[0].lower()}{part[1:]}"
        out.append(part)
    return out


_CLAUSE = re.compile(r"(?<=[,，])\s*|" + SENTENCE.pattern)


def clause_of(part: str, text: str) -> str:
    """The clause of ``text`` (a sentence, or its part up to a comma) whose words (``walk.words_of``) ``part`` shares
    most: the customer's own words a request split off ``text`` came from."""
    clauses = [c.strip() for c in _CLAUSE.split(text) if c and c.strip()]
    return max(clauses, key=lambda c: len(words_of(part) & words_of(c)), default="")


# A sentence that names a thing and asks nothing of its own, after a request: "Also the backpack I got with the
# vacuum." asks for the same as the request before it. Not one with a second clause, or a word that says what the thing
# should be ("And the lamp I ordered should be blue", "… for a blue one", "… in blue").
_NO_VERB = re.compile(r"^(?:(?:and|also|plus|then|oh|as well as)\b[\s,]*)*(?:the|my|that|this|those|these)\b"
                      r"(?![^,:;]*[,:;])(?![^.!?]*\b(?:should|must|be|is|are|was|want|like|need|make|to|into|for|in"
                      r"|instead|rather)\b)", re.IGNORECASE)
_POLITE = {"please", "kindly", "also", "and", "then"}
_QUESTION_WORDS = {"how", "what", "what's", "which", "where", "when", "why", "who", "is", "are", "do", "does", "did",
                   "can", "could", "would", "will"}


def _elliptic(parts: list[str], text: str) -> list[str]:
    """``parts`` with each request that came from a sentence naming a thing and asking nothing of its own
    (``_NO_VERB``), and that opens with a verb the sentence does not have, opened by the verb of the request before it
    instead: "… cancel the bookshelf and the jigsaw I received. Also the backpack I got together with the vacuum
    cleaner." came back from the split as "Change the backpack …", and the 1.5B proposed the backpack's exchange for
    options never spoken of (train task 103)."""
    out: list[str] = []
    # The verb's own word anywhere in the message: "I'd like to return the vacuum cleaner, the headphones and the smart
    # watch" is three clauses, and the last, naming things only, is the one the request shares most words of.
    said = {w[:4] for w in re.findall(r"[a-z]+", text.lower())}
    for part in parts:
        words = part.split()
        at = _verb_at(words)
        clause = clause_of(part, text)
        if out and at < len(words) and _NO_VERB.match(clause.strip()) and words[at].lower()[:4] not in said:
            verb = _verb(out[-1])
            if verb and verb not in _QUESTION_WORDS:  # "How many t-shirts …?" lends no verb (train task 2)
                words[at] = verb.capitalize() if at == 0 else verb
                part = " ".join(words)
        out.append(part)
    return out


def _verb_at(words: list[str]) -> int:
    """The place of the first of ``words`` after polite ones ("Please cancel …": 1), or their length."""
    return next((i for i, w in enumerate(words) if w.lower().strip(",") not in _POLITE), len(words))


def _verb(request: str) -> str:
    """The first word of ``request`` after polite ones ("Please cancel …": "cancel"), lower-cased."""
    words = request.split()
    at = _verb_at(words)
    return words[at].lower().strip(",") if at < len(words) else ""


# "change the item in my pending order to red, and its address to …": a second change whose verb is the first's.
_RECORD = r"\b(?:my|the|your|this|that)\s+(?:[^\W\d_]+\s+){0,2}?"  # "my pending " of "my pending order"
_AND_ITS = re.compile(r",?\s+and\s+(?P<det>its|the|my|their)\s+(?P<noun>[^\W\d_]+)\b(?P<rest>.*)$", re.IGNORECASE)


def _gapped(parts: list[str], operations: list[Operation]) -> list[str]:
    """``parts`` with each one of two changes sharing a verb ("change the item in my pending order to red, and its
    address to my Chicago home", ``_AND_ITS``) written as two, where the second asks by its words for a write of
    ``operations`` (``Operation.asked_by``: an address, a payment) that the first does not: the split kept them as one
    request, and only the address was changed (train task 104). "Its" is the record the first names ("my pending
    order's address"); "the color to red and the size to L" (one swap) stays one."""
    out: list[str] = []
    for part in parts:
        found = _AND_ITS.search(part)
        if not found:
            out.append(part)
            continue
        first, second, verb = part[:found.start()], part[found.start():], _verb(part[:found.start()])
        asks = [w for w in operations if w.writes and w.asked_by and w.asked_in([second], second)
                and not w.asked_in([first], first)]
        if not asks or not verb:
            out.append(part)
            continue
        nouns = [arg.removesuffix("_id") for w in asks for arg in w.choice_states()]
        held = next((m[0] for noun in nouns
                     if (m := re.search(rf"{_RECORD}{re.escape(noun)}\b", first, re.IGNORECASE))), None)
        phrase = f"{found['noun']}{found['rest']}"
        second = f"{held}'s {phrase}" if found["det"].lower() == "its" and held else f"{found['det']} {phrase}"
        out += [f"{first.rstrip(' ,.')}.", f"{verb.capitalize()} {second.strip()}"]
    return out


# A request that only says what to do if the one before cannot be done, or how the customer would like it: no request
# of its own ("If there's no exact one, tell me all the 13-inch options" was taken up alone: train task 35).
_CONDITION = re.compile(r"^(?:(?:but |and |or |then )?(?:if|otherwise|unless|in case|or else|else|only if|prefer(?:ably)?"
                        r"|i(?:'d| would)? prefer)\b|如果|否则|要是|不然)", re.IGNORECASE)


# A request that only says how to pay what the one before may cost: "use my gift card to cover any extra charge" was
# taken up alone as a change of the order's payment method (train task 21).
_PAYING = re.compile(r"^(?:(?:and|but|then|also) )?(?:please )?(?:use|pay|charge|put|cover|bill)\b|^(?:用|请用)",
                     re.IGNORECASE)
_DIFFERENCE = re.compile(r"\b(?:difference|extra|additional)\b|差价", re.IGNORECASE)
# A request that only says where a refund goes: "I'd prefer the refund on PayPal" came back as "Refund on PayPal." and
# was taken up alone as a change of an order's payment method (train task 13). "Refund the kettle to my card" is a
# request: a thing follows "refund".
_REFUND_TO = re.compile(r"^(?:(?:and|but|then|also|please) )*(?:(?:i(?:'d| would) like|i want) )?"
                        r"(?:the |a |my |any )?(?:refunds?|money)(?: should| can| must| will)?"
                        r"(?: go| be(?: sent| made| paid| put)?)?(?: back)? (?:to|on|via|with|into|through|onto)\b"
                        r"|^(?:请)?(?:退款|退钱)(?:到|至|回)", re.IGNORECASE)


# A request that only says what to leave as it is: "Leave the order address as it is now." was taken up alone, after the
# default address was changed back, and the order's address was changed again (train task 22).
_KEEPING = re.compile(r"^(?:(?:and|but|then|also|please|just) )*(?:(?:leave|keep)\b[^.;!?]*?\b(?:as (?:it|they) "
                      r"(?:is|are|was|were)|as is|unchanged|alone)\b|(?:don't|do not|no need to) (?:change|touch|modify"
                      r"|update)\b)|^(?:请)?(?:保持|不要改|别改|不用改)", re.IGNORECASE)
_ANOTHER_CHANGE = re.compile(r"\b(?:but|instead|change|swap|switch|exchange|return|cancel|replace)\b|但|换|退",
                             re.IGNORECASE)

# A condition that adds a request of its own ("If the tablet is returned, also cancel the charger"): joined to the one
# before, it was lost with it (train task 30).
_ADDED = re.compile(r"\b(?:also|too|as well|in addition)\b|也|还要", re.IGNORECASE)


def _with_conditions(parts: list[str]) -> list[str]:
    """``parts`` with each one that is a condition, a fallback, a preference, how to pay the difference, where a
    refund goes, or what to leave as it is joined to the request before it (not one that adds a request: ``_ADDED``)."""
    out: list[str] = []
    for part in parts:
        condition = _CONDITION.match(part) and not _ADDED.search(part)
        keeping = (m := _KEEPING.match(part)) is not None and not _ANOTHER_CHANGE.search(part[m.end():])
        if out and (condition or keeping or _REFUND_TO.match(part) or (_PAYING.match(part)
                                                                        and _DIFFERENCE.search(part))):
            out[-1] = f"{out[-1].rstrip('.')}; {part[0].lower()}{part[1:]}"
        else:
            out.append(part)
    return out


# Words that turn what is asked around where a split adds them: a comparison ("keep the capacity" split as "a smaller
# capacity": train task 58, the coffee machine's exchange then proposed for a smaller one), a negation.
_TURNING = COMPARING | {"not", "no", "never", "without", "except", "nothing", "don't", "doesn't", "dont"}


def _from(part: str, text: str) -> bool:
    """Whether ``part`` is made of the words of ``text`` (``walk.made_of``: ``IN_MESSAGE`` of its words, plural and
    case aside, or of its Chinese characters) and adds none that turns what is asked around (``_TURNING``): the 1.5B
    split "boots in my pending order: size 8 … PayPal for any difference" into "upgrade the boots to the large ones,
    pay the difference with my gift card" (train task 15); rewordings of the requests a message holds kept 91-100 %
    of their words."""
    said = set(re.findall(r"[\w']+", text.lower()))
    if any(w in _TURNING and w not in said for w in re.findall(r"[\w']+", part.lower())):
        return False
    return made_of(part, text)
