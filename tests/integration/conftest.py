"""Fixtures shared by the integration tests (the global ones live in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

from apis.cphos.loaders import seed_demo
from chops.db import make_engine


@pytest.fixture
def engine(db_url):
    """An engine on the demo data, once on SQLite and once on MariaDB (``db_url``), disposed afterwards.

    A module that needs other data defines its own ``engine`` fixture, which takes precedence.
    """
    eng = make_engine(db_url)
    seed_demo(eng)
    yield eng
    eng.dispose()
