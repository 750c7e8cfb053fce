"""Addresses taken whole (``chops.pipeline.completion``) on the shop's real data: for every address change among
the train tasks' reference actions whose address is one the customer's data already holds (their default address,
an order's), a plan that gives a single part the customer said or the profile shows (the city, or the state) and
nothing else is completed to exactly the reference address, from the signed-in customer's profile alone, where no
other address of theirs agrees with that part; and never to another address."""

from __future__ import annotations

import json

from apis.retail.registry import OPERATIONS
from chops.pipeline.completion import completed, named_record
from tests.integration.train_support import train_actions

PARTS = ("address1", "address2", "city", "state", "country", "zip")


def _address_changes(shop, retail_dir):
    """(task id, opening, operation, reference arguments, the customer's profile data, the reference address, the
    addresses their data holds) of every reference address change of the train tasks."""
    for task_id, customer, opening, action in train_actions(retail_dir, ("modify_pending_order_address",
                                                                         "modify_user_address")):
        data = shop.profile(customer).lookup_data()
        held = [{k: a[k] for k in PARTS} for a in (data["address"], *(s["address"] for s in data["statuses"]))]
        yield (task_id, opening, shop.operations[action["name"]], action["arguments"], data,
               {k: action["arguments"][k] for k in PARTS}, held)


def test_an_address_the_customer_already_has_is_completed_from_one_part(shop, retail_dir):
    checked, whole, wrong = 0, 0, []
    for task_id, _, op, args, data, reference, held in _address_changes(shop, retail_dir):
        if reference not in held:
            continue  # a new address: the customer types it
        checked += 1
        for part in ("city", "state", "zip", "address1"):
            filled = completed(op, {**args, **dict.fromkeys(PARTS), part: reference[part]}, [data])
            if filled is None:
                # Only where another of the customer's addresses shares that part: then nothing is guessed.
                assert len({tuple(a.values()) for a in held if a[part] == reference[part]}) > 1, (task_id, part)
                continue
            if {k: filled[k] for k in PARTS} != reference:
                wrong.append((task_id, part))
            whole += part == "city"
    assert checked >= 15, "the train tasks hold fewer address changes from the customer's data: the data changed"
    assert wrong == []
    assert whole >= 13  # the city alone names the address in 13 of the 17 when this was written


def test_an_address_named_as_a_place_is_the_one_the_reference_ships_to(shop, retail_dir):
    """Whichever other address of theirs the model copied, the customer's opening naming the address as a place ("my
    NYC address", "my default Chicago home") gives the reference address, and never another."""
    named, wrong = set(), []
    for task_id, opening, op, args, data, reference, held in _address_changes(shop, retail_dir):
        for start in (a for a in held if a != reference):
            found = named_record(op, {**args, **start}, [data], opening)
            if found is not None and {k: found[k] for k in PARTS} != reference:
                wrong.append((task_id, found))
            elif found is not None:
                named.add(task_id)
    assert wrong == []
    assert len(named) >= 6, named  # 78, 87, 96, 103, 104 and 112 when this was written


def test_the_customers_own_address_change_is_offered_where_a_train_task_changes_it(retail_dir):
    """The customer's own address change is offered (``Operation.asked_by``) for each train task whose reference
    changes it, by its opening or its script's default words; of those that change an order's only, for few."""
    scripts = {s["task_id"]: s for s in json.loads((retail_dir / "users" / "train.json").read_text())["scripts"]}
    own = OPERATIONS["modify_user_address"]
    changed: dict[str, set[str]] = {}
    for task_id, _, _, action in train_actions(retail_dir, ("modify_pending_order_address", "modify_user_address")):
        changed.setdefault(task_id, set()).add(action["name"])
    offered = {t for t in changed if own.asked_in([scripts[t]["opening"], scripts[t]["default"]])}
    assert {t for t, names in changed.items() if "modify_user_address" in names} <= offered
    # 72, 103 and 104 ship an order to "my default … address" when this was written: offered, the model chooses
    assert len(offered - {t for t, names in changed.items() if "modify_user_address" in names}) <= 3, offered
