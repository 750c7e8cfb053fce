"""Metrics, report and ablation on hand-made records; config and dataset reading."""

from __future__ import annotations

import json

import pytest

from chops.settings import get_settings
from eval.config import EvalConfig, load_config
from eval.dataset import DatasetError, load_cases
from chops.settings import MODEL_05B_NAME, MODEL_15B_NAME
from eval.metrics import confusion, iteration_table, pass_hat_k, priced_cost, role_prices, summarize
from eval.report import write_report

META = {"architecture": "cev_2level", "max_iterations": 3,
        "roles": {"classifier": {"prices": [1.0, 2.0]}, "executor": {"prices": [10.0, 30.0]},
                  "verifier": {"prices": [1.0, 2.0]}}}


def rec(case_id, passed, *, trial=1, kind="system", category="system_mutation_ok", route="system",
        verifier=(), iterations=1, roles=None, **extra):
    roles = roles or {"executor": {"calls": 1, "chars_in": 4000, "chars_out": 400}}
    calls = {"calls": sum(v["calls"] for v in roles.values()),
             "chars_in": sum(v["chars_in"] for v in roles.values()),
             "chars_out": sum(v["chars_out"] for v in roles.values())}
    return {"key": f"{case_id}#{trial}", "case_id": case_id, "trial": trial, "kind": kind, "category": category,
            "route": route, "passed": passed, "iterations": iterations, "verifier": list(verifier),
            "calls_by_role": roles, "calls": calls, "latency_s": 1.0, "text": "q", **extra}


def v(score, passed):
    return {"iteration": 0, "score": score, "passed": passed, "threshold": 7}


def test_pass_hat_k_over_trials():
    recs = [rec("a", True, trial=1), rec("a", True, trial=2), rec("a", False, trial=3),
            rec("b", True, trial=1), rec("b", True, trial=2), rec("b", True, trial=3)]
    got = pass_hat_k(recs)
    assert got[1] == pytest.approx((2 / 3 + 1) / 2, abs=1e-4)
    assert got[2] == pytest.approx((1 / 3 + 1) / 2, abs=1e-4)
    assert got[3] == pytest.approx(0.5)


def test_iteration_table_counts_passes_fails_and_transitions():
    recs = [rec("a", True, verifier=[v(9, True)]),
            rec("b", False, verifier=[v(3, False), v(8, True)], iterations=2),
            rec("c", True, verifier=[v(3, False), v(4, False), v(5, False)], iterations=3, chooser_used=True)]
    t = iteration_table(recs, 3)
    r1, r2, r3 = t["rows"]
    assert (r1["reached"], r1["verifier_pass"], r1["verifier_fail"]) == (3, 1, 2)
    assert (r1["pass_graded_correct"], r1["fail_then_pass"], r1["fail_then_fail"]) == (1, 1, 1)
    assert (r2["reached"], r2["verifier_pass"], r2["pass_graded_wrong"]) == (2, 1, 1)
    assert (r3["reached"], r3["verifier_fail"]) == (1, 1)
    assert t["chooser_used"] == 1 and t["chooser_graded_correct"] == 1
    assert t["iterations_hist"] == {1: 1, 2: 1, 3: 1}


def test_confusion_by_category_and_route():
    recs = [rec("a", True, category="guide", route="guide", kind="guide"),
            rec("b", False, category="guide", route="system", kind="guide"),
            rec("c", True, category="system_query", route="system")]
    c = confusion(recs)
    assert c["matrix"] == {"guide": {"guide": 1, "system": 1}, "system_query": {"system": 1}}
    assert c["per_category"]["guide"] == {"n": 2, "accuracy": 0.5, "route_accuracy": 0.5}


def test_costs_use_configured_prices_and_fall_back_when_all_zero():
    prices, basis = role_prices(META)
    r = rec("a", True, roles={"classifier": {"calls": 2, "chars_in": 400, "chars_out": 40},
                              "executor": {"calls": 1, "chars_in": 4000, "chars_out": 400}})
    # classifier 100 tok in, 10 out at (1, 2); executor 1000 in, 100 out at (10, 30)
    assert priced_cost(r, prices) == pytest.approx((100 + 20 + 10000 + 3000) / 1e6)
    assert basis == "configured prices"
    zero = {"roles": {"executor": {"prices": [0.0, 0.0]}}}
    fallback, basis = role_prices(zero)
    assert fallback["executor"] == (1.5, 2.0) and "gpt-3.5" in basis


def test_a_committed_write_the_database_should_not_show_is_a_wrong_write():
    graded = lambda effect: {"checks": {"outcome": True, "effect": effect}}  # noqa: E731
    recs = [rec("s1", True, committed=True, grade=graded(True)),
            rec("s2", False, committed=True, grade=graded(False)),  # the wrong change
            rec("s3", False, committed=True, grade={"checks": {"outcome": False, "effect": True}}),  # right write
            rec("s4", False, committed=False, grade=graded(False)),  # failed without writing
            rec("g1", False, committed=True, kind="guide", grade={"checks": {}})]  # a question that wrote
    assert summarize(recs, META)["wrong_writes"] == 2


def test_a_role_with_tiers_is_priced_per_model():
    small, large = MODEL_05B_NAME, MODEL_15B_NAME
    tot = {"calls": 1, "prompt_tokens": 1000, "completion_tokens": 100}
    r = rec("a", True, roles={"executor": {"calls": 2, "chars_in": 8000, "chars_out": 800}})
    r["calls_by_model"] = {"executor": {small: {**tot, "cost_usd": 0.5}, large: {**tot, "cost_usd": 2.0}}}
    fallback, _ = role_prices({"roles": {"executor": {"prices": [0.0, 0.0]}}})
    one = (1000 * 1.5 + 100 * 2.0) / 1e6  # one call's tokens at gpt-3.5's list price
    # the 1.5B at the list price, the 0.5B at its share of the parameters
    assert priced_cost(r, fallback) == pytest.approx(one + one * 494 / 1544)
    assert priced_cost({k: v for k, v in r.items() if k != "calls_by_model"}, fallback) == pytest.approx(2 * one)
    prices, _ = role_prices(META)  # configured: what each call cost at its own tier's price
    assert priced_cost(r, prices) == pytest.approx(2.5)


def test_summary_accuracies_and_relative_cost_against_a_measured_baseline():
    recs = [rec("s1", True), rec("s2", False), rec("g1", True, kind="guide", category="guide", route="guide")]
    s = summarize(recs, META, baseline_cost=0.013 / 2)
    assert s["acc_sys"] == 0.5 and s["acc_file"] == 1.0 and s["n_sys"] == 2 and s["n_file"] == 1
    assert s["relative_cost"] == pytest.approx(2.0)  # every request = one executor call costing 0.013
    assert s["by_role"]["executor"] == {"calls": 1, "chars_in": 4000, "chars_out": 400}
    assert s["baseline"] == "measured executor_only run"


def test_report_files(tmp_path):
    recs = [rec("s1", True, verifier=[v(9, True)]),
            rec("s2", False, verifier=[v(2, False), v(9, True)], iterations=2,
                grade={"reasons": ["outcome 'ok', expected 'refused_precondition'"]}, reply="done")]
    s = summarize(recs, META)
    path = write_report(tmp_path, recs, META, s)
    text = path.read_text()
    assert "| Acc_sys (%) | 50.0 |" in text and "expected 'refused_precondition'" in text
    assert json.loads((tmp_path / "summary.json").read_text())["acc_sys"] == 0.5
    assert (tmp_path / "accuracy_vs_cost.png").stat().st_size > 1000
    assert (tmp_path / "iterations.png").stat().st_size > 1000


def test_config_file_and_overrides(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('architecture = "ce_1level"\ntrials = 2\n[roles.judge]\nmodel = "gpt-4-0125-preview"\n'
                 'provider = "openai"\n[settings]\nmax_iterations = 3\n')
    cfg = load_config(f, trials=4)
    assert cfg.trials == 4 and cfg.architecture == "ce_1level"
    s = cfg.apply(get_settings())
    assert s.architecture == "ce_1level" and s.max_iterations == 3
    assert s.roles.judge.model == "gpt-4-0125-preview" and s.roles.judge.prices() == (10.0, 30.0)
    assert s.roles.executor.model == get_settings().roles.executor.model
    with pytest.raises(ValueError):
        EvalConfig(roles={"oracle": {}}).apply(get_settings())


def test_dataset_reading_dedupe_and_limit(cphos_dir):
    all_guide = load_cases(cphos_dir / "qa", only="guide", dedupe=False)
    deduped = load_cases(cphos_dir / "qa", only="guide")
    assert len(deduped) < len(all_guide)
    assert len({(c.nickname, c.text, c.reference) for c in all_guide}) == len(deduped)
    both = load_cases(cphos_dir / "qa", limit=2)
    assert [c.kind for c in both] == ["system", "system", "guide", "guide"]
    sys_case = next(c for c in load_cases(cphos_dir / "qa", only="system") if c.outcome == "refused_missing_args")
    assert sys_case.missing_args and sys_case.expected_effect == "none"
    with pytest.raises(DatasetError):
        load_cases(cphos_dir)  # no system.csv there


def test_per_group_keeps_the_first_paraphrases_of_every_intent(cphos_dir):
    every = load_cases(cphos_dir / "qa")
    one = load_cases(cphos_dir / "qa", per_group=1)
    assert [c.group_id for c in one] == list(dict.fromkeys(c.group_id for c in every))
    assert all(c == next(e for e in every if e.group_id == c.group_id) for c in one)
    two = load_cases(cphos_dir / "qa", only="system", per_group=2, limit=3)
    assert [c.group_id for c in two] == [two[0].group_id] * 2 + [two[2].group_id] and two[0].group_id != two[2].group_id
