"""The conversation eval's grading on the real retail pack and three real train tasks (read from the tau2-retail
data pack at test time): each reference solution graded against itself passes, a wrong end state fails with
the difference named, and whole conversations through the runner with an oracle agent (it carries out the
reference calls, says what must be said) pass end to end with the scripted users; and the same for our own
conversations (``eval/cases/retail_own``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chops.domain.pack import load_pack
from chops.records import TurnResult
from eval.conversations.database import PackTemplate
from eval.conversations.grading import expected_state, grade, replay
from eval.conversations.report import write_report
from eval.conversations.runner import ConversationEvalConfig, run_conversations
from eval.conversations.tasks import load_tasks, load_users

TASK_IDS = ["16", "22", "29"]  # cancels + a return (money said), user and order addresses, two exchanges
WRITES = {"cancel_pending_order", "modify_pending_order_address", "modify_pending_order_items",
          "modify_pending_order_payment", "exchange_delivered_order_items", "return_delivered_order_items",
          "modify_user_address"}


@pytest.fixture(scope="module")
def pack():
    return load_pack("retail")


@pytest.fixture(scope="module")
def template(pack, retail_dir, tmp_path_factory):
    return PackTemplate.build(pack, retail_dir / "database", tmp_path_factory.mktemp("retail-template"))


@pytest.fixture(scope="module")
def tasks(retail_dir):
    return {t.id: t for t in load_tasks(retail_dir / "tasks" / "train.json", task_ids=TASK_IDS)}


@pytest.fixture(scope="module")
def users(retail_dir):
    return load_users(retail_dir / "users" / "train.json")


def test_reference_solutions_graded_against_themselves_pass(template, tasks, users):
    with template.fresh() as engine:
        initial = template.pack.export(engine)
    for task_id, task in tasks.items():
        customer = users.script(task_id)["user_id"]
        expected, log = expected_state(template, task, customer)
        writes = [e for a, e in zip(task.actions, log) if a.name in WRITES]
        assert writes and all(e.get("outcome") == "ok" for e in writes), (task_id, log)
        again, _ = expected_state(template, task, customer)  # the same calls, as an agent would make them
        said = [f"Here you go: {', '.join(task.communicate_info)}."]
        g = grade(task, expected, again, said, "stop")
        assert g.reward == 1.0 and g.db_ok and g.communicate_ok, (task_id, g.diff)
        assert not grade(task, expected, initial, said, "stop").db_ok  # doing nothing is wrong


def test_a_wrong_end_state_fails_with_the_difference_named(template, tasks, users):
    task = tasks["16"]
    customer = users.script("16")["user_id"]
    expected, _ = expected_state(template, task, customer)
    last_write = max(i for i, a in enumerate(task.actions) if a.name in WRITES)
    with template.fresh() as engine:
        replay(template.pack.api(engine), customer, task.actions[:last_write])  # the last write forgotten
        actual = template.pack.export(engine)
    g = grade(task, expected, actual, ["$8,276.23"], "stop")
    assert not g.db_ok and g.reward == 0.0 and g.communicate_ok and g.differences > 0
    order_id = task.actions[last_write].arguments["order_id"]
    assert any(d["path"].startswith(f"/orders/{order_id}/") for d in g.diff), g.diff
    g = grade(task, expected, expected, ["the refund is $8276"], "stop")
    assert g.db_ok and not g.communicate_ok and g.missing_info == ["8276.23"]


class OracleAgent:
    """Carries out the customer's task's reference calls on its first message (as a confirmed change), then
    says what must be said and asks whether there is anything else."""

    def __init__(self, api, task_of_customer):
        self.api, self.task_of = api, task_of_customer
        self.done: set[str] = set()

    def handle(self, nickname, text, *, history=None, turn_key=None, on_event=None, conversation_id=None):
        task = self.task_of[nickname]
        if nickname in self.done:
            return TurnResult(reply="Is there anything else I can help with?", route="system")
        self.done.add(nickname)
        steps = []
        for action in task.actions:
            if action.name in self.api.operations:
                args = {k: v for k, v in action.arguments.items() if k != "user_id"}
                res = self.api.call(action.name, nickname, args)
                steps.append({"operation": action.name, "args": args, "outcome": str(res.outcome)})
        reply = f"All done. For your records: {', '.join(task.communicate_info) or 'nothing more'}. " \
                "Is there anything else I can help with?"
        return TurnResult(reply=reply, route="system", operation=steps[0]["operation"] if steps else None, steps=steps,
                          committed=bool(steps),
                          outcome="ok", trace={"confirmed": True, "steps": [], "totals": {"calls": 0}})


def test_whole_conversations_through_the_runner(pack, retail_dir, tasks, users, tmp_path):
    from chops.conversation import ConversationService
    from chops.store import ConversationStore

    by_customer = {users.script(t)["user_id"]: tasks[t] for t in TASK_IDS}

    def make_service(engine, api):
        return ConversationService(ConversationStore(engine, api=api), OracleAgent(api, by_customer))

    cfg = ConversationEvalConfig(domain="retail", tasks=retail_dir / "tasks" / "train.json",
                                 users=retail_dir / "users" / "train.json", dump=retail_dir / "database",
                                 task_ids=TASK_IDS, workers=2, end_states="first")
    out = tmp_path / "run"
    records = run_conversations(cfg, out, pack=pack, make_service=make_service, progress=False)
    for rec in records:
        assert rec["error"] is None, rec["error"]
        assert rec["passed"] and rec["ended"] == "stop", (rec["key"], rec.get("grade"), rec["error"])
        assert not any(c["wrong_args"] for c in rec["calls"]), rec["key"]
    summary = write_report(out, records, trials=1)
    assert summary["tasks"] == 3 and summary["unconfirmed_writes"] == 0
    state = json.loads((out / "end_states" / "16.json").read_text())
    assert set(state) == {"products", "users", "orders"}


OWN = Path(__file__).resolve().parents[2] / "eval" / "cases" / "retail_own"


def test_our_own_conversations_are_sound(pack, retail_dir, template, tmp_path):
    """Our own scripted conversations (``eval/cases/retail_own``): every reference write succeeds on the shop's data,
    doing nothing fails each task that writes, and an agent that does the reference calls passes every one."""
    from chops.conversation import ConversationService
    from chops.store import ConversationStore

    own_tasks, own_users = load_tasks(OWN / "tasks.json"), load_users(OWN / "users.json")
    with template.fresh() as engine:
        initial = template.pack.export(engine)
    for task in own_tasks:
        expected, log = expected_state(template, task, own_users.script(task.id)["user_id"])
        assert all(e.get("outcome") == "ok" for e in log), (task.id, log)
        if task.actions:
            assert not grade(task, expected, initial, task.communicate_info, "stop").db_ok, task.id
    by_customer = {own_users.script(t.id)["user_id"]: t for t in own_tasks}
    assert len(by_customer) == len(own_tasks)  # the oracle knows a task by its customer

    def make_service(engine, api):
        return ConversationService(ConversationStore(engine, api=api), OracleAgent(api, by_customer))

    cfg = ConversationEvalConfig(domain="retail", tasks=OWN / "tasks.json", users=OWN / "users.json",
                                 dump=retail_dir / "database", workers=2, end_states="none")
    records = run_conversations(cfg, tmp_path / "run", pack=pack, make_service=make_service, progress=False)
    assert len(records) == len(own_tasks)
    for rec in records:
        assert rec["passed"] and rec["ended"] == "stop", (rec["key"], rec.get("grade"), rec["error"])
