"""The load guards shared by several workers: rate limits counted in the real Redis, and the admission
queue in a real MariaDB database read by two workers (separate engines, as two processes have)."""

from __future__ import annotations

import threading
import uuid

import pytest

from apis.cphos.db import init_schema
from chops.admission import Admission
from chops.db import make_engine
from chops.settings import get_settings
from chops.web.errors import ApiError
from chops.web.limits import RateLimits

REDIS_URL = "redis://127.0.0.1:6379"


def test_two_workers_share_the_rate_limits_in_redis():
    """Two apps' limiters (two workers) over one Redis: the second sees the first one's messages."""
    import redis

    try:
        redis.Redis.from_url(REDIS_URL).ping()
    except redis.ConnectionError:
        pytest.fail(f"Redis is not running at {REDIS_URL} (.ci/run starts it)", pytrace=False)
    settings = get_settings(rate_limit_storage=REDIS_URL, rate_limit_user="2 per minute")
    one, two = RateLimits(settings), RateLimits(settings)
    nickname = f"limits-{uuid.uuid4().hex[:8]}"  # a user of this test only
    one.check_turn(nickname, "c1", "en")
    one.count_turn(nickname, "c1")
    two.check_turn(nickname, "c2", "en")
    two.count_turn(nickname, "c2")
    with pytest.raises(ApiError) as refused:
        one.check_turn(nickname, "c3", "en")
    assert refused.value.code == "rate_limited" and 1 <= refused.value.extra["retry_after"] <= 60
    # The keys expire with their one-minute window; the user is this test's own, so nothing else sees them.


@pytest.mark.mariadb
def test_two_workers_share_one_admission_queue_on_mariadb(mariadb_url):
    first_engine, second_engine = make_engine(mariadb_url), make_engine(mariadb_url)
    init_schema(first_engine)
    opts = {"capacity": 1, "max_wait_s": 30.0, "turn_s": 5.0, "turn_budget_s": 60.0, "poll_s": 0.02}
    a, b = Admission(first_engine, **opts), Admission(second_engine, **opts)
    held = a.enter("c1")
    a.wait(held)
    order: list[str] = []
    tickets = [(b, b.enter("c2"), "c2"), (a, a.enter("c3"), "c3")]

    def turn(adm, ticket, name):
        adm.wait(ticket)
        order.append(name)
        adm.leave(ticket)

    threads = [threading.Thread(target=turn, args=t) for t in reversed(tickets)]
    for th in threads:
        th.start()
    a.leave(held)
    for th in threads:
        th.join(10)
    assert order == ["c2", "c3"]  # in order of arrival, across the two workers
    first_engine.dispose()
    second_engine.dispose()
