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

from apis.retail import loader
from apis.retail import tables as t
from apis.retail.db import MIGRATIONS
from apis.retail.demo import demo_document
from apis.retail.service import RetailApi
from chops.domain.document import DocumentPack, data_folder


def retail_dir() -> Path:
    """The retail data folder, tau2-retail (``CHOPS_RETAIL_DIR``): database/db.json, policy.md."""
    return data_folder("CHOPS_RETAIL_", "tau2-retail")


def policy_path() -> Path:
    """The shop's policy, the pack's guide document: ``CHOPS_RETAIL_DIR/policy.md``."""
    return retail_dir() / "policy.md"


class RetailPack(DocumentPack):
    """An online shop: customers, payment methods, products and variants, orders. Its data (load, export, the demo
    shop with customers ``ada_demo``, ``ben_demo``, ``cai_demo``) is a ``DocumentPack``'s."""

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
    store, users, demo = loader.STORE, t.customer, staticmethod(demo_document)

    def api(self, engine: sa.Engine) -> RetailApi:
        """The shop's ``RetailApi`` (fifteen typed operations) over ``engine``."""
        return RetailApi(engine)

    def policy_path(self) -> Path:
        """The shop's policy (``CHOPS_RETAIL_DIR/policy.md``), read at run time."""
        return policy_path()

    def now(self) -> datetime:
        """The wall clock (the shop's data has no moment of its own that its checks read)."""
        return datetime.now()


pack = RetailPack()
