"""The turn's typed events: stored in the trace, relayed to listeners, read by metrics and the eval."""

from __future__ import annotations

import pydantic
import pytest

from chops.pipeline.events import Commit, Verify, events_of
from chops.pipeline.trace import Trace
from chops.web.metrics import Metrics
from eval.casework import verifier_scores
from tests.unit.pipeline_support import call, demo_engine, make_agent, to_system, verdict


def test_a_verified_write_leaves_typed_events_that_metrics_and_the_eval_read(sqlite_url):
    agent, llm = make_agent(demo_engine(sqlite_url))
    to_system(llm)
    llm.enqueue("executor", call("MakeAllTypesToBeArbiter")).enqueue("verifier", verdict(2, "not what was asked"))
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    heard: list[tuple[str, dict]] = []
    res = agent.handle("demo_leader", "Set my upload limit to 40", turn_key="c:1",
                       on_event=lambda name, payload: heard.append((name, payload)))
    kinds = [e["kind"] for e in res.trace["events"]]
    assert kinds == ["classify", "execute", "verify", "classify", "execute", "verify", "commit", "reply"]
    assert [n for n, _ in heard] == kinds
    assert [(v.iteration, v.passed) for v in events_of(res.trace, Verify)] == [(1, False), (2, True)]
    assert events_of(res.trace, Commit)[0].committed is True
    assert [s["passed"] for s in verifier_scores(res.trace)] == [False, True]
    metrics = Metrics()
    metrics.observe_turn(res, 0.01)
    text = metrics.render().decode()
    assert 'chops_verifier_total{result="fail"} 1.0' in text and 'chops_verifier_total{result="pass"} 1.0' in text


def test_deltas_are_relayed_but_not_stored_and_bad_events_fail_loudly():
    heard = []
    trace = Trace(lambda name, payload: heard.append((name, payload)))
    trace.emit("delta", {"text": "Hel"})
    assert heard == [("delta", {"iteration": 0, "text": "Hel"})] and trace.to_dict()["events"] == []
    with pytest.raises(ValueError):
        trace.emit("telepathy", {})
    with pytest.raises(pydantic.ValidationError):
        trace.emit("verify", {"score": 9})  # no verdict
