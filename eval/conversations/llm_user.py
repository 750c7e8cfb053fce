"""A simulated customer played by a chat model on any OpenAI-compatible endpoint (``--user-model``).

The system prompt is ``prompts/eval_user_simulator.txt`` (our own wording of tau2's published user
guidelines) with the task's ``user_scenario.instructions`` in its ``<scenario>`` block. The model speaks as
the customer; the agent's messages are its "user" turns. A reply carrying ``###STOP###``,
``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` ends the conversation (the marker is removed from the text).
"""

from __future__ import annotations

import os
import string
from typing import Any

from chops.llm.base import load_prompt

MARKERS = {"###STOP###": "stop", "###TRANSFER###": "transfer", "###OUT-OF-SCOPE###": "out_of_scope"}
MAX_TURNS, MAX_TURNS_REASON = 30, "max_turns"
# Read as the instructions' sections, in this order, under readable headings (other keys follow as they are).
SECTIONS = (("reason_for_call", "Why you are contacting the company"), ("known_info", "What you know"),
            ("unknown_info", "What you do not know"), ("task_instructions", "How to behave"))


def scenario_text(instructions: Any) -> str:
    """The scenario block: the task's instructions as headed sections (a plain string is used as is)."""
    if instructions is None:
        return ""
    if isinstance(instructions, str):
        return instructions.strip()
    parts = [f"{title}:\n{str(instructions[key]).strip()}" for key, title in SECTIONS if instructions.get(key)]
    known = {key for key, _ in SECTIONS} | {"domain"}
    parts += [f"{key.replace('_', ' ').capitalize()}:\n{str(value).strip()}"
              for key, value in instructions.items() if key not in known and value]
    return "\n\n".join(parts)


def system_prompt(instructions: Any) -> str:
    """The simulator's whole system prompt for one task."""
    return string.Template(load_prompt("eval_user_simulator")).safe_substitute(scenario=scenario_text(instructions))


def chat_model(url: str, name: str, *, temperature: float = 0.0, timeout_s: float = 120.0) -> Any:
    """A ``ChatOpenAI`` for the user model at ``url`` (the key, if the endpoint needs one, from
    ``CHOPS_USER_MODEL_API_KEY`` or ``OPENAI_API_KEY``; a local server takes any)."""
    from langchain_openai import ChatOpenAI

    key = os.environ.get("CHOPS_USER_MODEL_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"
    return ChatOpenAI(model=name, base_url=url, api_key=key, temperature=temperature, timeout=timeout_s,
                      max_retries=2)


class LLMUser:
    """One simulated customer for one conversation, played by ``model`` (a langchain chat model)."""

    def __init__(self, model: Any, instructions: Any, *, max_turns: int = MAX_TURNS) -> None:
        """``instructions``: the task's ``user_scenario.instructions``."""
        from langchain_core.messages import SystemMessage

        self.model, self.max_turns = model, max_turns
        self.messages: list[Any] = [SystemMessage(content=system_prompt(instructions))]
        self.sent, self.ended, self.end_reason = 0, False, None
        self.calls: list[dict[str, Any]] = []  # per model call: latency and tokens (the run's user cost)

    def opening(self, greeting: str = "") -> tuple[str, bool]:
        """The first customer message, answering the agent's greeting."""
        return self.reply(greeting)

    def reply(self, agent_text: str) -> tuple[str, bool]:
        """The customer's answer to the agent's message and whether the customer has ended the conversation."""
        import time

        from langchain_core.messages import AIMessage, HumanMessage

        if self.ended:
            return "", True
        self.messages.append(HumanMessage(content=agent_text or ""))
        t0 = time.perf_counter()
        out = self.model.invoke(self.messages)
        usage = getattr(out, "usage_metadata", None) or {}
        self.calls.append({"latency_s": round(time.perf_counter() - t0, 4), "tokens_in": usage.get("input_tokens"),
                           "tokens_out": usage.get("output_tokens")})
        raw = out.content if isinstance(out.content, str) else "".join(
            b.get("text", "") if isinstance(b, dict) else str(b) for b in out.content)
        self.messages.append(AIMessage(content=raw))
        text, reason = strip_markers(raw)
        self.sent += 1
        if reason is not None:
            self.ended, self.end_reason = True, reason
        elif self.sent >= self.max_turns:
            self.ended, self.end_reason = True, MAX_TURNS_REASON
        return text, self.ended


def strip_markers(text: str) -> tuple[str, str | None]:
    """The message without its end marker, and why it ended (None: it goes on). The first marker in the
    text decides when a model writes two."""
    found = sorted((text.find(m), reason, m) for m, reason in MARKERS.items() if m in text)
    for _, _, marker in found:
        text = text.replace(marker, "")
    return text.strip(), found[0][1] if found else None
