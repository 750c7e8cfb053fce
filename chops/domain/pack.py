"""A domain pack: one business's system, as the agent sees it. Found through the ``chops.domains`` entry-point
group (how Python plug-ins are found everywhere) and chosen with ``CHOPS_DOMAIN`` (default ``cphos``), so a
company brings its own system as a package of its own, not as an edit of the agent.

What a pack provides, behind this Protocol: the ``SystemApi`` over its database (its typed operations, the
signed-in user's profile, the people a message may name), its tables and their migrations, its demo data
and its loader, the labelled example messages the router is trained on, its prompts and the catalogs of the words its
replies use.

Schema: a pack declares its tables (``metadata``, a ``MetaData`` of its own) and where their Alembic
migrations live (``migrations``); ``chops.migrate.upgrade(engine, pack)`` — behind ``chops db upgrade``,
``chops db init`` and ``chops serve`` — brings the agent's tables and the pack's to their newest revision,
each history recorded in a version table of its own (``<name>_alembic_version``).
"""

from __future__ import annotations

from datetime import datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy as sa

from chops.domain.outcomes import OperationResult
from chops.domain.system import SystemApi

GROUP = "chops.domains"


class DomainPack(Protocol):
    """One business's system."""

    name: str
    router_examples: Path  # JSONL of {"text", "route"}: made-up messages of every route (``chops.router``)
    prompts: Path | None  # the pack's own prompt files (its wording, its made-up examples), used before prompts/
    closing_question: bool  # a finished request's reply asks "anything else?" (a shop's manners; CPHOS: no)
    # A message of several requests is split and handled one request after the other (``chops.pipeline.agenda``): a
    # shop whose every change waits for its own yes; CPHOS proposes several changes as one plan instead.
    split_requests: bool
    # How the operations route reads a message: "typed" (one typed reading a step, the request's values kept across
    # turns and grounded by their kinds, ``chops.pipeline.read``) or "steps" (the plan of calls after look-ups).
    reading: str
    currency: str | None  # ISO 4217 code of the money its operations move (``OperationResult.money``); None: none
    # The gettext catalogs of its reply vocabulary (``<locale>/<lang>/LC_MESSAGES/chops.po``: the titles and labels of
    # its operations, ``Operation.title``), served behind the agent's own (``chops.i18n.use_catalogs``); None: English
    # only. Ship it as package data.
    locale: Path | None
    metadata: sa.MetaData  # the pack's own tables (never the agent's ``chops_*``)
    # The directory of the tables' Alembic history: its versions/ folder of revisions (first: the baseline; the
    # environment they run in is the agent's, ``chops.migrate.ENVIRONMENT``), shipped as package data. None: the
    # tables are created when missing and never altered.
    migrations: Path | None

    def api(self, engine: sa.Engine) -> SystemApi:
        """The system's API over ``engine`` (the acting user is always passed in by the caller)."""

    def has_users(self, engine: sa.Engine) -> bool:
        """True when the system holds any user (demo data is only ever seeded into an empty system)."""

    def seed_demo(self, engine: sa.Engine) -> dict[str, int]:
        """Replace the system's rows with the pack's small demo data set; rows per table."""

    def load(self, engine: sa.Engine, directory: Path, *, progress: bool = False) -> dict[str, int]:
        """Replace the system's rows with a dump in ``directory`` (one transaction); rows per table."""

    def export(self, engine: sa.Engine) -> dict:
        """The system's whole state as the JSON document ``load`` reads (``NotImplementedError`` when the
        pack cannot export)."""

    def policy_path(self) -> Path | None:
        """The business's policy document, the guide the agent answers policy questions from when no guides folder
        is given (the evaluation indexes it alone); None: the deployment's guides."""

    def replay(self, api: SystemApi, user: str, name: str, args: dict[str, Any]) -> OperationResult:
        """Run a data set's reference call (the evaluation's expected end state) as this pack's operation: ``api.call``
        unless the pack's operation asks more than the data set's does (the airline's cancel takes the traveller's
        reason, which its reference calls leave out)."""

    def now(self) -> datetime:
        """The business's clock: what "today" is for its checks, its prompts and the dates customers say ("next
        Friday"). A live system's is the wall clock; a data set's is the moment it was taken."""


class UnknownDomain(LookupError):
    """No installed domain pack has that name."""


def available_packs() -> list[str]:
    """The names of the installed domain packs."""
    return sorted(ep.name for ep in entry_points(group=GROUP))


def load_pack(name: str) -> DomainPack:
    """The installed domain pack called ``name`` (``UnknownDomain`` when there is none)."""
    found = entry_points(group=GROUP, name=name)
    if not found:
        installed = ", ".join(available_packs()) or "none"
        raise UnknownDomain(f"no domain pack {name!r} is installed; installed: {installed}")
    return next(iter(found)).load()
