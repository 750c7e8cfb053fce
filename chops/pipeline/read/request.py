"""The request being filled: an operation and the values the customer gave so far, at any depth, kept across the
turns that ask for what is missing ("which reservation?" … "ZX81QP"), merged with each new reading, and corrected
by it ("make that May 22 instead")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chops.domain.operations import Operation
from chops.domain.values import missing
from chops.pipeline.context import asked_for_value
from chops.records import TurnRecord

ROLE = "request"  # the trace step that keeps the request of a turn


@dataclass
class Request:
    """An operation and its arguments so far (by argument names; nested records as mappings, lists of them as
    lists)."""

    operation: str
    args: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """``cancel_reservation(reservation_id='ZX81QP', reason=None)``: how the reading prompt shows it."""
        return f"{self.operation}({', '.join(f'{k}={v!r}' for k, v in self.args.items())})"

    def record(self) -> dict[str, Any]:
        """What the turn's trace keeps of it (``restore`` reads it back)."""
        return {"operation": self.operation, "args": self.args}


def restore(history: Sequence[TurnRecord]) -> Request | None:
    """The request the last turn asked a value for (its trace's ``request`` step), or None: a finished, refused or
    confirmed request is not carried on."""
    if not history or not asked_for_value(history[-1]):
        return None
    for step in reversed((history[-1].trace or {}).get("steps") or []):
        if step.get("role") == ROLE and step.get("operation"):
            return Request(step["operation"], dict(step.get("args") or {}))
    return None


def merged(request: Request | None, operation: Operation, given: Mapping[str, Any]) -> Request:
    """The request after a reading gave ``given`` for ``operation``: a value given replaces the old one (a
    correction), a null keeps it; a list of records with nulls completes the old one position by position, a whole
    list replaces it. Another operation starts a new request that keeps the values of the arguments both take ("cancel
    it instead": the same reservation)."""
    names = set(operation.arg_names())
    if request is not None and request.operation == operation.name:
        old = request.args
    else:
        old = {k: v for k, v in (request.args if request else {}).items() if k in names and v is not None}
    return Request(operation.name, _deep(old, {k: v for k, v in given.items() if k in names}))


def _deep(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(old)
    for key, value in new.items():
        if value is None:
            out.setdefault(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep(out[key], value)
        elif isinstance(value, list) and isinstance(out.get(key), list) and _partial(value):
            out[key] = _positions(out[key], value)
        else:
            out[key] = value
    return out


def _partial(records: list[Any]) -> bool:
    """Whether a list of records leaves some value null: it completes the old list, position by position (the
    day of a crossing given alone), where a whole list replaces it."""
    return any(isinstance(r, Mapping) and any(v is None for v in r.values()) for r in records)


def _positions(old: list[Any], new: list[Any]) -> list[Any]:
    merged = [_deep(o, n) if isinstance(o, Mapping) and isinstance(n, Mapping) else n for o, n in zip(old, new)]
    return merged + old[len(new):] + new[len(old):]


def asked_again(history: Sequence[TurnRecord], operation: Operation, gaps: Sequence[Any]) -> int:
    """How many of the last turns in a row asked for exactly ``gaps`` (paths) of ``operation``'s request: the
    customer's answers did not fill them."""
    count = 0
    for turn in reversed(history):
        earlier = restore([turn])
        if earlier is None or earlier.operation != operation.name \
                or [p for p, _ in missing(operation.args_model, earlier.args)] != list(gaps):
            break
        count += 1
    return count
