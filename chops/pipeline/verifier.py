"""The verifier (score 1..10 and a reason) with its linear threshold schedule, and the chooser."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from chops.domain.outcomes import Outcome
from chops.llm import LLM
from chops.pipeline.claims import claimed_changes
from chops.pipeline.context import Candidate, Step, TurnContext, as_told, dumps
from chops.pipeline.fields import NUMBER, numbers, unlike, unstated
from chops.pipeline.lookups import observation_lines, results, value_lines
from chops.pipeline.prompting import clip, fragment, messages
from chops.pipeline.schemas import Choice, Score, Verdict
from chops.pipeline.walk import stems
from chops.settings import Settings

DATA_CLIP = 600  # a read's data, as evidence: enough to see what came back
SOURCE_CLIP = 900  # the guide excerpt an answer cites, as evidence


def threshold(iteration: int, settings: Settings) -> float:
    """The pass mark at ``iteration`` (1-based): linear from ``verify_start`` (first) to ``verify_end``
    (last of ``max_iterations``), so early attempts must be convincing and late ones may be adequate."""
    n = settings.max_iterations
    if n <= 1:
        return settings.verify_start
    i = min(max(iteration, 1), n)
    return settings.verify_start + (settings.verify_end - settings.verify_start) * (i - 1) / (n - 1)


def _args_text(args: dict | None) -> str:
    # "Name = value" reads more plainly than JSON for a small model; "none" for a no-argument call.
    return ", ".join(f"{k} = {'null' if v is None else v}" for k, v in (args or {}).items()) or "none"


def evidence(ctx: TurnContext, cand: Candidate, *, related: bool = True) -> str:
    """What the verifier sees of a candidate: the answer with its source, or the operation's result
    (for a plan of several calls every step's, then the combined changes of the writes); for a write
    also whose account it changes (always the sender's), to compare with the request; after look-ups, first what
    they said of the plan's values (``value_lines``). ``related``: a profile answer is shown the profile lines it
    concerns (``related_lines``), not the whole profile."""
    if cand.lookups and cand.steps:
        # What the plan's values came from, not every result again: the whole look-ups were ~1,100 of a retail
        # exchange's 2,700 prompt tokens (74 s of a 197 s turn on two cores), and the dry run's message already
        # names what changes ("Smart Thermostat (compatibility: Apple HomeKit -> Amazon Alexa)").
        lines = value_lines(cand.lookups, cand.steps)
        head = fragment("lookup_evidence", lines="\n".join(lines)) if lines else ""
        return head + evidence(ctx, replace(cand, lookups=[]), related=related)
    if len(cand.steps) > 1:
        parts = [fragment("plan_step", n=i, what=_step_evidence(step)) for i, step in enumerate(cand.steps, 1)]
        diff = "; ".join(c.effect() for c in cand.plan.diff) if cand.plan is not None else ""
        text = fragment("plan_evidence", steps="\n".join(parts), diff=diff or "none")
    else:
        text = _step_evidence(cand.steps[0]) if cand.steps else _answer_evidence(ctx, cand, related)
    return text + "\n" + fragment("account_evidence", nickname=ctx.nickname) if cand.writes else text


def related_lines(profile: str, texts: list[str]) -> str | None:
    """The lines of ``profile`` that share a word (``stems``: four letters or more) with one of ``texts``, or None
    when no line does ("Am I a team leader?", "You are a marker." -> the role line)."""
    said = set().union(*(stems(t) for t in texts))
    lines = [line for line in profile.splitlines() if stems(line) & said]
    return "\n".join(lines) if lines else None


def _answer_evidence(ctx: TurnContext, cand: Candidate, related: bool) -> str:
    if cand.route == "basic_info":
        # The lines the message and the answer are about, when some are: the verifier read the whole profile
        # again (~110 tokens, 1.4 s on two cores) to check one fact. Otherwise (say a Chinese question about an
        # English profile, or "the profile does not say") the whole profile.
        lines = related_lines(ctx.profile_text(), [ctx.text, cand.answer or ""]) if related else None
        if lines is not None:
            return fragment("profile_lines_evidence", profile=lines, answer=cand.answer or "")
        return fragment("profile_evidence", profile=ctx.profile_text(), answer=cand.answer or "")
    if cand.route == "guide":
        src = cand.source
        excerpt = clip(src.text, SOURCE_CLIP) if src is not None else fragment("no_chunks")
        where = f"{src.file}, page {src.page}" if src is not None else "none"
        return fragment("guide_evidence", source=where, excerpt=excerpt, answer=cand.answer or "")
    if cand.route == "system":  # an answer from look-ups (or from none: the steps ran out)
        lines = observation_lines(cand.lookups)
        return fragment("lookup_answer_evidence", lines="\n".join(lines) or "none", answer=cand.answer or "")
    raise ValueError(f"no evidence for route {cand.route!r} without an operation")


# A count under 20 ("2 t-shirts") is the answer's own; other numbers as answers write them ("$1,939.05", "12.5", "2024":
# ``fields.NUMBER``) must be given.
_COUNTS = 20


# A number with its unit: "19 bar", "1L", "28 inch".
_MEASURE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s?([a-z]+)\b", re.IGNORECASE)


# Words that follow a number without measuring it: "$1,824.73 to paypal", "2 of them".
_NOT_UNITS = frozenset({"to", "for", "on", "in", "at", "and", "or", "with", "of", "is", "are", "was", "the", "a", "an",
                        "from", "by", "per", "as", "if", "it", "you", "your", "now", "will", "be", "has", "have"})


def _measures(text: str) -> set[tuple[float, str]]:
    return {(float(m.group(1).replace(",", "")), m.group(2).lower()) for m in _MEASURE.finditer(text)
            if m.group(1).replace(",", "") and m.group(2).lower() not in _NOT_UNITS}


def _misquoted(answer: str, given: str) -> list[str]:
    """The measures ``answer`` states ("9 bar") in a unit ``given`` measures in, at a value given never has with it
    (it has "19 bar"): a count's exemption does not cover them. Asked what they paid for an espresso machine of 19 bar,
    the 1.5B answered "9 bar, 1L, capsule; you paid $2955.17" (our own conversations)."""
    held = _measures(given)
    units = {unit for _, unit in held}
    return [f"{value:g} {unit}" for value, unit in _measures(answer) if unit in units and (value, unit) not in held]


def invented_numbers(ctx: TurnContext, cand: Candidate) -> list[str]:
    """The numbers an answer from the guides or the look-ups states that nothing it was given holds (its excerpt, the
    look-ups' results, the profile, the customer's messages, what the conversation's changes did), counts under
    ``_COUNTS`` aside unless they misquote a measure (``_misquoted``). Asked what all their
    grills had cost, the 1.5B answered "$10.00" from the shop's policy, and the verifier passed it (train task 76)."""
    if cand.operation is not None or cand.route not in ("guide", "system") or not (cand.answer or "").strip():
        return []
    # The sums the question asks of the look-ups (``fields.sums_asked``) are held too: the redo is told them.
    given = " ".join([*ctx.user_texts, ctx.profile_text(), cand.source.text if cand.source is not None else "",
                      dumps(results(cand.lookups)), *cand.sums, *ctx.done()])
    held = numbers(given)
    said = NUMBER.findall(cand.answer or "")
    return list(dict.fromkeys([*(n for n in said if (v := float(n.replace(",", ""))) not in held
                                 and not (v < _COUNTS and v.is_integer() and "." not in n)),
                               *_misquoted(cand.answer or "", given)]))


def echoed(request: str, answer: str | None) -> bool:
    """Whether ``answer`` only says (part of) the customer's ``request`` back, three words or more of it: told "I
    don't have a colour preference." after "anything else?", the 1.5B answered with that very sentence, and the
    verifier passed it (train task 6)."""
    said, message = (" ".join(re.findall(r"\w+", text.casefold())) for text in (answer or "", request))
    return said.count(" ") >= 2 and f" {said} " in f" {message} "


def _step_evidence(step: Step) -> str:
    res = step.result
    description = step.description
    if res.outcome != Outcome.OK:
        # A refusal or a no-op is the platform's verdict, not the executor's: shown it, the 1.5B
        # verifier scored correct refusals 1-3 (24 of 32 refusal rows failed at iteration 1) and an
        # "already approved" no-op 2. It judges the choice only.
        return fragment("choice_evidence", operation=step.operation, description=description,
                        args=_args_text(step.args))
    if step.writes:
        diff = "; ".join(c.effect() for c in res.diff) or "none"
        return fragment("system_evidence", operation=step.operation, description=description, args=_args_text(step.args),
                        outcome=res.outcome, message=res.message, diff=diff)
    return fragment("read_evidence", operation=step.operation, description=description, args=_args_text(step.args), outcome=res.outcome,
                    message=res.message, data=clip(dumps(res.data), DATA_CLIP))


def _rejected(ctx: TurnContext, cand: Candidate, key: Any, reason: str, **noted: Any) -> dict:
    """Score ``cand`` 1 for ``reason`` without a model (a check's verdict, kept for an identical attempt); its step."""
    cand.score, cand.reason = 1, reason
    ctx.verdicts[key] = (cand.score, cand.reason)  # an identical attempt gets it again (two empty ones end the loop)
    return ctx.trace.step("verifier", route=cand.route, deterministic=True, **noted)


class Verifier:
    """Scores a candidate against the request; the agent compares the score with ``threshold``."""

    def __init__(self, llm: LLM, settings: Settings) -> None:
        self.llm = llm
        self.settings = settings

    def verify(self, ctx: TurnContext, cand: Candidate) -> bool:
        """Score ``cand`` (stored on it with the threshold and reason); True when it passes.

        With ``verifier_reason`` "on_fail" the verifier is first asked for the score alone: a pass needs no
        reason (nothing reads it), so it costs a handful of generated tokens ("operations": only for a
        proposed operation, whose evidence is the dry run's outcome and diff; an answer gets the reasoned
        verdict, since the score alone passed profile answers to requests to change something). A score
        under the pass mark asks the reasoned verdict (reason, then score: the reason steers a small model's
        score), and that verdict decides — so the quick score can only let through what it rates at the pass mark; its
        prompt is the reasoned one's plus one line, so the second call reads only that line's difference.
        An attempt identical to an earlier one of the same turn reuses that verdict: the verifier's prompt
        would be the same (it does not see feedback), so asking again only costs time.
        """
        cand.threshold = threshold(cand.iteration, self.settings)
        key = identity(cand)
        if cand.route == "system" and not cand.steps and not (cand.answer or "").strip():
            # No call and no answer (the look-ups ran out of steps): nothing a model could pass. A 1.5B
            # verifier scored such an empty attempt 10 and the customer got an apology instead of a retry.
            step = _rejected(ctx, cand, key, fragment("check_no_proposal"))
        elif made_up := invented_numbers(ctx, cand):
            cand.invented = made_up
            step = _rejected(ctx, cand, key, fragment("check_invented", values=", ".join(made_up)), invented=made_up)
        elif claimed := claimed_changes(ctx, cand):
            cand.invented = claimed  # never sent, like a made-up number (Agent)
            step = _rejected(ctx, cand, key, fragment("check_claimed", values="; ".join(claimed)), claimed=claimed)
        elif echoed(ctx.text, cand.answer if cand.operation is None else None):
            step = _rejected(ctx, cand, key, fragment("check_echo"), echoed=True)
        elif cand.operation is None and cand.route == "system" and (
                missing := unstated(ctx.text, cand.answer or "", cand.lookups, cand.sums)):
            cand.invented = missing  # never sent: redone greedily, the 1.5B wrote the same answer again (Agent)
            ctx.held = cand.route
            step = _rejected(ctx, cand, key, fragment("check_unstated", values="; ".join(missing)), unstated=missing)
        elif cand.operation is None and cand.route == "system" and (mixed := unlike(cand.answer or "", cand.lookups)):
            cand.invented, ctx.held = mixed, cand.route  # never sent: the 1.5B said one's of both, then the other's
            step = _rejected(ctx, cand, key, fragment("check_unlike", values="; ".join(mixed)), unlike=mixed)
        elif key in ctx.verdicts:
            cand.score, cand.reason = ctx.verdicts[key]
            step = ctx.trace.step("verifier", route=cand.route, reused=True)
        elif cand.steps and all(as_told(s) for s in cand.steps):
            # The agent's own question or refusal (which line is meant, a whole order for one item): nothing runs.
            cand.score, cand.reason = 10, ""
            step = ctx.trace.step("verifier", route=cand.route, deterministic=True, as_told=True)
        else:
            # Two short rubrics instead of one long one: a small model follows a focused prompt better.
            prompt = "pipeline_verify_operation" if cand.operation else "pipeline_verify_answer"
            fill = {"history": ctx.history_section(turns=2), "request": ctx.text, "evidence": evidence(
                ctx, cand, related=self.settings.verifier_profile == "related")}
            quick = None
            mode = self.settings.verifier_reason
            if mode == "on_fail" or (mode == "operations" and cand.operation):
                msgs = messages(prompt, **{**fill, "evidence": fill["evidence"] + fragment("score_only")})
                quick, step = ctx.trace.call("verifier", lambda lg: self.llm.structured(
                    "verifier", msgs, Score, ledger=lg), route=cand.route, quick=True)
                cand.score, cand.reason = quick.score, ""
            if quick is None or quick.score < cand.threshold:
                msgs = messages(prompt, **fill)
                verdict, step = ctx.trace.call("verifier", lambda lg: self.llm.structured(
                    "verifier", msgs, Verdict, ledger=lg), route=cand.route)
                cand.score, cand.reason = verdict.score, clip(verdict.reason, 300)  # a rambling reason stays short
                if quick is not None:
                    step["quick_score"] = quick.score
            ctx.verdicts[key] = (cand.score, cand.reason)
        passed = cand.score >= cand.threshold
        step.update(score=cand.score, threshold=round(cand.threshold, 3), reason=cand.reason, passed=passed)
        return passed


def identity(cand: Candidate) -> str:
    """What makes two attempts the same for the verifier."""
    src = (cand.source.file, cand.source.page) if cand.source is not None else None
    return dumps([cand.route, [(s.operation, s.args) for s in cand.steps], cand.answer, src])


class Chooser:
    """After the last rejected attempt, picks the best earlier candidate (the paper's fallback)."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def choose(self, ctx: TurnContext, candidates: list[Candidate]) -> Candidate:
        """The chosen candidate; an out-of-range pick falls back to the highest verifier score.

        When every attempt was the same proposal there is nothing to choose: no model call.
        """
        if len({identity(c) for c in candidates}) == 1:
            ctx.trace.step("chooser", skipped=True, chosen=1, of=len(candidates))
            return candidates[0]
        lines = [fragment("candidate", n=i, route=c.route, what=c.describe(), score=c.score, reason=c.reason)
                 for i, c in enumerate(candidates, 1)]
        msgs = messages("pipeline_choose", request=ctx.text, candidates="\n".join(lines))
        pick, step = ctx.trace.call("chooser", lambda lg: self.llm.structured(
            "chooser", msgs, Choice, ledger=lg))
        index = pick.attempt - 1
        if not 0 <= index < len(candidates):
            # Why: the schema caps the number, not the count of attempts; don't crash on a bad pick.
            index = max(range(len(candidates)), key=lambda j: (candidates[j].score or 0, -j))
        step.update(chosen=index + 1, of=len(candidates))
        return candidates[index]
