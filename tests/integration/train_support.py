"""The shop's train tasks as the real-data tests read them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path


def train_actions(retail_dir: Path, names: tuple[str, ...]) -> Iterator[tuple[str, str, str, dict]]:
    """(task id, customer, scripted opening, reference action) of every train task's reference actions named
    ``names``."""
    tasks = {t["id"]: t for t in json.loads((retail_dir / "tasks" / "train.json").read_text())}
    scripts = json.loads((retail_dir / "users" / "train.json").read_text())["scripts"]
    for script in scripts:
        for action in tasks[script["task_id"]]["evaluation_criteria"]["actions"]:
            if action["name"] in names:
                yield script["task_id"], script["user_id"], script["opening"], action
