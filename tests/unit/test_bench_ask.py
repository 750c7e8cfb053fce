"""``bench.ask``'s pure pieces: the side-by-side settings (executor tiers, the previous way) and the
paired ratio, dataset rows as requests (picked as the eval picks them), per-role prompt tokens from a
turn's trace, and the demo requests' private database copies. No real model: the trace is filled by
the ledger records a provider would report, or by the ScriptedLLM."""

from __future__ import annotations

import sqlalchemy as sa

from apis.cphos import tables as t
from bench.ask import _with_executor_tiers
from bench.ask_cases import AskCase, case_from_row, case_ok, dataset_rows, demo_source
from bench.ask_summary import ALL_ROLES, paired_ratio, role_tokens, summarize_roles
from bench.previous import PREVIOUS, known_overrides, needs_own_index, previous_settings
from chops.db import make_engine
from chops.llm import CallRecord, ScriptedLLM
from chops.pipeline.trace import Trace
from chops.settings import Settings, role_tiers
from eval.config import EvalConfig
from eval.dataset import Case
from eval.runner import select_cases
from tests.unit.test_eval_runner import srow, write_dataset


def test_the_second_setting_changes_only_the_executor_tiers():
    base = Settings()
    tiered = _with_executor_tiers(base, ["local-0.5b", "local-1.5b"])
    assert [name for name, _ in role_tiers(tiered, "executor")] == ["local-0.5b", "local-1.5b"]
    assert role_tiers(tiered, "executor")[0][1].max_tokens == base.roles.executor.max_tokens
    for role in ("classifier", "verifier", "chooser"):
        assert tiered.roles.get(role) == base.roles.get(role)
    assert base.roles.executor.tiers == []  # the configured setting is left as it was


def test_the_ratio_is_the_median_of_run_by_run_ratios():
    rows = [{"setup": "a", "latency_s": 10.0}, {"setup": "b", "latency_s": 5.0},
            {"setup": "b", "latency_s": 9.0}, {"setup": "a", "latency_s": 3.0},
            {"setup": "a", "latency_s": 4.0}, {"setup": "b", "latency_s": 4.0}]
    assert paired_ratio(rows, ["a", "b"]) == 1.0  # ratios 0.5, 3.0, 1.0
    assert paired_ratio(rows, ["a"]) is None


# --- the previous way -----------------------------------------------------------------------------

def test_previous_keys_unknown_to_settings_are_skipped_and_named():
    known, skipped = known_overrides({"k_long": 5, "no_such_knob": 1, "chunk_long": 900}, Settings.model_fields)
    assert known == {"k_long": 5, "chunk_long": 900}
    assert skipped == ["no_such_knob"]
    known, skipped = known_overrides(PREVIOUS, Settings.model_fields)
    assert set(known) | set(skipped) == set(PREVIOUS) and not set(known) & set(skipped)
    assert all(k in Settings.model_fields for k in known)


def test_previous_settings_apply_only_the_known_keys_and_leave_the_base_alone():
    base = Settings(k_long=5)
    previous, skipped = previous_settings(base, {"k_long": 3, "no_such_knob": True})
    assert previous.k_long == 3 and base.k_long == 5
    assert skipped == ["no_such_knob"]
    assert previous.roles == base.roles and previous.chunk_short == base.chunk_short


def test_other_chunk_sizes_need_an_index_of_their_own():
    base = Settings()
    assert not needs_own_index(base, base.model_copy(update={"k_long": 7}))
    assert needs_own_index(base, base.model_copy(update={"chunk_long": base.chunk_long + 100}))


# --- dataset rows as requests ---------------------------------------------------------------------

def _row(**kw) -> Case:
    fields = {"case_id": "system:7", "kind": "system", "nickname": "someone", "text": "Set my limit to 40",
              "reference": "done", "category": "system_mutation_ok", "group_id": "SYS-1", "src_row": 7,
              "gold_api": "ChangeAllTypesUploadLimit", "gold_args": {"Limit": 40}, "outcome": "ok"}
    return Case(**{**fields, **kw})


def test_a_system_row_expects_its_gold_operation_and_outcome_as_its_member():
    case = case_from_row(_row())
    assert case == AskCase("someone", "Set my limit to 40", "system", "ChangeAllTypesUploadLimit", "ok", "system:7")


def test_a_guide_row_expects_its_category_route_and_no_operation():
    case = case_from_row(_row(case_id="guide:3", kind="guide", category="basic_info", gold_api=None,
                              gold_args=None, outcome=None))
    assert (case.route, case.operation, case.outcome, case.case_id) == ("basic_info", None, None, "guide:3")
    assert case_from_row(_row(kind="guide", category="guide", gold_api=None, outcome=None)).route == "guide"


def test_a_strangers_row_expects_no_operation_whatever_its_gold():
    case = case_from_row(_row(category="not_in_system", outcome="refused_permission"))
    assert (case.route, case.operation, case.outcome) == ("not_in_system", None, None)


def test_a_turn_is_checked_against_the_rows_expectations():
    case = case_from_row(_row(outcome="refused_missing_args"))
    assert case_ok(case, route="system", operation="ChangeAllTypesUploadLimit", outcome="refused_missing_args") \
        == {"route_ok": True, "operation_ok": True, "outcome_ok": True}
    assert case_ok(case, route="guide", operation=None, outcome=None) == \
        {"route_ok": False, "operation_ok": False, "outcome_ok": False}
    assert case_ok(case._replace(outcome=None), route="system", operation="ChangeAllTypesUploadLimit",
                   outcome="anything")["outcome_ok"]


def test_the_rows_are_the_ones_the_eval_would_run(tmp_path):
    rows = [srow(n, f"limit {n}", "ok", "none") for n in (1, 2, 3)]
    rows[1][5] = rows[0][5]  # rows 1 and 2 say the same thing: one intent
    guide = [["demo_leader", f"Question {n}?", "No.", "", n, f"GUI-{n}", "guide"] for n in (1, 2, 3)]
    ds = write_dataset(tmp_path / "ds", rows, guide)
    for per_group, limit in ((None, None), (1, None), (None, 2), (1, 1)):
        picked = dataset_rows(ds, per_group=per_group, limit=limit)
        expected = select_cases(EvalConfig(per_group=per_group, limit=limit), ds / "qa")
        assert [c.case_id for c in picked] == [c.case_id for c in expected]
    assert [c.text for c in dataset_rows(ds, per_group=1)] == ["limit 1", "limit 3", "Question 1?", "Question 2?",
                                                                "Question 3?"]


# --- prompt tokens per role -----------------------------------------------------------------------

def _call(trace: Trace, role: str, prompt: int, cached: int | None, **info) -> None:
    rec = CallRecord(role=role, provider="local", model="m", prompt_tokens=prompt, cached_tokens=cached,
                     completion_tokens=5, latency_s=0.5)
    trace.call(role, lambda lg: lg.add(rec), **info)


def test_a_turns_model_calls_are_summed_per_role_with_the_cached_part():
    trace = Trace()
    trace.step("router", route="guide", sure=False)  # not a model call: left out
    _call(trace, "classifier", 120, 100, level=0)
    _call(trace, "classifier", 300, 280, level=1)
    _call(trace, "classifier", 500, None, level=2)  # the engine said nothing of its cache
    _call(trace, "executor", 900, 600, route="guide")
    _call(trace, "executor", 950, 900, route="guide")
    _call(trace, "classifier", 80, 0, route="confirm")
    roles = role_tokens(trace.to_dict()["steps"])
    assert list(roles) == ["small-talk gate", "classifier L1", "classifier L2", "executor", "confirmation"]
    assert roles["executor"] == {"calls": 2, "prompt_tokens": 1850, "cached_tokens": 1500, "completion_tokens": 10,
                                 "latency_s": 1.0}
    assert roles["classifier L2"]["cached_tokens"] == 0


def test_a_scripted_call_through_the_seam_lands_in_its_role():
    llm = ScriptedLLM().enqueue("verifier", {"score": 9})
    trace = Trace()
    from pydantic import BaseModel

    class Verdict(BaseModel):
        score: int

    trace.call("verifier", lambda lg: llm.structured("verifier", [("user", "hi")], Verdict, ledger=lg))
    got = role_tokens(trace.to_dict()["steps"])
    # The scripted call's time is whatever the machine took (0.01 s on a busy one): only its presence is checked.
    assert got["verifier"].pop("latency_s") >= 0
    assert got == {"verifier": {"calls": 1, "prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0}}


def test_roles_are_summarised_per_turn_and_in_total():
    def turn(**roles):
        return {"roles": {name: {"calls": 1, "prompt_tokens": p, "cached_tokens": c, "completion_tokens": 0,
                                 "latency_s": 1.0} for name, (p, c) in roles.items()}}

    rows = [turn(executor=(1000, 800), verifier=(400, 300)), turn(executor=(2000, 1000)),
            turn(executor=(600, 600), verifier=(200, 100))]
    s = summarize_roles(rows)
    assert s["executor"] == {"turns": 3, "calls": 3, "p50_prompt_tokens": 1000, "p50_cached_tokens": 800,
                             "total_prompt_tokens": 3600, "total_cached_tokens": 2400, "cached_share": 0.667,
                             "p50_model_s": 1.0}
    assert s["verifier"]["turns"] == 2 and s["verifier"]["p50_prompt_tokens"] == 300
    assert s[ALL_ROLES]["turns"] == 3 and s[ALL_ROLES]["total_prompt_tokens"] == 4200
    assert s[ALL_ROLES]["p50_prompt_tokens"] == 1400  # per turn: 1400, 2000, 800
    assert summarize_roles([]) == {}


# --- the demo requests' databases -----------------------------------------------------------------

def test_each_demo_request_gets_a_private_copy_of_the_seeded_database(tmp_path):
    source = demo_source(tmp_path / "work")
    assert source.cases and all(c.case_id is None for c in source.cases)
    with source.fresh_copy(tmp_path / "scratch") as url:
        engine = make_engine(url)
        with engine.begin() as conn:
            conn.execute(t.member.update().where(t.member.c.nickname == "demo_leader").values(limit=40))
        engine.dispose()
    with source.fresh_copy(tmp_path / "scratch") as url:
        engine = make_engine(url)
        with engine.connect() as conn:
            limit = conn.execute(sa.select(t.member.c.limit).where(t.member.c.nickname == "demo_leader")).scalar()
        engine.dispose()
    assert limit != 40
    assert source.settings_for(Settings()) == Settings()  # the demo keeps the configured guides and data
