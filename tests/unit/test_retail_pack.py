"""The retail pack as a plug-in: its registry against the data pack's tools.json, its flags and descriptions,
its router examples, its demo shop, load/export of a made-up document, the policy path and `chops db export`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from apis.retail import loader
from apis.retail.document import Document
from apis.retail.pack import pack, policy_path
from apis.retail.registry import OPERATIONS
from chops.cli import main
from chops.db import make_engine
from chops.domain.pack import load_pack
from chops.router import ROUTES, training_examples
from tests.unit.retail_support import MIA, load_shop, shop_document


def test_the_operations_are_the_tools_but_the_hand_off_and_no_user_id(retail_dir):
    tools = {t["name"]: t for t in json.loads((retail_dir / "tools.json").read_text())}
    assert sorted(OPERATIONS) == sorted(set(tools) - {"transfer_to_human_agents"})
    for name, op in OPERATIONS.items():
        assert op.writes == (tools[name]["access"] == "write"), name
        wanted = set(tools[name]["parameters"]["properties"]) - {"user_id"}
        assert set(op.args_model.model_fields) == wanted, name


def test_writes_are_confirmed_reads_observed_and_nothing_is_admin_only():
    for op in OPERATIONS.values():
        assert (op.confirm, op.observe, op.admin_only) == (op.writes, not op.writes, False), op.name


def test_every_field_has_a_description_and_every_operation_one_line():
    for op in OPERATIONS.values():
        assert op.description and "\n" not in op.description and len(op.description) <= 160, op.name
        for name, field in op.args_model.model_fields.items():
            assert field.description, f"{op.name}.{name} has no description"
        schema = op.json_schema()
        assert schema.get("additionalProperties") is False, op.name
        assert all(p.get("description") for p in schema.get("properties", {}).values()), op.name


def test_the_pack_is_found_by_its_entry_point():
    found = load_pack("retail")
    assert found.name == "retail" and found.api(None).operations is OPERATIONS


def test_router_examples_cover_every_route_in_three_languages(retail_dir):
    rows = training_examples(pack.router_examples)  # the kit's conversational examples and the shop's own
    by_route = {r: [t for t, route in rows if route == r] for r in ROUTES}
    assert all(len(texts) >= 20 for texts in by_route.values()), {r: len(t) for r, t in by_route.items()}
    for route, texts in by_route.items():
        assert any(re.search("[\u4e00-\u9fff]", t) for t in texts), f"{route}: no Chinese example"
        assert any(re.search("[¿¡áéíóúñ]|hola|gracias", t) for t in texts), f"{route}: no Spanish example"
    # Our own wording: no example is a task's text or names one of the store's orders.
    tasks = (retail_dir / "tasks" / "train.json").read_text().lower()
    orders = json.loads((retail_dir / "database" / "db.json").read_text())["orders"]
    for text, _ in rows:
        assert len(text) < 30 or text.lower() not in tasks, text
        assert not any(oid in orders for oid in re.findall(r"#W\d+", text)), text


def test_the_policy_is_read_from_the_data_folder(retail_dir, monkeypatch, tmp_path):
    assert policy_path().read_text().startswith("# Retail agent policy")
    monkeypatch.setenv("CHOPS_RETAIL_DIR", str(tmp_path))
    assert pack.policy_path() == tmp_path / "policy.md"


def test_a_made_up_document_round_trips_with_the_fields_the_writes_add(sqlite_url):
    engine, api = load_shop(sqlite_url)
    assert loader.export(engine) == shop_document()
    for name, args in (("cancel_pending_order", {"order_id": "#T0000001", "reason": "ordered by mistake"}),
                       ("exchange_delivered_order_items", {
                           "order_id": "#T0000003", "item_ids": ["k-glass-1l"], "new_item_ids": ["k-red-1l"],
                           "payment_method_id": "paypal_mia"})):
        assert api.call(name, MIA, args).committed
    written = loader.export(engine)
    orders = written["orders"]
    assert set(orders["#T0000001"]) - set(orders["#T0000002"]) == {"cancel_reason"}
    assert set(orders["#T0000003"]) - set(orders["#T0000002"]) == {
        "exchange_items", "exchange_new_items", "exchange_payment_method_id", "exchange_price_difference"}
    # What export writes, load reads back to the very same document (twice: loading is idempotent).
    path = sqlite_url.removeprefix("sqlite:///")
    folder = Path(path).parent / "dump"
    folder.mkdir()
    (folder / "db.json").write_text(json.dumps(written))
    second = make_engine(f"sqlite:///{folder / 'copy.db'}")
    counts = pack.load(second, folder)
    assert pack.load(second, folder) == counts and counts["retail_request_item"] == 2
    assert pack.export(second) == written
    engine.dispose()
    second.dispose()


@pytest.mark.parametrize("breakage,words", [
    (lambda d: d["orders"]["#T0000001"].update(user_id="leo_test_2"), "not in the orders list"),
    (lambda d: d["users"]["mia_test_1"]["orders"].append("#T0000404"), "do not exist"),
    (lambda d: d["orders"]["#T0000001"].update(return_items=["k-steel-1l"]), "partly set"),
    (lambda d: d["orders"]["#T0000001"].update(gift_wrap=True), "gift_wrap"),
])
def test_a_malformed_document_loads_nothing(sqlite_url, tmp_path, breakage, words):
    engine, _ = load_shop(sqlite_url)
    before = loader.export(engine)
    doc = shop_document()
    breakage(doc)
    (tmp_path / "db.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=words):
        pack.load(engine, tmp_path)
    assert loader.export(engine) == before
    engine.dispose()


def test_the_demo_shop_seeds_an_empty_database(sqlite_url):
    engine = make_engine(sqlite_url)
    assert not pack.has_users(engine)
    counts = pack.seed_demo(engine)
    assert pack.has_users(engine) and counts["retail_customer"] == 3 and counts["retail_order"] == 5
    api = pack.api(engine)
    assert "Ada Lindqvist" in api.profile("ada_demo").describe()
    assert api.call("cancel_pending_order", "ada_demo", {"order_id": "#D0000001", "reason": "no longer needed"},
                    dry_run=True).outcome == "ok"
    Document.model_validate(pack.export(engine)).check()
    engine.dispose()


def test_db_export_writes_the_document_and_refuses_a_pack_that_cannot(sqlite_url, tmp_path):
    engine, _ = load_shop(sqlite_url)
    out = tmp_path / "out.json"
    runner = CliRunner()
    result = runner.invoke(main, ["db", "export", "--domain", "retail", "--database-url", sqlite_url,
                                  "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text()) == shop_document()
    printed = runner.invoke(main, ["db", "export", "--domain", "retail", "--database-url", sqlite_url])
    assert printed.exit_code == 0 and json.loads(printed.stdout) == shop_document()
    cphos = runner.invoke(main, ["db", "export", "--domain", "cphos", "--database-url", sqlite_url])
    assert cphos.exit_code == 2 and "cannot export" in cphos.output
    engine.dispose()
