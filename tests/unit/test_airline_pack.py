"""The airline pack as a plug-in: its registry against the data pack's tools.json, its flags, descriptions and value
kinds at any depth, its router examples, its catalog, its demo airline, the policy path and `chops db export`."""

from __future__ import annotations

import json
import re
import string

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from click.testing import CliRunner

import apis.airline
from apis.airline.pack import pack
from apis.airline.registry import OPERATIONS
from chops.cli import main
from chops.db import make_engine
from chops.domain.pack import load_pack
from chops.domain.values import KIND, record_model, slots
from chops.i18n import translate
from chops.router import ROUTES, read_examples
from tests.unit.airline_support import AVA, demo_airline


def test_the_operations_are_the_tools_but_the_hand_off_and_no_user_id(airline_dir):
    tools = {t["name"]: t for t in json.loads((airline_dir / "tools.json").read_text())}
    assert sorted(OPERATIONS) == sorted(set(tools) - {"transfer_to_human_agents"})
    # By design not tau2's: a cancellation takes the traveller's reason, a compensation the reservation and what
    # happened to it (the amount is the airline's), and the bags to pay for are computed.
    ours = {"cancel_reservation": {"reason"}, "send_certificate": {"reservation_id", "disruption"}}
    for name, op in OPERATIONS.items():
        assert op.writes == (tools[name]["access"] == "write"), name
        wanted = set() if name == "send_certificate" else set(tools[name]["parameters"]["properties"]) - {"user_id"}
        assert set(op.args_model.model_fields) == wanted | ours.get(name, set()), name


def test_writes_are_confirmed_reads_observed_and_nothing_is_admin_only():
    for op in OPERATIONS.values():
        assert (op.confirm, op.observe, op.admin_only) == (op.writes, not op.writes, False), op.name


def test_every_field_at_any_depth_has_a_description_and_declares_its_kind():
    for op in OPERATIONS.values():
        assert op.description and "\n" not in op.description and len(op.description) <= 160, op.name
        models = [op.args_model]
        while models:
            model = models.pop()
            for name, field in model.model_fields.items():
                assert field.description and field.title, f"{op.name}: {model.__name__}.{name}"
                nested, _ = record_model(field.annotation)
                if nested is not None:
                    models.append(nested)
        for slot in slots(op.args_model):
            assert KIND in (slot.info.json_schema_extra or {}), f"{op.name}.{slot.name} declares no kind"
        assert op.json_schema().get("additionalProperties") is False, op.name
    kinds = {s.name: s.kind for s in slots(OPERATIONS["book_reservation"].args_model)}
    assert kinds["flights[].date"] == "date" and kinds["passengers[].dob"] == "date"
    assert kinds["payment_methods[].amount"] == "money" and kinds["payment_methods[].payment_id"] == "id"
    assert kinds["nonfree_baggages"] == "computed"
    cancel = {s.name: s for s in slots(OPERATIONS["cancel_reservation"].args_model)}
    assert cancel["reason"].kind == "choice" and cancel["reason"].options.get("said") is True


def test_the_pack_is_found_by_its_entry_point_and_keeps_the_policys_clock():
    found = load_pack("airline")
    assert found is pack and found.api(None).operations is OPERATIONS
    assert (found.currency, found.closing_question, found.split_requests) == ("USD", True, True)
    assert found.now().isoformat() == "2024-05-15T15:00:00"


def test_router_examples_cover_every_route_in_english_and_chinese(airline_dir):
    rows = read_examples(pack.router_examples)
    by_route = {r: [t for t, route in rows if route == r] for r in ROUTES}
    assert all(len(texts) >= 20 for texts in by_route.values()), {r: len(t) for r, t in by_route.items()}
    for route, texts in by_route.items():
        assert any(re.search("[\u4e00-\u9fff]", t) for t in texts), f"{route}: no Chinese example"
        assert any(re.fullmatch(r"[\x00-\x7f]+", t) for t in texts), f"{route}: no English example"
    # Our own wording: no example is a task's text or names one of the airline's reservations.
    tasks = (airline_dir / "tasks" / "train.json").read_text().lower()
    reservations = json.loads((airline_dir / "database" / "db.json").read_text())["reservations"]
    for text, _ in rows:
        assert len(text) < 30 or text.lower() not in tasks, text
        assert not any(code in reservations for code in re.findall(r"\b[A-Z0-9]{6}\b", text)), text


def test_every_message_of_the_pack_has_a_chinese_translation_with_the_same_placeholders():
    with (pack.locale / "zh" / "LC_MESSAGES" / "chops.po").open("rb") as fp:
        catalog = read_po(fp)
    msgids = {m for _, _, m, _, _ in extract_from_dir(apis.airline.__path__[0], method_map=[("**.py", "python")],
                                                       keywords={"N_": None})}
    assert len(msgids) > 50  # titles, labels and every check's refusal

    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    for msgid in sorted(msgids):
        message = catalog.get(msgid)
        assert message is not None and message.string and not message.fuzzy, f"untranslated: {msgid!r}"
        assert fields(message.string) == fields(msgid), f"placeholders differ: {msgid!r}"
        assert translate("zh", msgid, locale_dir=pack.locale) == message.string


def test_a_refusal_carries_its_msgid_for_the_customers_language():
    from apis.airline.checks import refuse
    from chops.domain.outcomes import PreconditionFailed

    try:
        refuse(PreconditionFailed, "Reservation {reservation_id} is already cancelled.", reservation_id="QX7P2M")
    except PreconditionFailed as exc:
        assert exc.message == "Reservation QX7P2M is already cancelled."
        said = exc.message.record()
        assert translate("zh", said["msgid"], locale_dir=pack.locale, **said["fields"]) == "预订 QX7P2M 已经取消了。"


def test_a_write_and_its_refusal_are_said_in_the_customers_language(tmp_path):
    """The result carries the pack's catalog words (``OperationResult.said``): a Chinese reply says the message in
    Chinese, not the English one nor the raw field changes."""
    from chops.i18n import said_in, use_catalogs

    use_catalogs(pack.locale)
    _, api = demo_airline(f"sqlite:///{tmp_path / 'air.db'}")
    done = api.call("cancel_reservation", "cy_demo", {"reservation_id": "DMINSR", "reason": "weather"}, dry_run=True)
    assert done.said is not None and "已取消" in said_in(done.said, "zh") and "天气原因" in said_in(done.said, "zh")
    again = api.call("cancel_reservation", "cy_demo", {"reservation_id": "DMINSR", "reason": "weather"})
    refused = api.call("cancel_reservation", "cy_demo", {"reservation_id": "DMINSR", "reason": "weather"})
    assert again.committed and refused.said is not None and said_in(refused.said, "zh") == "预订 DMINSR 已经取消了。"


def test_the_policy_is_read_from_the_data_folder(airline_dir, monkeypatch, tmp_path):
    assert pack.policy_path().read_text().startswith("# Airline Agent Policy")
    monkeypatch.setenv("CHOPS_AIRLINE_DIR", str(tmp_path))
    assert pack.policy_path() == tmp_path / "policy.md"


def test_the_demo_airline_seeds_an_empty_database(sqlite_url):
    engine = make_engine(sqlite_url)
    assert not pack.has_users(engine)
    counts = pack.seed_demo(engine)
    assert pack.has_users(engine) and counts["airline_user"] == 3 and counts["airline_reservation"] == 10
    profile = pack.api(engine).profile(AVA)
    assert "Membership: gold" in profile.describe() and "DMBASC" in profile.reservations
    assert profile.names == (AVA, "Ava Marchetti") and "gift_card_ava" in profile.grounding_values()
    assert pack.api(engine).people_named(["bo lindgren", "Nobody"]) == [("bo_demo", ("Bo Lindgren",))]
    engine.dispose()


def test_db_export_writes_the_document(sqlite_url, tmp_path):
    engine, _ = demo_airline(sqlite_url)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["db", "export", "--domain", "airline", "--database-url", sqlite_url,
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text()) == pack.export(engine)
    engine.dispose()


def test_a_reference_cancel_without_a_reason_is_replayed_with_the_first_reason_the_policy_accepts(tmp_path):
    from eval.conversations.grading import replay
    from eval.conversations.tasks import Action

    _, api = demo_airline(f"sqlite:///{tmp_path / 'air.db'}")
    # The data set's reference cancel names no reason (tau2 checks no policy); the airline's takes one.
    assert api.call("cancel_reservation", "cy_demo", {"reservation_id": "DMINSR"}).outcome == "refused_missing_args"
    log = replay(api, "cy_demo", [Action(name="cancel_reservation", arguments={"reservation_id": "DMINSR"})], pack)
    assert log == [{"operation": "cancel_reservation", "outcome": "ok"}]
    again = api.call("get_reservation_details", "cy_demo", {"reservation_id": "DMINSR"})
    assert again.data["status"] == "cancelled"
