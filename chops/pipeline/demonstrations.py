"""Solution demonstrations (EcoAssistant): what a verified turn leaves in the memory, and how recalled
solutions are shown to the classifier and the executor.

What is remembered never holds personal data: a committed write keeps its operation and arguments
(values the sender wrote), a read only its operation (never its result), a guide answer its text and
source (the guides are public to every user), a profile answer only its route. Demonstrations go into
the user part of a prompt (``${demonstrations}``), so the static heads stay cached.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

from chops.domain.outcomes import Outcome
from chops.pipeline.context import Candidate, TurnContext
from chops.pipeline.prompting import clip, fragment, section
from chops.records import CONVERSATION_ROUTES, PARTIAL, Solution, TurnResult

log = logging.getLogger(__name__)

ANSWER_CLIP = 300  # a remembered guide answer, as shown: the gist is enough to steer
CLASSIFIER_PROMPTS = ("level1", "level2", "onelevel")


class Memory(Protocol):
    """What the agent needs of a solution memory (``chops.memory.SolutionMemory``)."""

    def recall(self, text: str) -> list[Solution]: ...

    def remember(self, solution: Solution) -> int | None: ...


def solution_of(text: str, cand: Candidate, passed: bool, result: TurnResult) -> Solution | None:
    """The solution a turn leaves in the memory, or None: only a verified turn that did what it said
    (a write committed, a read or answer given), never a refusal, a queued write or an ask-back."""
    if not passed or result.queued or cand.route in CONVERSATION_ROUTES:  # small talk: a fixed reply
        return None
    if cand.operation is not None and (result.outcome in (None, PARTIAL) or not Outcome(result.outcome).succeeded):
        return None  # a refusal, or a plan done only in part: not a solution to show again
    if cand.route == "basic_info":
        return Solution(request=text, route="basic_info")
    if cand.route == "guide":
        src = cand.source
        return Solution(request=text, route="guide", answer=cand.answer,
                        source=f"{src.file}, page {src.page}" if src is not None else None)
    if cand.writes:
        return Solution(request=text, route="system", operation=cand.operation, args=cand.args or {})
    return Solution(request=text, route="system", operation=cand.operation)


def recall(memory: Memory | None, ctx: TurnContext) -> None:
    """The most similar verified solutions, for the classifier and executor prompts (``memory`` None: off)."""
    if memory is None:
        return
    ctx.demonstrations = memory.recall(ctx.text)
    ctx.trace.step("memory", demonstrations=[f"m-{s.id}" for s in ctx.demonstrations],
                   similarities=[s.similarity for s in ctx.demonstrations])
    ctx.trace.emit("recall", {"ids": [s.id for s in ctx.demonstrations],
                              "similarities": [s.similarity for s in ctx.demonstrations]})


def remember(memory: Memory | None, ctx: TurnContext, cand: Candidate, passed: bool,
             result: TurnResult) -> TurnResult:
    """Store a verified (and, for a write, committed) solution; the reply is already decided, so a failure here
    is logged and the turn stands."""
    if memory is None:
        return result
    try:
        solution = solution_of(ctx.text, cand, passed, result)
        if solution is None:
            return result
        memory_id = memory.remember(solution)
    except Exception:  # noqa: BLE001 - the user's turn is done (a write committed); the memory is an optimisation
        log.exception("could not remember the solution of turn %s", ctx.trace.info.get("turn_key"))
        return result
    ctx.trace.info["remembered"] = memory_id
    result.trace["remembered"] = memory_id
    return result


def _writes(sol: Solution) -> bool:
    # A committed write is remembered with its arguments (``{}`` for none), a read with its operation only.
    return sol.args is not None


def _decision(sol: Solution, prompt: str) -> str | None:
    """The classifier label ``sol`` stands for in ``prompt`` (None: not a demonstration there)."""
    if prompt == "level1":
        return "own_fact" if sol.route == "basic_info" else "something_else"
    system = "do_operation" if _writes(sol) else "look_up_people"
    labels = {"guide": "answer_from_guide", "system": system}
    if prompt == "onelevel":
        labels["basic_info"] = "own_fact"
    return labels.get(sol.route)


def reply_json(value: Any) -> str:
    """``value`` as the model writes its reply: compact JSON (the grammar allows no spaces)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _executor_line(sol: Solution, prompt: str) -> str | None:
    if sol.route == "system" and prompt in ("system", "only"):
        call: dict[str, Any] = {"operation": sol.operation}
        if sol.args is not None:  # a read's arguments are not remembered
            call["args"] = sol.args
        # Exactly as the prompt's own reply is written (compact JSON, as in its made-up examples): a plan
        # in the system executor, one call in the executor-only one.
        return reply_json({"calls": [call]} if prompt == "system" else {"call": call})
    if sol.route == "guide" and prompt in ("guide", "only"):
        answer = clip(sol.answer or "", ANSWER_CLIP)
        if prompt == "only":
            return reply_json({"call": {"operation": "AnswerDirectly", "answer": answer}})
        return fragment("demonstration_answer", answer=answer, source=sol.source or "none")
    return None


def _shown(sol: Solution, prompt: str) -> str | None:
    return _decision(sol, prompt) if prompt in CLASSIFIER_PROMPTS else _executor_line(sol, prompt)


def demonstrations_section(solutions: list[Solution], prompt: str) -> str:
    """The ``${demonstrations}`` part of a prompt: ``level1``/``level2``/``onelevel`` (classifier) or
    ``system``/``guide``/``only`` (executor); "" when none of ``solutions`` fits it."""
    lines = [fragment("demonstration", request=clip(sol.request, 200), solution=shown)
             for sol in solutions if (shown := _shown(sol, prompt)) is not None]
    return section("demonstrations", lines)
