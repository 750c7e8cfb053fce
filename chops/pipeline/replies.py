"""Deterministic replies from real results, in the user's language: cheaper than a model call and
never misreports an outcome.

Every template is a msgid of the message catalogs (``chops.i18n``); this module only chooses one and
fills it in. The domain pack speaks English: in English the reply quotes its message, the most
precise account of what happened. In any other language that message is replaced by the catalog's
words for the operation and the outcome code, filled with the argument values, so a reply never
mixes two languages.
"""

from __future__ import annotations

from typing import Any

from chops.domain.outcomes import Outcome
from chops.domain.values import missing
from chops.i18n import N_, SOURCE_LANGUAGE, join_list, said_in, translate
from chops.pipeline.context import Candidate
from chops.pipeline.prompting import clip
from chops.pipeline.tally import DONE

READ_ROWS = 10  # rows listed in a reply; more are summarised by count

# Why an operation was refused, per outcome code, for languages other than the domain's own.
REFUSALS = {
    Outcome.REFUSED_INVALID_ARG: N_("{action}: the details you gave are not valid or match nothing in the "
                                    "system ({values})."),
    Outcome.REFUSED_PRECONDITION: N_("{action}: the current state of your account does not allow it."),
    Outcome.REFUSED_PERMISSION: N_("{action}: you do not have permission to do this."),
    Outcome.NOT_IN_SYSTEM: N_("{action}: you are not in the system."),
}


def not_in_system_reply(lang: str) -> str:
    """The reply to a sender who is not a member."""
    return translate(lang, N_("We cannot find you in the system, so I can't look up your account or change "
                              "anything. Please contact human support."))


def error_reply(lang: str) -> str:
    """The reply when a model failed: nothing was written."""
    return translate(lang, N_("Sorry, the assistant is unavailable right now, so your request was not processed "
                              "and nothing was changed. Please try again later or contact human support."))


def queued_reply(steps: list[tuple[Any, dict[str, Any]]], lang: str) -> str:
    """The reply for writes sent to the staff approval queue (``(operation, args)`` pairs, one approval)."""
    return translate(lang, N_("Your request ({request}) has been sent to our staff for review. They will check "
                              "it and apply it; nothing has been changed yet."),
                     request=_requests(steps, lang))


def unsure_reply(lang: str) -> str:
    """The reply when the change worked out for the user's message was not verified and would need their yes."""
    return translate(lang, N_("I'm not sure I have understood exactly what you would like changed, so I have not "
                              "changed anything. Could you tell me again, as exactly as you can, what you would like?"))


def staff_decision_reply(steps: list[tuple[Any, dict[str, Any]]], status: str, result: Any | None,
                         note: str | None, lang: str) -> str:
    """The reply telling the user what staff decided on a queued write (``status`` approved, failed
    or rejected); ``result`` is the approved plan's ``PlanResult``, each step reported like any other."""
    request = _requests(steps, lang)
    outcome = ""
    if result is not None:
        done = [(op, r, args) for (op, args), r in zip(steps, getattr(result, "steps", None) or [result])]
        outcome = "\n".join(operation_reply(op, r, args, lang) for op, r, args in done)
    if status == "approved":
        text = translate(lang, N_("Support staff approved your request ({request}). {outcome}"), request=request,
                         outcome=outcome).strip()
    elif status == "failed":
        text = translate(lang, N_("Support staff approved your request ({request}), but it could not be carried "
                                  "out. {outcome} Nothing was changed."), request=request, outcome=outcome)
    else:
        text = translate(lang, N_("Support staff declined your request ({request})."), request=request)
    if note:
        text = translate(lang, N_("{text} Note from staff: {note}"), text=text, note=note)
    return text


# The fixed replies of the conversational routes (chops.records.CONVERSATION_ROUTES).
CONVERSATION_REPLIES = {
    "greeting": N_("Hello! I can answer questions about the platform and make changes to your account. What can "
                   "I do for you?"),
    "thanks": N_("You're welcome! If there is anything else, just write here."),
    "cancel": N_("All right, I've dropped that request and changed nothing. Is there anything else I can do?"),
    "handoff": N_("I'm passing this conversation to our support staff: a person will reply here."),
    "out_of_scope": N_("Sorry, I can only help with this platform: its rules and procedures, and your account. "
                       "Please ask me about those."),
}


def anything_else_reply(lang: str) -> str:
    """The question that closes a finished request (a pack that wants it: ``DomainPack.closing_question``)."""
    return translate(lang, N_("Is there anything else I can help you with?"))


def finished_request(result: Any) -> bool:
    """True when the turn finished what was asked: an answer, a committed change, a read, a change the user
    declined. Not while a question to the user is open (a missing value, a change to confirm, staff)."""
    if result.pending or result.queued or result.error or result.route in (None, "not_in_system") \
            or result.outcome == "refused_missing_args" or (result.trace or {}).get("unanswered"):
        return False
    if result.route in ("basic_info", "guide"):
        return True
    return result.route == "system" and (result.committed or result.outcome in ("ok", "ok_noop", "declined", None))


def opening_reply(lang: str) -> str:
    """The agent's first words, before the user has written anything (the agent speaks first)."""
    return translate(lang, N_("Hi! How can I help you today?"))


def conversation_reply(route: str, lang: str) -> str:
    """The fixed reply of a conversational route, in ``lang``."""
    return translate(lang, CONVERSATION_REPLIES[route])


def not_done_reply(operation: Any, result: Any, args: dict[str, Any], lang: str) -> str:
    """One part of a several-part request that was not done, and why (its refusal or question)."""
    return translate(lang, N_("Not done ({request}): {reason}"), request=_request(operation, args, lang),
                     reason=operation_reply(operation, result, args, lang))


def nothing_changed_reply(operation: Any, result: Any, args: dict[str, Any], lang: str) -> str:
    """A several-part request whose commit was refused at one part: nothing at all was changed."""
    return translate(lang, N_("Nothing was changed: one part of your request could not be carried out "
                              "({request}). {reason}"), request=_request(operation, args, lang),
                     reason=operation_reply(operation, result, args, lang))


def answer_reply(cand: Candidate, lang: str) -> str:
    """The executor's answer, with the cited guide file and page."""
    text = (cand.answer or "").strip() or translate(
        lang, N_("Sorry, I couldn't find an answer to that. Please contact human support."))
    if cand.route == "guide" and cand.source is not None:
        text = translate(lang, N_("{answer} (Source: {file}, page {page})"), answer=text, file=cand.source.file,
                         page=cand.source.page)
    return text


def missing_description(operation: Any, args: dict[str, Any], lang: str) -> str:
    """The arguments still missing, described for the user."""
    # The pack's label for the customer where it has one (its ``Field(title=...)``), else its description (every
    # field has one), never its code name: a customer cannot answer "payment_method_id".
    # At any depth: a booking's second passenger's date of birth is asked for by its own title.
    parts = list(dict.fromkeys(translate(lang, info.title) if info.title else (info.description or str(path[-1]))
                               for path, info in missing(operation.args_model, args)))
    return join_list(parts, lang) or translate(lang, N_("the missing details"))


def operation_reply(operation: Any, result: Any, args: dict[str, Any], lang: str) -> str:
    """The reply for a write's (or a refused read's) real result."""
    outcome = Outcome(result.outcome)
    if outcome == Outcome.REFUSED_OTHER_PERSON:
        return other_person_reply((result.data or {}).get("people") or [], lang)
    which = result.data if outcome == Outcome.REFUSED_MISSING_ARGS and isinstance(result.data, dict) else {}
    if which.get("listed"):  # the new items the customer asked to choose from (``chops.pipeline.listing``)
        return translate(lang, N_("These {name} options fit what you asked for: {options}. Which one would you "
                                  "like? Just reply with it and I'll continue."), name=which["which"],
                         options="; ".join(f"({i}) {o}" for i, o in enumerate(which["options"], 1)))
    if which.get("options"):  # several lines it could be (``chops.pipeline.which``)
        return translate(lang, N_("You have more than one {name} this could be: {options}. Which one do you mean? "
                                  "Just reply with it and I'll continue."), name=which["which"],
                         options=join_list(which["options"], lang, style="or"))
    if outcome == Outcome.REFUSED_MISSING_ARGS:
        return translate(lang, N_("I need a bit more information to do that: please tell me {missing}. Just reply "
                                  "with it and I'll continue."), missing=missing_description(operation, args, lang))
    done = result.data.get(DONE) if isinstance(result.data, dict) else None
    if done is not None:  # asked again for what this conversation already did (``tally.done_before``)
        said = done if lang == SOURCE_LANGUAGE else _detail(operation, result.model_copy(
            update={"outcome": Outcome.OK}), args, lang)
        return translate(lang, N_("That was already done earlier in this conversation: {message}"), message=said)
    message = _detail(operation, result, args, lang)
    if outcome == Outcome.OK:
        return translate(lang, N_("Done: {message}"), message=message)
    if outcome == Outcome.OK_NOOP:
        return translate(lang, N_("Done: nothing needed to change. {message}"), message=message)
    return translate(lang, N_("I couldn't do that: {message}"), message=message)


def other_person_reply(people: list[str], lang: str) -> str:
    """The reply to a write refused because the request is about ``people``, not the sender."""
    who = join_list(people, lang) or translate(lang, N_("someone else"))
    return translate(lang, N_("I couldn't do that: I can only make changes to your own account, and your request "
                              "is about {people}. Support staff or an admin can help with another person's "
                              "account."), people=who)


def read_reply(operation: Any, result: Any, args: dict[str, Any], lang: str) -> str:
    """The reply for a read: its rows, one line each, or the refusal."""
    if not result.outcome.succeeded:
        return operation_reply(operation, result, args, lang)
    rows = result.data if isinstance(result.data, list) else ([result.data] if result.data else [])
    message = _detail(operation, result, args, lang)
    if not rows:
        return translate(lang, N_("{message} No matching records were found."), message=message)
    lines = [f"- {_row_text(operation, r, lang)}" for r in rows[:READ_ROWS]]
    if len(rows) > READ_ROWS:
        lines.append("- " + translate(lang, N_("… and {count} more"), count=len(rows) - READ_ROWS))
    return translate(lang, N_("{message}\n{rows}"), message=message, rows="\n".join(lines))


def _action(operation: Any, args: dict[str, Any], lang: str) -> tuple[str, str]:
    """The operation as the user would name it, and its argument values as one phrase."""
    action = translate(lang, operation.title) if operation.title else operation.name
    values = [translate(lang, str(v)) if k in operation.worded else _shown(v) for k, v in args.items() if v is not None]
    return action, join_list(values, lang)


def _request(operation: Any, args: dict[str, Any], lang: str) -> str:
    """The operation with its argument values: "change your upload limit: 40"."""
    action, values = _action(operation, args, lang)
    return translate(lang, N_("{action}: {values}"), action=action, values=values) if values else action


def _requests(steps: list[tuple[Any, dict[str, Any]]], lang: str) -> str:
    """Several requests as one phrase: "change your upload limit: 40 and change your marking subject: 3"."""
    return join_list([_request(op, args, lang) for op, args in steps], lang)


def _detail(operation: Any, result: Any, args: dict[str, Any], lang: str) -> str:
    """What happened: the domain's own message in English, or in the customer's language where the pack said it in its
    catalog's words (``OperationResult.said``); else the catalog's account in other languages."""
    if lang == SOURCE_LANGUAGE:
        return result.message.strip()
    if getattr(result, "said", None):
        return said_in(result.said, lang)
    outcome = Outcome(result.outcome)
    if outcome in REFUSALS:
        action, values = _action(operation, args, lang)
        return translate(lang, REFUSALS[outcome], action=action, values=values)
    return translate(lang, N_("{request}."), request=_request(operation, args, lang))


def said_as(result: Any, lang: str) -> str:
    """What a dry run's message says of the change, in ``lang``: the domain's own message in English, the pack's
    catalog words in another language, else "" (nothing the customer could read in theirs)."""
    if lang == SOURCE_LANGUAGE:
        return result.message
    return said_in(result.said, lang) if getattr(result, "said", None) else ""


def _row_text(operation: Any, row: Any, lang: str) -> str:
    if hasattr(row, "model_dump"):
        row = row.model_dump()
    if not isinstance(row, dict):
        return clip(str(row), 400)
    parts = []
    for key, label in operation.columns:
        value = row.get(key)
        if value in (None, ""):
            continue
        if key in operation.worded:
            value = translate(lang, str(value))
        parts.append(translate(lang, N_("{label}: {value}"), label=translate(lang, label), value=value))
    if not parts:  # not a user row: show what it holds
        parts = [f"{k}: {v}" for k, v in row.items() if v not in (None, "")]
    return clip(translate(lang, N_(", ")).join(parts), 400)


# --- confirmation before a write (chops.pipeline.confirm) -----------------------------------------

PENDING_REPLIES = {
    "declined": N_("All right, I have not changed anything."),
    "lapsed": N_("That change waited too long for your answer, so nothing was changed. Please ask again if you "
                 "still want it."),
    "unclear": N_("I could not tell whether that is a yes."),
    "moved": N_("Your account changed since I described this, so here is the change as it would be now:"),
}


def change_lines(steps: list[tuple[Any, dict[str, Any]]], diff: list[Any], lang: str,
                 notes: list[str] | None = None) -> str:
    """What a plan will change, one line per operation with its values, then one per changed value; in the domain's
    own language, each operation's dry-run message under it, which says it in words ("Desk Lamp (brightness: medium ->
    high)", where the values are ids). Where every operation ``tells`` its change in that message, the operation's
    name and the message alone: "retail_order #W…: return_items None → 4273929280" and the argument ids said
    nothing more to a customer (the pending change keeps the diff, which the widget and the staff console show).
    ``notes`` are in ``lang`` already (``said_as``: "" where the pack's message has no words in it)."""
    said = [n.strip() for n in notes or []]
    if len(said) == len(steps) and all(said) and all(op.tells for op, _ in steps):
        return "\n".join(f"- {_action(op, args, lang)[0]}\n  {note}" for (op, args), note in zip(steps, said))
    lines = [f"- {_request(op, args, lang)}" + (f"\n  {said[i]}" if i < len(said) and said[i] else "")
             for i, (op, args) in enumerate(steps)]
    return "\n".join(lines + [f"  • {_change_text(c)}" for c in diff])


def _change_text(change: Any) -> str:
    keys = ", ".join(str(v) for v in change.key.values())
    if change.field is None:  # an inserted row: its fields
        inner = ", ".join(f"{k}: {v}" for k, v in (change.after or {}).items() if v is not None)
        return f"{change.table} {keys}: + {{{clip(inner, 200)}}}"
    return f"{change.table} {keys}: {change.field} {clip(_shown(change.before), 80)} → {clip(_shown(change.after), 80)}"


def _shown(value: Any) -> str:
    """A value as a customer reads it: a list's values joined by "+", not Python's "['9791469541']"."""
    return " + ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def confirm_reply(description: str, lang: str) -> str:
    """The question a described change asks: the change, then "shall I go ahead?"."""
    return translate(lang, N_("Here is what I will do:\n{changes}\nShall I go ahead? Reply yes to confirm, or no to "
                              "leave everything as it is."), changes=description)


def pending_reply(kind: str, lang: str) -> str:
    """The reply when the user declined a described change, answered too late, or the state moved."""
    return translate(lang, PENDING_REPLIES[kind])
