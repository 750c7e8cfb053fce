"""A tiny made-up shop for the look-up-then-act and confirmation tests: orders and lamp variants in a dict,
run through the real ``PlanRunner`` over an in-memory unit of work (so dry runs, audit rows, idempotency
and all-or-nothing plans are the shared code's, not a stand-in's)."""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chops.domain.operations import Operation
from chops.domain.outcomes import Change, InvalidArgument, NotInSystem, OperationResult, PlanResult, \
    PreconditionFailed
from chops.domain.runner import PlanRunner


class Args(BaseModel):
    """Argument models of the shop: names as given, unknown keys refused."""

    model_config = ConfigDict(extra="forbid")


class OrderArgs(Args):
    order_id: str = Field(description="the order number, e.g. #A1")


class ItemArgs(Args):
    item_id: str = Field(description="an item id from an order")


class ExchangeArgs(Args):
    order_id: str = Field(description="the order number")
    item_id: str = Field(description="the item to exchange, from the order")
    new_item_id: str = Field(description="the variant to get instead, from the product's variants")


def _order(uow: Any, actor: str, order_id: str) -> dict[str, Any]:
    order = uow.state["orders"].get(order_id)
    if order is None or order["owner"] != actor:  # another customer's order does not exist for this one
        raise NotInSystem(f"There is no order {order_id} on your account.")
    return order


def get_order(uow: Any, actor: str, args: OrderArgs) -> tuple[str, Any]:
    """The order's status and items."""
    order = _order(uow, actor, args.order_id)
    return f"Order {args.order_id}.", {"order_id": args.order_id, "status": order["status"],
                                      "items": [{"item_id": i, "name": uow.state["variants"][i]["name"]}
                                                for i in order["items"]]}


def get_variants(uow: Any, actor: str, args: ItemArgs) -> tuple[str, Any]:
    """The variants of the item's product."""
    item = uow.state["variants"].get(args.item_id)
    if item is None:
        raise InvalidArgument(f"No item {args.item_id}.")
    return "Variants.", [{"item_id": k, "name": v["name"], "price": v["price"]} for k, v in
                         uow.state["variants"].items() if v["product"] == item["product"]]


def exchange(uow: Any, actor: str, args: ExchangeArgs) -> tuple[str, Any]:
    """Exchange one delivered item for another variant of the same product."""
    order = _order(uow, actor, args.order_id)
    if order["status"] != "delivered":
        raise PreconditionFailed("Only a delivered order can be exchanged.")
    variants = uow.state["variants"]
    if args.item_id not in order["items"] or args.new_item_id not in variants \
            or variants[args.new_item_id]["product"] != variants[args.item_id]["product"]:
        raise InvalidArgument("That exchange is not possible.")
    difference = round(variants[args.new_item_id]["price"] - variants[args.item_id]["price"], 2)
    key = {"order_id": args.order_id}
    uow.changes += [Change(table="orders", key=key, field="status", before="delivered", after="exchange requested"),
                    Change(table="orders", key=key, field="price_difference", before=None, after=difference)]
    order.update(status="exchange requested", exchange=[args.item_id, args.new_item_id], price_difference=difference)
    return f"Exchange of {args.item_id} requested.", None


OPERATIONS = {op.name: op for op in (
    Operation("GetOrder", "Look up one of the customer's orders.", OrderArgs, False, False, get_order, observe=True),
    Operation("GetVariants", "Look up the variants of an item's product.", ItemArgs, False, False, get_variants,
              observe=True),
    Operation("Exchange", "Exchange a delivered item for another variant.", ExchangeArgs, True, False, exchange,
              confirm=True),
)}


class MemoryUnitOfWork:
    """The shop's state copied on entry; ``commit`` keeps the copy, leaving without it drops it."""

    def __init__(self, shop: "ShopApi") -> None:
        self.shop = shop

    def __enter__(self) -> "MemoryUnitOfWork":
        self.state, self.changes, self.audit = copy.deepcopy(self.shop.state), [], self
        self._audit = list(self.shop.audit)
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def commit(self) -> None:
        self.shop.state, self.shop.audit = self.state, self._audit

    # the audit log, in memory
    def find(self, key: str) -> dict | None:
        return next((a for a in self._audit if a["idempotency_key"] == key), None)

    def claim(self, entry: dict, actor: str | None = None) -> int:
        self._audit.append(dict(entry))
        return len(self._audit)

    def complete(self, audit_id: int, values: dict) -> None:
        self._audit[audit_id - 1].update(values)


@dataclass
class ShopProfile:
    user_id: str
    orders: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return (self.user_id,)

    def describe(self) -> str:
        return f"Customer {self.user_id}; orders: {', '.join(self.orders)}"

    def lookup_data(self) -> dict:
        return {"orders": list(self.orders)}

    def grounding_values(self) -> tuple[str, ...]:
        return self.orders


def resolve(uow: MemoryUnitOfWork, user: str, op: Operation) -> tuple[str, str]:
    if user not in uow.state["customers"]:
        raise NotInSystem("You are not a customer.")
    return user, user


class ShopApi:
    """A complete ``SystemApi`` over a dict, through the shared ``PlanRunner``."""

    operations = OPERATIONS

    def __init__(self) -> None:
        self.audit: list[dict] = []
        self.state = {
            "customers": {"ann", "ben"},
            "orders": {"#A1": {"owner": "ann", "status": "delivered", "items": ["i-blue"]},
                       "#A2": {"owner": "ann", "status": "pending", "items": ["i-red"]},
                       "#B1": {"owner": "ben", "status": "delivered", "items": ["i-blue"]}},
            "variants": {"i-blue": {"product": "lamp", "name": "desk lamp (blue)", "price": 30.0},
                         "i-red": {"product": "lamp", "name": "desk lamp (red)", "price": 32.5},
                         "i-green": {"product": "lamp", "name": "desk lamp (green)", "price": 31.0}},
        }
        self.runner = PlanRunner(OPERATIONS, lambda write: MemoryUnitOfWork(self), resolve=resolve)

    def profile(self, user: str) -> ShopProfile | None:
        if user not in self.state["customers"]:
            return None
        return ShopProfile(user, tuple(o for o, v in self.state["orders"].items() if v["owner"] == user))

    def people_named(self, names: Collection[str]) -> list[tuple[Any, tuple[str, ...]]]:
        return [(c, (c,)) for c in self.state["customers"] if c in names]

    def call(self, name: str, user: str, args: dict, **kw: Any) -> OperationResult:
        return self.runner.call(name, user, args, **kw)

    def call_plan(self, user: str, steps: Sequence[tuple[str, dict]], **kw: Any) -> PlanResult:
        return self.runner.call_plan(user, steps, **kw)
