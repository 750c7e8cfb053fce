"""The conversation eval's batch runner: every (task, trial) once, each record appended to ``results.jsonl``
as it finishes (so an interrupted run resumes where it stopped), ``--workers`` threads each on its own
database copy, one agent LLM shared by all.

Run directory layout::

    run.json        the run's identity (domain, task and users files, user model, turn cap); a resume must match
    results.jsonl   one JSON record per finished (task, trial)
    work/           template.db (the pack's pristine database) and per-conversation scratch copies
    end_states/     each conversation's exported end state
    summary.json, report.md, report.png   written by ``eval.conversations.report`` at the end
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eval.conversations.database import PackTemplate
from eval.conversations.session import ServiceFactory, Wiring, run_conversation
from eval.conversations.tasks import Task, UsersFile, file_digest, load_tasks, load_users
from eval.runner import RESULTS, ResultLog, prepare_run_dir, results_as_done


class ConversationEvalConfig(BaseModel):
    """One conversation eval: which business, which tasks and customers, how often, how wide."""

    domain: str = "retail"
    tasks: Path
    users: Path | None = Field(default=None, description="scripted users; needed unless a user model plays them")
    dump: Path = Field(description="what the pack's ``load`` reads (retail: the folder holding db.json)")
    trials: int = Field(default=1, ge=1)
    workers: int = Field(default=1, ge=1)
    user_model_url: str | None = None
    user_model_name: str | None = None
    limit: int | None = Field(default=None, ge=1)
    task_ids: list[str] | None = None
    end_states: str = Field(default="first", pattern="^(all|first|none)$")
    max_turns: int | None = Field(default=None, ge=1, description="at most this many customer messages a "
                                  "conversation (None: the script's, else the LLM user's own limit)")

    def identity(self) -> dict[str, Any]:
        """What must not change between a run and its resume (trials, workers and the selection may)."""
        return {"kind": "conversations", "domain": self.domain, "tasks": file_digest(self.tasks),
                "users": file_digest(self.users) if self.users else None,
                "user_model": [self.user_model_url, self.user_model_name] if self.user_model_url else "scripted",
                **({"max_turns": self.max_turns} if self.max_turns else {})}


def customer_resolver(users: UsersFile | None) -> Callable[[Task], str]:
    """A task's signed-in customer: its script's ``user_id``; without a script, the first ``user_id`` its
    reference actions pass (tau2's tasks name the customer only there), else the task's own ``user_id``."""
    def customer_of(task: Task) -> str:
        if users is not None and task.id in users.scripts:
            return str(users.scripts[task.id]["user_id"])
        for action in task.actions:
            if action.arguments.get("user_id"):
                return str(action.arguments["user_id"])
        if task.raw.get("user_id"):
            return str(task.raw["user_id"])
        raise ValueError(f"task {task.id}: no customer (no script, no user_id in its reference actions)")
    return customer_of


def user_factory(cfg: ConversationEvalConfig, users: UsersFile | None, chat: Any = None) -> Callable[[Task], Any]:
    """Fresh customers per conversation: an LLM user when a user model is given (``chat``, else a
    ``ChatOpenAI`` on ``--user-model``), else the task's scripted user."""
    if cfg.user_model_url or chat is not None:
        from eval.conversations.llm_user import LLMUser, chat_model

        model = chat or chat_model(cfg.user_model_url, cfg.user_model_name or "default")
        limit = {"max_turns": cfg.max_turns} if cfg.max_turns else {}
        return lambda task: LLMUser(model, task.instructions, **limit)
    if users is None:
        raise ValueError("scripted users need a --users file (or give --user-model)")
    from eval.conversations.scripted_user import ScriptedUser

    return lambda task: ScriptedUser(users.script(task.id), users.keyword_sets, max_turns=cfg.max_turns)


def pending_work(tasks: list[Task], trials: int, done: set[str]) -> list[tuple[Task, int]]:
    """The (task, trial) pairs without a record yet, trial-major (every task once, then again)."""
    return [(t, k) for k in range(1, trials + 1) for t in tasks if f"{t.id}#{k}" not in done]


def run_conversations(cfg: ConversationEvalConfig, out_dir: Path, *, pack: Any = None,
                      make_service: ServiceFactory | None = None, user_chat: Any = None, settings: Any = None,
                      retry_errors: bool = False, progress: bool = True,
                      on_record: Callable[[dict], None] | None = None) -> list[dict]:
    """Run (or resume) the conversation eval ``cfg`` into ``out_dir``; returns every record of the run.

    ``pack``, ``make_service`` (engine, api -> ConversationService) and ``user_chat`` (a chat model for
    the LLM user) are injectable for tests; by default the pack is ``cfg.domain``'s and the service is
    the real agent's (``eval.conversations.wiring``), all conversations sharing one LLM."""
    from chops.domain.pack import load_pack
    from chops.settings import get_settings

    out_dir = Path(out_dir)
    settings = settings or get_settings()
    pack = pack or load_pack(cfg.domain)
    tasks = load_tasks(cfg.tasks, task_ids=cfg.task_ids, limit=cfg.limit)
    users = load_users(cfg.users) if cfg.users else None
    if users is not None and not (cfg.user_model_url or user_chat):
        if missing := [t.id for t in tasks if t.id not in users.scripts]:
            raise ValueError(f"{cfg.users} has no script for task(s) {', '.join(missing)}")
    make_user = user_factory(cfg, users, user_chat)
    prepare_run_dir(out_dir, {"identity": cfg.identity(), "architecture": settings.architecture,
                              "tasks_file": str(cfg.tasks), "users_file": str(cfg.users) if cfg.users else None,
                              "dump": str(cfg.dump)})
    log = ResultLog(out_dir / RESULTS)
    records = log.repair()
    if retry_errors and any(r.get("error") for r in records):
        records = [r for r in records if not r.get("error")]
        log.rewrite(records)
    todo = pending_work(tasks, cfg.trials, {r["key"] for r in records})
    if not todo:
        return records
    template = PackTemplate.build(pack, cfg.dump, out_dir / "work")
    closer = None
    if make_service is None:
        from eval.conversations.wiring import agent_service_factory

        make_service, closer = agent_service_factory(settings, pack)
    wiring = Wiring(template=template, make_service=make_service, make_user=make_user,
                    customer_of=customer_resolver(users), scratch_dir=out_dir / "work" / "scratch",
                    end_states_dir=out_dir / "end_states", end_states=cfg.end_states)
    try:
        records += _execute(todo, wiring, cfg.workers, log, progress, len(tasks) * cfg.trials, on_record)
    finally:
        if closer is not None:
            closer()
    return records


def _execute(todo: list[tuple[Task, int]], wiring: Wiring, workers: int, log: ResultLog, progress: bool,
             total: int, on_record: Callable[[dict], None] | None) -> list[dict]:
    """Run ``todo`` on ``workers`` threads, appending each record the moment it is done."""
    from tqdm import tqdm

    from eval.casework import EvalAbort

    done: list[dict] = []
    lock = threading.Lock()
    bar = tqdm(total=total, initial=total - len(todo), disable=not progress, unit="task", dynamic_ncols=True)

    def finish(rec: dict) -> None:
        with lock:
            log.append(rec)
            done.append(rec)
            if on_record:
                on_record(rec)
            bar.update(1)
            bar.set_postfix(passed=f"{sum(r['passed'] for r in done)}/{len(done)}", last=rec["key"])

    try:
        for rec in results_as_done(todo, lambda task, trial: run_conversation(task, trial, wiring), workers,
                                   "convo"):
            finish(rec)
        return done
    except (EvalAbort, KeyboardInterrupt):
        bar.write(f"stopped after {len(done)} new conversation(s); rerun the same command to resume")
        raise
    finally:
        bar.close()

