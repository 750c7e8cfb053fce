"""The domain seam: nothing under chops/ imports a business, packs are found by entry point, and a tiny
third business (a lending library, in memory) runs through the agent — routed, executed, verified,
committed and replied to — without a line of the agent knowing it."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pytest
from babel.messages.extract import extract_from_dir
from pydantic import BaseModel, ConfigDict, Field

from chops.domain.operations import Operation
from chops.domain.outcomes import (Change, InvalidArgument, MissingArguments, NotInSystem, OperationResult, Outcome,
                                   PlanResult)
from chops.domain.pack import UnknownDomain, available_packs, load_pack
from chops.llm import ScriptedLLM
from chops.pipeline import Agent
from chops.settings import get_settings
from tests.unit.pipeline_support import FakeIndex, call, to_system, verdict

CHOPS = Path(__file__).resolve().parents[2] / "chops"


def test_nothing_under_chops_imports_a_business():
    offenders = []
    for path in CHOPS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.relative_to(CHOPS.parent)}: {n}" for n in names if n.split(".")[0] == "apis"]
    assert offenders == []


def test_packs_are_found_by_entry_point_and_an_unknown_one_is_a_clear_error():
    assert "cphos" in available_packs()
    pack = load_pack("cphos")
    assert pack.name == "cphos" and pack.router_examples.is_file()
    assert "ChangeAllTypesUploadLimit" in pack.api(None).operations
    with pytest.raises(UnknownDomain, match="no domain pack 'bakery'"):
        load_pack("bakery")


# --- a lending library: one reader table, one read and one write ---------------------------------

class NoArgs(BaseModel):
    """No arguments."""

    model_config = ConfigDict(extra="forbid")


class RenewArgs(BaseModel):
    """Arguments of RenewLoan."""

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)
    title: str = Field(alias="Title", description="the exact title of the borrowed book")


class Reader(BaseModel):
    """A library card holder's profile."""

    user_id: str
    loans: dict[str, int]  # title -> weeks left

    @property
    def names(self) -> tuple[str, ...]:
        return (self.user_id,)

    def lookup_data(self) -> dict:
        return self.model_dump()

    def grounding_values(self) -> tuple[str, ...]:
        return ()

    def describe(self) -> str:
        return f"Reader {self.user_id}; loans: " + ", ".join(f"{t} ({w} weeks left)" for t, w in self.loans.items())


def list_loans(state: dict, reader: str, args: NoArgs) -> tuple[str, Any]:
    """The reader's loans."""
    return f"{len(state[reader])} loan(s).", dict(state[reader])


def renew_loan(state: dict, reader: str, args: RenewArgs) -> tuple[str, Any]:
    """Add three weeks to one of the reader's loans."""
    if args.title not in state[reader]:
        raise InvalidArgument(f"You have not borrowed {args.title!r}.")
    state[reader][args.title] += 3
    return f"{args.title} is renewed for three more weeks.", None


class LibraryApi:
    """A complete ``SystemApi`` over a dict: readers -> {title: weeks left}; plans are all or nothing."""

    operations = {op.name: op for op in (
        Operation("ListMyLoans", "List the books the reader has borrowed.", NoArgs, False, False, list_loans),
        Operation("RenewLoan", "Renew one of the reader's loans by three weeks.", RenewArgs, True, False, renew_loan))}

    def __init__(self, loans: dict[str, dict[str, int]]) -> None:
        self.state = loans

    def profile(self, user: str) -> Reader | None:
        return Reader(user_id=user, loans=self.state[user]) if user in self.state else None

    def people_named(self, names: Collection[str]) -> list[tuple[Any, tuple[str, ...]]]:
        return [(u, (u,)) for u in self.state if u in names]

    def call(self, name: str, user: str, args: dict, **kw: Any) -> OperationResult:
        return self.call_plan(user, [(name, args)], **kw).steps[0]

    def call_plan(self, user: str, steps: Sequence[tuple[str, dict]], *, dry_run: bool = False,
                  idempotency_key: str | None = None, request_id: str | None = None,
                  staff: str | None = None) -> PlanResult:
        import copy

        work = copy.deepcopy(self.state)
        results = []
        for name, args in steps:
            op = self.operations[name]
            before = copy.deepcopy(work.get(user))
            try:
                if user not in work:
                    raise NotInSystem("You have no library card.")
                if missing := [k for k, v in args.items() if v is None]:
                    raise MissingArguments(f"{name} needs {', '.join(missing)}.")
                message, data = op.run(work, user, op.args_model.model_validate(args))
            except (NotInSystem, InvalidArgument, MissingArguments) as exc:
                results.append(OperationResult(operation=name, outcome=exc.outcome, message=exc.message))
                break
            diff = [Change(table="loans", key={"reader": user}, field=t, before=before[t], after=w)
                    for t, w in work[user].items() if before.get(t) != w]
            results.append(OperationResult(operation=name, outcome=Outcome.OK if diff or not op.writes else
                                           Outcome.OK_NOOP, message=message, diff=diff, data=data,
                                           dry_run=dry_run and op.writes))
        ok = all(r.outcome.succeeded for r in results) and len(results) == len(steps)
        commit = ok and not dry_run and any(self.operations[n].writes for n, _ in steps)
        if commit:
            self.state = work
        first = results[0]
        return PlanResult(operation=first.operation, outcome=first.outcome if len(results) == 1 else Outcome.OK,
                          message=" ".join(r.message for r in results), diff=[c for r in results for c in r.diff],
                          dry_run=dry_run, committed=commit, steps=results)


class Approvals:
    """No approval policies, no queue: every verified write is committed."""

    def needs_approval(self, operation: str) -> bool:
        return False

    def queue_approval(self, **kwargs: Any) -> int:
        raise AssertionError("nothing is queued in this business")


def renewal(title: str, request: str) -> tuple[Any, LibraryApi, ScriptedLLM]:
    """Reader ada sends ``request``; the scripted model routes it to the system, proposes renewing ``title``
    and passes it. (The turn's result, the library, the model.)"""
    llm = ScriptedLLM()
    api = LibraryApi({"ada": {"Dune": 1, "Emma": 2}, "bo": {"Ulysses": 1}})
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals())
    to_system(llm)
    llm.enqueue("executor", call("RenewLoan", Title=title)).enqueue("verifier", verdict(9))
    return agent.handle("ada", request, turn_key="lib:1"), api, llm


def test_a_third_business_runs_through_the_agent_without_the_agent_knowing_it():
    result, api, llm = renewal("Dune", "Please renew Dune for me")
    assert result.route == "system" and result.committed and result.operation == "RenewLoan"
    assert api.state == {"ada": {"Dune": 4, "Emma": 2}, "bo": {"Ulysses": 1}}  # only the sender's loan
    assert "Dune is renewed" in result.reply
    system_prompt = next(m for role, m, _ in llm.calls if role == "executor")[0][1]
    assert "RenewLoan(Title: str)" in system_prompt  # the pack's operations, from its registry


# What the generic prompts must not say: CPHOS's words (its roles, its operations) and the shop's (the second
# pack's). Words match whole ("exam" must not flag the "examples" every prompt has); identifiers anywhere.
OTHER_BUSINESSES = ("exam", "marking", "team leader", "arbiter", "olympiad", "upload limit", "school", "teacher",
                    "order #", "exchange", "refund", "gift card")
OTHER_IDENTIFIERS = ("ChangeAllTypes", "SubjectIndex", "cancel_pending_order", "item_ids")


def other_business_words(text: str) -> list[str]:
    """The words of ``OTHER_BUSINESSES`` and ``OTHER_IDENTIFIERS`` found in ``text``."""
    return [w for w in OTHER_BUSINESSES if re.search(rf"\b{re.escape(w)}s?\b", text, re.IGNORECASE)] + \
        [w for w in OTHER_IDENTIFIERS if w in text]


def test_the_prompts_a_third_business_gets_speak_of_it_alone():
    _, _, llm = renewal("Dune", "Please renew Dune for me")
    prompts = " ".join(text for _, messages, _ in llm.calls for _, text in messages)
    assert other_business_words(prompts) == []
    # and every generic pipeline prompt, including those this turn did not need (guide, profile, confirm...)
    generic = Path(__file__).resolve().parents[2] / "prompts"
    assert {f.name: other_business_words(f.read_text("utf-8")) for f in generic.glob("pipeline_*.txt")
            if other_business_words(f.read_text("utf-8"))} == {}


def test_the_replies_the_agent_writes_itself_speak_of_no_business():
    # Its message catalogs' msgids: a pack's words (its operations' titles, its labels) are in the pack's catalogs.
    msgids = {msg for _, _, msg, _, _ in extract_from_dir(str(CHOPS), method_map=[("**.py", "python")],
                                                           keywords={"N_": None})}
    assert len(msgids) > 40
    # Money is the agent's own business (a pack names its currency): "refund you $8.00" is no shop's word.
    assert {m: found for m in msgids if (found := [w for w in other_business_words(m) if w != "refund"])} == {}


def test_a_third_business_without_catalogs_asks_in_its_own_words():
    llm = ScriptedLLM()
    api = LibraryApi({"ada": {"Dune": 1}})
    agent = Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals())
    to_system(llm)
    llm.enqueue("executor", call("RenewLoan", Title=None)).enqueue("verifier", verdict(9))
    result = agent.handle("ada", "请帮我续借一本书", turn_key="lib:2")
    assert result.outcome == "refused_missing_args"
    assert "the exact title of the borrowed book" in result.reply  # its description: no Chinese words for it


def test_a_value_the_reader_never_wrote_is_not_used_in_the_third_business_either():
    result, api, _ = renewal("Emma", "Please renew my book")
    assert not result.committed and api.state["ada"] == {"Dune": 1, "Emma": 2}
    assert result.outcome == "refused_missing_args"  # grounding dropped the title nobody typed
