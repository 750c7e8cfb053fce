"""What a conversation's changes came to in money.

"Cancel all my pending orders, return the watch, and how much will I get back in total?": each change is described,
confirmed and committed on its own, and each reply says its own refund; the total, which the customer asked for, was
never said (a 1.5B model asked for it sums the wrong numbers, or none). A write that moves money says how much
(``OperationResult.money``: a refund positive, a charge negative); each commit's trace step keeps the amounts of its
steps (``commit_money``), and once a conversation has committed two or more of them, the reply of a turn that
committed one ends with the total so far (``with_total``), in the pack's currency. The prompts that answer a
question show what was done (``done_lines``), and the numbers it holds are no invented ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from chops.i18n import N_, money, translate
from chops.records import TurnRecord, TurnResult

MONEY = "money"  # the commit step's key: the amounts its steps moved, as strings


def commit_money(results: Iterable[Any]) -> list[str]:
    """What a commit's step ``results`` moved (``OperationResult.money``), one string each, for the trace."""
    return [str(r.money) for r in results if getattr(r, "money", None) is not None]


def commits(traces: Iterable[dict[str, Any] | None]) -> Iterable[dict[str, Any]]:
    """The committed (not replayed) commit steps of ``traces``, oldest first."""
    for trace in traces:
        for step in (trace or {}).get("steps") or []:
            if step.get("role") == "commit" and step.get("committed") and not step.get("replayed"):
                yield step


def moved(traces: Iterable[dict[str, Any] | None]) -> list[Decimal]:
    """Every amount other than zero the commits of ``traces`` moved, oldest first (an exchange at the same price
    moves none)."""
    return [Decimal(m) for step in commits(traces) for m in step.get(MONEY) or [] if Decimal(m)]


DONE = "done_before"  # a refusal's data: what this conversation's commit of the same write said (``done_before``)


def done_before(op: Any, args: dict[str, Any], history: Sequence[TurnRecord]) -> str | None:
    """What this conversation's commit of ``op`` said (its message), where it was of the record ``args`` names (the
    value of an argument whose state ``op`` takes: ``CHOICES_WHERE``) and of every line ``args`` lists; else None.
    Asked again for a cancel the customer's yes had committed, the agent said "I couldn't do that: #W… is cancelled"
    and offered a person (train task 31)."""
    keyed = [a for a in op.choice_states() if args.get(a) is not None]
    if not keyed:
        return None
    for step in commits(t.trace for t in history):
        for s in step.get("steps") or []:
            done = s.get("args") or {}
            if s.get("operation") == op.name and all(done.get(a) == args[a] for a in keyed) \
                    and all(set(map(str, v)) <= set(map(str, done.get(k) or ())) for k, v in args.items()
                            if isinstance(v, list)):
                return s.get("message") or ""
    return None


def done_lines(history: Sequence[TurnRecord], currency: str | None) -> list[str]:
    """What the conversation's commits did, as the system said it (one line a step), then the total where two or
    more moved money: "how much do I get back in all?" is answered from them, not from a guide."""
    traces = [t.trace for t in history]
    lines = [s["message"] for step in commits(traces) for s in step.get("steps") or [] if s.get("message")]
    amounts = moved(traces)
    if currency is not None and len(amounts) >= 2:
        lines.append(total_line(amounts, currency, "en"))
    return lines


def total_line(amounts: Sequence[Decimal], currency: str, lang: str) -> str:
    """The sentence saying what ``amounts`` come to: refunds and charges summed apart."""
    back = sum((m for m in amounts if m > 0), Decimal(0))
    pay = -sum((m for m in amounts if m < 0), Decimal(0))

    def said(amount: Decimal) -> str:
        return money(amount, currency, lang)

    if back and pay:  # and what that comes to: asked "how much do I pay today in total?" (train task 95)
        template = N_("In total, the changes made in this conversation refund you {back} and charge you {pay}, so "
                      "you pay {net} in all.") if pay > back else N_(
            "In total, the changes made in this conversation refund you {back} and charge you {pay}, so you get {net} "
            "back in all.")
        return translate(lang, template, back=said(back), pay=said(pay), net=said(abs(pay - back)))
    if pay:
        return translate(lang, N_("In total, the changes made in this conversation charge you {pay}."), pay=said(pay))
    return translate(lang, N_("In total, the changes made in this conversation refund you {back}."),
                     back=said(back))


def with_total(result: TurnResult, history: Sequence[TurnRecord], currency: str | None, lang: str) -> TurnResult:
    """``result`` with the conversation's total (``total_line``) after its reply, where it committed a change that
    moved money and the conversation (``history`` and this turn) has committed two or more such changes."""
    now = moved([result.trace])
    if currency is None or not result.committed or not now:
        return result
    amounts = moved(t.trace for t in history) + now
    if len(amounts) < 2:
        return result
    return result.model_copy(update={"reply": f"{result.reply}\n{total_line(amounts, currency, lang)}"})
