"""The answer-coverage measure of the excerpt benchmark (``bench.coverage``) and the pure helpers of
``bench.excerpts``: terms in English and Chinese, idf weights, the claim of a yes/no answer, coverage
against the answer's pages, FAQ entries and sentence windows."""

import math

import pytest

from bench.coverage import claim, coverage, idf, terms
from bench.excerpts import faq_pairs, join_overlapping, widen
from chops.retrieval.ingest import Chunk

PAGES = [
    'Q: How do I add student information? A: Click "My" -> "Candidate Information", then enter the name, '
    "grade and historical awards.",
    'Q: How do I upload answer sheets? A: Click "Home" -> "Upload Answer Sheet" and take a photo.',
    'Q: How do I mark? A: Click "Home" -> "Marking Center" and enter the score.',
]


def test_english_terms_are_stemmed_content_words_without_step_numbers():
    assert terms("The students were Uploaded; 3.1 Click 'My' (2 times)") == ["student", "upload", "click", "time"]


def test_chinese_runs_become_character_bigrams_and_mix_with_english():
    assert terms("点击“我的”，上传 PDF") == ["点击", "我的", "上传", "pdf"]
    assert terms("次") == ["次"]  # a lone character is its own term
    assert terms("Ｃｌｉｃｋ") == ["click"]  # full-width Latin (NFKC) is the same word


def test_idf_is_zero_for_a_term_on_every_page_and_higher_when_rarer():
    weights = idf(PAGES)
    assert weights["click"] == 0.0
    assert weights["candid"] == pytest.approx(math.log(3))
    assert weights["home"] == pytest.approx(math.log(3 / 2))
    assert "deadlin" not in weights  # a word no page uses has no weight at all


def test_a_yes_no_answer_is_measured_with_its_question():
    weights = idf(PAGES)
    assert claim("Can I upload answer sheets late?", "No.", weights) == "Can I upload answer sheets late? No."
    answer = "Open Candidate Information and enter the grade and historical awards."
    assert claim("How do I add students?", answer, weights) == answer


def test_coverage_is_the_idf_weighted_share_of_the_answer_page_terms_in_the_excerpts():
    weights = idf(PAGES)
    answer = "Go to Candidate Information and enter the name, grade and historical awards, then follow the steps."
    assert coverage(answer, PAGES[0], weights, [PAGES[0]]) == 1.0  # "follow", "steps" are on no page
    assert coverage(answer, PAGES[1], weights, [PAGES[0]]) < 0.2  # the wrong entry: only common words
    half = coverage(answer, "Candidate Information: enter the name", weights, [PAGES[0]])
    assert 0.3 < half < 0.7
    assert coverage(answer, PAGES[0], weights) == 1.0  # without places every weighted term counts
    assert coverage("nothing relevant here", PAGES[0], weights, [PAGES[0]]) is None


def test_the_best_answer_page_counts_when_the_guides_say_it_twice_in_other_words():
    pages = [*PAGES, 'Q: How do I enter students? A: Click "My" -> "Examinee Information" and enter the grade.']
    weights = idf(pages)
    answer = "Click Candidate Information or Examinee Information and enter the grade."
    assert coverage(answer, pages[3], weights, [pages[0], pages[3]]) == 1.0
    assert coverage(answer, pages[3], weights, [pages[0]]) < 1.0


def test_chinese_answers_are_covered_by_the_excerpt_that_states_them():
    pages = ["问：如何添加学生？答：点击“我的”->“考生信息”，输入姓名和年级。",
             "问：如何上传答题卡？答：点击“首页”->“上传答题卡”，拍照上传。"]
    weights = idf(pages)
    answer = "在“考生信息”中输入学生的姓名和年级。"
    assert coverage(answer, pages[0], weights, [pages[0]]) == 1.0
    assert coverage(answer, pages[1], weights, [pages[0]]) == 0.0


def test_faq_pairs_split_a_page_into_its_entries():
    assert faq_pairs("Intro. Q: Why? A: Because. Q: How? A: Click Home.") == [("Why?", "Because."),
                                                                             ("How?", "Click Home.")]
    assert faq_pairs("No entries here.") == []


def test_neighbouring_chunks_are_joined_without_their_overlap():
    assert join_overlapping("one two three", "three four") == "one two three four"
    assert join_overlapping("one two", "three") == "one two three"
    assert join_overlapping("pay a", "a fee") == "pay a fee"  # a shared whole word
    assert join_overlapping("a data", "a form") == "a data a form"  # not a word shared at the seam


def test_a_window_widens_each_hit_within_its_page_and_merges_overlapping_windows():
    pool = [Chunk("a.pdf", 1, "a1"), Chunk("a.pdf", 1, "a2"), Chunk("a.pdf", 1, "a3"),
            Chunk("a.pdf", 2, "b1"), Chunk("a.pdf", 2, "b2")]
    windows = widen(pool, [pool[2], pool[1], pool[3]], radius=1)
    assert [(c.page, c.text) for c in windows] == [(1, "a1 a2 a3"), (2, "b1 b2")]
    assert [c.text for c in widen(pool, [pool[0]], radius=0)] == ["a1"]
