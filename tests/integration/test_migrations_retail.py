"""The retail pack's history (``retail_alembic_version``) beside the agent's: a shop database its loader made
before migrations (frozen DDL, rows in it) is adopted with every row, an empty one is created at head, and
the CPHOS history never appears in a retail database. SQLite and MariaDB."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from apis.cphos.db import HISTORY as CPHOS
from apis.cphos.db import schema_statements
from apis.retail.db import HISTORY, init_schema
from chops.db import make_engine
from chops.migrate import AGENT, current, heads
from tests.integration.test_migrations import LEGACY_DDL, cli_upgrade, snapshot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RETAIL_DDL = {"sqlite": FIXTURES / "retail_2026_11.sqlite.sql", "mariadb": FIXTURES / "retail_2026_11.sql"}

SHOP_ROWS = [
    "INSERT INTO retail_product (product_id, seq, name) VALUES ('P1', 0, 'Desk Lamp')",
    "INSERT INTO retail_variant (item_id, product_id, seq, options, available, price) VALUES "
    "('I1', 'P1', 0, '{\"color\": \"red\"}', 1, 19.99), ('i1', 'P1', 1, '{\"color\": \"blue\"}', 0, 20.01)",
    "INSERT INTO retail_customer (user_id, seq, first_name, last_name, name_key, email, address1, address2, city, "
    "country, state, zip) VALUES ('mia_1', 0, 'Mia', 'Li', 'mia li', 'mia@example.com', '1 Main St', '', "
    "'Austin', 'USA', 'TX', '78701')",
    "INSERT INTO retail_payment_method (user_id, payment_method_id, seq, source, brand, last_four, balance) "
    "VALUES ('mia_1', 'gift_card_1', 0, 'gift_card', NULL, NULL, 50.25)",
    "INSERT INTO retail_order (order_id, seq, user_id, user_seq, status, address1, address2, city, country, "
    "state, zip) VALUES ('#W1', 0, 'mia_1', 0, 'delivered', '1 Main St', '', 'Austin', 'USA', 'TX', '78701')",
    "INSERT INTO retail_order_item (order_id, seq, item_id, product_id, name, price, options) VALUES "
    "('#W1', 0, 'I1', 'P1', 'Desk Lamp', 19.99, '{\"color\": \"red\"}')",
    "INSERT INTO retail_fulfilment (order_id, seq) VALUES ('#W1', 0)",
    "INSERT INTO retail_fulfilment_tracking (order_id, fulfilment_seq, seq, tracking_id) VALUES ('#W1', 0, 0, 'T9')",
    "INSERT INTO retail_payment (order_id, seq, transaction_type, amount, payment_method_id) VALUES "
    "('#W1', 0, 'payment', 19.99, 'gift_card_1')",
]


def backend_of(url: str) -> str:
    return "sqlite" if url.startswith("sqlite") else "mariadb"


def shop_database(url: str) -> None:
    """The agent's tables of the last release and the shop's as its loader created them, with rows."""
    backend = backend_of(url)
    engine = make_engine(url)
    with engine.begin() as conn:
        for path in (LEGACY_DDL[backend], RETAIL_DDL[backend]):
            for stmt in schema_statements(path):
                if not stmt.split("(", 1)[0].strip().endswith(tuple(CPHOS.metadata.tables)):  # no CPHOS here
                    conn.exec_driver_sql(stmt.rstrip(";"))
        for sql in SHOP_ROWS:
            conn.exec_driver_sql(sql)
    engine.dispose()


def versions(url: str) -> dict[str, set[str]]:
    engine = make_engine(url)
    with engine.connect() as conn:
        out = {h.name: current(conn, h) for h in (AGENT, HISTORY, CPHOS)}
    engine.dispose()
    return out


def test_a_shop_made_before_migrations_keeps_every_row(db_url):
    shop_database(db_url)
    before = snapshot(db_url)
    assert not any(name.startswith("cmf_tp_") for name in before)
    assert sum(len(before[t]) for t in before if t.startswith("retail_")) == 10
    out = cli_upgrade(db_url, "retail")
    assert "chops    upgraded from nothing" in out and "retail   upgraded from nothing" in out
    out = cli_upgrade(db_url, "retail")
    assert "chops    at" in out and "retail   at" in out and "upgraded" not in out
    after = snapshot(db_url)
    assert {t: after[t] for t in before} == before
    assert versions(db_url) == {"chops": heads(AGENT), "retail": heads(HISTORY), "cphos": set()}


def test_an_empty_shop_database_is_created_at_head(db_url):
    engine = make_engine(db_url)
    init_schema(engine)
    names = set(sa.inspect(engine).get_table_names())
    engine.dispose()
    assert names == set(AGENT.metadata.tables) | set(HISTORY.metadata.tables) | {
        AGENT.version_table, HISTORY.version_table}
    assert versions(db_url) == {"chops": heads(AGENT), "retail": heads(HISTORY), "cphos": set()}
