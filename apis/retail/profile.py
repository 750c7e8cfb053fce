"""The signed-in customer's profile ("basic info"): what the agent may know of them without an operation."""

from __future__ import annotations

from collections import Counter
from typing import Any

from apis.retail import tables as t
from apis.retail.args import CANCEL_REASONS
from apis.retail.uow import RetailUnitOfWork
from apis.retail.views import address_text, method_view
from chops.domain.profile import AccountProfile

# What customers call the cities the shop ships to, where that is not the name: "change my LA order to my NYC address"
# had the 1.5B read another order, the overview saying "to Los Angeles" (train task 96).
CITY_NICKNAMES = {"New York": "NYC", "Los Angeles": "LA", "San Francisco": "SF", "Washington": "DC",
                  "Philadelphia": "Philly"}


class RetailProfile(AccountProfile):
    """A customer: name, email, default address, payment methods, order ids (newest last), and what each order
    is (``overview``: status, shipping address and item names), so "the lamp I got" names its order without reading
    them all."""

    address: dict[str, str]
    payment_methods: list[dict[str, Any]]  # method_view rows: id, source, balance or card
    orders: list[str]
    overview: list[dict[str, Any]] = []  # OrderRepository.summaries_of rows, in the order of ``orders``

    def describe(self) -> str:
        """A compact plain-text rendering for prompts (one fact per line)."""
        methods = []
        for m in self.payment_methods:
            detail = f"balance ${m['balance']:,.2f}" if "balance" in m else m.get("card")
            kind = m["source"].replace("_", " ")
            methods.append(f"{m['id']} ({kind}, {detail})" if detail else f"{m['id']} ({kind})")
        return "\n".join([
            f"Name: {self.full_name} (user id {self.user_id})",
            f"Email: {self.email}",
            f"Default address: {address_text(self.address)}",
            f"Payment methods: {'; '.join(methods) or 'none'}",
            f"Orders (oldest first, newest last): {self._orders_text() or 'none'}",
        ])

    def _orders_text(self) -> str:
        """``#W1 (pending, to Chicago: T-Shirt, 2 x Desk Lamp); #W2 (delivered, to Austin: ...)``, or the bare ids
        without an overview."""
        if not self.overview:
            return ", ".join(self.orders)
        parts = []
        for o in self.overview:
            counts = Counter(o["names"])  # insertion-ordered: the order's line order
            names = ", ".join(name if n == 1 else f"{n} x {name}" for name, n in counts.items())
            city = o.get("address", {}).get("city")  # "my NYC address, on one of my orders" names its order
            where = f", to {city}" + (f" ({CITY_NICKNAMES[city]})" if city in CITY_NICKNAMES else "") if city else ""
            parts.append(f"{o['order_id']} ({o['status']}{where}: {names or 'no items'})")
        return "; ".join(parts)

    def lookup_data(self) -> dict[str, Any]:
        """The profile as ``get_user_details`` would return it (order ids, payment methods: ``payment_methods.id``)
        and each order's status and item names (``statuses``): the grammar offers "cancel" only the pending
        orders, and "the lamp I got" the orders holding a lamp (``chops.pipeline.choices``)."""
        statuses = [{"order_id": o["order_id"], "status": o["status"], "names": o["names"],
                     "address": _nicknamed(o.get("address", {}))} for o in self.overview]
        return {**self.model_dump(exclude={"overview"}), "address": _nicknamed(self.address), "statuses": statuses}

    def grounding_values(self) -> tuple[str, ...]:
        """Values an argument may take though the customer never typed them: their order ids and payment
        method ids (a look-up already made), the parts of their default address and of their orders' addresses
        ("ship it to my address", "to my NYC address, it's on an order"), and the two cancel reasons the policy
        allows ("I don't need it" is 'no longer needed'; the customer confirms the reason with the rest of the
        described change before anything is written)."""
        addresses = [self.address, *(o.get("address", {}) for o in self.overview)]
        return (*self.orders, *(m["id"] for m in self.payment_methods),
                *dict.fromkeys(v for a in addresses for v in a.values() if v), *CANCEL_REASONS)


def _nicknamed(address: dict[str, str]) -> dict[str, str]:
    """``address`` with what customers call its city beside its parts ("nickname": "NYC"), where that is not the name:
    "my NYC address" names it (``chops.pipeline.completion.named_record``)."""
    nickname = CITY_NICKNAMES.get(address.get("city", ""))
    return {**address, "nickname": nickname} if nickname else address


def load_profile(uow: RetailUnitOfWork, user_id: str) -> RetailProfile | None:
    """The customer's profile from three indexed look-ups; ``None`` = not a customer."""
    c = uow.customers.get(user_id)
    if c is None:
        return None
    overview = uow.orders.summaries_of(user_id)
    return RetailProfile(user_id=c["user_id"], first_name=c["first_name"], last_name=c["last_name"], email=c["email"],
                         address={k: c[k] for k in t.ADDRESS_KEYS},
                         payment_methods=[method_view(m) for m in uow.payment_methods.of_customer(user_id)],
                         orders=[o["order_id"] for o in overview], overview=overview)
