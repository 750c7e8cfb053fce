"""50 conversations at once against the app (test client, one thread each): no errors, no cross-talk."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa

from chops import tables as t
from tests.unit.web_support import make_app, script_profile_answer, start

NICKNAMES = ["demo_leader", "demo_busy_leader", "demo_vice", "demo_arbiter", "demo_admin", "demo_other_leader"]


@pytest.mark.usefixtures("frequent_thread_switches")
def test_fifty_parallel_conversations_get_their_own_answers(sqlite_url):
    # The zero-latency model's turns take milliseconds: with that measured, all fifty fit in the model's
    # queue (two run at a time), so the conversations also cross in the admission queue. Six users send
    # a hundred messages: the per-user limits are for people, not for this test. The queue's wait bound is lifted
    # too: on a loaded machine the measured turns grew and fifty of them were estimated past the 20 s bound (busy).
    app, llm, engine = make_app(sqlite_url, admission_turn_s=0.05, rate_limit_user="1000 per minute",
                                max_open_conversations=50, admission_max_wait_s=600)
    n = 50
    script_profile_answer(llm, times=2 * n)  # replies are computed from each prompt, in whatever order

    def converse(i: int) -> list[tuple[str, str, str]]:
        client = app.test_client()
        nickname = NICKNAMES[i % len(NICKNAMES)]
        cid, auth = start(client, nickname)
        out = []
        for k in (1, 2):
            text = f"conversation {i} question {k}?"
            resp = client.post(f"/v1/conversations/{cid}/messages", json={"text": text}, headers=auth)
            assert resp.status_code == 200, resp.get_json()
            out.append((cid, nickname, resp.get_json()["reply"]))
        return out

    with ThreadPoolExecutor(max_workers=n) as pool:
        results = [r for rs in pool.map(converse, range(n)) for r in rs]
    for j, (_, nickname, reply) in enumerate(results):
        i, k = divmod(j, 2)
        assert reply == f"{nickname} asked: conversation {i} question {k + 1}?"
    assert llm.pending() == {}
    with engine.connect() as conn:
        rows = conn.execute(sa.select(t.conversation.c.id, t.conversation.c.nickname, t.turn.c.seq, t.turn.c.reply)
                            .join(t.turn, t.turn.c.conversation_id == t.conversation.c.id)).all()
    assert len(rows) == 2 * n
    for cid, nickname, seq, reply in rows:  # each stored turn belongs to its conversation's user
        assert reply.startswith(f"{nickname} asked:") and reply.endswith(f"question {seq}?")
    assert len({cid for cid, *_ in rows}) == n
