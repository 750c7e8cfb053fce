"""The shop's read operations. Each takes the unit of work, the acting customer (the signed-in user, never an
argument) and its validated arguments, and returns ``(message, data)`` or raises a ``DomainError``.

Differences from tau2 on purpose: a customer reads only their own details and orders (another customer's
order "does not exist" for them), and the two ``find_user_id_*`` look-ups confirm the customer's own id when
the details match theirs, never revealing whether they match someone else.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from apis.retail import args as a
from apis.retail.uow import RetailUnitOfWork
from apis.retail.views import customer_view, item_view, order_view, product_view
from chops.domain.outcomes import NotInSystem

Customer = dict[str, Any]
Reply = tuple[str, Any]


class NotFound(NotInSystem):
    """A record named by id does not exist, or not for this customer (their own orders only)."""


def own_order(uow: RetailUnitOfWork, actor: Customer, order_id: str) -> dict[str, Any]:
    """The acting customer's order ``order_id``; another customer's is refused exactly like a missing one."""
    order = uow.orders.get(order_id, actor["user_id"])
    if order is None:
        raise NotFound(f"There is no order {order_id} on your account.")
    return order


def _folded(text: str) -> str:
    """Case- and accent-insensitive form of a name or email ('José' and 'jose' match)."""
    decomposed = unicodedata.normalize("NFKD", text.strip())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def find_user_id_by_email(uow: RetailUnitOfWork, actor: Customer, args: a.EmailArgs) -> Reply:
    """The customer's own user id when ``email`` is theirs."""
    if _folded(args.email) != _folded(actor["email"]):
        raise NotFound(f"No account with the email {args.email} was found for you.")
    return f"Your user id is {actor['user_id']}.", {"user_id": actor["user_id"]}


def find_user_id_by_name_zip(uow: RetailUnitOfWork, actor: Customer, args: a.NameZipArgs) -> Reply:
    """The customer's own user id when the name and zip code are theirs."""
    same = (_folded(args.first_name) == _folded(actor["first_name"])
            and _folded(args.last_name) == _folded(actor["last_name"]) and args.zip == actor["zip"].strip())
    if not same:
        raise NotFound(f"No account for {args.first_name} {args.last_name} with zip code {args.zip} was found for you.")
    return f"Your user id is {actor['user_id']}.", {"user_id": actor["user_id"]}


def get_user_details(uow: RetailUnitOfWork, actor: Customer, args: a.NoArgs) -> Reply:
    """The customer's own profile: name, email, address, payment methods, orders."""
    view = customer_view(actor, uow.payment_methods.of_customer(actor["user_id"]),
                         uow.orders.ids_of(actor["user_id"]))
    return f"Your details: {len(view['payment_methods'])} payment method(s), {len(view['orders'])} order(s).", view


def get_order_details(uow: RetailUnitOfWork, actor: Customer, args: a.OrderArgs) -> Reply:
    """One of the customer's orders."""
    order = own_order(uow, actor, args.order_id)
    return f"Order {order['order_id']} is {order['status']}.", order_view(order)


def get_product_details(uow: RetailUnitOfWork, actor: Customer, args: a.ProductArgs) -> Reply:
    """A product and all its variants."""
    product = uow.products.get(args.product_id)
    if product is None:
        raise NotFound(f"There is no product {args.product_id} (a product id, not an item id).")
    available = sum(1 for v in product["variants"] if v["available"])
    return (f"{product['name']}: {len(product['variants'])} variant(s), {available} available.",
            product_view(product))


def get_item_details(uow: RetailUnitOfWork, actor: Customer, args: a.ItemArgs) -> Reply:
    """One variant (item) of a product."""
    item = uow.products.variant(args.item_id)
    if item is None:
        raise NotFound(f"There is no item {args.item_id} (an item id, not a product id).")
    state = "available" if item["available"] else "not available"
    return f"Item {item['item_id']} ({item['name']}) is {state}.", item_view(item)


def list_all_product_types(uow: RetailUnitOfWork, actor: Customer, args: a.NoArgs) -> Reply:
    """Every product's id and name, by name (``products``: product id -> name, the key the product_id argument's
    choices are read from)."""
    types = sorted(uow.products.types(), key=lambda p: p["name"])  # the same order on every backend
    return f"{len(types)} product types.", {"products": {p["product_id"]: p["name"] for p in types}}
