"""Value kinds: what every argument field of an operation holds, at any depth, and how a proposed value of that kind
is checked against what the customer said and what this conversation looked up.

A field declares its kind in its ``json_schema_extra`` (``Field(..., json_schema_extra=kind("date"))``); a field that
declares none takes the kind of its type (``int``: number, ``Decimal``/``float``: money, ``date``: date, a
``Literal``: choice, anything else: text). A nested model, or a list of them, is a record: ``slots`` walks into it, so
a booking's ``flights[].date`` and ``passengers[].dob`` are checked like a top-level date. The kinds live in one
registry (``KINDS``) that a pack extends with ``register``.

Kinds every business has:

* ``text`` free text the customer wrote (a name, an address line): grounded as a whole token of their words;
* ``id`` an identifier the customer typed or a look-up listed (option ``from``: the look-up keys its values come
  from, e.g. ``["reservations"]`` or ``["payment_methods.id"]``; option ``said``: the customer must have chosen it,
  by typing it or by a word of its record no sibling has, "the card ending in 2135");
* ``number`` a count the customer said ("two bags", 两个);
* ``money`` an amount: grounded within half a cent of one the customer said, a look-up listed or ``calculate``
  returned (1628.0 is 1628);
* ``date`` a calendar day, ISO ``YYYY-MM-DD``, grounded when the customer's words name that day, read against the
  pack's clock ("May 20", "next Friday", 5月20日, 明天) or a look-up listed it;
* ``choice`` one of a set (the field's ``Literal``): the grammar holds it to the set; option ``said``: the customer
  must have named it (a cancel's reason), else it is asked for;
* ``computed`` a value the pack computes from the others: never asked of the customer, not grounded.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from chops.domain.evidence import (Evidence, ground_choice, ground_date, ground_id, ground_money,  # noqa: F401
                                   ground_number, ground_text)

KIND = "kind"  # the json_schema_extra key of a field's kind; its options sit beside it
Path = tuple[str | int, ...]  # where a value is: ("passengers", 1, "dob"); a field's slot has "*" for positions


def kind(name: str, **options: Any) -> dict[str, Any]:
    """The ``json_schema_extra`` of a field of kind ``name`` with ``options`` (``kind("id", from_=["orders"])``: a
    trailing underscore is dropped, so ``from`` can be written)."""
    if name not in KINDS:
        raise KeyError(f"no value kind {name!r}; known: {', '.join(sorted(KINDS))}")
    return {KIND: name, **{k.rstrip("_"): v for k, v in options.items()}}


@dataclass(frozen=True)
class ValueKind:
    """One kind of value: its name, how a prompt describes it, and ``ground(value, evidence, options)``: the value as
    it is to be used (the customer's spelling, the ISO date), or None when nothing grounds it. ``grounded=False``: never
    checked (computed by the pack). ``choices``: a closed set of values (a pack's airports), held by the grammar."""

    name: str
    describe: str
    ground: Callable[[Any, Evidence, Mapping[str, Any]], Any]
    grounded: bool = True
    choices: tuple[str, ...] = ()  # the values any slot of this kind may take (the grammar holds the model to them)


KINDS: dict[str, ValueKind] = {}


def register(value_kind: ValueKind) -> ValueKind:
    """Add (or replace) a kind in the registry: how a pack brings a kind of its own (a seat such as 14C)."""
    KINDS[value_kind.name] = value_kind
    return value_kind


@dataclass(frozen=True)
class Slot:
    """One leaf field of an argument model, wherever it is nested: its path (``"*"`` for a list's positions), its
    ``FieldInfo``, its kind's name and that kind's options, and whether it holds a list of such values."""

    path: Path
    info: FieldInfo
    kind: str
    options: Mapping[str, Any]
    many: bool = False

    @property
    def name(self) -> str:
        """The slot's dotted name: ``passengers[].dob``."""
        return ".".join("[]" if p == "*" else str(p) for p in self.path).replace(".[]", "[]")


def field_name(name: str, info: FieldInfo) -> str:
    """The argument name a plan uses: the field's alias where it has one."""
    return info.alias or name


def record_model(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """``(the nested model, whether a list of them)`` of a field's annotation, or ``(None, …)`` for a leaf."""
    inner, many = unwrap(annotation)
    return (inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None), many


def slots(model: type[BaseModel], prefix: Path = ()) -> Iterator[Slot]:
    """Every leaf field of ``model``, nested models and lists of them walked into, in field order."""
    for name, info in model.model_fields.items():
        path = (*prefix, field_name(name, info))
        nested, many = record_model(info.annotation)
        if nested is not None:
            yield from slots(nested, (*path, "*") if many else path)
            continue
        declared, options = _declared(info)
        name_of_kind = declared or _kind_of_type(info.annotation)
        if declared is None and name_of_kind == "choice":
            options["said"] = True  # undeclared, a choice is held to the customer's words as any text
        yield Slot(path, info, name_of_kind, options, many=unwrap(info.annotation)[1])


def _declared(info: FieldInfo) -> tuple[str | None, dict[str, Any]]:
    """``(the kind a field declares or None, its options)`` from its ``json_schema_extra``."""
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    return (str(extra[KIND]) if extra.get(KIND) else None), {k: v for k, v in extra.items() if k != KIND}


def values(model: type[BaseModel], args: Mapping[str, Any]) -> Iterator[tuple[Path, Slot, Any]]:
    """``(path, slot, value)`` of every leaf value in ``args`` (a plan's arguments, by argument name), lists and
    nested records walked by position: ``(("passengers", 1, "dob"), <slot passengers[].dob>, "1990-04-05")``."""
    for slot in slots(model):
        for path, value in _at(args, slot.path, ()):
            if slot.many and isinstance(value, list):
                for i, v in enumerate(value):
                    yield (*path, i), slot, v
            else:
                yield path, slot, value


def _at(data: Any, rest: Path, done: Path) -> Iterator[tuple[Path, Any]]:
    if not rest:
        yield done, data
        return
    head, tail = rest[0], rest[1:]
    if head == "*":
        for i, item in enumerate(data if isinstance(data, list) else []):
            yield from _at(item, tail, (*done, i))
    elif isinstance(data, Mapping) and head in data:
        yield from _at(data[head], tail, (*done, head))


def ground(model: type[BaseModel], args: Mapping[str, Any], evidence: Evidence) -> tuple[dict[str, Any], list[str]]:
    """``(args with every leaf grounded by its kind, the dotted paths of the values dropped)``. A value nothing
    grounds becomes None (the runner then asks for it as missing); one element of a list of plain values that is
    not grounded drops the whole list (half of "these two items" is not the request)."""
    out: Any = _copy(args)
    dropped = [name for name, value in args.items() if value == []]  # an empty list gives nothing: not given
    out.update((name, None) for name in dropped)
    for path, slot, value in values(model, args):
        value_kind = KINDS.get(slot.kind, KINDS["text"])
        listed = slot.many and isinstance(path[-1], int)
        if value is None or not value_kind.grounded:
            continue
        grounded = value_kind.ground(value, evidence, slot.options)
        if grounded is None:
            where = path[:-1] if listed else path
            name = ".".join(str(p) for p in where)
            if name not in dropped:
                dropped.append(name)
            if listed:
                _put(out, where, None)
                continue
        _put(out, path, grounded)
    return out, dropped


def _copy(data: Any) -> Any:
    if isinstance(data, Mapping):
        return {k: _copy(v) for k, v in data.items()}
    return [_copy(v) for v in data] if isinstance(data, list) else data


def _put(data: Any, path: Path, value: Any) -> None:
    for p in path[:-1]:
        data = data[p] if data is not None else None
    if isinstance(data, list) and isinstance(path[-1], int) and path[-1] >= len(data):
        return  # the list was dropped whole already
    if data is not None:
        data[path[-1]] = value


def kind_choices(info: FieldInfo) -> tuple[str, ...]:
    """The closed set of values the kind a field declares allows (``ValueKind.choices``), or ()."""
    declared = KINDS.get(_declared(info)[0] or "")
    return declared.choices if declared is not None else ()


def choices_of(annotation: Any) -> tuple[Any, ...]:
    """The values a ``Literal`` annotation allows (through ``Optional``, ``Annotated`` and lists); () for others."""
    inner, _ = unwrap(annotation)
    return get_args(inner) if get_origin(inner) is Literal else ()


def unwrap(annotation: Any) -> tuple[Any, bool]:
    """``(the element type, whether a list of it)`` of a field's annotation, through ``Annotated`` and ``Optional``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return unwrap(args[0])
    if origin in (Union, UnionType):
        real = [a for a in args if a is not type(None)]
        return unwrap(real[0]) if len(real) == 1 else (annotation, False)
    if origin in (list, tuple, set, frozenset):
        return unwrap(args[0])[0] if args else Any, True
    return annotation, False


def _kind_of_type(annotation: Any) -> str:
    inner, _ = unwrap(annotation)
    if get_origin(inner) is Literal:
        return "choice"
    if inner is bool or inner is int:
        return "number" if inner is int else "choice"
    if inner in (float, Decimal):
        return "money"
    if inner in (dt.date, dt.datetime):
        return "date"
    return "text"


for _kind in (ValueKind("text", "text", ground_text), ValueKind("id", "id", ground_id),
              ValueKind("number", "integer", ground_number), ValueKind("money", "amount", ground_money),
              ValueKind("date", "date (YYYY-MM-DD)", ground_date), ValueKind("choice", "one of a set", ground_choice),
              ValueKind("computed", "computed", lambda v, e, o: v, grounded=False)):
    register(_kind)


def record_texts(data: Any) -> list[str]:
    """The texts of each record at any depth of ``data``: each run of two or more of its string values joined, in
    order ("Kim Osei" of a traveller's first name, last name and date of birth), which name a person or a place that
    no single value does."""
    found: list[str] = []
    if isinstance(data, Mapping):
        words = [v for v in data.values() if isinstance(v, str) and v.strip()]
        found += [" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 2, len(words) + 1)]
        data = list(data.values())
    if isinstance(data, (list, tuple)):
        found += [t for item in data for t in record_texts(item)]
    return found


def scalars(data: Any) -> list[Any]:
    """Every non-null, non-boolean leaf value of ``data`` (nested mappings and lists walked), in order: what a write's
    arguments name, at any depth (a booking's passengers' names are the write's as much as a top-level name)."""
    if isinstance(data, Mapping):
        return [v for item in data.values() for v in scalars(item)]
    if isinstance(data, (list, tuple)):
        return [v for item in data for v in scalars(item)]
    return [] if data is None or isinstance(data, bool) else [data]


def missing(model: type[BaseModel], args: Mapping[str, Any] | None, prefix: Path = ()) -> list[tuple[Path, FieldInfo]]:
    """The required fields ``args`` leaves empty (null, blank or an empty list), at any depth: ``((path), info)``,
    a list of records by each position (``("passengers", 1, "dob")``); a record not given at all is one field."""
    found: list[tuple[Path, FieldInfo]] = []
    args = args or {}
    for name, info in model.model_fields.items():
        key = field_name(name, info)
        value = args.get(key)
        if value is None or value == [] or (isinstance(value, str) and not value.strip()):
            if info.is_required():
                found.append(((*prefix, key), info))
            continue
        nested, many = record_model(info.annotation)
        if nested is None:
            continue
        for i, item in enumerate(value if many and isinstance(value, list) else [value]):
            found += missing(nested, item if isinstance(item, Mapping) else {}, (*prefix, key, i) if many
                             else (*prefix, key))
    return found
