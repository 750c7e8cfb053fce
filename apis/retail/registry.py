"""The shop's operations: the pack's one registry. tau2's names; every write is confirmed by the customer
before it commits (``confirm``), every read is a look-up the executor reads before its next step
(``observe``). ``transfer_to_human_agents`` is not here: the agent's hand-off route does that."""

from __future__ import annotations

from apis.retail import args as a
from apis.retail import reads as r
from apis.retail import writes as w
from chops.domain.calc import calculate_operation
from chops.domain.operations import Operation
from chops.i18n import N_


def _read(name: str, description: str, args: type, run, needs: tuple[str, ...] = (),
          follows: tuple[tuple[str, str, str, str], ...] = (), after_lookup: bool = False) -> Operation:
    return Operation(name, description, args, writes=False, admin_only=False, run=run, observe=True, needs=needs,
                     follows=follows, title=TITLES[name], after_lookup=after_lookup)


def _write(name: str, description: str, args: type, run, needs: tuple[str, ...], unchanged: str | None = None,
           asked_by: tuple[str, ...] = (), unasked_by: tuple[str, ...] = (), asked_as: tuple[str, ...] = (),
           called: tuple[str, ...] = (), worded: tuple[str, ...] = (), **counterparts: str) -> Operation:
    return Operation(name, description, args, writes=True, admin_only=False, run=run, confirm=True, needs=needs,
                     counterparts=tuple(counterparts.items()), unchanged=unchanged, asked_by=asked_by,
                     unasked_by=unasked_by, asked_as=asked_as, called=called, title=TITLES[name], worded=worded,
                     tells=True)  # each write's message names the items, the amounts and the payment method


# What each operation does, as the customer would say it (``Operation.title``: a confirmation's lines, "Not done: …").
# The account checks say neither "email" nor "account": the scripted users of the eval read those as asking who they
# are.
TITLES = {
    "get_user_details": N_("look up your profile"),
    "get_order_details": N_("look up your order"),
    "get_product_details": N_("look up a product"),
    "get_item_details": N_("look up an item"),
    "list_all_product_types": N_("list our products"),
    "find_user_id_by_email": N_("check who you are"),
    "find_user_id_by_name_zip": N_("check who you are"),
    "calculate": N_("calculate"),
    "cancel_pending_order": N_("cancel your order"),
    "modify_pending_order_address": N_("ship your order to another address"),
    "modify_pending_order_payment": N_("pay your order another way"),
    "modify_pending_order_items": N_("change items of your order"),
    "exchange_delivered_order_items": N_("exchange items of your order"),
    "return_delivered_order_items": N_("return items of your order"),
    "modify_user_address": N_("change your default address"),
}


# A payment change is offered only where the customer speaks of paying (``Operation.asked_by``): the 1.5B proposed it
# for "change my pending t-shirt to purple" and for returns, asked the customer which card, and was refused ("already
# paid with it") turn after turn (train tasks 3, 34, 103). "charge " and its forms, not "charg": "also cancel the
# charger I just bought" was taken for a payment change, asked which card, turn after turn (train task 30).
PAYING = ("pay", "card", "gift", "paypal", "charge ", "charged", "charges", "charging my", "付", "卡")
# Not where the request speaks of a difference to pay: "change the shoes to item …, and use my gift card to cover any
# extra charge" had the 1.5B change the order's payment method (train task 21); nor of a refund: "cancel or return
# everything …, I'd prefer the refund on PayPal" had it change a delivered order's payment method (train task 13).
NOT_PAYING = ("difference", "extra", "additional", "refund", "差价", "退款")
# So is an address change where the customer speaks of an address: with the payment change withheld, the 1.5B proposed
# the order's own address for "change the boots in my pending order to size 8" (train task 15; 11, 19).
ADDRESSING = ("address", "ship", "send", "sent", "street", "avenue", "road", "move", "moving", "live", "house",
              "home", "地址", "寄", "送", "搬")
# The customer's own (default) address only where they speak of it as theirs, not an order's: "for order #W…, change the
# address to be the same as order #W…" and "my laptop order to my NYC address" had the 1.5B change the default address
# (train tasks 78, 112), and the customer's yes committed it. Not "account" alone: "I just created my account, …"
# (train task 41).
OWN_ADDRESS = ("default", "my address", "my own address", "my home address", "profile", "on file", "moved", "moving",
               "live", "address on my account", "account address", "account's address", "默认", "我的地址", "搬")
# And no order's address change where the customer's own address is what changes ("update the address on my account
# to 12 Birch Road …": the 1.5B changed a pending order's; our own conversations), not where it is where an order
# goes ("deliver it to the home address on my account").
OWN_ADDRESS_CHANGED = ("address on my account to ", "address on file to ", "account address to ",
                       "account's address to ", "address in my profile to ", "profile address to ",
                       "my default address to ", "my own address to ", "默认地址改", "账户地址改")
# A cancel of what the customer says they have is the return of a delivered order (``Operation.asked_as``): "cancel the
# bookshelf I received" (train task 104). "Cancel #W…, I changed my mind" of a delivered order is refused with why.
# Each is matched at a word's start (``named``), so none is a thing's start too: "came" named the "camera" whose order
# the customer asked to cancel, and a return nobody asked for was offered (our own conversations).
RECEIVED = ("received", "receiving", "got", "arrived", "it came", "they came", "delivered", "收到", "到货")
# How else customers name a return or a cancel (``Operation.called``): "I'd like to send them back" was proposed as an
# exchange for other earbuds, no check seeing that a return was asked for (our own conversations: eval/cases).
SENDING_BACK = ("send back", "send it back", "send them back", "send these back", "send those back", "sending back",
                "sending it back", "sending them back", "ship it back", "ship them back", "give back", "give it back",
                "give them back", "going back", "goes back", "退货", "退回", "退掉")
CALLING_OFF = ("call off", "取消")


# The look-ups whose results a write's arguments come from (``Operation.needs``: tool retrieval shows them
# with it): the order (its status, item ids, payments), the customer (order ids, payment methods) and, for
# a swap, the product (its variants' item ids).
ORDER = ("get_order_details", "get_user_details")
SWAP = (*ORDER, "get_product_details")


_OPS = [
    _read("get_user_details", "Look up the customer's own profile (email, address, payment methods, order ids); use it "
          "to find an order or a payment method.", a.NoArgs, r.get_user_details),
    _read("get_order_details", "Look up one of the customer's orders (status, items with item and product ids, prices, "
          "payments, tracking); use it before changing the order.", a.OrderArgs, r.get_order_details,
          # The products of the items the customer names are read with it: their variants are the new items.
          follows=(("items", "name", "get_product_details", "product_id"),)),
    _read("get_product_details", "Look up a product by product id: each variant's item id, options, availability and "
          "price; use it to find the new item for a change or exchange.", a.ProductArgs, r.get_product_details,
          needs=("list_all_product_types",)),  # a product the customer only names: its id is listed there
    _read("get_item_details", "Look up one item by item id: its product, options, availability and price.",
          a.ItemArgs, r.get_item_details),
    _read("list_all_product_types", "List every product name with its product id; use it when the customer names a "
          "product but not its id.", a.NoArgs, r.list_all_product_types,
          follows=(("products", "name", "get_product_details", "product_id"),)),  # the products named, read with it
    _read("find_user_id_by_email", "Check an email against the customer's own account; rarely needed (the customer is "
          "signed in).", a.EmailArgs, r.find_user_id_by_email),
    _read("find_user_id_by_name_zip", "Check a name and zip code against the customer's own account; rarely needed "
          "(the customer is signed in).", a.NameZipArgs, r.find_user_id_by_name_zip),
    calculate_operation(TITLES["calculate"]),
    _write("cancel_pending_order", "Cancel a pending order, reason 'no longer needed' or 'ordered by mistake'; its "
           "payments are refunded.", a.CancelArgs, w.cancel_pending_order, ORDER, called=CALLING_OFF,
           worded=("reason",)),  # a confirmation in Chinese says the reason in Chinese
    _write("modify_pending_order_address", "Change the shipping address of a pending order (not the customer's "
           "default address).", a.OrderAddressArgs, w.modify_pending_order_address, ORDER, asked_by=ADDRESSING,
           unasked_by=OWN_ADDRESS_CHANGED),
    _write("modify_pending_order_payment", "Pay a pending order with another of the customer's payment methods "
           "instead.", a.PaymentArgs, w.modify_pending_order_payment, ORDER, asked_by=PAYING,
           unasked_by=NOT_PAYING),
    _write("modify_pending_order_items", "Change items of a pending order to other options of the same products; "
           "allowed once per order, so list every item.", a.SwapArgs, w.modify_pending_order_items, SWAP,
           delivered="exchange_delivered_order_items"),  # the same swap, for an order already delivered
    _write("exchange_delivered_order_items", "Exchange items of a delivered order for other options of the same "
           "products; allowed once per order, so list every item.", a.ExchangeArgs, w.exchange_delivered_order_items,
           SWAP, unchanged="return_delivered_order_items",  # items exchanged for themselves: their return
           pending="modify_pending_order_items"),
    _write("return_delivered_order_items", "Return items of a delivered order; the refund goes to the original "
           "payment method or a gift card.", a.ReturnArgs, w.return_delivered_order_items, ORDER, asked_as=RECEIVED,
           called=SENDING_BACK),
    _write("modify_user_address", "Change the customer's own default address (not an order's shipping address).",
           a.AddressArgs, w.modify_user_address, ("get_user_details",), asked_by=OWN_ADDRESS),
]

OPERATIONS: dict[str, Operation] = {op.name: op for op in _OPS}
