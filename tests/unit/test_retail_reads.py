"""The retail reads, the profile and the "about someone else" look-up, on the made-up shop (SQLite): a customer
sees their own details and orders only, products are public, results are compact."""

from __future__ import annotations

import json

import pytest

from apis.retail.repositories import named_query
from tests.unit.retail_support import LEO, MIA, load_shop


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    engine, api = load_shop(f"sqlite:///{tmp_path_factory.mktemp('retail') / 'shop.db'}")
    yield api
    engine.dispose()


def read(api, name, args=None, user=MIA):
    result = api.call(name, user, args or {})
    assert result.outcome == "ok", result.message
    assert not result.dry_run and not result.committed and result.diff == []
    return result.data


def test_an_order_shows_its_items_their_total_payments_and_tracking(api):
    data = read(api, "get_order_details", {"order_id": "#T0000003"})
    assert data == {
        "order_id": "#T0000003", "status": "delivered", "address": "1 Test Way, Testville, ZZ 11111, USA",
        "items": [{"item_id": "k-glass-1l", "product_id": "p-kettle", "name": "Kettle",
                   "options": "material: glass, capacity: 1L", "price": 45.5},
                  {"item_id": "s-silk-red", "product_id": "p-scarf", "name": "Scarf",
                   "options": "fabric: silk, color: red", "price": 80.0}],
        "total": 125.5,  # the items' prices as they are now
        "payments": [{"type": "payment", "amount": 125.5, "method": "credit_card_mia"}],
        "tracking_ids": ["TRACK-0003"]}


def test_an_order_id_without_its_hash_is_understood(api):
    bare = api.call("get_order_details", MIA, {"order_id": "W0000001"})
    assert bare.outcome == "not_in_system" and "#W0000001" in bare.message


@pytest.mark.parametrize("order_id", ["#T0000008", "#T0000009", "#T1234567"])
def test_another_customers_order_does_not_exist_for_you(api, order_id):
    result = api.call("get_order_details", MIA, {"order_id": order_id})
    assert result.outcome == "not_in_system" and result.data is None
    assert result.message == f"There is no order {order_id} on your account."


def test_user_details_are_always_the_signed_in_customers_own(api):
    data = read(api, "get_user_details")
    assert data["user_id"] == MIA and data["name"] == "Mia Sandoval"
    assert data["orders"] == [f"#T000000{i}" for i in range(1, 8)]
    assert data["payment_methods"][:2] == [
        {"id": "gift_card_mia", "source": "gift_card", "balance": 100.0},
        {"id": "credit_card_mia", "source": "credit_card", "card": "visa ending 1111"}]
    refused = api.call("get_user_details", MIA, {"user_id": LEO})
    assert refused.outcome == "refused_invalid_arg" and "acting user is always you" in refused.message


def test_find_user_id_confirms_only_the_customers_own_details(api):
    assert read(api, "find_user_id_by_email", {"email": " mia.sandoval@EXAMPLE.test"}) == {"user_id": MIA}
    assert read(api, "find_user_id_by_name_zip", {"first_name": "mia", "last_name": "SANDOVAL", "zip": "11111"}) == \
        {"user_id": MIA}
    other = api.call("find_user_id_by_email", MIA, {"email": "leo.park@example.test"})
    nobody = api.call("find_user_id_by_email", MIA, {"email": "nobody@example.test"})
    assert other.outcome == nobody.outcome == "not_in_system" and other.data is None
    assert LEO not in other.message and "Leo" not in other.message
    wrong_zip = api.call("find_user_id_by_name_zip", MIA,
                         {"first_name": "Mia", "last_name": "Sandoval", "zip": "11112"})
    leo = api.call("find_user_id_by_name_zip", MIA, {"first_name": "Leo", "last_name": "Park", "zip": "22222"})
    assert wrong_zip.outcome == leo.outcome == "not_in_system" and LEO not in leo.message


def test_products_are_public_and_compact(api):
    data = read(api, "get_product_details", {"product_id": "p-kettle"}, user=LEO)
    assert data == {"product_id": "p-kettle", "name": "Kettle", "available_variants": 3, "variants_in_all": 4,
                    "options": "material, capacity", "variants": {
        "k-steel-1l": "steel, 1L; $40.00; available", "k-glass-1l": "glass, 1L; $45.50; available",
        "k-red-1l": "enamel, 1L; $38.99; available", "k-steel-2l": "steel, 2L; $60.00; NOT available"}}
    assert read(api, "get_item_details", {"item_id": "k-steel-2l"}) == {
        "item_id": "k-steel-2l", "product_id": "p-kettle", "name": "Kettle", "options": "material: steel, capacity: 2L",
        "available": False, "price": 60.0}
    listed = read(api, "list_all_product_types")["products"]
    assert listed == {"p-chair": "Chair", "p-kettle": "Kettle", "p-scarf": "Scarf"}
    assert list(listed.values()) == ["Chair", "Kettle", "Scarf"]  # by name
    for name, args in (("get_product_details", {"product_id": "k-steel-1l"}),
                       ("get_item_details", {"item_id": "p-kettle"})):
        assert api.call(name, MIA, args).outcome == "not_in_system"


def test_an_item_id_given_as_a_number_is_read_as_text(api):
    result = api.call("get_item_details", MIA, {"item_id": 1234567890})
    assert result.outcome == "not_in_system" and "1234567890" in result.message


@pytest.mark.parametrize("expression,result", [("2 + 2", 4.0), ("(45.50 - 40.00) + (80 - 25.10)", 60.4),
                                               ("100 / 3", 33.33), ("0.1 + 0.2", 0.3), ("-1.005 * 2", -2.01)])
def test_calculate_is_exact_and_rounded_to_the_cent(api, expression, result):
    assert read(api, "calculate", {"expression": expression})["result"] == result


@pytest.mark.parametrize("expression", ["__import__('os').system('true')", "2 ** 100", "1 / 0", "abs(-1)", "x + 1",
                                        "1e999", "[1, 2]"])
def test_calculate_refuses_anything_but_arithmetic(api, expression):
    result = api.call("calculate", MIA, {"expression": expression})
    assert result.outcome == "refused_invalid_arg" and result.data is None


def test_the_executor_grammar_writes_only_arithmetic_for_calculate():
    # Without the pattern, the 1.5B wrote "sum(2*2, 2*2, ..." until its tokens ran out (a minute of decoding).
    from apis.retail.registry import OPERATIONS
    from chops.llm.chat import compact_grammar
    from chops.pipeline.schemas import plan_schema

    grammar = compact_grammar(plan_schema((OPERATIONS["calculate"],), True))
    assert '"\\"" ([0-9.+*/() -]+) "\\""' in grammar
    schema = plan_schema((OPERATIONS["calculate"], OPERATIONS["get_order_details"]), True)
    assert "pattern" not in str(schema.model_json_schema()["$defs"]["get_order_detailsArgs"])


def test_an_unknown_customer_is_not_in_the_system(api):
    assert api.call("get_user_details", "ghost_0", {}).outcome == "not_in_system"
    assert api.profile("ghost_0") is None


def test_an_orders_city_is_given_with_what_customers_call_it():
    from apis.retail.profile import RetailProfile

    to = [{"order_id": f"#T100000{i}", "status": "pending", "names": ["Chair"], "address": {"city": city}}
          for i, city in enumerate(["Los Angeles", "Testville"])]
    home = {"address1": "1 Main St", "address2": "", "city": "Testville", "state": "ZZ", "zip": "1", "country": "USA"}
    profile = RetailProfile(user_id="u", first_name="A", last_name="B", email="e", address=home, payment_methods=[],
                            orders=[o["order_id"] for o in to], overview=to)
    assert "#T1000000 (pending, to Los Angeles (LA): Chair); #T1000001 (pending, to Testville: Chair)" in \
        profile.describe()


def test_the_profile_describes_the_customer_compactly(api):
    profile = api.profile(MIA)
    assert profile.names == (MIA, "Mia Sandoval")
    text = profile.describe()
    assert text.splitlines() == [
        f"Name: Mia Sandoval (user id {MIA})",
        "Email: Mia.Sandoval@example.test",
        "Default address: 7 Lark Street, Unit 2, Testville, ZZ 11111, USA",
        "Payment methods: gift_card_mia (gift card, balance $100.00); credit_card_mia (credit card, visa ending 1111); "
        "paypal_mia (paypal); gift_card_mia_small (gift card, balance $3.00)",
        # What each order is, so "the scarf I got" names its order without a look-up of every order.
        "Orders (oldest first, newest last): #T0000001 (pending, to Testville: Kettle, 2 x Scarf); "
        "#T0000002 (pending, to Testville: Chair); #T0000003 (delivered, to Testville: Kettle, Scarf); "
        "#T0000004 (processed, to Testville: Scarf); #T0000005 (cancelled, to Testville: Scarf); "
        "#T0000006 (pending, to Testville: Kettle); #T0000007 (pending (item modified), to Testville: Scarf)"]
    data = profile.lookup_data()
    assert "overview" not in data and data["orders"][0] == "#T0000001"  # get_user_details' shape: order ids
    # ... and each order's status, where the grammar reads which orders a write may take.
    assert data["statuses"][2] == {"order_id": "#T0000003", "status": "delivered", "names": ["Kettle", "Scarf"],
                                   "address": {"address1": "1 Test Way", "address2": "", "city": "Testville",
                                               "state": "ZZ", "zip": "11111", "country": "USA"}}
    grounding = set(profile.grounding_values())
    assert {"#T0000001", "gift_card_mia", "7 Lark Street", "11111"} <= grounding and "#T0000008" not in grounding
    assert "1 Test Way" in grounding  # an order's address: "ship it where my last order went"


def test_people_named_finds_customers_by_full_name_only(api):
    assert api.people_named(["leo park", "LEO PARK", "Leo", "Park", "  Leo   Park "]) == [(LEO, ("Leo Park",))]
    assert api.people_named(["Mia Sandoval", "nobody here"]) == [(MIA, ("Mia Sandoval",))]
    assert api.people_named([]) == [] and api.people_named(["Leo"]) == []


def test_people_named_is_an_indexed_look_up_in_chunks(api):
    with api.engine.connect() as conn:
        compiled = named_query(["leo park", "mia sandoval"]).compile(conn, compile_kwargs={"literal_binds": True})
        plan = " ".join(str(r[-1]) for r in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}"))
    assert "ix_retail_customer_name_key" in plan and "SCAN" not in plan, plan
    many = [f"someone {i}" for i in range(1500)] + ["Leo Park"]  # more names than one statement's parameters
    assert api.people_named(many) == [(LEO, ("Leo Park",))]


def test_results_are_small_enough_for_the_executors_prompt(api):
    for name, args in (("get_order_details", {"order_id": "#T0000001"}), ("get_user_details", {}),
                       ("get_product_details", {"product_id": "p-scarf"})):
        assert len(json.dumps(read(api, name, args))) < 700, name
