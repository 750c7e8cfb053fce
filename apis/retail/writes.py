"""The shop's write operations, following the data pack's README table and ``policy.md``: every precondition
is checked before anything changes (a refusal changes nothing), money is exact to the cent (``Decimal``), and
each change is recorded in ``uow.changes`` by the repositories.

Deliberate differences from tau2's tools:

* The acting customer is the signed-in user; orders and payment methods are only ever their own.
* ``modify_pending_order_items`` gives EACH changed line its own new item's price and options (tau2 gives
  every line those of the last new item), and the price difference is exact to the cent.
* ``exchange_delivered_order_items`` refuses an item "exchanged" for itself (policy: a different option).
* ``cancel_pending_order`` refunds what each payment method paid net of what it was already refunded (tau2
  refunds every history entry, so a refund recorded by a change of payment method would be refunded again).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from apis.retail import args as a
from apis.retail.reads import NotFound, own_order
from apis.retail.uow import RetailUnitOfWork
from apis.retail.views import customer_view, order_view
from chops.domain.outcomes import InvalidArgument, PreconditionFailed

Row = dict[str, Any]
# (message, data[, money]): money as ``OperationResult.money`` has it, a refund positive, a charge negative.
Reply = tuple[str, Any] | tuple[str, Any, Decimal]
GIFT_CARD = "gift_card"
ZERO = Decimal("0.00")


def _usd(amount: Decimal) -> str:
    return f"${amount:,.2f}"


def _method(uow: RetailUnitOfWork, actor: Row, payment_method_id: str) -> Row:
    method = uow.payment_methods.get(actor["user_id"], payment_method_id)
    if method is None:
        raise NotFound(f"{payment_method_id} is not one of your payment methods.")
    return method


def _need_status(order: Row, wanted: str, action: str, *, exact: bool = True) -> None:
    status = order["status"]
    if (status != wanted) if exact else (wanted not in status):
        raise PreconditionFailed(f"Order {order['order_id']} is '{status}'; only a {wanted} order can {action}.")


def _lines(order: Row, item_ids: list[str]) -> list[Row]:
    """The order's line for each of ``item_ids``: the first line of that item not already taken, so an id
    given twice takes two lines (refused when the order has fewer)."""
    taken: set[int] = set()
    lines = []
    for item_id in item_ids:
        line = next((ln for ln in order["items"] if ln["item_id"] == item_id and ln["seq"] not in taken), None)
        if line is None:
            have = sum(1 for ln in order["items"] if ln["item_id"] == item_id)
            raise InvalidArgument(f"Order {order['order_id']} has {have} line(s) of item {item_id}, fewer than "
                                  f"the {item_ids.count(item_id)} given.")
        taken.add(line["seq"])
        lines.append(line)
    return lines


def _swaps(uow: RetailUnitOfWork, order: Row, args: a.SwapArgs) -> tuple[list[tuple[Row, Row]], Decimal]:
    """Each line to change with its new variant, and the total price difference (new minus old)."""
    if len(args.item_ids) != len(args.new_item_ids):
        raise InvalidArgument(f"{len(args.item_ids)} item(s) to change but {len(args.new_item_ids)} new item(s); "
                              "give one new item per item, in the same order.")
    swaps = []
    for line, new_id in zip(_lines(order, args.item_ids), args.new_item_ids):
        if new_id == line["item_id"]:
            raise InvalidArgument(f"Item {new_id} is the item already ordered; choose a different option.")
        new = uow.products.variant(new_id)
        if new is None or new["product_id"] != line["product_id"]:
            raise InvalidArgument(f"Item {new_id} is not a variant of {line['name']} (product {line['product_id']}); "
                                  "an item can only change to another option of the same product.")
        if not new["available"]:
            raise PreconditionFailed(f"Item {new_id} ({line['name']}) is not available.")
        swaps.append((line, new))
    return swaps, sum((new["price"] - line["price"] for line, new in swaps), ZERO)


def _swaps_text(swaps: list[tuple[Row, Row]]) -> str:
    """``Keyboard (switch type: linear -> clicky, $120.00 -> $135.50); Thermostat (…)``: what each line becomes, its
    changed options only, and its price. The message names the items (the verifier and the customer's confirmation
    read it): bare ids let a 1.5B verifier pass the headphones swapped for the keyboard's variant. The new price is
    said: asked for the dearest lamp in stock and to swap theirs for it, the customer heard only the difference."""
    parts = []
    for line, new in swaps:
        old = line["options"]
        changed = [f"{k}: {old.get(k)} -> {v}" for k, v in new["options"].items() if old.get(k) != v]
        price = f"{_usd(line['price'])} -> {_usd(new['price'])}"
        parts.append(f"{line['name']} ({', '.join(changed) or 'same options'}, {price})")
    return "; ".join(parts)


def _gift_card_covers(method: Row, amount: Decimal, what: str) -> None:
    if method["source"] == GIFT_CARD and method["balance"] < amount:
        raise PreconditionFailed(f"Gift card {method['payment_method_id']} has {_usd(method['balance'])}, less than "
                                 f"the {_usd(amount)} {what}.")


def _credit_gift_card(uow: RetailUnitOfWork, method: Row | None, amount: Decimal) -> str:
    """Add ``amount`` (negative: take) to ``method``'s balance when it is a gift card; what the message says of
    the new balance (customers ask what is left on the card after a change), else ""."""
    if method is None or method["source"] != GIFT_CARD:
        return ""
    balance = method["balance"] + amount
    uow.payment_methods.set_balance(method, balance)
    return f" {method['payment_method_id']} now holds {_usd(balance)}."


def cancel_pending_order(uow: RetailUnitOfWork, actor: Row, args: a.CancelArgs) -> Reply:
    """Cancel a pending order and refund its payments (gift cards at once)."""
    order = own_order(uow, actor, args.order_id)
    _need_status(order, "pending", "be cancelled")
    reason = " ".join(args.reason.split()).lower()
    if reason not in a.CANCEL_REASONS:
        raise InvalidArgument(f"The reason must be '{a.CANCEL_REASONS[0]}' or '{a.CANCEL_REASONS[1]}', "
                              f"not {args.reason!r}.")
    paid: dict[str, Decimal] = {}
    for p in order["payments"]:
        sign = 1 if p["transaction_type"] == "payment" else -1
        paid[p["payment_method_id"]] = paid.get(p["payment_method_id"], ZERO) + sign * p["amount"]
    refunds = [(method_id, amount) for method_id, amount in paid.items() if amount > 0]
    balances = ""
    for method_id, amount in refunds:
        uow.orders.add_payment(order, "refund", amount, method_id)
        balances += _credit_gift_card(uow, uow.payment_methods.get(actor["user_id"], method_id), amount)
    uow.orders.update(order, {"status": "cancelled", "cancel_reason": reason})
    told = "; ".join(f"{_usd(amt)} to {mid}" + (" (credited now)" if mid.startswith(GIFT_CARD) else
                                                 " (in 5-7 business days)") for mid, amt in refunds)
    # The reason is said: it is recorded, and the customer confirms it with the rest ("ordered by mistake").
    return (f"Order {order['order_id']} is cancelled ({reason}). Refund: {told or 'nothing was paid'}.{balances}",
            order_view(order), sum((amt for _, amt in refunds), ZERO))


def modify_pending_order_address(uow: RetailUnitOfWork, actor: Row, args: a.OrderAddressArgs) -> Reply:
    """Change where a pending order ships."""
    order = own_order(uow, actor, args.order_id)
    _need_status(order, "pending", "change its address", exact=False)
    uow.orders.update(order, args.address())
    view = order_view(order)
    return f"Order {order['order_id']} will ship to {view['address']}.", view


def modify_pending_order_payment(uow: RetailUnitOfWork, actor: Row, args: a.PaymentArgs) -> Reply:
    """Pay a pending order with another of the customer's methods; the old one is refunded."""
    order = own_order(uow, actor, args.order_id)
    _need_status(order, "pending", "change its payment method", exact=False)
    new = _method(uow, actor, args.payment_method_id)
    history = order["payments"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise PreconditionFailed(f"Order {order['order_id']} has {len(history)} payment record(s); the payment "
                                 "method can only change while the order has exactly one payment.")
    old_id, amount = history[0]["payment_method_id"], history[0]["amount"]
    if old_id == new["payment_method_id"]:
        raise InvalidArgument(f"Order {order['order_id']} is already paid with {old_id}; choose a different method.")
    _gift_card_covers(new, amount, "the order costs")
    uow.orders.add_payment(order, "payment", amount, new["payment_method_id"])
    uow.orders.add_payment(order, "refund", amount, old_id)
    balances = _credit_gift_card(uow, new, -amount)
    balances += _credit_gift_card(uow, uow.payment_methods.get(actor["user_id"], old_id), amount)
    return (f"Order {order['order_id']} is now paid with {new['payment_method_id']} ({_usd(amount)}); {old_id} is "
            f"refunded.{balances}", order_view(order))


def modify_pending_order_items(uow: RetailUnitOfWork, actor: Row, args: a.SwapArgs) -> Reply:
    """Change items of a pending order to other options of the same products (once per order)."""
    order = own_order(uow, actor, args.order_id)
    _need_status(order, "pending", "have its items changed (only once)")
    swaps, difference = _swaps(uow, order, args)
    method = _method(uow, actor, args.payment_method_id)
    _gift_card_covers(method, difference, "price difference")
    changed = _swaps_text(swaps)  # before the update, which changes the lines in place ("same options" after)
    for line, new in swaps:
        uow.orders.update_item(order, line, {"item_id": new["item_id"], "price": new["price"],
                                             "options": new["options"]})
    # One entry for the total difference, as the policy and tau2 record it (a zero difference is a 0.00 refund).
    kind = "payment" if difference > 0 else "refund"
    uow.orders.add_payment(order, kind, abs(difference), method["payment_method_id"])
    balance = _credit_gift_card(uow, method, -difference)
    uow.orders.update(order, {"status": "pending (item modified)"})
    return (f"Order {order['order_id']}: {len(swaps)} item(s) changed: {changed}; {kind} of "
            f"{_usd(abs(difference))} with {method['payment_method_id']}.{balance}", order_view(order), -difference)


def exchange_delivered_order_items(uow: RetailUnitOfWork, actor: Row, args: a.ExchangeArgs) -> Reply:
    """Request an exchange of delivered items for other options of the same products (once per order)."""
    order = own_order(uow, actor, args.order_id)
    _need_status(order, "delivered", "be exchanged")
    swaps, difference = _swaps(uow, order, args)
    method = _method(uow, actor, args.payment_method_id)
    _gift_card_covers(method, difference, "price difference")
    uow.orders.update(order, {"status": "exchange requested"})
    uow.orders.request_items(order, "exchange_old", sorted(args.item_ids))
    uow.orders.request_items(order, "exchange_new", sorted(args.new_item_ids))
    uow.orders.update(order, {"exchange_payment_method_id": method["payment_method_id"],
                              "exchange_price_difference": difference})
    settle = ("no price difference" if not difference else
              f"{_usd(abs(difference))} {'to pay' if difference > 0 else 'to be refunded'} with "
              f"{method['payment_method_id']}")
    return (f"Exchange of {len(swaps)} item(s) requested for order {order['order_id']}: {_swaps_text(swaps)}; "
            f"{settle}. Return instructions follow by email.", order_view(order), -difference)


def return_delivered_order_items(uow: RetailUnitOfWork, actor: Row, args: a.ReturnArgs) -> Reply:
    """Request a return of delivered items, refunded to the original method or a gift card."""
    order = own_order(uow, actor, args.order_id)
    _need_status(order, "delivered", "be returned")
    method = _method(uow, actor, args.payment_method_id)
    original = order["payments"][0]["payment_method_id"] if order["payments"] else None
    if method["source"] != GIFT_CARD and method["payment_method_id"] != original:
        raise PreconditionFailed(f"A refund goes to the order's original payment method ({original}) or to one of "
                                 f"your gift cards, not to {method['payment_method_id']}.")
    lines = _lines(order, args.item_ids)
    uow.orders.update(order, {"status": "return requested"})
    uow.orders.request_items(order, "return", sorted(args.item_ids))
    uow.orders.update(order, {"return_payment_method_id": method["payment_method_id"]})
    total = sum((ln["price"] for ln in lines), ZERO)
    names = ", ".join(ln["name"] for ln in lines)
    return (f"Return of {len(lines)} item(s) requested for order {order['order_id']} ({names}); {_usd(total)} will be "
            f"refunded to {method['payment_method_id']}. Return instructions follow by email.", order_view(order),
            total)


def modify_user_address(uow: RetailUnitOfWork, actor: Row, args: a.AddressArgs) -> Reply:
    """Change the customer's default address."""
    uow.customers.set_address(actor, args.address())
    view = customer_view(actor, uow.payment_methods.of_customer(actor["user_id"]), uow.orders.ids_of(actor["user_id"]))
    return f"Your default address is now {view['address']}.", view

