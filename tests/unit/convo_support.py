"""A made-up mini shop for the conversation-eval tests: a domain pack over SQLite (documents in one table, the
shape of a JSON dump), a stub agent that looks up, asks for the yes and then commits, and made-up task and
scripted-user files in the eval's formats. Nothing here comes from any dataset."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field

from chops.domain.operations import Operation
from chops.domain.outcomes import Change, DomainError, InvalidArgument, NotInSystem, OperationResult, Outcome, \
    PlanResult, PreconditionFailed, combined_outcome
from chops.records import TurnResult

meta = sa.MetaData()
docs = sa.Table("minishop_doc", meta, sa.Column("kind", sa.String(20), primary_key=True),
                sa.Column("key", sa.String(40), primary_key=True), sa.Column("body", sa.JSON, nullable=False))

DUMP = {
    "users": {"ann_lee_1": {"user_id": "ann_lee_1", "address": {"city": "Springfield", "zip": "11111"},
                            "orders": ["#M1", "#M2"]},
              "bo_kim_2": {"user_id": "bo_kim_2", "address": {"city": "Shelbyville", "zip": "22222"},
                           "orders": ["#M3"]}},
    "orders": {"#M1": {"order_id": "#M1", "user_id": "ann_lee_1", "status": "pending", "total": 12.5,
                       "payments": [{"type": "payment", "amount": 12.5}]},
               "#M2": {"order_id": "#M2", "user_id": "ann_lee_1", "status": "pending", "total": 1234.5,
                       "payments": [{"type": "payment", "amount": 1234.5}]},
               "#M3": {"order_id": "#M3", "user_id": "bo_kim_2", "status": "cancelled", "total": 3.0,
                       "payments": []}},
}


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OrderArgs(Args):
    order_id: str = Field(description="the order number, e.g. #M1")


class CancelArgs(Args):
    order_id: str = Field(description="the order number")
    reason: str = Field(description="why: 'no longer needed' or 'ordered by mistake'")


class AddressArgs(Args):
    city: str = Field(description="the new city")
    zip: str = Field(description="the new zip code")


def _order(conn: Any, user: str, order_id: str) -> dict:
    body = conn.execute(sa.select(docs.c.body).where(docs.c.kind == "orders", docs.c.key == order_id)).scalar()
    if body is None or body["user_id"] != user:
        raise NotInSystem(f"No order {order_id} on your account.")
    return dict(body)


def get_order(conn: Any, user: str, args: OrderArgs) -> tuple[str, Any, list]:
    return "Order found.", _order(conn, user, args.order_id), []


def cancel(conn: Any, user: str, args: CancelArgs) -> tuple[str, Any, list]:
    order = _order(conn, user, args.order_id)
    if order["status"] != "pending":
        raise PreconditionFailed("Only a pending order can be cancelled.")
    if args.reason not in ("no longer needed", "ordered by mistake"):
        raise InvalidArgument("The reason must be 'no longer needed' or 'ordered by mistake'.")
    refunds = [{"type": "refund", "amount": p["amount"]} for p in order["payments"] if p["type"] == "payment"]
    new = {**order, "status": "cancelled", "cancel_reason": args.reason, "payments": order["payments"] + refunds}
    conn.execute(docs.update().where(docs.c.kind == "orders", docs.c.key == args.order_id).values(body=new))
    return f"Order {args.order_id} cancelled.", None, [
        Change(table="orders", key={"order_id": args.order_id}, field="status", before="pending", after="cancelled")]


def move(conn: Any, user: str, args: AddressArgs) -> tuple[str, Any, list]:
    body = conn.execute(sa.select(docs.c.body).where(docs.c.kind == "users", docs.c.key == user)).scalar()
    new = {**body, "address": {"city": args.city, "zip": args.zip}}
    conn.execute(docs.update().where(docs.c.kind == "users", docs.c.key == user).values(body=new))
    return "Address changed.", None, [Change(table="users", key={"user_id": user}, field="address",
                                             before=body["address"], after=new["address"])]


OPERATIONS = {op.name: op for op in (
    Operation("get_order_details", "Look up one of your orders.", OrderArgs, False, False, get_order, observe=True),
    Operation("cancel_pending_order", "Cancel a pending order.", CancelArgs, True, False, cancel, confirm=True),
    Operation("modify_user_address", "Change your address.", AddressArgs, True, False, move, confirm=True),
)}


class MiniProfile:
    """The signed-in customer as the agent sees them."""

    def __init__(self, user_id: str, orders: list[str]) -> None:
        self.user_id, self.orders = user_id, tuple(orders)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.user_id,)

    def describe(self) -> str:
        return f"Customer {self.user_id}; orders: {', '.join(self.orders)}"

    def lookup_data(self) -> dict:
        return {"orders": list(self.orders)}

    def grounding_values(self) -> tuple[str, ...]:
        return self.orders


class MiniApi:
    """The mini shop's ``SystemApi``: each call, or a plan of calls, in one transaction (rolled back for a
    dry run or a refusal)."""

    operations = OPERATIONS

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def profile(self, user: str) -> MiniProfile | None:
        with self.engine.connect() as conn:
            body = conn.execute(sa.select(docs.c.body).where(docs.c.kind == "users", docs.c.key == user)).scalar()
        return None if body is None else MiniProfile(user, body["orders"])

    def people_named(self, names) -> list:
        return []

    def call(self, name: str, user: str, args: dict, *, dry_run: bool = False, **_: Any) -> OperationResult:
        return self.call_plan(user, [(name, args)], dry_run=dry_run).steps[0]

    def call_plan(self, user: str, steps, *, dry_run: bool = False, **_: Any) -> PlanResult:
        results: list[OperationResult] = []
        with self.engine.connect() as conn:
            trans = conn.begin()
            for name, args in steps:
                op = self.operations[name]
                try:
                    message, data, diff = op.run(conn, user, op.args_model.model_validate(args))
                except DomainError as exc:
                    results.append(OperationResult(operation=name, outcome=exc.outcome, message=exc.message))
                    break
                results.append(OperationResult(operation=name, outcome=Outcome.OK if diff else Outcome.OK_NOOP,
                                               message=message, data=data, diff=diff, dry_run=dry_run,
                                               committed=op.writes and not dry_run))
            outcome = combined_outcome(results)
            commit = outcome.succeeded and not dry_run and any(self.operations[n].writes for n, _ in steps)
            (trans.commit if commit else trans.rollback)()
        if not commit:
            results = [r.model_copy(update={"committed": False}) for r in results]
        return PlanResult(operation=results[0].operation, outcome=outcome, message=results[-1].message,
                          diff=[c for r in results for c in r.diff], data=results[-1].data, dry_run=dry_run,
                          committed=commit, steps=results)


class MiniPack:
    """The mini shop as a domain pack: schema, load from ``db.json``, export in the same shape, its API."""

    name = "minishop"
    prompts = None
    router_examples = None
    currency = None
    reading = "steps"
    locale = None
    closing_question = True  # a shop closes a finished request with "anything else?"
    split_requests = False  # the stub agent handles one request a turn
    metadata = meta
    migrations = None  # its tables are created when missing (chops.migrate), never altered

    def api(self, engine: sa.Engine) -> MiniApi:
        return MiniApi(engine)

    def load(self, engine: sa.Engine, directory: Path, *, progress: bool = False) -> dict[str, int]:
        dump = json.loads((Path(directory) / "db.json").read_text(encoding="utf-8"))
        with engine.begin() as conn:
            conn.execute(docs.delete())
            for kind, rows in dump.items():
                conn.execute(docs.insert(), [{"kind": kind, "key": k, "body": v} for k, v in rows.items()])
        return {kind: len(rows) for kind, rows in dump.items()}

    def export(self, engine: sa.Engine) -> dict:
        out: dict[str, dict] = {}
        with engine.connect() as conn:
            for kind, key, body in conn.execute(sa.select(docs.c.kind, docs.c.key, docs.c.body)):
                out.setdefault(kind, {})[key] = body
        return out

    def policy_path(self) -> Path | None:
        return None  # the deployment's guides

    def now(self) -> datetime:
        return datetime(2024, 5, 15, 15, 0)  # a data set's moment, as the airline's

    def replay(self, api: Any, user: str, name: str, args: dict) -> OperationResult:
        return api.call(name, user, args)


def write_dump(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "db.json").write_text(json.dumps(DUMP), encoding="utf-8")
    return directory


# --- a stub agent: look up, describe and ask, commit on yes -------------------------------------------------

class StubAgent:
    """Stands in for ``Agent.handle``: cancels the order a message names after the customer's yes; asks for a
    person on "human"; raises on "explode". ``careless`` commits without asking (an unconfirmed write)."""

    def __init__(self, api: MiniApi, careless: bool = False) -> None:
        self.api, self.careless, self.waiting = api, careless, None

    def handle(self, nickname: str, text: str, *, history=None, turn_key=None, on_event=None,
               conversation_id=None) -> TurnResult:
        low = text.lower()
        totals = {"trace": {"totals": {"calls": 2}}, "cost_usd": 0.001, "latency_s": 0.01}
        if "explode" in low:
            raise RuntimeError("the stub agent blew up")
        if "human" in low:
            return TurnResult(reply="YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.", route="handoff",
                              **totals)
        if self.waiting and "yes" in low:
            args, self.waiting = self.waiting, None
            return self._commit(nickname, args, confirmed=True)
        found = re.search(r"#M\d+", text)
        if "cancel" in low and found:
            args = {"order_id": found.group(0), "reason": "no longer needed"}
            look = self.api.call("get_order_details", nickname, {"order_id": args["order_id"]})
            steps = [{"role": "executor", "lookups": [{"operation": "get_order_details", "args": {
                "order_id": args["order_id"]}, "outcome": str(look.outcome)}]}]
            if self.careless:
                return self._commit(nickname, args, confirmed=False, steps=steps)
            total = (look.data or {}).get("total", 0)
            self.waiting = args
            pending = {"id": 1, "operations": ["cancel_pending_order"], "description": "cancel"}
            return TurnResult(reply=f"I will cancel order {args['order_id']} and refund ${total:,.2f}. Shall I "
                              "proceed? (yes/no)", route="system", operation="cancel_pending_order", args=args,
                              outcome="pending_confirmation", pending=pending,
                              steps=[{"operation": "cancel_pending_order", "args": args, "outcome": "ok"}],
                              trace={"pending": pending, "steps": steps, "totals": {"calls": 3}}, cost_usd=0.002,
                              latency_s=0.02)
        return TurnResult(reply="Could you give me the order number?", route="system", **totals)

    def _commit(self, nickname: str, args: dict, *, confirmed: bool, steps: list | None = None) -> TurnResult:
        res = self.api.call("cancel_pending_order", nickname, args)
        commit = {"role": "commit", "diff": [c.model_dump() for c in res.diff]}
        trace = {"steps": [*(steps or []), commit], "totals": {"calls": 1}, **({"confirmed": True} if confirmed else {})}
        return TurnResult(reply=f"{res.message} Is there anything else I can help with?", route="system",
                          operation="cancel_pending_order", args=args, outcome=str(res.outcome),
                          committed=res.committed, trace=trace, cost_usd=0.001, latency_s=0.01,
                          steps=[{"operation": "cancel_pending_order", "args": args, "outcome": str(res.outcome)}])


def stub_service_factory(careless: bool = False, made: list | None = None):
    """(engine, api) -> a real ConversationService over a real store with the stub agent."""
    from chops.conversation import ConversationService
    from chops.store import ConversationStore

    def make(engine: sa.Engine, api: MiniApi) -> ConversationService:
        if made is not None:
            made.append(engine)
        return ConversationService(ConversationStore(engine, api=api), StubAgent(api, careless))
    return make


# --- made-up task and user files ------------------------------------------------------------------------------

SETS = {"confirm": ["shall i", "go ahead", "(yes/no)"], "anything_else": ["anything else"]}


def _task(tid: str, reason: str, actions: list[dict], info: list[str] | None = None) -> dict:
    return {"id": tid, "user_scenario": {"instructions": {"reason_for_call": reason, "known_info": "You are Ann."}},
            "evaluation_criteria": {"actions": [{"action_id": f"{tid}_{i}", **a} for i, a in enumerate(actions)],
                                    "communicate_info": info or [], "reward_basis": ["DB"]}}


def _script(tid: str, opening: str, user: str = "ann_lee_1", max_turns: int = 6) -> dict:
    return {"task_id": tid, "user_id": user, "scriptable": True, "opening": opening, "default": "Order #M1.",
            "max_turns": max_turns,
            "replies": [{"id": "yes", "when_any": ["@confirm"], "say": "Yes, please."},
                        {"id": "bye", "when_any": ["@anything_else"], "say": "No, thanks!", "end": True},
                        {"id": "done", "when_any": ["cancelled"], "say": "Great, thanks!", "end": True}]}


CANCEL_M1 = {"name": "cancel_pending_order", "arguments": {"order_id": "#M1", "reason": "no longer needed"}}


def write_task_files(directory: Path) -> tuple[Path, Path]:
    """Five made-up tasks: a right cancellation (and the refund said), a transfer, a crash, a wrong order
    cancelled, and a customer who never confirms (max_turns)."""
    tasks = [
        _task("cancel", "Cancel order #M1.", [{"name": "get_order_details", "arguments": {"order_id": "#M1"}},
                                             CANCEL_M1], info=["12.50"]),
        _task("person", "You want a human.", [{"name": "transfer_to_human_agents", "arguments": {"summary": "x"}}]),
        _task("boom", "Break things.", []),
        _task("wrong", "Cancel order #M2.", [{"name": "cancel_pending_order",
                                              "arguments": {"order_id": "#M2", "reason": "no longer needed"}}],
              info=["1234.50"]),
        _task("stuck", "Cancel order #M1.", [CANCEL_M1]),
    ]
    users = {"format": "made-up", "keyword_sets": SETS, "scripts": [
        _script("cancel", "Hi, please cancel my order #M1: no longer needed."),
        _script("person", "I want to talk to a human."),
        _script("boom", "Please explode."),
        _script("wrong", "Cancel my order #M1 please."),
        {**_script("stuck", "Cancel my order #M1.", max_turns=3),
         "replies": [{"id": "maybe", "when_any": ["@confirm"], "say": "Hmm, let me think about #M1."}]},
    ]}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    (directory / "users.json").write_text(json.dumps(users), encoding="utf-8")
    return directory / "tasks.json", directory / "users.json"
