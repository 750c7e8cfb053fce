"""The evaluation as a stream (EcoAssistant): the memory fills in case order, outside the per-case
database copies; summary.json carries ``tiers`` and ``demonstrations``; shuffled orders differ and
are reproducible; the model configurations of ``eval ablate --configurations``. Scripted models only."""

from __future__ import annotations

import json

import pytest

from chops.llm import ScriptedLLM, build_llm
from chops.memory import SolutionMemory
from chops.settings import get_settings
from eval.compare import finalize_run
from eval.config import EvalConfig
from eval.dataset import load_cases
from eval.runner import RunMismatch, ordered, run_eval
from eval.stream import CONFIGURATIONS, configured, run_configurations
from tests.unit.pipeline_support import FakeIndex, WordsEmbedder, call, verdict
from tests.unit.test_eval_runner import demo_loader, srow, write_dataset

TEXTS = ["Set my upload limit to 40", "Please set my upload limit to 40", "Set my upload limit to 40 now",
         "I want my upload limit set to 40", "Could you set my upload limit to 40", "upload limit 40 for me"]
SCRIPTED = {"local-0.5b": {"provider": "scripted", "model": "fake-0.5b"},
            "local-1.5b": {"provider": "scripted", "model": "fake-1.5b"}}
HIERARCHY = {"classifier": {"tiers": ["local-0.5b", "local-1.5b"]},
             "executor": {"tiers": ["local-0.5b", "local-1.5b"]}, "verifier": {"tiers": ["local-1.5b"]}}


@pytest.fixture
def dataset(tmp_path):
    rows = [srow(n, text, "ok", "cmf_tp_member[id=2].limit=40") for n, text in enumerate(TEXTS, start=1)]
    return write_dataset(tmp_path / "ds", rows, [])


def classify(messages, schema):
    return {"route": {"SmallTalkGate": "about_the_platform", "Level1Decision": "something_else"}.get(
        schema.__name__, "do_operation")}


def execute(messages, schema):
    # The 0.5B tier's first try at the "Please" request writes a value the user never gave (grounding fails).
    text = messages[-1][1]
    wrong = "Please" in text.rsplit("Message:", 1)[-1] and "rejected" not in text
    return call("ChangeAllTypesUploadLimit", Limit=50 if wrong else 40)


def script(target, n=40):
    """Fill ``target`` (a ScriptedLLM or the ScriptedProvider of a built LLM) with order-free replies."""
    for _ in range(n):
        for role, reply in (("classifier", classify), ("classifier", classify), ("executor", execute),
                            ("verifier", verdict(9))):
            target.enqueue(role, reply)
    return target


def stream_config(**extra):
    return EvalConfig(only="system", roles=HIERARCHY,
                      settings={"models": SCRIPTED, "memory_enabled": True, "memory_floor": 0.3}, **extra)


def run(dataset, out, cfg):
    settings = cfg.apply(get_settings())
    llm = build_llm(settings)  # the scripted fake tiers the config names
    script(llm.script)
    return run_eval(cfg, dataset, out, base_settings=get_settings(), llm=llm, index=FakeIndex(),
                    loader=demo_loader, progress=False)


def test_the_memory_fills_in_case_order_and_the_summary_counts_tiers_and_demonstrations(dataset, tmp_path):
    out = tmp_path / "out"
    recs = run(dataset, out, stream_config())
    assert [r["text"] for r in recs] == TEXTS and all(r["passed"] for r in recs)
    assert recs[0]["demonstrations"] == 0 and all(r["demonstrations"] >= 1 for r in recs[1:])
    memory = SolutionMemory(__import__("chops.db", fromlist=["make_engine"]).make_engine(
        f"sqlite:///{out / 'work' / 'memory.db'}"), WordsEmbedder())
    assert [s.request for s in reversed(memory.entries())] == TEXTS  # remembered as the stream went
    assert [r["remembered"] for r in recs] == [s.id for s in reversed(memory.entries())]
    assert recs[1]["executor_tiers"] == {"local-0.5b": 1, "local-1.5b": 1} and recs[1]["tier"] == "local-1.5b"
    summary = finalize_run(out)
    assert summary["tiers"] == {"local-0.5b": round(6 / 7, 4), "local-1.5b": round(1 / 7, 4)}
    assert summary["demonstrations"]["total"] == sum(r["demonstrations"] for r in recs)
    assert summary["demonstrations"]["requests_with"] == 5 and summary["demonstrations"]["remembered"] == 6
    stored = json.loads((out / "summary.json").read_text())
    assert stored["tiers"] == summary["tiers"] and stored["demonstrations"] == summary["demonstrations"]
    assert json.loads((out / "run.json").read_text())["roles"]["executor"]["tiers"] == ["local-0.5b", "local-1.5b"]


def test_without_the_memory_setting_nothing_is_remembered(dataset, tmp_path):
    cfg = stream_config().model_copy(update={"settings": {"models": SCRIPTED}})
    recs = run(dataset, tmp_path / "out", cfg)
    assert all(r["demonstrations"] == 0 and r["remembered"] is None for r in recs)
    assert not (tmp_path / "out" / "work" / "memory.db").exists()


def test_shuffled_orders_differ_and_are_reproducible(dataset, tmp_path):
    cases = load_cases(dataset / "qa", only="system")
    one, again, two = ordered(cases, 1), ordered(cases, 1), ordered(cases, 2)
    assert [c.case_id for c in one] == [c.case_id for c in again] != [c.case_id for c in two]
    assert sorted(c.case_id for c in one) == sorted(c.case_id for c in cases) and ordered(cases, None) == cases
    recs = run(dataset, tmp_path / "out", stream_config(shuffle_seed=2))
    assert [r["case_id"] for r in recs] == [c.case_id for c in two]
    with pytest.raises(RunMismatch):  # another order is another experiment: what each case saw differs
        run(dataset, tmp_path / "out", stream_config(shuffle_seed=3))


def test_a_run_can_start_from_a_seeded_memory(dataset, tmp_path):
    run(dataset, tmp_path / "first", stream_config())
    recs = run(dataset, tmp_path / "second", stream_config(memory_seed=tmp_path / "first" / "work" / "memory.db"))
    assert recs[0]["demonstrations"] >= 1 and all(r["remembered"] is None for r in recs)  # known already


def test_the_configurations_set_tiers_and_the_memory_switch():
    cfg = configured(EvalConfig(roles={"judge": {"model": "j"}}), "hierarchy+demos", 3)
    assert cfg.shuffle_seed == 3 and cfg.settings["memory_enabled"] is True and cfg.roles["judge"] == {"model": "j"}
    assert cfg.roles["executor"]["tiers"] == ["local-0.5b", "local-1.5b"] and cfg.roles["verifier"]["tiers"] == [
        "local-1.5b"]
    assert configured(EvalConfig(), "0.5b", None).roles["verifier"]["tiers"] == ["local-0.5b"]
    assert set(CONFIGURATIONS) == {"1.5b", "0.5b", "0.5b+demos", "hierarchy", "hierarchy+demos"}


def test_configurations_run_over_orders_into_one_table_and_plot(dataset, tmp_path):
    out = tmp_path / "abl"
    llm = script(ScriptedLLM(tiers={"executor": ["small", "large"]}), n=200)
    cfg = EvalConfig(only="system", settings={"memory_floor": 0.3})
    summaries = run_configurations(cfg, dataset, out, names=("0.5b", "0.5b+demos"), orders=2, llm=llm,
                                   index=FakeIndex(), loader=demo_loader, progress=False)
    assert [s["configuration"] for s in summaries] == ["0.5b", "0.5b+demos"]
    # Without demonstrations the cases are independent, so one order stands for all; with them every order runs.
    assert [s["orders"] for s in summaries] == [1, 2] and (out / "0.5b" / "summary.json").is_file()
    assert not (out / "0.5b" / "order-2").exists()
    for seed in (1, 2):
        assert (out / "0.5b+demos" / f"order-{seed}" / "summary.json").is_file()
    assert summaries[0]["demonstrations"]["per_request"] == 0 < summaries[1]["demonstrations"]["per_request"]
    assert summaries[0]["tiers"] == {"small": round(6 / 7, 4), "large": round(1 / 7, 4)}
    table = (out / "ecoassistant.md").read_text()
    assert "| 0.5b+demos |" in table and "stream.png" in table and (out / "stream.png").stat().st_size > 1000
