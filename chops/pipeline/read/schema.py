"""The reading's grammar: each operation with its arguments all optional (a value the customer has not given is
null), nested records and lists of them included, so the model can give what it read and nothing else; or an answer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from chops.domain.operations import Operation
from chops.domain.values import choices_of, kind_choices, record_model, slots, unwrap
from chops.pipeline.walk import values_in

MAX_READ_CALLS = 2  # a look-up and the write it is for, at most: one request a reading


class AnswerDirectly(BaseModel):
    """No operation: the answer, from what the look-ups show (a question), in the customer's language."""

    model_config = ConfigDict(extra="forbid")
    operation: Literal["AnswerDirectly"]
    answer: str


Options = tuple[tuple[str, tuple[str, ...]], ...]  # (a slot's dotted name without positions, the values it may take)


@lru_cache(maxsize=256)
def partial(model: type[BaseModel], options: Options = ()) -> type[BaseModel]:
    """``model`` with every field nullable, nested records (and lists of them) partial too; the fields' descriptions
    kept, their bounds and patterns left to the operation's own model (it checks them when the call runs). A slot of
    ``options`` (``flights.flight_number``) may only take its values: an id is copied from what was seen, never
    invented."""
    fields: dict[str, Any] = {}
    allowed = dict(options)
    for name, info in model.model_fields.items():
        key = info.alias or name
        nested, many = record_model(info.annotation)
        if nested is not None:
            inner_options = tuple((k[len(key) + 1:], v) for k, v in options if k.startswith(f"{key}."))
            inner: Any = partial(nested, inner_options)
            base: Any = list[inner] if many else inner  # type: ignore[valid-type]
        else:
            choices = choices_of(info.annotation) or kind_choices(info) or allowed.get(key, ())
            base = Literal[choices] if choices else _leaf(info.annotation)  # type: ignore[valid-type]
            if choices and unwrap(info.annotation)[1]:
                base = list[base]  # type: ignore[valid-type]
        fields[key] = (base | None, Field(..., description=info.description))
    return create_model(f"Partial{model.__name__}", __config__=ConfigDict(extra="forbid"), **fields)


def _leaf(annotation: Any) -> Any:
    inner, many = unwrap(annotation)
    base = inner if inner in (int, float, bool) else str  # a date, an amount as text: the kinds read them
    return list[base] if many else base  # type: ignore[valid-type]


def _call(op: Operation, options: Options) -> type[BaseModel]:
    return create_model(f"{op.name}Reading", __config__=ConfigDict(extra="forbid"),
                        operation=(Literal[op.name], ...),  # type: ignore[valid-type]
                        args=(partial(op.args_model, options), ...))


def id_options(operations: tuple[Operation, ...], seen: list[Any], typed: list[str]) -> tuple[Options, ...]:
    """Per operation, the values each of its id slots may take: those the look-ups (and the profile) listed under
    the keys the slot declares (``kind("id", from_=[...])``), and the ids the customer typed (one not theirs is
    refused by the pack, not invented by the model); a slot nothing listed yet stays free."""
    found = []
    for op in operations:
        slots_of = []
        for slot in slots(op.args_model):
            if slot.kind != "id" or not slot.options.get("from"):
                continue
            values = values_in(seen, [str(k) for k in slot.options["from"]])
            if values:
                name = ".".join(str(p) for p in slot.path if p != "*")
                slots_of.append((name, tuple(dict.fromkeys([*values, *typed]))))
        found.append(tuple(slots_of))
    return tuple(found)


@lru_cache(maxsize=64)
def reading_schema(operations: tuple[Operation, ...], options: tuple[Options, ...] = ()) -> type[BaseModel]:
    """``{"calls": [<an operation with its partial args, or AnswerDirectly>, ...]}`` of 1 to ``MAX_READ_CALLS``;
    ``options``: per operation, the values its id slots may take (``id_options``)."""
    options = options or tuple(() for _ in operations)
    branches = [_call(op, o) for op, o in zip(operations, options)] + [AnswerDirectly]
    # The answer alone is no union (a discriminator needs two branches).
    one = Annotated[Union[tuple(branches)], Field(discriminator="operation")] if len(branches) > 1 \
        else AnswerDirectly
    calls = Annotated[list[one], Field(min_length=1, max_length=MAX_READ_CALLS)]  # type: ignore[valid-type]
    return create_model("Reading", calls=(calls, ...))
