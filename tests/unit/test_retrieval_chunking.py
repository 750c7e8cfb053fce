"""Chunking rules: size limits, page attribution, FAQ entries kept whole, whitespace."""

from __future__ import annotations

import pytest

from chops.retrieval.ingest import Page, chunk_pages, normalise

PROSE = " ".join(f"Sentence number {i} explains one step of the upload in plain words." for i in range(40))
LONG_ANSWER = " ".join(f"Step {i}: press the button marked {i} and wait for the tick." for i in range(30))


def test_normalise_collapses_pdf_whitespace():
    assert normalise("  Upload\nanswer \t sheets\u00a0 before\n\n the deadline ") == \
        "Upload answer sheets before the deadline"


@pytest.mark.parametrize("size", [120, 300, 1200])
def test_prose_chunks_respect_size_and_keep_every_word(size):
    chunks = chunk_pages([Page("guide.pdf", 1, PROSE)], size)
    assert len(chunks) >= len(PROSE) // size
    assert all(len(c.text) <= size for c in chunks)
    covered = set(" ".join(c.text for c in chunks).split())
    assert covered == set(PROSE.split())


def test_prose_breaks_at_sentence_ends():
    chunks = chunk_pages([Page("guide.pdf", 1, PROSE)], 300)
    assert all(c.text.endswith(".") for c in chunks)


def test_chunks_never_cross_pages_and_keep_their_page():
    pages = [Page("a.pdf", 1, "Alpha " * 30), Page("a.pdf", 2, "Beta " * 30), Page("b.pdf", 1, "Gamma " * 3)]
    chunks = chunk_pages(pages, 100)
    for chunk in chunks:
        words = set(chunk.text.split())
        assert len(words) == 1
        expected = {"Alpha": ("a.pdf", 1), "Beta": ("a.pdf", 2), "Gamma": ("b.pdf", 1)}[words.pop()]
        assert (chunk.file, chunk.page) == expected


def test_faq_entries_stay_whole_one_per_chunk_with_the_intro_on_the_first():
    faq = ("Questions and answers. Q: Is there a fee? A: No, it is free. "
           "Q: Can I upload late? A: No, uploads close at the deadline. "
           "Q: Who marks? A: Teachers only.")
    expected = [
        "Questions and answers. Q: Is there a fee? A: No, it is free.",
        "Q: Can I upload late? A: No, uploads close at the deadline.",
        "Q: Who marks? A: Teachers only.",
    ]
    for size in (70, 1000):  # a bigger size does not pack entries together
        assert [c.text for c in chunk_pages([Page("faq.pdf", 1, faq)], size)] == expected


def test_faq_marker_inside_a_sentence_does_not_start_an_entry():
    text = "See the FAQ.Q: is not a marker here. Q: Real question? A: Real answer."
    chunks = chunk_pages([Page("faq.pdf", 1, text)], 1000)
    assert [c.text for c in chunks] == [text]


def test_long_faq_answer_repeats_its_question_in_every_piece():
    question = "Q: How do I upload the answer sheets?"
    chunks = chunk_pages([Page("faq.pdf", 3, f"{question} A: {LONG_ANSWER}")], 300)
    assert len(chunks) > 3
    assert all(c.text.startswith(question + " A: ") for c in chunks)
    assert all(len(c.text) <= 300 for c in chunks)
    assert {c.page for c in chunks} == {3}
    assert "Step 29" in chunks[-1].text


def test_too_small_chunk_size_is_refused():
    with pytest.raises(ValueError, match="too small"):
        chunk_pages([Page("a.pdf", 1, "text")], 10)
