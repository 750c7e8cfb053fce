"""The graders on hand-made turns: right, wrong outcome, right outcome with an extra change,
missing arguments, and the LLM judge with a scripted model."""

from __future__ import annotations

import pytest

from apis.cphos.state import EffectSyntaxError, parse_effect
from chops.domain.outcomes import Change
from chops.llm import LLMError, ScriptedLLM
from eval.dataset import Case
from eval.grading import compare_effect, grade_answer, grade_system, reports_missing, sequence_ratio, token_f1


def sys_case(outcome: str, effect: str = "none", args: dict | None = None, category: str = "system_mutation_ok"):
    return Case(case_id="system:1", kind="system", nickname="nick", text="Please change my marking subject into 9.",
                reference="done", category=category, group_id="SYS-X", src_row=1,
                gold_api="ChangeAllTypesMarkingSubject", gold_args=args or {"SubjectIndex": 9},
                outcome=outcome, expected_effect=effect)


def upd(table: str, id_: int, field: str, before, after) -> Change:
    return Change(table=table, key={"id": id_}, field=field, before=before, after=after)


# --- expected_effect parsing -----------------------------------------------------------------

def test_parse_effect_updates_inserts_and_none():
    assert parse_effect("none") == [] and parse_effect(None) == []
    got = parse_effect("cmf_tp_member[id=706].type=3; cmf_tp_member[id=706].p_id=1603")
    assert got == [Change(table="cmf_tp_member", key={"id": "706"}, field="type", after="3"),
                   Change(table="cmf_tp_member", key={"id": "706"}, field="p_id", after="1603")]
    ins = parse_effect("cmf_tp_school+{id=313,area=8,school_name='My, New School'}")
    assert ins == [Change(table="cmf_tp_school", key={"id": "313"},
                          after={"id": "313", "area": "8", "school_name": "'My, New School'"})]


@pytest.mark.parametrize("bad", ["cmf_tp_member.type=3", "cmf_tp_member[id=1]type=3", "cmf_tp_school+{id}"])
def test_parse_effect_rejects_malformed(bad):
    with pytest.raises(EffectSyntaxError):
        parse_effect(bad)


def test_values_compare_with_mysql_column_types():
    # school_id is INT in MySQL though a string in the JSON dump: "3" and 3 are the same value.
    ok, _ = compare_effect(parse_effect("cmf_tp_member[id=5].school_id=3"),
                           [upd("cmf_tp_member", 5, "school_id", "7", "3")])
    assert ok
    ok, problems = compare_effect(parse_effect("cmf_tp_member[id=5].school_id=3"),
                                  [upd("cmf_tp_member", 5, "school_id", 7, 4)])
    assert not ok and any("missing" in p for p in problems) and any("unexpected" in p for p in problems)


def test_insert_matches_named_fields_only_and_extra_insert_fails():
    actual = [Change(table="cmf_tp_school", key={"id": 313}, after={"id": 313, "area": 8, "school_name": "My, New School"})]
    assert compare_effect(parse_effect("cmf_tp_school+{area=8,school_name='My, New School'}"), actual)[0]
    assert not compare_effect(parse_effect("cmf_tp_school+{area=9,school_name='My, New School'}"), actual)[0]
    assert not compare_effect([], actual)[0]


# --- system rows --------------------------------------------------------------------------

def test_right_outcome_and_exact_effect_passes():
    case = sys_case("ok", "cmf_tp_member[id=706].subject=9")
    g = grade_system(case, outcome="ok", reply="Changed.", route="system",
                     changes=[upd("cmf_tp_member", 706, "subject", 5, 9)])
    assert g.passed and g.checks == {"outcome": True, "effect": True} and g.reasons == []


def test_wrong_outcome_fails_even_without_changes():
    case = sys_case("refused_precondition")
    g = grade_system(case, outcome="ok_noop", reply="Done.", route="system", changes=[])
    assert not g.passed and g.checks == {"outcome": False, "effect": True}
    assert "expected 'refused_precondition'" in g.reasons[0]


def test_right_outcome_but_extra_change_fails():
    case = sys_case("ok", "cmf_tp_member[id=706].subject=9")
    changes = [upd("cmf_tp_member", 706, "subject", 5, 9), upd("cmf_tp_member", 706, "limit", 10, 50)]
    g = grade_system(case, outcome="ok", reply="Changed.", route="system", changes=changes)
    assert not g.passed and g.checks == {"outcome": True, "effect": False}
    assert g.reasons == ["unexpected change cmf_tp_member[id=706].limit=50"]


def test_right_outcome_but_change_missing_fails():
    case = sys_case("ok", "cmf_tp_member[id=706].subject=9")
    g = grade_system(case, outcome="ok", reply="Changed.", route="system", changes=[])
    assert not g.passed and g.reasons == ["missing change cmf_tp_member[id=706].subject=9"]


def test_missing_argument_row_passes_when_nothing_written_and_reply_asks():
    case = sys_case("refused_missing_args", args={"SubjectIndex": None})
    ask = "Which marking subject (1-10) would you like?"
    assert grade_system(case, outcome=None, reply=ask, route="system", changes=[]).passed
    reported = "The operation failed because the arguments provided were not complete."
    assert grade_system(case, outcome="refused_missing_args", reply=reported, route="system",
                        changes=[]).passed


def test_missing_argument_row_fails_on_write_other_outcome_or_silent_reply():
    case = sys_case("refused_missing_args", args={"SubjectIndex": None})
    wrote = grade_system(case, outcome="ok", reply="Which subject? I set 5.", route="system",
                         changes=[upd("cmf_tp_member", 706, "subject", 9, 5)])
    assert not wrote.passed and wrote.checks["nothing_written"] is False and wrote.checks["no_other_outcome"] is False
    silent = grade_system(case, outcome=None, reply="Done, all good.", route="system", changes=[])
    assert not silent.passed and silent.checks == {"nothing_written": True, "no_other_outcome": True,
                                                   "reply_reports_missing": False}


def test_reports_missing_needs_a_request_and_the_argument():
    assert reports_missing("Please provide your team leader's name.", ["TeamLeaderName"])
    assert not reports_missing("Your school is schoolname1.", ["SubjectIndex"])  # no ask, wrong thing
    assert not reports_missing("What a nice day!", ["Limit"])  # asks, but not for the argument


def test_not_in_system_rows_need_recognition_and_no_write():
    case = sys_case(None, category="not_in_system")
    assert grade_system(case, outcome=None, reply="You are not registered.", route="not_in_system",
                        changes=[]).passed
    assert not grade_system(case, outcome="ok", reply="Done", route="system", changes=[]).passed


# --- guide / basic-info rows ---------------------------------------------------------------

def guide_case() -> Case:
    return Case(case_id="guide:50", kind="guide", nickname="nick", text="Can answer sheets be uploaded late?",
                reference="No.", category="guide", group_id="GUI-X", src_row=50)


def test_similarity_scores():
    assert token_f1("No, they cannot.", "No.") == pytest.approx(0.5)
    assert token_f1("", "") == 1.0 and token_f1("abc", "") == 0.0
    assert sequence_ratio("No.", "no.") == 1.0 and 0 < sequence_ratio("No, never.", "No.") < 1


def test_judge_decides_and_keeps_its_reason():
    llm = ScriptedLLM()

    def judge(messages, schema):
        text = messages[-1][1]
        assert "Reference answer: No." in text and "Assistant's answer: Yes, any time." in text
        return {"key_fact": "no", "same": False}

    llm.enqueue("judge", judge)
    g = grade_answer(guide_case(), "Yes, any time.", llm)
    assert not g.passed and g.judge_correct is False
    assert g.judge_reason == "key fact 'no' not stated in the answer" and g.reasons == [g.judge_reason]
    assert g.similarity == 0.0
    llm.enqueue("judge", {"key_fact": "no", "same": True})
    assert grade_answer(guide_case(), "No, uploads close at the deadline.", llm).passed


def test_judge_failure_is_a_failed_grade_not_a_crash():
    llm = ScriptedLLM().enqueue("judge", LLMError("timeout", "slow"))
    g = grade_answer(guide_case(), "No.", llm)
    assert not g.passed and g.judge_error == "timeout" and g.similarity == 1.0
