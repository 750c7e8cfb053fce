"""The guide executor's excerpt budget: for each long chunk size and k, what the executor reads per
question (characters and tokens of the rendered excerpts) against what it needs (page recall@k and
answer coverage, ``bench.coverage``). Run through ``python -m bench.retrieval --long-sizes ...``.

Three question sets, none stored here (all read at run time):

* ``rows``: the visible guide rows of the CPHOS-dataset; the claim is the gold answer (or question +
  answer for a yes/no row), its places the annotated answer pages (``bench/guide_answers.json``).
* ``faq``: every "Q: … A: …" entry of the guides themselves, asked by its own question; its answer is
  the claim and its page the place. Not a test of retrieval (the question is the guide's own words)
  but of truncation: long answers (the upload steps run to ~1,500 characters) must still fit in the
  k excerpts when chunks get shorter, which the three visible groups alone would not show.
* ``window`` rows (``--windows``): the sentence-window alternative, the top-k *short* chunks each
  widened by ``r`` neighbouring short chunks of the same page (overlaps merged), so it can be compared
  with plain chunks at equal characters without changing the index.
"""

from __future__ import annotations

import csv
import json
import re
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path

from bench.coverage import COVERED, claim, coverage, idf
from chops.llm.accounting import CHARS_PER_TOKEN
from chops.pipeline.prompting import clip
from chops.pipeline.retrieval import Retriever
from chops.pipeline.verifier import SOURCE_CLIP as VERIFIER_CLIP  # what the verifier rereads of the cited excerpt
from chops.retrieval.index import GuideIndex
from chops.retrieval.ingest import Chunk, load_guides
from chops.settings import Settings

# "Q: question A: answer" entries of a FAQ page (the same markers the chunker keeps whole).
_FAQ = re.compile(r"(?<!\S)Q:\s(.*?)\s+A:\s(.*?)(?=\s+Q:\s|$)", re.DOTALL)


def faq_pairs(text: str) -> list[tuple[str, str]]:
    """The (question, answer) entries of a FAQ page's text, in order."""
    return [(q.strip(), a.strip()) for q, a in _FAQ.findall(text)]


def question_sets(guides: Path, qa_csv: Path, rows: list[tuple[str, str, set]]) -> dict[str, list[tuple]]:
    """The ``rows`` and ``faq`` sets as (id, question, claim, places' texts, gold pages) tuples."""
    pages, _ = load_guides(guides)
    text_of = {(p.file, p.page): p.text for p in pages}
    weights = idf(text_of.values())
    with open(qa_csv, newline="", encoding="utf-8") as fh:
        answer_of = {r["src_row"]: r["answer"] for r in csv.DictReader(fh)}
    visible = [(row, q, claim(q, answer_of[row], weights), [text_of[g] for g in sorted(gold)], gold)
               for row, q, gold in rows]
    faq = [(f"{p.file}:{p.page}#{n}", q, a, [p.text], {(p.file, p.page)})
           for p in pages for n, (q, a) in enumerate(faq_pairs(p.text), 1)]
    return {"rows": visible, "faq": faq, "weights": weights}


def token_counter(settings: Settings, use_model: bool) -> tuple[Callable[[str], int], str]:
    """Counts tokens with the local model's own tokenizer (llama.cpp's ``/tokenize`` of the installed
    Qwen2.5 GGUF, the executor's model: only the vocabulary is used, no generation), else estimates
    ``ceil(chars / CHARS_PER_TOKEN)`` as the cost ledger does. Returns the counter and its name."""
    if use_model and settings.model_path.is_file():
        from chops.llm.engine import EngineConfig, LocalEngine

        engine = LocalEngine(EngineConfig(path=settings.model_path, threads=1, context_per_slot=512, slots=1,
                                          ram_cache_mib=0))
        url = engine.start().listening_address.rstrip("/") + "/tokenize"
        cache: dict[str, int] = {}

        def count(text: str) -> int:
            if text not in cache:
                req = urllib.request.Request(url, data=json.dumps({"content": text}).encode(), headers={
                    "Content-Type": "application/json", "Authorization": f"Bearer {engine.api_key}"})
                with urllib.request.urlopen(req, timeout=60) as resp:
                    cache[text] = len(json.loads(resp.read())["tokens"])
            return cache[text]
        return count, f"{settings.model_path.stem} tokenizer"
    return (lambda text: -(-len(text) // CHARS_PER_TOKEN)), f"estimate chars/{CHARS_PER_TOKEN}"


def widen(pool: list[Chunk], hits: list[Chunk], radius: int) -> list[Chunk]:
    """Each hit widened by ``radius`` neighbouring chunks of its page, overlapping windows merged
    (in page order), the splitter's overlap between neighbours dropped."""
    where = {(c.file, c.page, c.text): i for i, c in enumerate(pool)}
    spans = []
    for hit in hits:
        lo = hi = where[(hit.file, hit.page, hit.text)]
        same = lambda j: 0 <= j < len(pool) and (pool[j].file, pool[j].page) == (hit.file, hit.page)  # noqa: E731
        for _ in range(radius):
            lo, hi = (lo - 1 if same(lo - 1) else lo), (hi + 1 if same(hi + 1) else hi)
        spans.append([lo, hi])
    merged: list[list[int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1 and (pool[lo].file, pool[lo].page) == (pool[merged[-1][1]].file,
                                                                                 pool[merged[-1][1]].page):
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    out = []
    for lo, hi in merged:
        text = pool[lo].text
        for j in range(lo + 1, hi + 1):
            text = join_overlapping(text, pool[j].text)
        out.append(Chunk(pool[lo].file, pool[lo].page, text))
    return out


def join_overlapping(left: str, right: str) -> str:
    """``left`` then ``right``, the words ``right`` starts with that ``left`` ends with written once."""
    # Neighbouring chunks share up to a tenth of the chunk size (the splitter's overlap). Whole words
    # only, so a letter that merely happens to end one and start the other is not swallowed.
    for n in range(min(len(left), len(right)), 0, -1):
        whole = (n == len(right) or right[n] == " ") and (n == len(left) or left[-n - 1] == " ")
        if whole and left.endswith(right[:n]):
            return left + right[n:]
    return f"{left} {right}"


def measure(sets: dict, excerpts_of: Callable[[str, int], list[Chunk]], k: int, render: Callable,
            count: Callable[[str], int]) -> dict:
    """Recall, coverage and reading cost of one configuration (``excerpts_of(question, k)``)."""
    out = {}
    for name in ("rows", "faq"):
        covs, hits, chars, tokens, misses, evidence, clipped = [], 0, [], [], [], [], 0
        for qid, question, text, places, gold in sets[name]:
            excerpts = excerpts_of(question, k)
            shown = render(excerpts)
            # The verifier sees the one excerpt the answer cites: assume the right one (the excerpt
            # covering most of the answer, one from an answer page on a tie), clipped as the verifier clips it.
            cited = max(excerpts, default=None, key=lambda c: (
                coverage(text, c.text, sets["weights"], places) or 0.0, (c.file, c.page) in gold))
            evidence.append(len(clip(cited.text, VERIFIER_CLIP)) if cited else 0)
            clipped += bool(cited) and len(" ".join(cited.text.split())) > VERIFIER_CLIP
            cov = coverage(text, " ".join(c.text for c in excerpts), sets["weights"], places) or 0.0
            covs.append(cov)
            hits += any((c.file, c.page) in gold for c in excerpts)
            chars.append(len(shown))
            tokens.append(count(shown))
            if cov < COVERED:
                misses.append(qid)
        out[name] = {"recall": hits / len(covs), "coverage": sum(covs) / len(covs),
                     "covered": len(covs) - len(misses), "of": len(covs), "per_question": [round(c, 3) for c in covs],
                     "chars": sum(chars) / len(chars), "chars_max": max(chars),
                     "tokens": sum(tokens) / len(tokens), "uncovered": misses,
                     "verifier_chars": sum(evidence) / len(evidence), "verifier_clipped": clipped}
    return out


def grid(guides: Path, sets: dict, settings: Settings, embedder, sizes: list[int], ks: list[int],
         windows: list[int], mode: str, count: Callable[[str], int]) -> dict:
    """Every (long size, k) and (window radius, k) configuration, each index built in a temporary
    data directory with that ``chunk_long``."""
    render = lambda chunks: Retriever(None, settings).render(chunks, "long")  # noqa: E731 - the executor's text
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            built = settings.model_copy(update={"chunk_long": size, "data_dir": Path(tmp) / str(size)})
            index = GuideIndex.load_or_build(guides, built, embedder, force=True)
            for k in ks:
                results[f"long {size} k={k}"] = {"size": size, "k": k, **measure(
                    sets, lambda q, k: index.search(q, k=k, size="long", mode=mode), k, render, count)}
        if windows:
            index = GuideIndex.load_or_build(guides, settings.model_copy(update={"data_dir": Path(tmp) / "w"}),
                                             embedder, force=True)
            pool = index.chunks["short"]
            for radius in windows:
                for k in ks:
                    results[f"window {settings.chunk_short}±{radius} k={k}"] = {"size": None, "k": k, **measure(
                        sets, lambda q, k: widen(pool, index.search(q, k=k, size="short", mode=mode), radius),
                        k, render, count)}
    return results


def print_grid(results: dict, baseline: str | None, tokenizer: str) -> None:
    """The grid as a table; ``baseline`` (today's defaults) is marked with *."""
    print(f"\nexcerpts the guide executor reads (tokens: {tokenizer}; covered = coverage >= {COVERED}; "
          f"verif = characters of the cited excerpt the verifier rereads, cut = how many were clipped at "
          f"{VERIFIER_CLIP})")
    print(f"{'configuration':<24}{'R@k':>6}{'cover':>7}{'covered':>9}{'FAQ cov':>9}{'FAQ covd':>10}"
          f"{'chars':>7}{'max':>6}{'tokens':>8}{'verif':>7}{'cut':>5}  uncovered rows")
    for name, r in results.items():
        rows, faq = r["rows"], r["faq"]
        mark = "*" if name == baseline else " "
        print(f"{mark}{name:<23}{rows['recall']:>6.2f}{rows['coverage']:>7.3f}{rows['covered']:>5}/{rows['of']:<3}"
              f"{faq['coverage']:>9.3f}{faq['covered']:>6}/{faq['of']:<3}{rows['chars']:>7.0f}{rows['chars_max']:>6}"
              f"{rows['tokens']:>8.0f}{rows['verifier_chars']:>7.0f}{rows['verifier_clipped']:>5}"
              f"  {','.join(rows['uncovered']) or '-'}")
