"""Streaming: one JSON string field decoded piece by piece, through the seam and the pipeline."""

from __future__ import annotations

import json

import pytest

from chops.llm import ScriptedLLM
from chops.llm.streaming import JsonStringField
from chops.pipeline.schemas import GuideAnswer
from tests.unit.pipeline_support import demo_engine, make_agent, to_guide, verdict

ANSWERS = ["No: uploads close at the deadline.", 'Press "Upload" \\ then wait.\nDone.', "可以，在截止时间前上传。 ✓",
           ""]


def _stream(text: str, size: int, key: str = "answer") -> list[str]:
    got: list[str] = []
    field = JsonStringField(key, got.append)
    for start in range(0, len(text), size):
        field.feed(text[start:start + size])
    return got


@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize("indent", [None, 2])
def test_the_field_comes_out_decoded_whatever_the_pieces(answer, size, indent):
    raw = json.dumps({"source": 2, "answer": answer, "after": "not streamed"}, indent=indent,
                     ensure_ascii=size % 2 == 1)  # both \\uXXXX escapes and raw characters
    assert "".join(_stream(raw, size)) == answer


def test_nothing_is_streamed_before_the_field_nor_after_its_closing_quote():
    assert _stream('{"source":1,"reason":"x"}', 3) == []
    assert "".join(_stream('{"answer":"ab"}{"answer":"cd"}', 2)) == "ab"


def test_an_unfinished_escape_waits_for_the_next_piece():
    got: list[str] = []
    field = JsonStringField("answer", got.append)
    for piece in ['{"answer":"a\\', "u00", "e9b"]:
        field.feed(piece)
    assert got == ["a", "éb"]


def test_the_seam_streams_the_raw_reply_and_records_the_time_to_the_first_piece():
    llm = ScriptedLLM().enqueue("executor", {"source": 1, "answer": "Uploads close at 18:00."})
    pieces: list[str] = []
    out = llm.structured("executor", [("user", "q")], GuideAnswer, on_delta=pieces.append)
    assert len(pieces) > 3 and GuideAnswer.model_validate_json("".join(pieces)) == out
    rec = llm.ledger.records[-1]
    assert rec.first_token_s is not None and 0 <= rec.first_token_s <= rec.latency_s
    llm.enqueue("executor", {"source": 1, "answer": "x"})
    llm.structured("executor", [("user", "q")], GuideAnswer)
    assert llm.ledger.records[-1].first_token_s is None  # not streamed


def test_a_guide_answer_streams_as_delta_events_before_the_reply(sqlite_url):
    agent, llm = make_agent(demo_engine(sqlite_url))
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "No: uploads close at the deadline."})
    llm.enqueue("verifier", verdict(9))
    events: list[tuple[str, dict]] = []
    res = agent.handle("demo_leader", "Can I still send papers late?", turn_key="c:1",
                       on_event=lambda name, payload: events.append((name, payload)))
    names = [n for n, _ in events]
    deltas = [p["text"] for n, p in events if n == "delta"]
    assert len(deltas) > 3 and "".join(deltas) == "No: uploads close at the deadline."
    assert names.index("delta") < names.index("verify") < names.index("reply")
    assert res.reply.startswith("No: uploads close at the deadline.")


def test_a_system_request_streams_nothing(sqlite_url):
    from tests.unit.pipeline_support import call, to_system

    agent, llm = make_agent(demo_engine(sqlite_url))
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=40)).enqueue("verifier", verdict(9))
    events: list[str] = []
    agent.handle("demo_leader", "Please set my upload limit to 40.", turn_key="c:1",
                 on_event=lambda name, payload: events.append(name))
    assert "delta" not in events and "reply" in events
