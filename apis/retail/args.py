"""Typed arguments of the shop's operations: one pydantic model per operation, a description on every field
(the models read them). The acting customer is never an argument: it is the signed-in user."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from chops.domain.args import Args, CalculateArgs, Id, NoArgs, Text  # noqa: F401 (the pack's names)

from chops.domain.operations import (CHOICES_AMONG, CHOICES_DESCRIBED, CHOICES_FROM, CHOICES_MENTIONED, CHOICES_ONE_EACH,
                                    CHOICES_ORIGINAL, CHOICES_PAIRED, CHOICES_RECORD, CHOICES_SAID, CHOICES_WHERE)

from chops.i18n import N_

from .views import UNAVAILABLE

CANCEL_REASONS = (N_("no longer needed"), N_("ordered by mistake"))  # words of the catalog: a confirmation says them
MAX_ITEMS = 50  # item ids in one request (the largest order in the data has 5 lines)
_BARE_ORDER_ID = re.compile(r"[Ww]\d+")


def _order_id(value: Any) -> Any:
    # Small models often drop the '#' of "#W0000000"; the id is unambiguous without it.
    if isinstance(value, str) and _BARE_ORDER_ID.fullmatch(value.strip()):
        return "#" + value.strip().upper()
    return value


OrderId = Annotated[str, BeforeValidator(_order_id), Field(max_length=64)]

# Where each id argument's values come from in look-up results (``chops.pipeline.choices``): once the
# profile or a look-up has listed such ids, the executor's grammar offers only those.
# "The desk lamp I got" offers only the orders holding a Desk Lamp (the profile's ``statuses`` rows list each
# order's item ``names``): the 1.5B, the overview in view, read or changed another order.
ORDERS = {CHOICES_FROM: ["orders", "order_id"], CHOICES_MENTIONED: "names"}
# The order state each write takes: an item change proposed for an order in the other state runs as that
# state's swap (``Operation.counterparts``, ``chops.pipeline.choices.counterpart``); "all my pending orders" is each
# order in it (``chops.pipeline.fanout``).
PENDING = {**ORDERS, CHOICES_WHERE: {"status": ["pending"]}}
# An address or a payment change takes an order whose items were changed too (the platform's "pending" in its status).
STILL_PENDING = {**ORDERS, CHOICES_WHERE: {"status": ["pending", "pending (item modified)"]}}
DELIVERED = {**ORDERS, CHOICES_WHERE: {"status": ["delivered"]}}
# The lines of a looked-up order and a looked-up product's variants (keyed by item id); the ones of the products
# the message names when it names some: the 1.5B paired the headphones with a keyboard's variant.
ORDER_ITEMS = {CHOICES_FROM: ["items.item_id"], CHOICES_MENTIONED: "name"}
# A swap's new items, one variant of each product named: for a keyboard and a thermostat the 1.5B wrote the
# keyboard's variant twice, which no line pairs with.
# Of each product, the variants whose options the customer named (purple, S, v-neck), and never one not available:
# asked for a purple v-neck in S, the 1.5B copied the id of a blue crew-neck M from the product's list.
NEW_ITEMS = {CHOICES_FROM: ["variants"], CHOICES_MENTIONED: "name", CHOICES_ONE_EACH: True,
             CHOICES_DESCRIBED: {"excluded": UNAVAILABLE}}
# A swap's old lines are the order's lines of the new items' products, position by position.
SWAPPED_LINES = {**ORDER_ITEMS, CHOICES_PAIRED: {"partner": "new_item_ids", "by": "product_id", "in": "order_id"}}
PRODUCTS = {CHOICES_FROM: ["product_id", "products"]}
METHODS = {CHOICES_FROM: ["payment_methods.id"]}
# The method an order is to be paid with instead is the customer's choice: one they did not name is asked for.
CHOSEN_METHOD = {**METHODS, CHOICES_SAID: True}
# So is the method of a swap's price difference, where the customer has more than one: the 1.5B chose the card the
# order was paid with where the customer wanted their gift card (train task 58). "The original payment method", "the
# one I paid with", the answer customers give most, is the order's own (its first payment's). Asking was measured
# and dropped before that reading existed: customers were asked again until the turns ran out (tasks 25, 93).
DIFFERENCE_METHOD = {**CHOSEN_METHOD, CHOICES_ORIGINAL: {
    "in": "order_id", "at": "payments.method",
    "words": ["original", "paid with", "one i paid", "on the order", "on my order", "same method", "same card",
              "原来", "原付款"]}}
# A refund's method is no choice to ask for, but the order's own is known: a return added for another order ("return
# everything from both my orders") refunds that order's own method where the first refunds its own (``fanout``).
REFUND_METHOD = {**METHODS, CHOICES_ORIGINAL: DIFFERENCE_METHOD[CHOICES_ORIGINAL]}
# An address's parts: "my Chicago address" is the profile's or an order's address, taken whole (``CHOICES_RECORD``).
ADDRESS = {CHOICES_RECORD: "address"}
ItemIds = Annotated[list[Id], Field(max_length=MAX_ITEMS)]


class EmailArgs(Args):
    """Arguments of find_user_id_by_email."""

    email: Text = Field(title=N_("your email address"),
                        description="the customer's email address, e.g. 'someone@example.com'")


class NameZipArgs(Args):
    """Arguments of find_user_id_by_name_zip."""

    first_name: Text = Field(title=N_("your first name"), description="the customer's first name, e.g. 'John'")
    last_name: Text = Field(title=N_("your last name"), description="the customer's last name, e.g. 'Doe'")
    zip: Annotated[str, Field(max_length=32)] = Field(
        title=N_("the zip code"), description="the zip code of the customer's address, e.g. '12345'")


class OrderArgs(Args):
    """Arguments of get_order_details."""

    order_id: OrderId = Field(title=N_("which order (its id, such as #W0000000)"),
                              description="the order id, '#W' and seven digits, e.g. '#W0000000'",
                              json_schema_extra=ORDERS)


class ProductArgs(Args):
    """Arguments of get_product_details."""

    product_id: Id = Field(title=N_("which product"), description="the product id (not an item id), e.g. '6086499569'",
                           json_schema_extra=PRODUCTS)


class ItemArgs(Args):
    """Arguments of get_item_details."""

    item_id: Id = Field(title=N_("which item"),
                        description="the item id of one variant (not a product id), e.g. '1008292230'")


class CancelArgs(Args):
    """Arguments of cancel_pending_order."""

    order_id: OrderId = Field(title=N_("which order (its id, such as #W0000000)"),
                              description="the id of the pending order to cancel, e.g. '#W0000000'",
                              json_schema_extra=PENDING)
    # The customer's reason, not the model's guess: one they did not give is asked for (``CHOICES_SAID``).
    reason: Text = Field(title=N_("the reason: no longer needed, or ordered by mistake"),
                         description="the reason: exactly 'no longer needed' or 'ordered by mistake'",
                         json_schema_extra={CHOICES_SAID: True, CHOICES_AMONG: list(CANCEL_REASONS)})


class AddressArgs(Args):
    """A postal address (the customer's default address): one record, whose parts a plan may take from an address
    of the customer's data that the parts it gives match (``CHOICES_RECORD``)."""

    address1: Text = Field(title=N_("the street address"),
                           description="the first line of the address, e.g. '123 Main St'", json_schema_extra=ADDRESS)
    address2: Text = Field("", title=N_("the apartment or suite, if any"),
                           description="the second line of the address, e.g. 'Apt 1'; empty when there is none",
                           json_schema_extra=ADDRESS)
    city: Text = Field(title=N_("the city"), description="the city, e.g. 'San Francisco'", json_schema_extra=ADDRESS)
    state: Text = Field(title=N_("the state"), description="the state, e.g. 'CA'", json_schema_extra=ADDRESS)
    country: Text = Field(title=N_("the country"), description="the country, e.g. 'USA'", json_schema_extra=ADDRESS)
    zip: Annotated[str, Field(max_length=32)] = Field(
        title=N_("the zip code"), description="the zip code, e.g. '12345'", json_schema_extra=ADDRESS)

    def address(self) -> dict[str, str]:
        """The address as the tables store it (db.json's key order)."""
        return {"address1": self.address1, "address2": self.address2, "city": self.city, "country": self.country,
                "state": self.state, "zip": self.zip}


class OrderAddressArgs(AddressArgs):
    """Arguments of modify_pending_order_address."""

    order_id: OrderId = Field(title=N_("which order (its id, such as #W0000000)"),
                              description="the id of the pending order to ship elsewhere, e.g. '#W0000000'",
                              json_schema_extra=STILL_PENDING)


class PaymentArgs(Args):
    """Arguments of modify_pending_order_payment."""

    order_id: OrderId = Field(title=N_("which order (its id, such as #W0000000)"),
                              description="the id of the pending order, e.g. '#W0000000'",
                              json_schema_extra=STILL_PENDING)
    payment_method_id: Id = Field(title=N_("which payment method should pay the order instead"),
                                  description="which payment method pays the order instead (one of the customer's, "
                                              "e.g. 'gift_card_0000000' or 'credit_card_0000000')",
                                  json_schema_extra=CHOSEN_METHOD)


class SwapArgs(Args):
    """Arguments of modify_pending_order_items (``ExchangeArgs``: of exchange_delivered_order_items)."""

    order_id: OrderId = Field(title=N_("which order (its id, such as #W0000000)"),
                              description="the id of the pending order, e.g. '#W0000000'", json_schema_extra=PENDING)
    item_ids: ItemIds = Field(title=N_("which items to change"),
                              description="the item ids of the order's lines to change; an id twice for two "
                                          "lines of the same item", json_schema_extra=SWAPPED_LINES)
    new_item_ids: ItemIds = Field(title=N_("what to change them to"),
                                  description="the new item id for each item in item_ids, same position, an "
                                              "available variant of the same product", json_schema_extra=NEW_ITEMS)
    payment_method_id: Id = Field(title=N_("which payment method should pay or receive the price difference"),
                                  description="which payment method pays or receives the price difference (one of "
                                              "the customer's, e.g. 'gift_card_0000000')",
                                  json_schema_extra=DIFFERENCE_METHOD)


class ExchangeArgs(SwapArgs):
    """Arguments of exchange_delivered_order_items."""

    order_id: OrderId = Field(title=N_("which order (its id, such as #W0000000)"),
                              description="the id of the delivered order, e.g. '#W0000000'",
                              json_schema_extra=DELIVERED)


class ReturnArgs(Args):
    """Arguments of return_delivered_order_items."""

    order_id: OrderId = Field(title=N_("which order (its id, such as #W0000000)"),
                              description="the id of the delivered order, e.g. '#W0000000'",
                              json_schema_extra=DELIVERED)
    item_ids: ItemIds = Field(title=N_("which items to return"),
                              description="the item ids of the order's lines to return; an id twice for two lines "
                                          "of the same item", json_schema_extra=ORDER_ITEMS)
    payment_method_id: Id = Field(title=N_("which payment method should receive the refund: the original one or a "
                                             "gift card"),
                                  description="which payment method receives the refund: the order's original "
                                              "payment method or one of the customer's gift cards",
                                  json_schema_extra=REFUND_METHOD)
