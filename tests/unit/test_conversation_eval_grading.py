"""Grading a conversation by its end state, on a made-up mini shop: the reference actions replayed through the
pack's own operations against what an agent did, money within ±0.005, and the communicate_info rule."""

from __future__ import annotations

import pytest

from eval.conversations.database import PackTemplate
from eval.conversations.grading import communicated, compare_states, expected_state, grade, judge_calls
from eval.conversations.tasks import Action, Task
from tests.unit.convo_support import CANCEL_M1, MiniApi, MiniPack, write_dump


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = tmp_path_factory.mktemp("grading")
    return PackTemplate.build(MiniPack(), write_dump(root / "dump"), root / "work")


def task(actions: list[dict], info: list[str] | None = None) -> Task:
    return Task(id="t", actions=[Action.model_validate(a) for a in actions], communicate_info=info or [])


def agent_end_state(template, *calls: tuple[str, str, dict]) -> dict:
    """The export of a fresh copy after the given calls, as an agent would have made them."""
    with template.fresh() as engine:
        api = MiniApi(engine)
        for name, user, args in calls:
            assert api.call(name, user, args).committed
        return MiniPack().export(engine)


def test_the_reference_replayed_equals_the_same_write_done_by_the_agent(template):
    t = task([{"name": "get_order_details", "arguments": {"order_id": "#M1"}}, CANCEL_M1])
    expected, log = expected_state(template, t, "ann_lee_1")
    assert [e.get("outcome") for e in log] == ["ok_noop", "ok"]
    actual = agent_end_state(template, ("cancel_pending_order", "ann_lee_1", CANCEL_M1["arguments"]))
    g = grade(t, expected, actual, ["Done."], "stop")
    assert g.db_ok and g.communicate_ok and g.reward == 1.0 and g.differences == 0


def test_a_missing_write_fails_with_a_readable_diff(template):
    t = task([CANCEL_M1])
    expected, _ = expected_state(template, t, "ann_lee_1")
    untouched = agent_end_state(template)
    g = grade(t, expected, untouched, ["I have cancelled it."], "stop")
    assert not g.db_ok and g.reward == 0.0 and g.communicate_ok
    paths = {d["path"]: d for d in g.diff}
    assert paths["/orders/#M1/status"] == {"path": "/orders/#M1/status", "expected": "cancelled", "actual": "pending"}
    assert "/orders/#M1/cancel_reason" in paths and "/orders/#M1/payments (length)" in paths
    # An extra write fails too: the whole database is compared, not only what the reference touched.
    extra = agent_end_state(template, ("cancel_pending_order", "ann_lee_1", CANCEL_M1["arguments"]),
                            ("modify_user_address", "ann_lee_1", {"city": "Ogdenville", "zip": "33333"}))
    g = grade(t, expected, extra, [], "stop")
    assert not g.db_ok
    assert [d["path"] for d in g.diff] == ["/users/ann_lee_1/address/city", "/users/ann_lee_1/address/zip"]


def test_refused_unknown_and_user_id_carrying_reference_calls(template):
    t = task([{"name": "transfer_to_human_agents", "arguments": {"summary": "wants a person"}},
              {"name": "cancel_pending_order", "arguments": {"order_id": "#M3", "reason": "no longer needed"}},
              {"name": "get_order_details", "arguments": {"order_id": "#M3"}},  # another customer's: refused
              {"name": "modify_user_address", "arguments": {"user_id": "ann_lee_1", "city": "Ogdenville",
                                                             "zip": "33333"}}])
    expected, log = expected_state(template, t, "ann_lee_1")
    assert log[0] == {"operation": "transfer_to_human_agents", "skipped": "unknown operation"}
    assert [e.get("outcome") for e in log[1:]] == ["not_in_system", "not_in_system", "ok"]
    # user_id is not an argument: the acting customer is the signed-in user.
    assert expected["users"]["ann_lee_1"]["address"] == {"city": "Ogdenville", "zip": "33333"}
    assert expected["orders"] == agent_end_state(template)["orders"]


def test_money_within_half_a_cent_and_strict_types():
    assert compare_states({"a": 10.0, "b": [1, 2]}, {"a": 10.004, "b": [1, 2]}) == (0, [])
    assert compare_states({"a": 30.709999999999994}, {"a": 30.71})[0] == 0  # an unrounded difference
    assert compare_states({"a": 10.0}, {"a": 10.006})[0] == 1
    assert compare_states({"a": 10.0}, {"a": 9.995})[0] == 0 and compare_states({"a": 10}, {"a": 9.99})[0] == 1
    assert compare_states({"a": True}, {"a": 1})[0] == 1 and compare_states({"a": "1"}, {"a": 1})[0] == 1
    assert compare_states({"a": None}, {})[0] == 0  # an absent optional field is null
    count, diff = compare_states({"x": [1, 2, 3]}, {"x": [1, 5]})
    assert count == 2 and diff[0] == {"path": "/x (length)", "expected": 3, "actual": 2}
    many = compare_states({str(i): i for i in range(50)}, {str(i): -i for i in range(1, 51)}, limit=5)
    assert many[0] == 51 and len(many[1]) == 5  # counted in full, shown in part


def test_communicate_info_case_insensitive_with_commas_removed():
    messages = ["Your refund of $8,276.23 is on its way.", "The new shirt is POLYESTER."]
    assert communicated(["8276.23", "polyester"], messages) == []
    assert communicated(["8276.23", "cotton", "41.64"], messages) == ["cotton", "41.64"]
    assert communicated([], []) == []
    t = task([], info=["12.50"])
    assert grade(t, {}, {}, ["refund $12.50"], "stop").reward == 1.0
    g = grade(t, {}, {}, ["refund $12.5"], "stop")
    assert (g.reward, g.db_ok, g.communicate_ok, g.missing_info) == (0.0, True, False, ["12.50"])


def test_a_conversation_that_did_not_end_normally_gets_no_reward():
    t = task([])
    assert grade(t, {}, {}, [], "transfer").reward == 1.0
    for ended in ("max_turns", None):
        g = grade(t, {}, {}, [], ended)
        assert g.reward == 0.0 and g.db_ok and not g.ended_ok


def test_agent_calls_against_the_reference_calls():
    actions = [Action.model_validate(a) for a in (
        CANCEL_M1, {"name": "exchange", "arguments": {"order_id": "#M2", "item_ids": ["b", "a"], "user_id": "x"}},
        {"name": "note", "arguments": {"text": "free text", "order_id": "#M1"}, "compare_args": ["order_id"]})]
    calls = [{"operation": "cancel_pending_order", "args": dict(CANCEL_M1["arguments"]), "outcome": "ok"},
             {"operation": "cancel_pending_order", "args": {"order_id": "#M2", "reason": "no longer needed"}},
             {"operation": "exchange", "args": {"order_id": "#M2", "item_ids": ["a", "b"]}},
             {"operation": "note", "args": {"text": "other words", "order_id": "#M1"}},
             {"operation": "get_order_details", "args": {"order_id": "#M1"}}]
    judged = judge_calls(calls, actions)
    assert [c["wrong_args"] for c in judged] == [False, True, False, False, False]
    assert [c["in_reference"] for c in judged] == [True, True, True, True, False]
