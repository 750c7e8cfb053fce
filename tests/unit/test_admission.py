"""Admission control (chops.admission): one FIFO queue in front of the model, shared through the database."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
import sqlalchemy as sa

from apis.cphos.db import init_schema
from chops import tables as t
from chops.admission import Admission, Busy, queue_notice
from chops.db import make_engine
from chops.store_base import now


@pytest.fixture
def engine(sqlite_url):
    eng = make_engine(sqlite_url)
    init_schema(eng)
    yield eng
    eng.dispose()


def queue(engine, **kw) -> Admission:
    opts = {"capacity": 1, "max_wait_s": 15.0, "turn_s": 10.0, "turn_budget_s": 60.0, "poll_s": 0.01, **kw}
    return Admission(engine, **opts)


def test_a_turn_is_refused_at_once_when_its_expected_wait_is_over_the_limit(engine):
    adm = queue(engine)
    first, second = adm.enter("c1"), adm.enter("c2")  # runs at once / waits one turn (10 s)
    with pytest.raises(Busy) as refused:
        adm.enter("c3")  # would wait two turns (20 s > 15 s)
    assert refused.value.ahead == 2 and refused.value.wait_s == pytest.approx(20.0)
    assert refused.value.retry_after_s >= 5  # the wait beyond the limit, at least
    with engine.connect() as conn:  # nothing kept of the refused turn
        assert conn.execute(sa.select(sa.func.count()).select_from(t.admission_ticket)).scalar_one() == 2
    adm.leave(first)
    adm.leave(second)


@pytest.mark.parametrize("capacity", [1, 2])
def test_turns_run_capacity_at_a_time_in_order_of_arrival(engine, capacity):
    adm = queue(engine, capacity=capacity, max_wait_s=100.0)
    tickets = [adm.enter(f"c{i}") for i in range(5)]
    started, running, most = [], [0], [0]
    lock = threading.Lock()

    def turn(i: int) -> None:
        adm.wait(tickets[i])
        with lock:
            started.append(i)
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        adm.leave(tickets[i])

    threads = [threading.Thread(target=turn, args=(i,)) for i in reversed(range(5))]  # the last arrive first
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert most[0] == capacity
    if capacity == 1:
        assert started == [0, 1, 2, 3, 4]


def test_a_waiting_turn_hears_its_place_and_expected_wait(engine):
    adm = queue(engine, capacity=1, max_wait_s=100.0, turn_s=6.0)
    running, a, b = adm.enter("c0"), adm.enter("c1"), adm.enter("c2")
    heard: list[tuple[int, float]] = []
    waiter = threading.Thread(target=adm.wait, args=(b, lambda ahead, wait: heard.append((ahead, wait))))
    waiter.start()
    time.sleep(0.1)
    adm.wait(running)
    adm.leave(running)  # c1 runs now: c2 is next
    time.sleep(0.1)
    adm.wait(a)
    adm.leave(a)
    waiter.join(5)
    assert [ahead for ahead, _ in heard] == [1, 0]
    assert heard[0][1] == 12.0  # two turns of 6 s
    assert 0 < heard[1][1] < 6.0  # one turn, now shorter: the quick turn before it lowered the average
    assert b.admitted
    adm.leave(b)


def test_a_dead_workers_ticket_stops_counting_when_it_expires(engine):
    adm = queue(engine)
    with engine.begin() as conn:  # a worker that crashed mid-turn left its ticket
        conn.execute(t.admission_ticket.insert().values(conversation_id="gone", created_at=now(),
                                                        admitted_at=now(), expires_at=now() - timedelta(seconds=1)))
    mine = adm.enter("c1")
    adm.wait(mine)  # would block forever if the dead ticket still held the only place
    assert mine.admitted
    adm.leave(mine)


def test_the_expected_turn_length_follows_the_admitted_turns(engine):
    adm = queue(engine, turn_s=10.0)
    ticket = adm.enter("c1")
    adm.wait(ticket)
    adm.leave(ticket)  # took ~0 s
    assert adm.turn_s == pytest.approx(8.0, abs=0.1)


def test_two_workers_share_one_queue(sqlite_url):
    """Two processes' worth of state: separate engines and conditions, one table."""
    one, two = make_engine(sqlite_url), make_engine(sqlite_url)
    init_schema(one)
    a, b = queue(one), queue(two)
    first = a.enter("c1")
    a.wait(first)
    second = b.enter("c2")
    done = threading.Event()
    threading.Thread(target=lambda: (b.wait(second), done.set()), daemon=True).start()
    assert not done.wait(0.2)  # the other worker's turn holds the only place
    a.leave(first)
    assert done.wait(5)  # found by polling: worker a cannot wake worker b's waiters
    b.leave(second)


def test_queue_notices_speak_the_users_language():
    assert queue_notice("en", 2, 14.6) == "2 people ahead of you, about 15 s."
    assert queue_notice("en", 0, 3) == "You are next, about 3 s."
    assert queue_notice("zh", 1, 8) == "您前面还有 1 位，大约还需 8 秒。"
