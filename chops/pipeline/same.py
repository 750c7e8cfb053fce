"""The same item asked for: a swap to another variant where the customer asked for "the same item", "the exact same
helmet" or "an identical one" is refused before it is described (``chops.pipeline.kinds.unasked_refusal``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from chops.domain.operations import Operation
from chops.pipeline.described import features, mentioned_features
from chops.pipeline.relative import value_of
from chops.pipeline.swapped import kept, known_names, swapped_lines
from chops.pipeline.walk import mentions, record_fields, singular

_SAME_AS = r"\b(?:the )?(?:very |exact(?:ly)? )?same "
_SAME = re.compile(_SAME_AS + r"(?:item|one|model|product|thing|variant|kind|pair|specs?|specifications|options"
                   r"|configuration)\b(?! but)|\bidentical\b|同款|一模一样", re.IGNORECASE)


def _same_item(known: set[str]) -> re.Pattern[str]:
    """``_SAME``, or "the same" before the last word of a ``known`` product name ("exactly the same helmet": the
    1.5B proposed a small red helmet for it, own5)."""
    heads = sorted({singular(n.split()[-1].lower()) for n in known if n.split()})
    if not heads:
        return _SAME
    return re.compile(f"{_SAME.pattern}|{_SAME_AS}(?:{'|'.join(map(re.escape, heads))})(?:e?s)?\\b(?! but)",
                      re.IGNORECASE)


def not_the_same(op: Operation, args: Mapping[str, Any], request: str, texts: Iterable[str],
                 sources: Iterable[Any]) -> tuple[str, bool] | None:
    """(the features a swapped line's new item has and the line lacks, whether the line's own variant is listed as not
    sold now) where ``request`` asks for the same item ("exchange the tablet for the same item", not "the same one
    but in red") and the customer's words mention none of them; else None. Asked for "the same item, else just
    return it", the 1.5B proposed a 7-inch tablet for the 10-inch one (train task 30). Told only that the helmet
    proposed differed, a customer would not know the same one is sold out (own5)."""
    texts, sources = list(texts), list(sources)
    known = known_names(record_fields(sources, set(op.choice_names().values())))
    same = _same_item(known)
    if not same.search(request):
        return None
    excluded = [d.get("excluded") for d in op.choice_described().values()]  # "NOT available"
    for line in swapped_lines(op, args, texts, sources):
        if line.sentences and not any(_same_of(s, line.name, known, same) for s in line.sentences):
            continue  # the same item asked for another product ("the boots with the same specs, and the jigsaw …")
        wanted = [f for f in features(line.now) if f not in features(line.was) and not f.startswith("$")
                  and f != "available"]
        if wanted and not set(wanted) & mentioned_features(line.now, texts):
            options = kept(line, sources)[0]  # the customer is told "size 7, waterproof no", not "7, no" (task 107)
            named = [f"{o} {v}" for o in options if (v := value_of(line.now, o, options)) not in (None, options[o])]
            return ", ".join(named or wanted), any(m and m in line.was for m in excluded)
    return None


def _same_of(sentence: str, name: str, known: set[str], same: re.Pattern[str]) -> bool:
    """Whether ``sentence`` asks for the same item (``same``) of ``name``: the product named nearest before the end
    of its "same item" is that one ("the same helmet" names its own), or none of the ``known`` is ("new boots with
    the same specs, and the jigsaw with a fancier theme" asks it of the boots only)."""
    for m in same.finditer(sentence):
        words = sentence[:m.end()].split()
        nearest = next((hit for k in range(1, len(words) + 1)
                        if (hit := {n for n in known if mentions(" ".join(words[-k:]), n)})), set())
        if not nearest or name in nearest:
            return True
    return False
