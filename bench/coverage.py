"""Answer coverage: does the text the guide executor reads contain the gold answer?

Page recall (``bench.retrieval``) asks whether one retrieved chunk comes from a page that holds the
answer; a 1,200-character chunk of a page can still miss the sentence that matters, and a shorter one
more often. Coverage looks at the words instead:

    coverage = max over the answer's pages P (bench/guide_answers.json) of
               sum of idf(t) over the claim's terms t on P that the excerpts contain
               / sum of idf(t) over the claim's terms t on P

* **Terms** are language-aware so Chinese and English guides are measured alike: a Latin or digit
  word is lower-cased, dropped when it is an English stop word or a bare number (step numbers are
  written "3.1", "3-1" or "1." in different guides), and stemmed (PyStemmer, as the BM25 index:
  "uploaded" meets "upload"); a run of Han, kana or Hangul characters, which has no spaces, becomes
  its overlapping character bigrams (the usual unit of CJK retrieval, needing no word segmenter).
* **idf** is computed over the guide pages, so a term on every page ("click") counts for nothing
  and a rare one ("candidate") for much: a wrong excerpt full of common words scores low.
* Only terms the answer's **page** also uses count: the reference answers paraphrase ("follow the
  steps", "details"), and a word the page does not use cannot be retrieved from it. Taking the best
  page matters when the guides state one answer in several places in different words ("Candidate
  Information" on one page, "Examinee Information" on another): all of one place is full coverage.
  The full text of an answer page therefore scores 1.0; an excerpt of it scores what it keeps.
* The **claim** is the gold answer; a yes/no answer ("No.") has no content of its own, so when the
  answer has fewer than ``MIN_TERMS`` terms with a weight the question is prepended (the claim is
  then "<question> <answer>"). For those rows coverage is weaker evidence: it shows that the excerpts
  speak of the question's matter in the page's words, not that they state the "no".

A question counts as **covered** when its coverage reaches ``COVERED`` (see ``bench.retrieval``).
Everything here is a pure function of text, so it is unit-tested without an index.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache

# Fewer weighted terms than this and the answer alone says nothing checkable (a bare "No.").
MIN_TERMS = 3
# Coverage at or above which a question counts as covered: most of the answer's weight is there,
# allowing for a word the excerpt phrases differently ("Examinee" for "Candidate").
COVERED = 0.8

# Han (with extension A and compatibility ideographs), kana and Hangul: scripts written without spaces.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")
# Function words beyond BM25's 33 (Lucene's list, which the index uses): pronouns, auxiliaries and
# question words carry no answer content but would otherwise weigh like rare terms on a few pages.
_MORE_STOP = frozenset(
    "i me my we our you your he him his she her its them what which who whom how when where why do "
    "does did has have had can could should would may might must shall am were been being so than too "
    "very just also any some all each from about".split())


@lru_cache(maxsize=1)
def _english():
    # The same stop words and stemmer as the BM25 index (chops.retrieval.index._Lexical).
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN) | _MORE_STOP, Stemmer.Stemmer("english").stemWord


def terms(text: str) -> list[str]:
    """The content terms of ``text`` in order: stemmed English words and CJK character bigrams."""
    stop, stem = _english()
    out: list[str] = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
        if _CJK_RUN.match(token):
            out.extend([token] if len(token) == 1 else [token[i:i + 2] for i in range(len(token) - 1)])
        elif token not in stop and not token.isdigit():
            out.append(stem(token))
    return out


def idf(documents: Iterable[str]) -> dict[str, float]:
    """log(N / df) of every term over ``documents`` (the guide pages); a term on every page is 0."""
    sets = [set(terms(doc)) for doc in documents]
    df: dict[str, int] = {}
    for found in sets:
        for term in found:
            df[term] = df.get(term, 0) + 1
    return {term: math.log(len(sets) / n) for term, n in df.items()}


def claim(question: str, answer: str, weights: Mapping[str, float]) -> str:
    """What the excerpts must contain: the answer, or question + answer when the answer alone has
    fewer than ``MIN_TERMS`` terms with a weight (a yes/no answer)."""
    weighted = {t for t in terms(answer) if weights.get(t, 0.0) > 0}
    return answer if len(weighted) >= MIN_TERMS else f"{question} {answer}"


def coverage(text: str, excerpts: str, weights: Mapping[str, float], places: Iterable[str] = ()) -> float | None:
    """The idf-weighted share of ``text``'s terms that occur in ``excerpts`` (0..1), counting only
    the terms each of ``places`` (the answer's pages) uses and keeping the best place; without places,
    every weighted term counts. None when no place shares a weighted term with ``text``."""
    claimed = {t for t in terms(text) if weights.get(t, 0.0) > 0}
    found = set(terms(excerpts))
    best = None
    for wanted in [claimed & set(terms(place)) for place in places] or [claimed]:
        if wanted:
            # Summed in sorted order: set order varies with the hash seed, and float sums with their order.
            share = sum(weights[t] for t in sorted(wanted & found)) / sum(weights[t] for t in sorted(wanted))
            best = share if best is None else max(best, share)
    return best
