"""What every pack's argument models start from: the base model (unknown keys refused, strings trimmed, numbers
accepted as ids), bounded ids and texts, and the arguments of ``calculate``, the arithmetic every pack offers."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from chops.domain.values import kind
from chops.i18n import N_

Id = Annotated[str, Field(max_length=64)]
Text = Annotated[str, Field(max_length=255)]


class Args(BaseModel):
    """Base of every argument model: unknown keys refused, strings trimmed, numbers accepted as ids."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, coerce_numbers_to_str=True)


class NoArgs(Args):
    """This operation takes no arguments."""


class CalculateArgs(Args):
    """Arguments of calculate."""

    # Only what ``chops.domain.calc`` evaluates: the pattern goes into the executor's grammar too.
    expression: Annotated[str, Field(max_length=500, pattern=r"^[0-9.+*/() -]+$")] = Field(
        title=N_("what to calculate"), json_schema_extra=kind("computed"),
        description="the arithmetic to compute, numbers with + - * / and parentheses, e.g. '(49.99 - 12.5) * 2'")
