"""The described-variant narrowing (``CHOICES_DESCRIBED``) on the shop's real data: for every item swap among the
train tasks' reference actions, the variants offered to the model after the customer's opening message still hold
the reference variant, with the order and the products read as the executor would read them. A narrowing that
drops what the customer asked for turns a task the model could pass into one it cannot. Only the described
narrowing is checked: the one by the products the current message names (``CHOICES_MENTIONED``) is left out, since
in several of these conversations a later message names the other products."""

from __future__ import annotations

import json

from chops.pipeline.choices import arg_options
from chops.pipeline.walk import typed_ids
from chops.pipeline.asking import unasked_write
from chops.pipeline.kinds import unasked_kind, unasked_refusal
from chops.pipeline.unspoken import unspoken
from chops.pipeline.which import unsure
from chops.pipeline.together import all_but
from chops.pipeline.whole import partial
from tests.integration.train_support import train_actions

SWAPS = ("exchange_delivered_order_items", "modify_pending_order_items")


def read(api, customer: str, action: dict) -> list:
    """What the executor would have read for ``action``: the profile, its order and the products of its items."""
    args = action["arguments"]
    order = api.call("get_order_details", customer, {"order_id": args["order_id"]}).data
    products = {i["product_id"] for i in order["items"] if i["item_id"] in args["item_ids"]}
    return [api.profile(customer).lookup_data(), order,
            *(api.call("get_product_details", customer, {"product_id": p}).data for p in sorted(products))]


def offered(api, customer: str, opening: str, action: dict) -> tuple[str, ...]:
    """The new item ids the executor's grammar would offer for ``action`` once its order and the products of
    its items were looked up."""
    sources = read(api, customer, action)
    options = arg_options([api.operations[action["name"]]], sources, typed_ids([opening]), "", [opening])
    return next(values for _, arg, values, _ in options if arg == "new_item_ids")


def test_every_train_swap_keeps_the_reference_variant_offered(shop, retail_dir):
    checked, alone, lost = 0, 0, []
    for task_id, customer, opening, action in train_actions(retail_dir, SWAPS):
        values = offered(shop, customer, opening, action)
        wanted = set(action["arguments"]["new_item_ids"])
        checked += 1
        if not wanted <= set(values):
            lost.append((task_id, sorted(wanted - set(values))))
        alone += len(values) == len(wanted)
    assert checked >= 15, "the train tasks hold fewer swaps than they did: the data changed"
    assert lost == [], f"the reference variant is no longer offered in {lost}"
    # Narrowed to exactly the reference variant(s) at least as often as when this was written (20 of 47 swaps; 13
    # before the variants most like the line replaced were preferred, narrowing.closest).
    assert alone >= 20


def test_no_train_swap_is_refused_as_unasked(shop, retail_dir):
    """``kinds.unasked_refusal`` (unasked, of other items, or against the price asked for) on the reference swaps, for the
    customer's opening and for their message when nothing else fits (the script's default), each the request with both
    said: a swap refused here is one the customer asked for. Three are known: task 91 returns three items and
    exchanges the e-reader "as described" (in a message the script does not hold), and 37's opening asks whether the
    payment can be split (the swap comes once the agent has said it cannot)."""
    defaults = {s["task_id"]: s["default"] for s in json.loads((retail_dir / "users" / "train.json").read_text())[
        "scripts"]}
    checked, refused = 0, set()
    for task_id, customer, opening, action in train_actions(retail_dir, SWAPS):
        said, sources = [opening, defaults[task_id]], read(shop, customer, action)
        for which, request in zip(("opening", "default"), said):
            checked += 1
            if unasked_refusal(shop.operations[action["name"]], action["arguments"], shop.operations.values(),
                            request, said, sources) is not None:
                refused.add((task_id, which))
    assert checked >= 60 and refused <= {("91", "opening"), ("91", "default"), ("37", "opening")}, refused


WRITES = ("cancel_pending_order", "modify_pending_order_address", "modify_pending_order_payment",
          "modify_pending_order_items", "exchange_delivered_order_items", "return_delivered_order_items")


def with_order_read(shop, retail_dir, names: tuple[str, ...]):
    """(task id, which message, the reference action, the opening and the script's default, the profile and the
    action's order read) for each train reference action named ``names`` and each of the two messages."""
    defaults = {s["task_id"]: s["default"] for s in json.loads((retail_dir / "users" / "train.json").read_text())[
        "scripts"]}
    for task_id, customer, opening, action in train_actions(retail_dir, names):
        order = shop.call("get_order_details", customer, {"order_id": action["arguments"]["order_id"]}).data
        said, sources = [opening, defaults[task_id]], [shop.profile(customer).lookup_data(), order]
        for which, request in zip(("opening", "default"), said):
            yield task_id, which, action, request, said, sources


def test_no_train_write_is_refused_as_of_products_nobody_named(shop, retail_dir):
    """``kinds.unspoken`` on every reference write with the profile and its order read, for the customer's opening
    and their script's default message, each the request with both said: a write refused here changes what the
    customer asked for. One is known: task 110's default message calls the order "the wrong order" (by its address),
    where its opening says "another order of mine"."""
    checked, refused = 0, set()
    for task_id, which, action, request, said, sources in with_order_read(shop, retail_dir, WRITES):
        checked += 1
        if unspoken(shop.operations[action["name"]], action["arguments"], request, said, sources) is not None:
            refused.add((task_id, which))
    assert checked >= 150 and refused <= {("110", "default")}, refused


def test_no_train_write_is_refused_as_another_kind_than_asked(shop, retail_dir):
    """``kinds.unasked_kind`` and ``unasked_write`` on every reference write, for the opening and the script's default
    message: a write refused here was asked for in words another kind shadows, or in a question that names no change.
    One is known, a write the customer asks for only after the opening, once told the one they asked for cannot be
    done: task 69's opening asks to return a laptop, and its pending order's cancel comes after."""
    checked, refused = 0, set()
    for task_id, which, action, request, _, _ in with_order_read(shop, retail_dir, WRITES):
        checked += 1
        op = shop.operations[action["name"]]
        if unasked_kind(op, request, shop.operations.values()) is not None \
                or unasked_write(op, request, shop.operations.values()):
            refused.add((task_id, which))
    assert checked >= 150 and refused == {("69", "opening")}, refused


LINES = ("modify_pending_order_items", "exchange_delivered_order_items", "return_delivered_order_items")


def test_which_line_is_asked_only_where_the_customer_holds_several_and_says_nothing_to_tell(shop, retail_dir):
    """``which.unsure`` on every reference write of lines with the profile and its order read, for the opening and the
    script's default message, each the request with both said: asked in the tasks whose script answers "which
    one?" (46 and 47: two vacuum cleaners in one order; 93: a laptop in each of two orders), and nowhere else (95 holds
    the same two laptops, but its default message says "both", so with both said nothing is asked)."""
    checked, asked = 0, set()
    for task_id, _, action, request, said, sources in with_order_read(shop, retail_dir, LINES):
        checked += 1
        if unsure(shop.operations[action["name"]], action["arguments"], request, said, sources) is not None:
            asked.add(task_id)
    assert checked >= 150 and asked == {"46", "47", "93"}, asked


def test_no_train_cancel_is_refused_as_a_part_of_its_order(shop, retail_dir):
    """``whole.partial`` on every reference cancel, for the opening and the script's default message: a cancel refused
    here is one the customer asked for whole. One is known: task 66's opening asks to change the luggage set for a
    coat (the order's cancel comes once the agent has said it cannot), so a cancel proposed for it is refused."""
    checked, refused = 0, set()
    for task_id, which, action, request, _, sources in with_order_read(shop, retail_dir, ("cancel_pending_order",)):
        checked += 1
        if partial(shop.operations[action["name"]], action["arguments"], request, sources) is not None:
            refused.add((task_id, which))
    assert checked >= 30 and refused == {("66", "opening")}, refused


def test_everything_but_lists_the_reference_lines_where_it_changes_a_train_write(shop, retail_dir):
    """``together.all_but`` on every reference write of lines, for the opening and the script's default message: where
    it lists lines at all, it lists the reference's (73's "everything I just bought except the coffee machine")."""
    checked, changed = 0, set()
    for task_id, _, action, request, _, sources in with_order_read(shop, retail_dir, LINES):
        args = action["arguments"]
        checked += 1
        one = {**args, "item_ids": args["item_ids"][:1]}  # the model's one item
        found = all_but(shop.operations[action["name"]], one, sources, request)
        if found is not None:
            assert sorted(found["item_ids"]) == sorted(args["item_ids"]), (task_id, request)
            changed.add(task_id)
    assert checked >= 150 and "73" in changed, changed
