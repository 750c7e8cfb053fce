"""GuideIndex.search ranking (dense and fused) over a fixed in-memory corpus with a fake embedder."""

from __future__ import annotations

import pytest

from chops.retrieval import Chunk, GuideIndex
from chops.retrieval.embedders import l2_normalise

VOCAB = ["fee", "free", "upload", "deadline", "marking", "subject", "arbiter", "score", "export", "student"]


class KeywordEmbedder:
    """Counts vocabulary words: cosine = keyword overlap. Deterministic and instant."""

    name = "fake-keywords"

    def embed(self, texts):
        rows = [[text.lower().count(word) for word in VOCAB] + [0.01] for text in texts]
        return l2_normalise(rows)


CORPUS = [
    Chunk("faq.pdf", 1, "Q: Is there a fee? A: No, the exam is free."),
    Chunk("guide.pdf", 2, "Upload answer sheets before the deadline; late upload is refused."),
    Chunk("guide.pdf", 3, "Marking: each teacher marks one marking subject."),
    Chunk("guide.pdf", 4, "Ask to become an arbiter after marking is done."),
    Chunk("guide.pdf", 5, "Score release: export the score table of each student."),
]


@pytest.fixture
def index():
    embedder = KeywordEmbedder()
    vectors = embedder.embed([c.text for c in CORPUS])
    return GuideIndex(embedder, {}, {"short": CORPUS, "long": CORPUS}, {"short": vectors, "long": vectors})


@pytest.mark.parametrize("mode", ["dense", "fused"])
@pytest.mark.parametrize(("question", "page"), [
    ("Do I pay a fee?", 1),
    ("Can I upload after the deadline?", 2),
    ("Which marking subject is mine?", 3),
    ("How do I export scores?", 5),
])
def test_top1(index, mode, question, page):
    top = index.search(question, k=1, mode=mode)
    assert [(c.file, c.page) for c in top] == [("guide.pdf" if page > 1 else "faq.pdf", page)]


def test_dense_scores_are_cosines_in_descending_order(index):
    found = index.search("upload deadline fee", k=5, mode="dense")
    assert len(found) == 5
    scores = [c.score for c in found]
    assert scores == sorted(scores, reverse=True)
    assert all(c.score == c.cosine for c in found)
    assert 0.0 < found[0].cosine <= 1.0


def test_fused_score_is_reciprocal_rank_fusion(index):
    found = index.search("Do I pay a fee?", k=5, mode="fused")
    # First in both rankings: 1/(60+1) twice.
    assert found[0].page == 1 and found[0].score == pytest.approx(2 / 61, abs=1e-6)
    # The others have no query word, so only their dense rank (2..5) counts.
    assert [c.score for c in found[1:]] == pytest.approx([1 / 62, 1 / 63, 1 / 64, 1 / 65], abs=1e-6)
    assert found[0].cosine > found[1].cosine


def test_k_size_and_empty_query(index):
    assert len(index.search("score", k=2, size="short")) == 2
    assert index.search("   ") == []
    assert index.search("score", k=0) == []
    with pytest.raises(ValueError, match="size"):
        index.search("score", size="medium")
    with pytest.raises(ValueError, match="mode"):
        index.search("score", mode="sparse")


def test_a_question_is_embedded_once_for_both_sizes(index):
    calls = []
    real_embed = index.embedder.embed
    index.embedder.embed = lambda texts: calls.append(list(texts)) or real_embed(texts)
    index.search("Do I pay a fee?", size="short")
    index.search("Do I pay a fee?", size="long", mode="fused")
    index.search("Can I upload late?", size="long")
    assert calls == [["Do I pay a fee?"], ["Can I upload late?"]]
