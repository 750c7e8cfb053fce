"""An answer that only writes back a refusal the redo was told is no answer (``chops.pipeline.tiers.written_back``):
told "you asked to know something, not for other items in place of these", the 1.5B answered the customer with it four
times, the verifier scored each 1, and the chooser sent it (own7)."""

from __future__ import annotations

import pytest

from chops.pipeline.context import Candidate
from chops.pipeline.tiers import written_back

TOLD = ["you asked to know something, not for other items in place of these"]


@pytest.mark.parametrize("answer, back", [
    ("You asked to know something, not for other items in place of these.", True),
    ("you asked to know something, not for other items", True),
    ("Exchanges are only for another variant of the same product, so the tablet cannot become a smartphone.", False),
    ("", False),
])
def test_an_answer_made_of_a_refusal_told_is_written_back(answer, back):
    assert written_back(Candidate(iteration=2, route="system", answer=answer), TOLD) is back


def test_with_no_refusal_told_nothing_is_written_back():
    answer = "You asked to know something, not for other items in place of these."
    assert not written_back(Candidate(iteration=2, route="system", answer=answer), [])
    assert not written_back(Candidate(iteration=2, route="system", answer=answer), [""])
