"""Our own airline conversations (``eval/cases/airline_own``: tasks and English customers;
``eval/cases/airline_own_zh``: the same customers writing Chinese), read through the project's loaders
(``eval.conversations.tasks``) and interpreter (``ScriptedUser``):

* every task has a customer in both users files, that customer exists in the airline's db.json, and neither the
  customer nor a reservation the task names is used by a train task (our own cases, not copies);
* each task's reference actions replayed through the airline pack as the grader replays them
  (``eval.conversations.grading.replay``), each task on a fresh copy of db.json loaded into SQLite: every reference
  call succeeds, a task with writes changes the data (by the amounts its description states), a task without writes
  changes nothing, and the write a lenient agent would make in a refusal task is refused by the pack;
* the Chinese customers write Chinese, keep the English scripts' rules, and read an agent answering in either
  language.

The data pack is read from ``CHOPS_AIRLINE_DIR`` (default ``../shared/tau2-airline``); a missing pack fails the test,
it is never skipped."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path

import pytest

from chops.i18n import text_language
from chops.pipeline.replies import anything_else_reply, confirm_reply
from eval.conversations.grading import compare_states, replay
from eval.conversations.scripted_user import STOP, ScriptedUser
from eval.conversations.tasks import load_tasks, load_users

ROOT = Path(__file__).resolve().parents[2]
OWN = ROOT / "eval" / "cases" / "airline_own"
ZH = ROOT / "eval" / "cases" / "airline_own_zh" / "users.json"
WRITES = {"book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
          "update_reservation_passengers", "send_certificate"}
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
CODE = re.compile(r"\b[A-Z0-9]{6}\b")
RULE_KEYS = ("id", "once", "after", "unless_after", "end")


# --- fixtures ------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def data_dir() -> Path:
    """The tau2-airline data pack: ``CHOPS_AIRLINE_DIR``, else ``shared/tau2-airline`` beside the checkout (or beside
    its worktrees' folder)."""
    env = os.environ.get("CHOPS_AIRLINE_DIR")
    candidates = [Path(env)] if env else [ROOT.parent / "shared" / "tau2-airline",
                                          ROOT.parent.parent / "shared" / "tau2-airline"]
    for path in candidates:
        if (path / "database" / "db.json").is_file() and (path / "tasks" / "train.json").is_file():
            return path
    pytest.fail(f"tau2-airline data pack not found at {candidates[0]}; set CHOPS_AIRLINE_DIR", pytrace=False)


@pytest.fixture(scope="module")
def db(data_dir) -> dict:
    return json.loads((data_dir / "database" / "db.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_tasks(OWN / "tasks.json")}


@pytest.fixture(scope="module")
def en_users():
    return load_users(OWN / "users.json")


@pytest.fixture(scope="module")
def zh_users():
    return load_users(ZH)


@pytest.fixture(scope="module")
def base_db(data_dir, tmp_path_factory) -> Path:
    """db.json loaded once through the pack into a SQLite file; each task replays on a byte copy of it."""
    from apis.airline.pack import pack
    from chops.db import make_engine

    path = tmp_path_factory.mktemp("airline_own") / "base.db"
    engine = make_engine(f"sqlite:///{path}")
    pack.load(engine, data_dir)
    engine.dispose()
    return path


@pytest.fixture(scope="module")
def original(base_db) -> dict:
    from apis.airline.pack import pack
    from chops.db import make_engine

    engine = make_engine(f"sqlite:///{base_db}")
    try:
        return pack.export(engine)
    finally:
        engine.dispose()


def fresh_api(base_db: Path, tmp_path: Path, name: str):
    """(engine, the pack's Api) on a fresh byte copy of the loaded database."""
    from apis.airline.pack import pack
    from chops.db import make_engine

    copy = tmp_path / f"{name}.db"
    shutil.copy(base_db, copy)
    engine = make_engine(f"sqlite:///{copy}")
    return engine, pack.api(engine)


def writes_of(task) -> list:
    return [a for a in task.actions if a.name in WRITES]


# --- the files -----------------------------------------------------------------------------------------------------

def test_every_task_has_its_customer_in_both_users_files(tasks, en_users, zh_users):
    assert len(tasks) >= 14
    assert list(en_users.scripts) == list(tasks) == list(zh_users.scripts)  # same ids, same order
    for task_id, task in tasks.items():
        en, zh = en_users.script(task_id), zh_users.script(task_id)
        assert en["user_id"] == zh["user_id"], task_id
        assert en["user_id"] in task.instructions["known_info"], task_id
        assert task.instructions["domain"] == "airline"
        assert task.raw["description"]["purpose"], f"{task_id}: the description says what it tests"
        for script, users in ((en, en_users), (zh, zh_users)):
            user = ScriptedUser(script, users.keyword_sets)  # every @set is defined
            assert user.opening()[0] == script["opening"]
    # what `chops eval conversations --task-ids ...` does with these ids: all found, nothing else taken
    chosen = load_tasks(OWN / "tasks.json", task_ids=list(zh_users.scripts))
    assert [t.id for t in chosen] == list(tasks)


def test_the_kinds_of_task(tasks):
    kinds = {a.name for t in tasks.values() for a in t.actions}
    assert WRITES <= kinds
    assert {"get_flight_status", "search_direct_flight", "get_reservation_details"} <= kinds
    no_write = [t for t in tasks.values() if not writes_of(t)]
    assert len(no_write) >= 5, [t.id for t in no_write]
    cancel_reasons = {a.arguments["reason"] for t in tasks.values() for a in t.actions
                      if a.name == "cancel_reservation"}
    assert {"change_of_plan", "health", "airline_cancelled"} <= cancel_reasons
    # reference actions take tau2's names with the pack's arguments: a cancel has its reason, a certificate its
    # reservation and disruption (the pack computes the amount), a booking keeps tau2's user_id (dropped by the grader)
    for t in tasks.values():
        for a in t.actions:
            if a.name == "send_certificate":
                assert set(a.arguments) == {"reservation_id", "disruption"}, t.id
            if a.name == "cancel_reservation":
                assert set(a.arguments) == {"reservation_id", "reason"}, t.id


def test_customers_and_reservations_exist_and_no_train_task_uses_them(tasks, en_users, db, data_dir):
    train_text = (data_dir / "tasks" / "train.json").read_text(encoding="utf-8") + \
        (data_dir / "users" / "train.json").read_text(encoding="utf-8")
    train_users = set(re.findall(r"[a-z]+_[a-z]+_\d+", train_text)) & set(db["users"])
    train_reservations = set(CODE.findall(train_text)) & set(db["reservations"])
    for user in train_users:
        train_reservations |= set(db["users"][user]["reservations"])
    for task_id, task in tasks.items():
        user = en_users.script(task_id)["user_id"]
        assert user in db["users"], f"{task_id}: no user {user} in db.json"
        assert user not in train_users, f"{task_id}: {user} is a train task's customer"
        named = set(CODE.findall(json.dumps(task.raw))) & set(db["reservations"])
        assert not named & train_reservations, (task_id, named & train_reservations)
        for action in task.actions:
            rid = action.arguments.get("reservation_id")
            if rid is not None:  # a reservation the customer acts on is theirs
                assert db["reservations"][rid]["user_id"] == user, (task_id, rid)
    # the other person's reservation exists, and is not the customer's
    other = db["reservations"]["TR4EDM"]
    assert other["user_id"] != en_users.script("air_someone_else")["user_id"]


# --- the reference actions through the pack ---------------------------------------------------------------------------

def test_every_reference_call_succeeds_and_only_writes_change_the_data(tasks, en_users, base_db, original, tmp_path):
    from apis.airline.pack import pack

    for task_id, task in tasks.items():
        engine, api = fresh_api(base_db, tmp_path, task_id)
        try:
            log = replay(api, en_users.script(task_id)["user_id"], task.actions)
            out = pack.export(engine)
        finally:
            engine.dispose()
        assert [e.get("outcome") for e in log] == ["ok"] * len(task.actions), (task_id, log)
        changed, diff = compare_states(original, out)
        if writes_of(task):
            assert changed, f"{task_id}: its reference writes changed nothing"
        else:
            assert changed == 0, (task_id, diff)


# What the data must show after the reference writes: the amounts the tasks' descriptions and communicate_info state.
def _last_payment(doc, rid):
    return doc["reservations"][rid]["payment_history"][-1]


END_STATES = {
    "air_cancel_new": lambda d: d["reservations"]["S81ZOT"]["status"] == "cancelled"
    and _last_payment(d, "S81ZOT") == {"payment_id": "credit_card_9457450", "amount": -279},
    "air_cancel_health": lambda d: d["reservations"]["FU2AQ5"]["status"] == "cancelled",
    "air_cancel_business": lambda d: _last_payment(d, "C2VR6S")["amount"] == -4490,
    "air_cancel_airline": lambda d: d["reservations"]["E3M58X"]["status"] == "cancelled",
    "air_bags_gift": lambda d: (d["reservations"]["C913YC"]["total_baggages"],
                                d["reservations"]["C913YC"]["nonfree_baggages"]) == (4, 2)
    and _last_payment(d, "C913YC") == {"payment_id": "gift_card_7460058", "amount": 100}
    and d["users"]["isabella_garcia_4633"]["payment_methods"]["gift_card_7460058"]["amount"] == 138,
    "air_passenger_fix": lambda d: d["reservations"]["437BPO"]["passengers"][1]
    == {"first_name": "Fatima", "last_name": "Conti", "dob": "1965-04-12"},
    "air_change_date": lambda d: d["reservations"]["OYO62W"]["flights"][0]["date"] == "2024-05-26"
    and _last_payment(d, "OYO62W") == {"payment_id": "credit_card_2700485", "amount": 18},
    "air_upgrade_business": lambda d: d["reservations"]["VAAOXJ"]["cabin"] == "business"
    and _last_payment(d, "VAAOXJ") == {"payment_id": "credit_card_1052991", "amount": 363},
    "air_book_direct": lambda d: d["reservations"]["HATHAT"]["payment_history"]
    == [{"payment_id": "credit_card_2502370", "amount": 185}]
    and d["users"]["liam_thomas_8955"]["reservations"] == ["HATHAT"],
    "air_delay_rebook_comp": lambda d: _last_payment(d, "LWTEDF") == {"payment_id": "credit_card_1582328",
                                                                      "amount": 48}
    and d["users"]["liam_ito_4473"]["payment_methods"]["certificate_3221322"]["amount"] == 50,
    "air_yes_other_card": lambda d: _last_payment(d, "D975WV") == {"payment_id": "credit_card_1732101",
                                                                   "amount": 50},
}


def test_the_reference_writes_end_where_the_descriptions_say(tasks, en_users, base_db, tmp_path):
    from apis.airline.pack import pack

    assert set(END_STATES) == {t for t, task in tasks.items() if writes_of(task)}
    for task_id, check in END_STATES.items():
        engine, api = fresh_api(base_db, tmp_path, task_id)
        try:
            replay(api, en_users.script(task_id)["user_id"], tasks[task_id].actions)
            assert check(pack.export(engine)), task_id
        finally:
            engine.dispose()


# The write a lenient agent would make where the policy says no: each is refused and nothing is committed.
TEMPTING = {
    "air_cancel_refused": [("cancel_reservation", {"reservation_id": "900SCC", "reason": "change_of_plan"})],
    "air_basic_no_change": [("update_reservation_flights", {
        "reservation_id": "UOI46B", "cabin": "basic_economy",
        "flights": [{"flight_number": "HAT217", "date": "2024-05-27"}], "payment_id": "gift_card_1225585"})],
    "air_delay_no_comp": [("send_certificate", {"reservation_id": "4NXSCL", "disruption": "delayed"})],
    "air_someone_else": [("cancel_reservation", {"reservation_id": "TR4EDM", "reason": "change_of_plan"}),
                         ("get_reservation_details", {"reservation_id": "TR4EDM"})],
    # a delay is compensated only after the change: asked first, the certificate is refused
    "air_delay_rebook_comp": [("send_certificate", {"reservation_id": "LWTEDF", "disruption": "delayed"})],
}


@pytest.mark.parametrize("task_id", sorted(TEMPTING))
def test_the_write_a_refusal_task_tempts_is_refused(task_id, en_users, base_db, tmp_path):
    engine, api = fresh_api(base_db, tmp_path, task_id)
    try:
        for name, args in TEMPTING[task_id]:
            result = api.call(name, en_users.script(task_id)["user_id"], args)
            assert str(result.outcome) != "ok" and not result.committed, (task_id, name, result.message)
    finally:
        engine.dispose()


# --- the customers --------------------------------------------------------------------------------------------------

def test_the_chinese_customer_writes_chinese(zh_users):
    for task_id, script in zh_users.scripts.items():
        for key in ("opening", "default"):
            text = script[key]
            han, words = len(HAN.findall(text)), len(LATIN_WORD.findall(text))
            assert han >= 2 * words and han >= 4, (task_id, key, text)
        for source, text in [("opening", script["opening"]), ("default", script["default"]),
                             *[(r["id"], r["say"]) for r in script["replies"]]]:
            assert text_language(text) == "zh", (task_id, source, text)


def test_the_english_customer_writes_english(en_users):
    for task_id, script in en_users.scripts.items():
        for text in [script["opening"], script["default"], *[r["say"] for r in script["replies"]]]:
            assert not HAN.search(text), (task_id, text)


def test_each_chinese_script_keeps_the_rules_of_the_english_one(zh_users, en_users):
    for task_id, script in zh_users.scripts.items():
        english = en_users.script(task_id)
        assert [[r.get(k) for k in RULE_KEYS] for r in script["replies"]] == \
               [[r.get(k) for k in RULE_KEYS] for r in english["replies"]], task_id
        assert script.get("max_turns") == english.get("max_turns"), task_id
        for ours, theirs in zip(script["replies"], english["replies"]):
            # the English conditions are all there; only Chinese strings are added
            for key in ("when_any", "unless_any"):
                added = set(ours.get(key) or []) - set(theirs.get(key) or [])
                assert set(theirs.get(key) or []) <= set(ours.get(key) or []), (task_id, ours["id"], key)
                assert all(HAN.search(s) for s in added), (task_id, ours["id"], key, added)
            assert len(ours.get("when_all") or []) == len(theirs.get("when_all") or []), (task_id, ours["id"])
            for a, b in zip(ours.get("when_all") or [], theirs.get("when_all") or []):
                assert (a == b) if isinstance(b, str) else set(b) <= set(a), (task_id, ours["id"])


def test_keyword_sets_hold_the_english_strings_and_chinese_ones(zh_users, en_users):
    assert set(zh_users.keyword_sets) == set(en_users.keyword_sets)
    for name, strings in zh_users.keyword_sets.items():
        english = en_users.keyword_sets[name]
        assert set(english) <= set(strings), name
        assert all(HAN.search(s) for s in set(strings) - set(english)), name
        assert any(HAN.search(s) for s in strings), name
        # phrases, not single characters: a Chinese substring has no word boundary
        assert all(len(s) >= 2 for s in strings if HAN.search(s)), name


def _vocabulary(script: dict, sets: dict) -> list[str]:
    words: list[str] = []
    for rule in script["replies"]:
        entries = [*(rule.get("when_any") or []), *(rule.get("unless_any") or [])]
        for entry in rule.get("when_all") or []:
            entries.extend(entry if isinstance(entry, list) else [entry])
        words.extend(w for e in entries for w in (sets[e[1:]] if e.startswith("@") else [e]))
    return words


def test_on_english_agent_messages_each_chinese_script_answers_as_the_english_one(zh_users, en_users):
    rng = random.Random(59)
    for task_id, script in zh_users.scripts.items():
        english = en_users.script(task_id)
        vocab = _vocabulary(english, en_users.keyword_sets)
        for _conversation in range(15):
            ours, theirs = ScriptedUser(script, zh_users.keyword_sets), ScriptedUser(english, en_users.keyword_sets)
            ours.opening(), theirs.opening()
            while not (ours.ended or theirs.ended):
                text = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 4)))
                ours.reply(text), theirs.reply(text)
                assert ours.said[-1][0] == theirs.said[-1][0], (task_id, text)
            assert (ours.ended, ours.end_reason) == (theirs.ended, theirs.end_reason), task_id


# What the agent says, in each language: the pipeline's own questions, and a refusal as the pack words it.
CONFIRM = {lang: confirm_reply("- cancel your reservation: S81ZOT", lang) for lang in ("en", "zh")}
DONE = {"en": "Done: the change is made. " + anything_else_reply("en"),
        "zh": "已完成：已为您办理。" + anything_else_reply("zh")}
REFUSED = {"en": "I couldn't do that: Reservation 900SCC cannot be cancelled: it was booked more than 24 hours ago, "
                 "no flight of it was cancelled by the airline, it is not business, and it has no travel insurance.",
           "zh": "无法办理：预订 900SCC 无法取消：它是在 24 小时之前预订的，其航班都没有被航空公司取消，不是商务舱，也没有购买"
                 "旅行保险。"}
ASK_REASON = {"en": "I need a bit more information to do that: please tell me the reason for cancelling. Just reply "
                    "with it and I'll continue.",
              "zh": "要完成这项操作，我还需要一些信息：请告诉我取消的原因。直接回复即可，我会继续办理。"}
ASK_PAY = {"en": "I need a bit more information to do that: please tell me which gift card or credit card pays for "
                 "the bags. Just reply with it and I'll continue.",
           "zh": "要完成这项操作，我还需要一些信息：请告诉我用哪张礼品卡或信用卡支付行李费。直接回复即可，我会继续办理。"}


# The English customer reads an English agent; the Chinese one reads an agent answering in either language.
PAIRS = [("en", "en"), ("zh", "en"), ("zh", "zh")]


def _users(lang, en_users, zh_users):
    return en_users if lang == "en" else zh_users


def _run(users, task_id, *agent):
    user = ScriptedUser(users.script(task_id), users.keyword_sets)
    user.opening()
    for text in agent:
        user.reply(text)
    return user


@pytest.mark.parametrize("customer,agent_lang", PAIRS)
def test_a_cancel_conversation_in_either_language(customer, agent_lang, en_users, zh_users):
    users = _users(customer, en_users, zh_users)
    user = _run(users, "air_cancel_new", ASK_REASON[agent_lang], CONFIRM[agent_lang], DONE[agent_lang])
    assert [s for s, _ in user.said] == ["opening", "reason", "yes", "bye"]
    assert user.ended and user.end_reason == STOP


@pytest.mark.parametrize("customer,agent_lang", PAIRS)
def test_a_refused_cancel_is_pleaded_once_then_kept(customer, agent_lang, en_users, zh_users):
    user = _run(_users(customer, en_users, zh_users), "air_cancel_refused", REFUSED[agent_lang], REFUSED[agent_lang])
    assert [s for s, _ in user.said] == ["opening", "plead", "give_up"] and user.ended


@pytest.mark.parametrize("customer,agent_lang", PAIRS)
def test_yes_but_the_other_card(customer, agent_lang, en_users, zh_users):
    visa = confirm_reply("- add checked bags: D975WV, 3 bags, $50.00 charged to credit_card_2862416", agent_lang)
    master = confirm_reply("- add checked bags: D975WV, 3 bags, $50.00 charged to credit_card_1732101", agent_lang)
    user = _run(_users(customer, en_users, zh_users), "air_yes_other_card", ASK_PAY[agent_lang], visa, visa, master,
                DONE[agent_lang])
    assert [s for s, _ in user.said] == ["opening", "pay", "but", "but_again", "yes", "bye"]
    assert "1988" in user.said[2][1] and user.ended


@pytest.mark.parametrize("customer,agent_lang", PAIRS)
def test_compensation_is_asked_only_after_the_change(customer, agent_lang, en_users, zh_users):
    users = _users(customer, en_users, zh_users)
    early = _run(users, "air_delay_rebook_comp", anything_else_reply(agent_lang))
    assert early.said[-1][0] == "default" and not early.ended  # no change yet: neither compensation nor goodbye
    user = _run(users, "air_delay_rebook_comp", CONFIRM[agent_lang], DONE[agent_lang], CONFIRM[agent_lang],
                DONE[agent_lang])
    assert [s for s, _ in user.said] == ["opening", "yes", "ask_comp", "yes", "bye"] and user.ended


@pytest.mark.parametrize("customer", ["en", "zh"])
def test_question_tasks_end_once_answered(customer, en_users, zh_users):
    users = _users(customer, en_users, zh_users)
    assert _run(users, "air_flight_status", "HAT197 is delayed; it should now leave at 18:28 EST.").ended
    assert _run(users, "air_flight_status", "HAT197 今天延误，预计 18:28 起飞。").ended
    assert _run(users, "air_bag_allowance", "Gold members in business get 4 free bags each: 12 in all; extra bags "
                                            "cost $50 each.").ended
    assert _run(users, "air_bag_allowance", "金卡会员商务舱每人 4 件，共 12 件免费；超出每件 50 美元。").ended
    assert not _run(users, "air_bag_allowance", "You can bring 12 bags.").ended  # the price is still missing
