"""The airline domain pack: an airline's customer service (bookings, changes, bags, passengers, cancellations and
compensation), on the data of tau2-bench's airline domain (registered in ``pyproject.toml`` under ``chops.domains``
as ``airline``).

The airline's data folder (``CHOPS_AIRLINE_DIR``, default ``../shared/tau2-airline`` beside the repository) is read
at run time and never copied: its ``db.json`` is what ``chops db load --domain airline`` loads, and its ``policy.md``
is the pack's guide. Its clock is the policy's: "now" is 2024-05-15 15:00 EST.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import sqlalchemy as sa

from apis.airline import checks, loader
from apis.airline import tables as t
from apis.airline.args import Reason
from apis.airline.demo import demo_document
from apis.airline.service import AirlineApi
from chops.domain.document import DocumentPack, data_folder
from chops.domain.outcomes import OperationResult


def airline_dir() -> Path:
    """The airline data folder, tau2-airline (``CHOPS_AIRLINE_DIR``): database/db.json, policy.md."""
    return data_folder("CHOPS_AIRLINE_", "tau2-airline")


class AirlinePack(DocumentPack):
    """An airline: flights and their dates, travellers with their payment methods, reservations. Its data (load,
    export, the demo airline with travellers ``ava_demo``, ``bo_demo``, ``cy_demo``) is a ``DocumentPack``'s."""

    name = "airline"
    router_examples = Path(__file__).with_name("router_examples.jsonl")
    prompts = Path(__file__).with_name("prompts")  # the airline's wording and made-up examples, over prompts/
    closing_question = True  # an airline's manners (and tau2's users): "Is there anything else I can help you with?"
    currency = "USD"  # what its refunds, charges and certificates are in
    locale = Path(__file__).with_name("locale")  # the Chinese words of its operations, arguments and refusals
    split_requests = True  # "add a bag and change the passenger": each change described and confirmed in turn
    # A booking's flights, passengers and payments are nested records: the typed reading is built for them (nothing
    # measured yet on this pack).
    reading = "typed"
    metadata = t.metadata
    migrations = loader.MIGRATIONS  # the airline_* tables' history (version table airline_alembic_version)
    store, users, demo = loader.STORE, t.user, staticmethod(demo_document)

    def api(self, engine: sa.Engine) -> AirlineApi:
        """The airline's ``AirlineApi`` (thirteen typed operations) over ``engine``."""
        return AirlineApi(engine)

    def policy_path(self) -> Path:
        """The airline's policy (``CHOPS_AIRLINE_DIR/policy.md``), read at run time."""
        return airline_dir() / "policy.md"

    def replay(self, api: AirlineApi, user: str, name: str, args: dict[str, Any]) -> OperationResult:
        """A reference call of the data set as the airline's operation. Its cancel takes the traveller's reason, which
        the data set's reference cancel leaves out (tau2 checks no policy): the reference cancels, so the first reason
        the policy accepts is given (none accepted: the refusal of the last)."""
        if name != "cancel_reservation" or args.get("reason"):
            return api.call(name, user, args)
        result = None
        for reason in get_args(Reason):
            result = api.call(name, user, {**args, "reason": reason})
            if result.outcome.succeeded:
                break
        return result

    def now(self) -> datetime:
        """The airline's clock: the policy's "now", 2024-05-15 15:00 EST (``checks.now``)."""
        return checks.now()


pack = AirlinePack()
