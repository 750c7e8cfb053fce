"""Fixtures shared by the integration tests (the global ones live in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

from apis.cphos.loaders import seed_demo
from apis.retail.pack import pack as retail_pack
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


@pytest.fixture(scope="module")
def shop(retail_dir, tmp_path_factory):
    """The shop's Api over its whole real database (``db.json``), on SQLite, once per module."""
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('shop') / 'shop.db'}")
    retail_pack.load(engine, retail_dir)
    yield retail_pack.api(engine)
    engine.dispose()
