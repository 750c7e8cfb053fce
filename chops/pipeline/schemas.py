"""The structured replies the pipeline asks models for: each one a small, closed choice.

A 1.5B model is reliable when every decision is an enum or a short typed field, so the route is a
``Literal``, numbers with a fixed range are enums (llama.cpp's grammar enforces enums, not ranges;
no ``maxLength`` either: it compiles to a deeply nested grammar that slows decoding), the operation name is a ``Literal`` of the registry names (a discriminated union: the
JSON schema lets the model write only that operation's argument names and types), and the verifier
returns a short reason and an integer score.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from chops.domain.operations import MAX_PROPOSED_STEPS, Operation
from chops.pipeline.choices import Options
from chops.pipeline.each import EachOf

# --- classifier -------------------------------------------------------------------------


# Enum values are descriptive phrases, not bare route names: with the 1.5B model, "own_fact" vs
# "something_else" routed 70 of 76 test questions right where "profile" vs "other" got 9 of 16, and
# a separate "look_up_people" value fixed admin look-ups that were otherwise taken for questions.


class Level1Decision(BaseModel):
    """Level 1: does the message ask for one of the sender's own profile facts?"""

    route: Literal["own_fact", "something_else"]


class SmallTalkGate(BaseModel):
    """Before level 1, on a fresh message: is it small talk rather than anything about the platform?
    A question of its own: as a third value of level 1 it pulled platform requests away (measured)."""

    route: Literal["about_the_platform", "small_talk"]


class ConversationKind(BaseModel):
    """What kind of small talk (only asked after the gate said so); ``platform_question`` takes it back."""

    route: Literal["greeting", "thanks_or_goodbye", "cancel_request", "ask_for_person", "unrelated_to_platform",
                   "platform_question"]


class Level2Decision(BaseModel):
    """Level 2: guide files or a system operation (look-ups are operations too)."""

    route: Literal["do_operation", "look_up_people", "answer_from_guide"]


MAX_REQUESTS = 5  # a message asks for a few things at most


class Requests(BaseModel):
    """The separate requests of one message, each a self-contained sentence, in the customer's order
    (``chops.pipeline.agenda``)."""

    requests: list[str] = Field(min_length=1, max_length=MAX_REQUESTS)


class GoOn(BaseModel):
    """The customer's answer to "shall I go on with your next request, or is there something you would like in place
    of this one?" (``chops.pipeline.agenda``)."""

    answer: Literal["go_on", "instead"]


class OneLevelDecision(BaseModel):
    """The one-level classifier of the ablation: all routes at once."""

    route: Literal["own_fact", "do_operation", "look_up_people", "answer_from_guide"]


# --- executor ---------------------------------------------------------------------------


class ProfileAnswer(BaseModel):
    """An answer from the sender's profile."""

    answer: str = Field(description="one or two sentences")


class GuideAnswer(BaseModel):
    """An answer from the guide excerpts; ``source`` picks the excerpt (0 = none answers it)."""

    source: Literal[0, 1, 2, 3, 4, 5, 6, 7, 8, 9] = Field(description="number of the excerpt used, 0 if none")
    answer: str = Field(description="a short answer")


# --- verifier and chooser ------------------------------------------------------------------


class Verdict(BaseModel):
    """The verifier's judgement: reason first (it steers the score), then 1..10."""

    reason: str = Field(description="one sentence")
    score: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


class Score(BaseModel):
    """The verifier's quick judgement: the score alone (about 5 generated tokens instead of ~30); only a
    score under the pass mark asks for the reasoned ``Verdict``, since only a retry needs a reason."""

    score: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


class Choice(BaseModel):
    """The chooser's pick among the rejected attempts (1-based)."""

    attempt: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


# --- operation calls ---------------------------------------------------------------------

ANSWER_DIRECTLY = "AnswerDirectly"


def _plain(typ: Any) -> Any:
    """``typ`` without the constraints of ``Annotated`` inside it (``list[Annotated[str, max 64]]`` ->
    ``list[str]``): a length bound compiles to a deeply nested grammar (see the module docstring), and the
    operation's own model checks it anyway when it runs."""
    if get_origin(typ) is Annotated:
        return _plain(get_args(typ)[0])
    if get_origin(typ) in (list, tuple) and get_args(typ):
        return get_origin(typ)[tuple(_plain(a) for a in get_args(typ))]
    return typ


def _one_each(values: tuple[str, ...], each: EachOf) -> Any:
    """A list of ``values`` whose grammar takes one value of each group, in their order, of every group where
    ``each.every`` says so, else of any non-empty selection of them (``CHOICES_ONE_EACH``, ``chops.pipeline.each``):
    for groups A and B, ``[a, b]``, or ``[a]``, ``[b]`` or ``[a, b]``. The JSON schema is a union of tuples
    (llama.cpp's grammar decodes ``prefixItems`` as exactly those positions); the value is a plain list of the
    allowed values."""
    groups = each.groups
    sizes = [len(groups)] if each.every else range(1, len(groups) + 1)
    tuples = [{"type": "array", "prefixItems": [{"enum": list(g)} for g in chosen],
               "minItems": len(chosen), "maxItems": len(chosen)}
              for n in sizes for chosen in combinations(groups, n)]
    return Annotated[list[Literal[values]], WithJsonSchema({"anyOf": tuples})]  # type: ignore[valid-type]


def _nullable_args_model(op: Any, allowed: dict[str, tuple[str, ...]], grouped: dict[str, EachOf]) -> type[BaseModel]:
    """The operation's arguments, keyed by their names, every one nullable; an argument in ``allowed`` may
    only be one of its values (``chops.pipeline.choices``: an id copied from a look-up, never invented), one
    in ``grouped`` one value of each of its groups (``_one_each``).

    Nullable and required: the model must say ``null`` explicitly for a value the user did not give,
    which the Api then refuses as a missing argument (the honest result).
    """
    fields: dict[str, Any] = {}
    for name, info in op.args_model.model_fields.items():
        key = info.alias or name
        typ = info.annotation
        # ``int | None`` in the registry already; strip to the base type before re-adding None. Only a union
        # is stripped: the arguments of ``list[str]`` are its items' type, and taking them offered the model a
        # string where the operation takes a list of item ids.
        union = get_origin(typ) in (Union, UnionType)
        base = _plain(next((a for a in get_args(typ) if a is not type(None)), typ) if union else typ)
        if key in grouped and get_origin(base) is list:
            base = _one_each(allowed[key], grouped[key])
        elif (pattern := next((m.pattern for m in info.metadata if getattr(m, "pattern", None)), None)) is not None:
            # A text's pattern is kept (a character class compiles to one short rule): asked to calculate before it
            # had read a price, the 1.5B wrote "sum(2*2, 2*2, ..." for 768 tokens, a minute of decoding (train task 76).
            base = Annotated[base, Field(pattern=pattern)]
        elif key in allowed:
            choice = Literal[allowed[key]]  # type: ignore[valid-type]
            # A list of them holds each at most about once: told to change "all my t-shirts", the 1.5B wrote one
            # order line ten times over, and a return of three items ran past the executor's tokens, twice.
            base = (Annotated[list[choice], Field(max_length=len(allowed[key]))]  # type: ignore[valid-type]
                    if get_origin(base) is list else choice)
        fields[key] = (base | None, Field(..., description=info.description))
    return create_model(f"{op.name}Args", __config__=ConfigDict(extra="forbid"), **fields)


def _call_model(op: Any, options: Options) -> type[BaseModel]:
    allowed = {arg: values for name, arg, values, _ in options if name == op.name}
    grouped = {arg: groups for name, arg, _, groups in options if name == op.name and groups}
    return create_model(
        f"{op.name}Call", __config__=ConfigDict(extra="forbid"),
        operation=(Literal[op.name], ...),  # type: ignore[valid-type]
        args=(_nullable_args_model(op, allowed, grouped), ...),
    )


class AnswerDirectly(BaseModel):
    """The executor-only architecture's "no operation: just answer" option."""

    model_config = ConfigDict(extra="forbid")
    operation: Literal["AnswerDirectly"]
    answer: str


def _union(operations: tuple[Operation, ...], with_answer: bool = False, options: Options = ()) -> Any:
    """One call of any of ``operations``: a union discriminated by the operation name."""
    branches: list[type[BaseModel]] = [_call_model(op, options) for op in operations]
    if with_answer:
        branches.append(AnswerDirectly)
    return branches[0] if len(branches) == 1 else Annotated[Union[tuple(branches)],  # noqa: UP007
                                                            Field(discriminator="operation")]


@lru_cache(maxsize=64)  # tool retrieval asks for one per short list (~10 ms each to build)
def proposal_schema(operations: tuple[Operation, ...], with_answer: bool = False) -> type[BaseModel]:
    """``{"call": {"operation": <one of their names>, "args": {...that operation's args...}}}``.

    ``with_answer`` adds the ``AnswerDirectly`` branch (executor-only architecture).
    Cached per operation set so the JSON schema (and llama.cpp's grammar) is built once.
    """
    return create_model("OperationCall" if not with_answer else "AnswerOrOperation",
                        call=(_union(operations, with_answer), ...))


@lru_cache(maxsize=64)  # one per short list and per set of looked-up ids (~10 ms each to build)
def plan_schema(operations: tuple[Operation, ...], with_answer: bool = False, options: Options = ()) -> type[BaseModel]:
    """``{"calls": [<call>, ...]}``: the system executor's ordered plan of 1 to ``MAX_PROPOSED_STEPS``
    operation calls. One call costs two tokens more than ``proposal_schema`` (the brackets); the
    grammar enforces the bounds (``minItems``/``maxItems``). ``with_answer`` (a pack with look-ups) adds
    the ``AnswerDirectly`` branch: after reading look-ups the executor may answer instead of calling.
    ``options``: the id arguments limited to the values seen so far (``chops.pipeline.choices``)."""
    calls = Annotated[list[_union(operations, with_answer, options)],  # type: ignore[misc]
                      Field(min_length=1, max_length=MAX_PROPOSED_STEPS)]
    return create_model("OperationPlan", calls=(calls, ...))
