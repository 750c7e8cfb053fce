"""The shop's operations: the pack's one registry. tau2's names; every write is confirmed by the customer
before it commits (``confirm``), every read is a look-up the executor reads before its next step
(``observe``). ``transfer_to_human_agents`` is not here: the agent's hand-off route does that."""

from __future__ import annotations

from apis.retail import args as a
from apis.retail import reads as r
from apis.retail import writes as w
from chops.domain.operations import Operation


def _read(name: str, description: str, args: type, run) -> Operation:
    return Operation(name, description, args, writes=False, admin_only=False, run=run, observe=True)


def _write(name: str, description: str, args: type, run) -> Operation:
    return Operation(name, description, args, writes=True, admin_only=False, run=run, confirm=True)


_OPS = [
    _read("get_user_details", "Look up the customer's own profile: name, email, address, payment methods, order ids.",
          a.NoArgs, r.get_user_details),
    _read("get_order_details", "Look up one of the customer's orders: status, items with item ids and prices, "
          "payments, tracking.", a.OrderArgs, r.get_order_details),
    _read("get_product_details", "Look up a product by product id: all its variants with item ids, options, "
          "availability and price.", a.ProductArgs, r.get_product_details),
    _read("get_item_details", "Look up one item (variant) by item id: its product, options, availability, price.",
          a.ItemArgs, r.get_item_details),
    _read("list_all_product_types", "List every product name with its product id.", a.NoArgs,
          r.list_all_product_types),
    _read("find_user_id_by_email", "Check an email address against the customer's account and give their user id.",
          a.EmailArgs, r.find_user_id_by_email),
    _read("find_user_id_by_name_zip", "Check a name and zip code against the customer's account and give their "
          "user id.", a.NameZipArgs, r.find_user_id_by_name_zip),
    _read("calculate", "Compute arithmetic such as a total or a price difference (+ - * / and parentheses).",
          a.CalculateArgs, r.calculate),
    _write("cancel_pending_order", "Cancel a pending order (reason 'no longer needed' or 'ordered by mistake'); "
           "payments are refunded.", a.CancelArgs, w.cancel_pending_order),
    _write("modify_pending_order_address", "Change the shipping address of a pending order.", a.OrderAddressArgs,
           w.modify_pending_order_address),
    _write("modify_pending_order_payment", "Pay a pending order with another of the customer's payment methods.",
           a.PaymentArgs, w.modify_pending_order_payment),
    _write("modify_pending_order_items", "Change items of a pending order to other options of the same products; "
           "only once per order, so include every item.", a.SwapArgs, w.modify_pending_order_items),
    _write("exchange_delivered_order_items", "Exchange items of a delivered order for other options of the same "
           "products; only once per order, so include every item.", a.SwapArgs, w.exchange_delivered_order_items),
    _write("return_delivered_order_items", "Return items of a delivered order; refund to the original payment method "
           "or a gift card.", a.ReturnArgs, w.return_delivered_order_items),
    _write("modify_user_address", "Change the customer's own default address.", a.AddressArgs, w.modify_user_address),
]

OPERATIONS: dict[str, Operation] = {op.name: op for op in _OPS}
