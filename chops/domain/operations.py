"""The typed operations a domain pack offers the agent: one ``Operation`` per call, in one registry (a
mapping by name), and the one-line-per-operation text the prompts show."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Callable, Union, get_args, get_origin

from pydantic import BaseModel

MAX_PLAN_STEPS = 5  # one plan's steps: the few changes a message asks for, some for several records ("all my orders")
MAX_PROPOSED_STEPS = 3  # what the executor's schema lets a model propose; the fan-out adds the other records

# An argument field's ``json_schema_extra`` key: the look-up result keys its value is one of (an item id is
# one the order or the product listed). Once a look-up (or the profile) has returned such values, the
# executor's grammar offers only them: the model copies an id, it cannot invent one (``chops.pipeline.choices``).
CHOICES_FROM = "choices_from"
# The states a value must be in, ``{state key: allowed values}`` ("only a pending order can be cancelled":
# ``{"status": ["pending"]}``), read from the record that holds the value in the profile's or a look-up's data;
# with ``Operation.counterparts`` it says when another operation is the one meant (``chops.pipeline.choices``).
CHOICES_WHERE = "choices_where"
# With ``CHOICES_FROM``: the record key that lists a value's names (an order's item names). When the message
# names no id but mentions some of those names ("the desk lamp I got"), only the values it mentions are offered.
CHOICES_MENTIONED = "choices_mentioned"
# A list argument whose values pair, position by position, with another's: ``{"partner": argument, "by": the
# record key both share, "in": the argument naming the record the values are listed in}``. A swap's old lines
# are the lines of the new items' products in the order (``chops.pipeline.pairing.paired``).
CHOICES_PAIRED = "choices_paired"
# With ``CHOICES_MENTIONED`` on a list argument: when the message mentions two or three of the names, each position
# takes a value of another name (a swap's new items: one variant of each product named, any of them left out).
CHOICES_ONE_EACH = "choices_one_each"
# With ``CHOICES_MENTIONED``: ``{"excluded": marker or None}``. A value's listed text (a variant's line: its option
# values, price, availability) says what it is; when the customer's words mention some of those features, only the
# values of each name that match best are offered, and one listed with the marker ("NOT available") is never
# offered while another is (``chops.pipeline.described``).
CHOICES_DESCRIBED = "choices_described"
# Arguments that are the parts of one record (an address's lines, city, state, zip): each part's field declares the
# same group name. When the parts a plan gives match exactly one record of the seen data holding them all (the
# customer's default address, an order's), the parts it left empty are taken from that record
# (``chops.pipeline.completion``): "ship it to my Chicago address" is one value the customer named, not six.
CHOICES_RECORD = "choices_record"
# A value the customer must have named: with ``CHOICES_FROM``, by a word of its record (a payment method's kind or
# brand, its last digits) or by the value itself; without, by its last word (a cancel's reason, "no longer needed",
# by "I don't need it"). One they did not name is not used, and the reply asks for it ("which payment method pays
# the difference?", "the reason?") instead of the model choosing for them.
CHOICES_SAID = "choices_said"
# With ``CHOICES_SAID``: ``{"in": the argument naming the record, "at": the path in that record to its own value,
# "words": what names it}``. "The original payment method", "the one I paid with" name the order's own method, its
# first payment's (``chops.pipeline.completion.original``); where the words are said, only that value is offered.
CHOICES_ORIGINAL = "choices_original"
# With ``CHOICES_SAID`` on an argument of no record: the values it may take (a cancel's reason). A plan the agent
# makes without the model (``chops.pipeline.everything``) takes the one the customer's words name, else asks.
CHOICES_AMONG = "choices_among"


def named(word: str, text: str) -> bool:
    """Whether ``word`` starts a word of ``text``, case-blind ("pay" in "Paying", "cancel" in "cancelling"); a word in
    a script without spaces (Chinese) anywhere in it."""
    return next(named_at(word, text), None) is not None


def named_at(word: str, text: str) -> Iterator[int]:
    """Where in ``text`` the ``word`` is ``named``: each place it starts a word of it, case-blind (in a script without
    spaces, each place it is)."""
    pattern = rf"\b{re.escape(word)}" if word.isascii() else re.escape(word)
    return (m.start() for m in re.finditer(pattern, text.lower()))


@dataclass(frozen=True)
class Operation:
    """One callable operation of a domain pack: its name, a one-line description for the models, typed
    arguments (a pydantic model whose field aliases are the argument names), whether it writes, whether only
    an admin may call it, and the function that runs it: ``run(uow, actor, args) -> (message, data)``, or
    ``(message, data, money)`` for a write that moves money (``OperationResult.money``: a refund positive, a
    charge negative), raising a ``DomainError`` to refuse.

    ``confirm``: a write the agent dry-runs, verifies and then describes to the user, committing it only
    on their "yes" (``chops.pipeline.pending``). ``observe``: a read whose result the executor reads and
    then decides the next step from (a look-up before acting); a read without it is itself the answer
    (its result is the reply). ``needs``: the names of the look-ups whose results ground this operation's
    arguments (an order's item ids, a product's variants); tool retrieval (``chops.pipeline.tools``) never
    shows the operation without them. ``counterparts``: ``(state, operation)`` pairs, the operation that does
    the same for a value in that state (``CHOICES_WHERE``): an item change of a delivered order is its exchange.
    ``follows``: ``(records key, name key, look-up, id key)``: after this look-up, the look-up is also run for
    each record under the key whose name the message mentions, with the record's id (an order's look-up reads the
    products of the items the customer names: ``chops.pipeline.lookups.follow_ups``). ``unchanged``: the operation
    meant when every value of a ``CHOICES_PAIRED`` argument is paired with itself (an exchange of items for
    themselves is their return: ``chops.pipeline.pairing.for_themselves``). ``asked_by``: for a write a small
    model proposes where nobody asked for it, the words one of which the customer's messages must hold for it to be
    offered at all (``asked_in``; empty: always offered); ``unasked_by``: words that, in the request itself, speak of
    another operation's part, so this one is not offered for it ("use my gift card for any extra charge" is a swap's
    price difference, not a change of the order's payment method). ``asked_as``: words by which a request naming
    another kind of write asks for this one, the record being in the state this one takes: "cancel the lamp I
    received" of a delivered order is its return (``chops.pipeline.states.out_of_state``). ``called``: other words
    customers name this kind of change by, beside its ``kind`` ("send back" of a return, 取消 of a cancel).

    What the customer reads of it (the pack's reply vocabulary, English msgids of its own catalog,
    ``DomainPack.locale``): ``title``, the operation as a user would name it ("change your school"; empty: its name);
    each argument's ``Field(title=...)``, what a reply asking for it calls it (none: its description); ``columns``,
    ``(key, label)`` pairs of the fields of a read's rows a reply lists, in order (none: every field as it is);
    ``worded``, the columns (of a read's rows) and arguments (of a write, as a confirmation lists them) whose values
    are words of the catalog too (a role; a cancel's reason); ``tells``, a write whose dry run's message says the
    whole change in the customer's words (items, amounts, where the money goes), so a confirmation shows it in
    place of the field changes (``chops.pipeline.replies.change_lines``).

    ``after_lookup``: offered only once a look-up of the conversation returned a record (arithmetic: offered before
    any price was read, the 1.5B wrote "2 * 2 * 2 ..." until its tokens ran out, a minute of decoding).
    """

    name: str
    description: str
    args_model: type[BaseModel]
    writes: bool
    admin_only: bool
    run: Callable[..., Any]
    confirm: bool = False
    observe: bool = False
    needs: tuple[str, ...] = ()
    counterparts: tuple[tuple[str, str], ...] = ()  # (state, operation) pairs: the operation stays hashable
    follows: tuple[tuple[str, str, str, str], ...] = ()
    unchanged: str | None = None  # the operation meant when each new value of its pairs is its old one
    asked_by: tuple[str, ...] = ()
    unasked_by: tuple[str, ...] = ()
    asked_as: tuple[str, ...] = ()
    called: tuple[str, ...] = ()
    title: str = ""
    columns: tuple[tuple[str, str], ...] = ()
    worded: tuple[str, ...] = ()
    tells: bool = False
    after_lookup: bool = False

    def asked_in(self, texts: Iterable[str], request: str = "") -> bool:
        """Whether ``texts`` ask for this operation: ``asked_by`` is empty, or one of its words starts a word of
        theirs, case-blind ("pay" in "Paying"); a word in a script without spaces (Chinese) anywhere in them; and
        the ``request`` holds none of ``unasked_by`` so."""
        text = " ".join(texts)
        return (not self.asked_by or any(named(w, text) for w in self.asked_by)) \
            and not any(named(w, request) for w in self.unasked_by)

    @property
    def words(self) -> tuple[str, ...]:
        """The words of its name, lower-case: ("return", "delivered", "order", "items"), ("change", "upload",
        "limit") of ``ChangeUploadLimit``."""
        return tuple(w.lower() for w in re.split(r"[\W_]+|(?<=[a-z0-9])(?=[A-Z])", self.name.strip("_")) if w)

    @property
    def kind(self) -> str:
        """The kind of change this makes: the first word of its name ("return" of ``return_delivered_order_items``,
        "change" of ``ChangeUploadLimit``)."""
        return self.words[0]

    @property
    def kind_words(self) -> tuple[str, ...]:
        """The words that name this kind of change: its ``kind`` and what it is ``called``."""
        return (self.kind, *self.called)

    def named_in(self, text: str) -> bool:
        """Whether ``text`` names this kind of change (one of its ``kind_words``: ``named``)."""
        return any(named(w, text) for w in self.kind_words)

    def arg_names(self) -> tuple[str, ...]:
        """The argument names (the alias where a pack gives one, else the field's name)."""
        return tuple(field.alias or name for name, field in self.args_model.model_fields.items())

    def arg_signature(self) -> str:
        """``Arg: type, ...`` with the argument names (the alias where a pack gives one, else the field's
        name: the name the plan schema asks for, see ``chops.pipeline.schemas``)."""
        return ", ".join(f"{field.alias or name}: {type_name(field.annotation)}"
                         for name, field in self.args_model.model_fields.items())

    def choice_keys(self) -> dict[str, tuple[str, ...]]:
        """``{argument name: the result keys its value comes from}`` for the fields that declare
        ``CHOICES_FROM`` (see there); empty for an operation whose every value the user types."""
        return {arg: tuple(x[CHOICES_FROM]) for arg, x in self._extras().items() if x.get(CHOICES_FROM)}

    def choice_states(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """``{argument name: {state key: allowed values}}`` for the fields that declare ``CHOICES_WHERE``."""
        return {arg: {k: tuple(v) for k, v in x[CHOICES_WHERE].items()}
                for arg, x in self._extras().items() if x.get(CHOICES_WHERE)}

    def choice_names(self) -> dict[str, str]:
        """``{argument name: the record key of its values' names}`` for the fields that declare
        ``CHOICES_MENTIONED``."""
        return {arg: str(x[CHOICES_MENTIONED]) for arg, x in self._extras().items() if x.get(CHOICES_MENTIONED)}

    def choice_pairs(self) -> dict[str, dict[str, str]]:
        """``{argument name: its CHOICES_PAIRED declaration}``."""
        return {arg: dict(x[CHOICES_PAIRED]) for arg, x in self._extras().items() if x.get(CHOICES_PAIRED)}

    def choice_one_each(self) -> frozenset[str]:
        """The argument names that declare ``CHOICES_ONE_EACH``."""
        return frozenset(arg for arg, x in self._extras().items() if x.get(CHOICES_ONE_EACH))

    def choice_records(self) -> dict[str, tuple[str, ...]]:
        """``{group name: its argument names, in field order}`` for the fields that declare ``CHOICES_RECORD``."""
        groups: dict[str, list[str]] = {}
        for arg, x in self._extras().items():
            if x.get(CHOICES_RECORD):
                groups.setdefault(str(x[CHOICES_RECORD]), []).append(arg)
        return {group: tuple(args) for group, args in groups.items()}

    def choice_said(self) -> frozenset[str]:
        """The argument names that declare ``CHOICES_SAID``."""
        return frozenset(arg for arg, x in self._extras().items() if x.get(CHOICES_SAID))

    def choice_original(self) -> dict[str, dict[str, Any]]:
        """``{argument name: its CHOICES_ORIGINAL declaration}``."""
        return {arg: dict(x[CHOICES_ORIGINAL]) for arg, x in self._extras().items()
                if isinstance(x.get(CHOICES_ORIGINAL), dict)}

    def choice_among(self) -> dict[str, tuple[str, ...]]:
        """``{argument name: the values it may take}`` for the fields that declare ``CHOICES_AMONG``."""
        return {arg: tuple(x[CHOICES_AMONG]) for arg, x in self._extras().items() if x.get(CHOICES_AMONG)}

    def choice_described(self) -> dict[str, dict[str, Any]]:
        """``{argument name: its CHOICES_DESCRIBED declaration}``."""
        return {arg: dict(x[CHOICES_DESCRIBED]) for arg, x in self._extras().items()
                if isinstance(x.get(CHOICES_DESCRIBED), dict)}

    def _extras(self) -> dict[str, dict[str, Any]]:
        """``{argument name: its field's json_schema_extra}`` (empty for a field without one)."""
        return {field.alias or name: field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
                for name, field in self.args_model.model_fields.items()}

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (by their names)."""
        return self.args_model.model_json_schema(by_alias=True)


def type_name(annotation: Any) -> str:
    """A short name of an argument's type for prompts: ``int``, ``list[str]``, ``str | None``, a nested record's
    fields inline (``list[{flight_number: str, date: str}]``); constraints of ``Annotated`` left out: the schema
    enforces them, the model only needs the kind."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return type_name(args[0])
    if origin in (Union, UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is not None:
        inner = ", ".join(type_name(a) for a in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]" if inner else getattr(origin, "__name__", "")
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):  # a nested record: its fields inline
        return "{" + ", ".join(f"{f.alias or n}: {type_name(f.annotation)}"
                               for n, f in annotation.model_fields.items()) + "}"
    return "None" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))


def operation_lines(operations: Mapping[str, Operation]) -> list[str]:
    """One line per operation for prompts: ``Name(Arg: type, ...) — description``."""
    return [f"{op.name}({op.arg_signature()}) — {op.description}" for op in operations.values()]


def plain_kind_words(operations: Iterable[Operation]) -> list[str]:
    """The words that name a write asking no swap (a cancel, a return: the ``Operation.kind_words`` of each write
    without ``choice_pairs``); a request naming one asks for no item to be swapped for another."""
    return [w for op in operations if op.writes and not op.choice_pairs() for w in op.kind_words]
