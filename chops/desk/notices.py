"""What the user is told about people: the offer of a person when the agent could not finish, and the
note that nobody from support is active right now. Both in the user's language (``chops.i18n``).

When the agent offers a person (``offer_reason``), one line is added to its reply; the conversation
stays with the agent, and the user's answer ("yes, a person please", in any wording) is routed to the
hand-off by the classifier like any other request for a person. Offered when:

* ``unverified`` — the verifier never passed within the iterations (and the write, if any, was not
  queued for staff approval: then staff already have it);
* ``refused`` — an operation was refused by policy (permission, precondition, another person's account);
* ``failed_twice`` — this turn and the one before both left the request unfinished (any of the above,
  a missing or invalid argument, a guide question without a cited source, or a model error).
"""

from __future__ import annotations

from typing import Any

from chops.i18n import N_, translate

OFFER = N_("If you would like a person from support to help, just say so and I will hand this conversation over.")
LATER = N_("No one from support is online right now. A person will answer here as soon as they can; "
           "nothing you write is lost.")

_POLICY_REFUSALS = ("refused_permission", "refused_precondition", "refused_other_person")


def _unverified(result: Any) -> bool:
    trace = result.trace or {}
    has_verifier = str(trace.get("architecture", "")).startswith("cev")
    return has_verifier and trace.get("passed") is False and not result.queued


def unfinished(result: Any) -> bool:
    """The turn (a ``TurnResult``, or a stored ``TurnRecord`` with its trace) left the user's request
    unfinished (see the module docstring)."""
    if getattr(result, "error", None) or _unverified(result):
        return True
    if result.outcome and str(result.outcome).startswith("refused"):
        return True
    trace = result.trace or {}
    return result.route == "guide" and trace.get("passed") is not None and not _cited(trace)


def _cited(trace: dict) -> bool:
    return any(step.get("source") for step in trace.get("steps") or [] if isinstance(step, dict))


def offer_reason(result: Any, previous: Any | None) -> str | None:
    """Why a person should be offered after ``result`` (``previous``: the turn before, or None)."""
    if result.route in ("handoff", "not_in_system"):
        return None
    if _unverified(result):
        return "unverified"
    if result.outcome in _POLICY_REFUSALS:
        return "refused"
    if unfinished(result) and previous is not None and previous.route != "handoff" and unfinished(previous):
        return "failed_twice"
    return None


def notice(lang: str, msgid: str) -> str:
    """One of this module's texts in ``lang``."""
    return translate(lang, msgid)
