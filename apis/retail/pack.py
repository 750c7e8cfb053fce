"""The retail domain pack: an online shop's customer service (orders, products, returns and exchanges), on
the data of tau2-bench's retail domain (registered in ``pyproject.toml`` under ``chops.domains`` as ``retail``).

The shop's data folder (``CHOPS_RETAIL_DIR``, default ``../shared/tau2-retail`` beside the repository) is
read at run time and never copied: its ``db.json`` is what ``chops db load --domain retail`` loads, and its
``policy.md`` is the pack's guide.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import sqlalchemy as sa
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from apis.retail import loader
from apis.retail import tables as t
from apis.retail.db import MIGRATIONS
from apis.retail.demo import demo_document
from apis.retail.service import RetailApi

REPO_ROOT = Path(__file__).resolve().parents[2]


class RetailSettings(BaseSettings):
    """The pack's own setting, from the environment like the agent's (``CHOPS_RETAIL_DIR``)."""

    model_config = SettingsConfigDict(env_prefix="CHOPS_RETAIL_", extra="ignore")
    dir: Path = Field(default=REPO_ROOT.parent / "shared" / "tau2-retail",
                      description="the retail data folder (tau2-retail): database/db.json, policy.md")


def retail_dir() -> Path:
    """The retail data folder (``CHOPS_RETAIL_DIR``), read afresh so a changed environment is seen."""
    return RetailSettings().dir


def policy_path() -> Path:
    """The shop's policy, the pack's guide document: ``CHOPS_RETAIL_DIR/policy.md``."""
    return retail_dir() / "policy.md"


class RetailPack:
    """An online shop: customers, payment methods, products and variants, orders."""

    name = "retail"
    router_examples = Path(__file__).with_name("router_examples.jsonl")
    prompts = Path(__file__).with_name("prompts")  # the shop's wording and made-up examples, over prompts/
    closing_question = True  # a shop's manners (and tau2's users): "Is there anything else I can help you with?"
    reading = "steps"  # its figures were measured that way
    currency = "USD"  # what its refunds and charges are in (a conversation's total is said in it)
    locale = Path(__file__).with_name("locale")  # the Chinese words of its operations and arguments
    split_requests = True  # "change the address and swap the speaker": each change described and confirmed in turn
    metadata = t.metadata
    migrations = MIGRATIONS  # the retail_* tables' history (version table retail_alembic_version)

    def api(self, engine: sa.Engine) -> RetailApi:
        """The shop's ``RetailApi`` (fifteen typed operations) over ``engine``."""
        return RetailApi(engine)

    def has_users(self, engine: sa.Engine) -> bool:
        """True when ``retail_customer`` holds a row."""
        if not sa.inspect(engine).has_table(t.customer.name):
            return False
        with engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(t.customer)).scalar() > 0

    def seed_demo(self, engine: sa.Engine) -> dict[str, int]:
        """Our small made-up shop (customers ``ada_demo``, ``ben_demo``, ``cai_demo``) in place of the rows."""
        return loader.replace_rows(engine, demo_document())

    def load(self, engine: sa.Engine, directory: Path, *, progress: bool = False) -> dict[str, int]:
        """The ``db.json`` of ``directory`` (the data folder or its ``database`` folder) in place of the rows."""
        return loader.load(engine, directory, progress=progress)

    def export(self, engine: sa.Engine) -> dict:
        """The shop's whole state in db.json's shape."""
        return loader.export(engine)

    def policy_path(self) -> Path:
        """The shop's policy (``CHOPS_RETAIL_DIR/policy.md``), read at run time."""
        return policy_path()

    def now(self) -> datetime:
        """The wall clock (the shop's data has no moment of its own that its checks read)."""
        return datetime.now()


pack = RetailPack()
