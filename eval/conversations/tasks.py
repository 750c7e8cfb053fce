"""The two input files of a conversation eval: tasks (tau2's task format) and scripted users.

Only the fields the eval reads are modelled; everything else in a task is kept in ``raw`` so a business's
own files may carry more. A business writes its regression conversations in the same two formats
(``eval/README.md``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


class Action(BaseModel):
    """One reference call: the tool's name and arguments (``compare_args``: the arguments that matter)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    compare_args: list[str] | None = None


class Task(BaseModel):
    """One task: its id, the simulated customer's instructions, the reference solution and the facts the
    agent must tell the customer."""

    id: str
    instructions: Any = None  # ``user_scenario.instructions``: a dict of sections or a plain string
    actions: list[Action] = Field(default_factory=list)
    communicate_info: list[str] = Field(default_factory=list)
    raw: dict[str, Any] = Field(default_factory=dict, repr=False)

    @classmethod
    def from_tau2(cls, doc: dict[str, Any]) -> "Task":
        """A task from one object of a tau2-format task list."""
        criteria = doc.get("evaluation_criteria") or {}
        return cls(id=str(doc["id"]), instructions=(doc.get("user_scenario") or {}).get("instructions"),
                   actions=[Action.model_validate(a) for a in criteria.get("actions") or []],
                   communicate_info=[str(s) for s in criteria.get("communicate_info") or []], raw=doc)


class UsersFile(BaseModel):
    """A scripted-users file: the shared keyword sets and one script per task id."""

    keyword_sets: dict[str, list[str]] = Field(default_factory=dict)
    scripts: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def script(self, task_id: str) -> dict[str, Any]:
        """The script of ``task_id`` (``KeyError`` when the file has none)."""
        return self.scripts[task_id]


def load_tasks(path: Path, *, task_ids: list[str] | None = None, limit: int | None = None) -> list[Task]:
    """The tasks of ``path`` in file order; ``task_ids`` keeps those (in file order), ``limit`` the first N.
    An id asked for that the file lacks is a ``ValueError`` (a typo must not shrink a run silently)."""
    docs = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(docs, dict):  # a file may wrap its list: {"tasks": [...]}
        docs = docs.get("tasks", [])
    tasks = [Task.from_tau2(d) for d in docs]
    if task_ids:
        known = {t.id for t in tasks}
        if missing := [i for i in task_ids if i not in known]:
            raise ValueError(f"{path} has no task(s) {', '.join(missing)}")
        wanted = set(task_ids)
        tasks = [t for t in tasks if t.id in wanted]
    return tasks[:limit] if limit else tasks


def load_users(path: Path) -> UsersFile:
    """The scripted users of ``path`` (its ``scripts`` list, keyed by ``task_id``)."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    return UsersFile(keyword_sets=doc.get("keyword_sets") or {},
                     scripts={str(s["task_id"]): s for s in doc.get("scripts") or []})


def file_digest(path: Path) -> str:
    """A short sha256 of a file's bytes: a run's identity names the exact task and users files."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
