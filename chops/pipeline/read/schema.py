"""The reading's grammar: each operation with its arguments all optional (a value the customer has not given is
null), nested records and lists of them included, so the model can give what it read and nothing else; or an answer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from chops.domain.operations import Operation
from chops.domain.values import choices_of, record_model, unwrap

MAX_READ_CALLS = 2  # a look-up and the write it is for, at most: one request a reading


class AnswerDirectly(BaseModel):
    """No operation: the answer, from what the look-ups show (a question), in the customer's language."""

    model_config = ConfigDict(extra="forbid")
    operation: Literal["AnswerDirectly"]
    answer: str


@lru_cache(maxsize=256)
def partial(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` with every field nullable, nested records (and lists of them) partial too; the fields' descriptions
    kept, their bounds and patterns left to the operation's own model (it checks them when the call runs)."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        nested, many = record_model(info.annotation)
        if nested is not None:
            inner: Any = partial(nested)
            base: Any = list[inner] if many else inner  # type: ignore[valid-type]
        else:
            choices = choices_of(info.annotation)
            base = Literal[choices] if choices else _leaf(info.annotation)  # type: ignore[valid-type]
            if choices and unwrap(info.annotation)[1]:
                base = list[base]  # type: ignore[valid-type]
        fields[info.alias or name] = (base | None, Field(..., description=info.description))
    return create_model(f"Partial{model.__name__}", __config__=ConfigDict(extra="forbid"), **fields)


def _leaf(annotation: Any) -> Any:
    inner, many = unwrap(annotation)
    base = inner if inner in (int, float, bool) else str  # a date, an amount as text: the kinds read them
    return list[base] if many else base  # type: ignore[valid-type]


def _call(op: Operation) -> type[BaseModel]:
    return create_model(f"{op.name}Reading", __config__=ConfigDict(extra="forbid"),
                        operation=(Literal[op.name], ...),  # type: ignore[valid-type]
                        args=(partial(op.args_model), ...))


@lru_cache(maxsize=64)
def reading_schema(operations: tuple[Operation, ...]) -> type[BaseModel]:
    """``{"calls": [<an operation with its partial args, or AnswerDirectly>, ...]}`` of 1 to ``MAX_READ_CALLS``."""
    branches = [_call(op) for op in operations] + [AnswerDirectly]
    one = Annotated[Union[tuple(branches)], Field(discriminator="operation")]  # noqa: UP007
    calls = Annotated[list[one], Field(min_length=1, max_length=MAX_READ_CALLS)]  # type: ignore[valid-type]
    return create_model("Reading", calls=(calls, ...))
