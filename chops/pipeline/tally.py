"""What a conversation's changes came to in money.

"Cancel all my pending orders, return the watch, and how much will I get back in total?": each change is described,
confirmed and committed on its own, and each reply says its own refund; the total, which the customer asked for, was
never said (a 1.5B model asked for it sums the wrong numbers, or none). A write that moves money says how much
(``OperationResult.money``: a refund positive, a charge negative); each commit's trace step keeps the amounts of its
steps (``commit_money``), and once a conversation has committed two or more of them, the reply of a turn that
committed one ends with the total so far (``with_total``), in the pack's currency.
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


def moved(traces: Iterable[dict[str, Any] | None]) -> list[Decimal]:
    """Every amount other than zero the committed (not replayed) commit steps of ``traces`` moved, oldest first
    (an exchange at the same price moves none)."""
    amounts: list[Decimal] = []
    for trace in traces:
        for step in (trace or {}).get("steps") or []:
            if step.get("role") == "commit" and step.get("committed") and not step.get("replayed"):
                amounts += [Decimal(m) for m in step.get(MONEY) or [] if Decimal(m)]
    return amounts


def total_line(amounts: Sequence[Decimal], currency: str, lang: str) -> str:
    """The sentence saying what ``amounts`` come to: refunds and charges summed apart."""
    back = sum((m for m in amounts if m > 0), Decimal(0))
    pay = -sum((m for m in amounts if m < 0), Decimal(0))

    def said(amount: Decimal) -> str:
        return money(amount, currency, lang)

    if back and pay:
        return translate(lang, N_("In total, the changes made in this conversation refund you {back} and charge "
                                  "you {pay}."), back=said(back), pay=said(pay))
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
