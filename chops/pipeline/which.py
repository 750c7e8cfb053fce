"""Which one? A write of one line of a product the customer holds several of is asked about, not guessed.

"I received a laptop and I want to exchange it": two delivered orders each hold a laptop, and the 1.5B model took the
first it read; "return the vacuum cleaner from my recent order": that order holds a robotic one and a canister one,
and the model took either. The customer's yes then committed a change of the item they did not mean (train tasks 95,
46 and 47). So where a write's lines (an argument of record lines, ``CHOICES_MENTIONED``) take fewer lines of a
product than the records in a state the write takes hold (``CHOICES_WHERE``: the profile's overview names each
record's lines), and nothing the customer said tells them apart, the write is not planned: the customer is asked
which one (``ask``; the agent's own question, told as it is: ``context.FINAL``), each candidate described by what
the look-ups show of it, the records not read yet read first (``read_elsewhere``). Told apart means: a record's id
typed (the candidates are then that record's), the products the write takes together named ("the bookshelf and the
jigsaw, same order": the records holding them all), a feature one candidate has and the others and a swap's new
items lack mentioned ("the robotic one"), a price comparison ("the cheaper one": ``choices.told_apart``), a word
that takes in several ("both", "all", "two laptops": ``fanout``), or, where the candidates lie in several records,
the record named by its place or by a part of its overview another lacks ("my last order", "the one sent to
Denver"). Where the customer's words single out a candidate the model did not take, the line is the one they
described (``meant``; in another record where the write takes that line alone).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chops.domain.operations import Operation
from chops.domain.outcomes import Outcome, OperationResult
from chops.pipeline.choices import lines_of, record_arg
from chops.pipeline.context import FINAL, Step
from chops.pipeline.described import descriptions, features, held_before, mentioned_features
from chops.pipeline.lookups import Reader
from chops.pipeline.relative import LIKE_ANOTHER, comparisons, like_another, value_of
from chops.pipeline.several import COUNTS, EVERY, EVERY_ZH, pattern
from chops.pipeline.swapped import kept, swapped_lines
from chops.pipeline.walk import lines_in, mentions, record_fields, records, values_in

# Words that take in several lines, or name a record by its place among the customer's.
_SEVERAL = pattern((*EVERY, *COUNTS, "four", "rest"), (*EVERY_ZH, "都", "两"))
_READS = 3  # candidate records read at most before asking
_PLACE = re.compile(r"\b(?:last|latest|recent|newest|newer|first|oldest|older|earlier|previous|second|other)\b"
                    r"|最近|上一|第一|第二", re.IGNORECASE)


@dataclass(frozen=True)
class Which:
    """A line the customer has not said which of: the product's ``name``, each candidate described (``options``),
    and the arguments left for their answer (``unset``); or, ``listed``, the new items the customer asked to choose
    from (``chops.pipeline.listing``)."""

    name: str
    options: tuple[str, ...]
    unset: tuple[str, ...]
    listed: bool = False

    def result(self, operation: str) -> OperationResult:
        """The write's result: a value the customer must give (the reply asks which, listing the ``options``)."""
        said = "asked to choose from these" if self.listed else "has not said"
        return OperationResult(operation=operation, outcome=Outcome.REFUSED_MISSING_ARGS,
                               message=f"which {self.name}: {' or '.join(self.options)}; the customer {said}",
                               data={"which": self.name, "options": list(self.options), "listed": self.listed,
                                     FINAL: True})


Line = tuple[str, str | None]  # (record id, line value or None where the record was not read yet)


@dataclass
class _Found:
    """What a write's lines could be: its record and lines arguments, ``{product name: (every line of it in the
    records the write may change, the lines the write takes)}``, each line's description, and each record's marks
    (the texts of its overview's parts, such as where it was sent), and the features of a swap's new items (words
    about them tell no old line apart: "for one with 32GB")."""

    record: str
    line_arg: str
    groups: dict[str, tuple[list[Line], list[Line]]]
    lines: dict[str, str]
    marks: dict[str, set[str]]
    new: set[str]


def ask(operations: Mapping[str, Operation], writes: Iterable[Step], request: str, texts: Iterable[str],
        sources: Iterable[Any]) -> tuple[Step, Which] | None:
    """The first of ``writes`` to ask which about (``unsure``) and the question; the records holding a candidate were
    read before (``read_elsewhere``), so that each is described and the answer ("the 32GB one") can pick it."""
    texts, sources = list(texts), list(sources)
    if _moot(request):  # nothing read could make the question needed
        return None
    for s in writes:
        which = unsure(operations[s.operation], s.args, request, texts, sources)
        if which is not None:
            return s, which
    return None


def read_elsewhere(read: Reader, operations: Mapping[str, Operation], writes: Iterable[Step], request: str,
                   texts: Iterable[str]) -> list[dict[str, Any]]:
    """Read the records (at most ``_READS``) holding a candidate line of each of ``writes`` not read yet, and give a
    write whose line the customer's words single out there that line (``meant``), before any check refuses the write
    for the line the model took ("my small t-shirt, same size": the 1.5B took the XXL one of another order, and the
    swap was refused for changing the size, turn after turn: train task 3). Returns the writes moved (for the
    trace). A line proposed for itself where the customer asked for one like another of theirs is given that one's item
    (``relative.like_another``), its record read here if it was not: the turn's look-ups start after the last commit,
    and the order holding the received grill was read before the luggage's exchange was committed (train task 23)."""
    texts, moved = list(texts), []
    moot = _moot(request)  # the request's words take in or compare the lines: no question, nothing to read for one
    for s in writes:
        op = operations[s.operation]
        found = None if moot else _candidates(op, s.args, texts, read.sources)
        unread = [rid for cands, taken in (found.groups.values() if found else ()) if len(cands) > len(taken)
                  for rid, v in cands if v is None]
        for rid in list(dict.fromkeys(unread))[:_READS]:
            read.record(op, found.record, rid)
        described = meant(op, s.args, texts, read.sources) if unread else None
        if described is None and LIKE_ANOTHER.search(request):  # "… the same type as the one I already received"
            for rid in _unread_holders(op, s.args, read.sources)[:_READS]:
                read.record(op, str(record_arg(op)), rid)
            described = like_another(op, s.args, texts, read.sources)
        if described is not None:
            moved.append({"operation": s.operation, "proposed": s.args, "args": described})
            s.args = described
    return moved


def _unread_holders(op: Operation, args: Mapping[str, Any], sources: list[Any]) -> list[str]:
    """The records, in any state, whose overview lists a product of the write's lines and whose lines were not read."""
    record, keys = record_arg(op), op.choice_names()
    line_arg = next((a for a in op.choice_pairs() if isinstance(args.get(a), list)), None)
    if record is None or record not in keys or line_arg is None:
        return []
    names_of_line = record_fields(sources, {keys[line_arg]})[keys[line_arg]]
    wanted = {str(names_of_line.get(str(v))) for v in args[line_arg]}
    out: list[str] = []
    for node in (n for data in sources for n in records(data)):
        rid = next((str(node[k]) for k in op.choice_keys().get(record, ()) if isinstance(node.get(k), str)), None)
        names = node.get(keys[record])
        if rid and isinstance(names, list) and wanted & {str(n) for n in names} and rid != args.get(record) \
                and not lines_in(sources, rid, op.choice_keys()[line_arg]) and rid not in out:
            out.append(rid)
    return out


def unsure(op: Operation, args: Mapping[str, Any], request: str, texts: Iterable[str],
           sources: Iterable[Any]) -> Which | None:
    """The question to ask before the write ``op`` with ``args`` (module docstring), or None. ``request``: the words
    this write is for; ``texts``: the customer's messages; ``sources``: the profile's data and the look-ups."""
    texts, sources = list(texts), list(sources)
    found = _candidates(op, args, texts, sources)
    if found is None or _moot(request):
        return None
    for name, (candidates, taken) in found.groups.items():
        if len(candidates) <= len(taken) or _told_apart(name, candidates, found, texts):
            continue
        several = len({rid for rid, _ in candidates}) > 1
        if several and (_PLACE.search(request) or _record_named(candidates, found.marks, texts)):
            continue
        # Each line as its record lists it, not as its product's variant (whether that is sold now: "NOT available").
        held = descriptions((n for data in sources for n in records(data)), keyed=False)
        options = tuple(f"the {name} of {rid}" + (f" ({_options(held.get(v, ''), name, v)})" if v else "")
                        for rid, v in candidates)
        return Which(name=name, options=options, unset=(found.record, found.line_arg) if several else (found.line_arg,))
    return None


def _moot(request: str) -> bool:
    """Whether the request's own words take in several lines or compare them, so no question is needed."""
    return bool(_SEVERAL.search(request) or comparisons(request, ()))


def meant(op: Operation, args: Mapping[str, Any], texts: Iterable[str],
          sources: Iterable[Any]) -> dict[str, Any] | None:
    """``args`` with a line the model took replaced by the one line of its product the customer's words single out by a
    feature the others lack ("the robotic one"; "the 32GB one", in another record, where the write takes that line
    alone), or None when nothing changes."""
    texts, sources = list(texts), list(sources)
    found = _candidates(op, args, texts, sources)
    if found is None:
        return None
    out = {**args, found.line_arg: list(args[found.line_arg])}
    chosen = out[found.line_arg]
    for name, (candidates, taken) in found.groups.items():
        picked = _told_apart(name, candidates, found, texts)
        if len(picked) != 1 or len(taken) != 1 or picked[0] in taken or picked[0][1] in chosen:
            continue
        (rid, value), (_, wrong) = picked[0], taken[0]
        if rid == args[found.record]:
            chosen[chosen.index(wrong)] = value
        elif chosen == [wrong]:  # the write's one line: it moves to the record holding the one described
            out.update({found.record: rid, found.line_arg: [value]})
    return out if out != args else None


def _candidates(op: Operation, args: Mapping[str, Any], texts: list[str], sources: list[Any]) -> _Found | None:
    """What the lines of the write ``op`` with ``args`` could be, or None for a write without record lines."""
    keys, record = op.choice_names(), record_arg(op)
    partners = {pair["partner"] for pair in op.choice_pairs().values()}
    line_arg = next((a for a in keys if a not in partners and isinstance(args.get(a), list) and args[a]), None)
    if record is None or record not in keys or line_arg is None or not isinstance(args.get(record), str):
        return None
    states, id_keys = op.choice_states()[record], op.choice_keys().get(record, ())
    held: dict[str, list[str]] = {}  # record id -> the names of its lines, for the records in a state ``op`` takes
    marks: dict[str, set[str]] = {}
    for node in (n for data in sources for n in records(data)):
        rid = next((str(node[k]) for k in id_keys if isinstance(node.get(k), str)), None)
        names = node.get(keys[record])
        if rid and isinstance(names, list) and all(str(node.get(k)) in v for k, v in states.items()):
            held[rid] = [str(n) for n in names]
            marks[rid] = {str(x) for part in node.values() if isinstance(part, dict) for x in part.values() if x}
    known = values_in(sources, id_keys)  # the records in the customer's order (``walk.records`` walks backwards)
    held = dict(sorted(held.items(), key=lambda kv: known.index(kv[0]) if kv[0] in known else len(known)))
    typed = [rid for rid in held if any(rid.lstrip("#").lower() in t.lower() for t in texts)]
    names_of_line = record_fields(sources, {keys[line_arg]})[keys[line_arg]]
    # "the bookshelf and the jigsaw, they're from the same order": the records holding every product the write takes.
    together = {str(names_of_line.get(str(v))) for v in args[line_arg]}
    holding_all = [rid for rid in held if together <= set(held[rid])] if len(together) > 1 else []
    groups: dict[str, tuple[list[Line], list[Line]]] = {}
    for value in args[line_arg]:
        name = names_of_line.get(str(value))
        if name is None or str(name) in groups:
            continue
        candidates: list[Line] = []
        for rid in typed or holding_all or held:
            if str(name) in held[rid]:
                mine = [v for v in lines_of(op, rid, sources).get(line_arg, []) if names_of_line.get(v) == name]
                candidates += [(rid, v) for v in dict.fromkeys(mine)] or [(rid, None)]
        taken = [(args[record], str(v)) for v in dict.fromkeys(args[line_arg]) if names_of_line.get(str(v)) == name]
        groups[str(name)] = (candidates, taken)
    lines = descriptions(n for data in sources for n in records(data))
    new = {f for arg in partners for v in args.get(arg) or () for f in features(lines.get(str(v), ""))}
    # But an option said to stay ("same size") is the old line's too: "my small t-shirt to purple, same size" tells
    # the small one apart (train task 3: the 1.5B took another order's XXL one).
    for line in swapped_lines(op, args, texts, sources):
        options, same = kept(line, sources)
        new -= {value_of(line.now, o, options) for o in same}
    return _Found(record, line_arg, groups, lines, marks, new)


def _told_apart(name: str, candidates: list[Line], found: _Found, texts: list[str]) -> list[Line]:
    """The candidates the customer's ``texts`` tell apart: by a feature said before the product's name
    (``_said_before``), else by one mentioned anywhere (``_singled_out``)."""
    return _said_before(name, candidates, found, texts) or _singled_out(name, candidates, found, texts)


def _own_features(name: str, candidates: list[Line], found: _Found) -> tuple[dict[Line, set[str]], set[str]]:
    """(each read candidate's features, but its product's name and its id; those every candidate has, where each was
    read, else none)."""
    own = {c: set(features(found.lines.get(c[1], ""))) - {name, c[1]} for c in candidates if c[1] is not None}
    return own, set.intersection(*own.values()) if len(own) == len(candidates) and own else set()


def _singled_out(name: str, candidates: list[Line], found: _Found, texts: list[str]) -> list[Line]:
    """The read candidates (lines of the product ``name``) that a feature of theirs some other candidate and the swap's
    new items lack, mentioned in the customer's ``texts``, points to."""
    if len(candidates) < 2:
        return []
    own, common = _own_features(name, candidates, found)
    return [c for c, fs in own.items()
            if (fs - common - found.new) & mentioned_features(found.lines.get(c[1], ""), texts)]


def _said_before(name: str, candidates: list[Line], found: _Found, texts: list[str]) -> list[Line]:
    """The one candidate (a line of the product ``name``) whose own feature, one the others lack, the customer's
    ``texts`` say right before the product's name (``described.held_before``), or []. The swap's new items may have it
    too: told "change the 17-inch laptop to the 13-inch version", the 1.5B changed the 13-inch one, and "17-inch" (the
    new item's) and "13-inch" (asked for) pointed to both lines (train task 35)."""
    own, _ = _own_features(name, candidates, found)
    return held_before(name, own, texts) if len(own) == len(candidates) else []


def _record_named(candidates: list[Line], marks: Mapping[str, set[str]], texts: list[str]) -> bool:
    """Whether the customer's ``texts`` name a mark one candidate's record has and another's lacks ("the one I sent
    to Denver")."""
    own = [marks.get(rid, set()) for rid in dict.fromkeys(rid for rid, _ in candidates)]
    common = set.intersection(*own) if own else set()
    return any(mentions(t, m) for m in set().union(*own) - common if len(m) >= 3 for t in texts)


def _options(description: str, name: str, value: str) -> str:
    """A line's description without its name and ids (texts of one word: "p-123", "8011"): "screen size: 15-inch,
    processor: i5, …", else the line's value."""
    parts = [p.strip() for p in description.split(";")]
    return "; ".join(p for p in parts if p != name and (" " in p or ":" in p)) or value
