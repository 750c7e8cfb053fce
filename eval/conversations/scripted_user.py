"""A deterministic customer from a keyword-rule script ("tau2-retail scripted user, v1").

Written from the format's ``semantics`` text: after each agent text message (lower-cased) the first rule
that matches gives the reply, else the script's ``default``. A rule matches when every ``when_all`` entry
occurs (a string, or a list of which one must occur), one ``when_any`` string occurs (none given: any
message), no ``unless_any`` string occurs, every ``after`` rule has fired, no ``unless_after`` rule has
fired, and a ``once`` rule has not fired yet. ``@name`` stands for every string of ``keyword_sets[name]``.
A rule with ``end: true`` sends its text and ends the conversation; so does the ``max_turns``-th user
message (the opening counts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_MAX_TURNS = 20  # the format's default when a script gives none
STOP, MAX_TURNS = "stop", "max_turns"  # why a scripted user ended


class ScriptError(ValueError):
    """A script names a keyword set the file does not define, or lacks a required field."""


class ScriptedUser:
    """One scripted customer for one conversation (not reusable: it remembers which rules fired)."""

    def __init__(self, script: Mapping[str, Any], keyword_sets: Mapping[str, list[str]] | None = None, *,
                 max_turns: int | None = None) -> None:
        """``script``: one entry of a users file's ``scripts``; ``keyword_sets``: the file's shared sets;
        ``max_turns``: a cap under the script's own (the eval's ``--max-turns``)."""
        self.script, self.sets = script, dict(keyword_sets or {})
        for key in ("opening", "replies", "default"):
            if key not in script:
                raise ScriptError(f"script {script.get('task_id')!r} lacks {key!r}")
        self._check_sets()
        own = int(script.get("max_turns") or DEFAULT_MAX_TURNS)
        self.max_turns = min(own, max_turns) if max_turns else own
        self.fired: list[str] = []  # rule ids in firing order ("after"/"once" read it)
        self.said: list[tuple[str, str]] = []  # (rule id, or "opening"/"default"; the text) — for the record
        self.sent = 0  # user messages sent, the opening included
        self.ended = False
        self.end_reason: str | None = None

    # --- the conversation ---------------------------------------------------------------------
    def opening(self, greeting: str = "") -> tuple[str, bool]:
        """The first user message (the agent's greeting does not change it) and whether that ended it."""
        return self._send("opening", self.script["opening"], end=False)

    def reply(self, agent_text: str) -> tuple[str, bool]:
        """The answer to the agent's latest text message and whether the user has now ended the
        conversation. After the end it says nothing more: ``("", True)``."""
        if self.ended:
            return "", True
        text = (agent_text or "").lower()
        for rule in self.script["replies"]:
            if self._matches(rule, text):
                self.fired.append(rule["id"])
                return self._send(rule["id"], rule["say"], end=bool(rule.get("end")))
        return self._send("default", self.script["default"], end=False)

    def _send(self, source: str, text: str, *, end: bool) -> tuple[str, bool]:
        self.sent += 1
        self.said.append((source, text))
        if end:
            self.ended, self.end_reason = True, STOP
        elif self.sent >= self.max_turns:
            self.ended, self.end_reason = True, MAX_TURNS
        return text, self.ended

    # --- matching ---------------------------------------------------------------------------
    def _strings(self, entries: Iterable[str]) -> list[str]:
        """The strings ``entries`` stand for, each ``@name`` replaced by its keyword set."""
        out: list[str] = []
        for entry in entries:
            out.extend(self.sets[entry[1:]] if entry.startswith("@") else [entry])
        return out

    def _matches(self, rule: Mapping[str, Any], text: str) -> bool:
        """Whether ``rule`` fires on the lower-cased agent message ``text`` now."""
        if rule.get("once") and rule["id"] in self.fired:
            return False
        if not all(earlier in self.fired for earlier in rule.get("after") or []):
            return False
        if any(earlier in self.fired for earlier in rule.get("unless_after") or []):
            return False
        for entry in rule.get("when_all") or []:
            # An entry is one string (an ``@name`` is one-of its set) or a list of alternatives.
            alternatives = self._strings(entry if isinstance(entry, list) else [entry])
            if not any(s in text for s in alternatives):
                return False
        wanted = self._strings(rule.get("when_any") or [])
        if wanted and not any(s in text for s in wanted):
            return False
        return not any(s in text for s in self._strings(rule.get("unless_any") or []))

    def _check_sets(self) -> None:
        """Fail at once on a script naming an undefined keyword set (not mid-conversation)."""
        for rule in self.script["replies"]:
            entries = [*(rule.get("when_any") or []), *(rule.get("unless_any") or [])]
            for entry in rule.get("when_all") or []:
                entries.extend(entry if isinstance(entry, list) else [entry])
            for entry in entries:
                if entry.startswith("@") and entry[1:] not in self.sets:
                    raise ScriptError(f"rule {rule.get('id')!r} names the undefined keyword set {entry!r}")
