"""Issue 28: `kept_mistakes` resumes from its last call when a generator builds its variant with the
mistakes it has just checked (and more after them); the mistakes kept are those of a fresh decision."""

from __future__ import annotations

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.variant import _sorted_mistakes, kept_mistakes


@pytest.mark.parametrize("bank_name", ["week1", "week2"])
def test_a_resumed_decision_keeps_the_mistakes_a_fresh_one_keeps(bank_name: str) -> None:
    bank = banks.load(bank_name)
    compared = 0
    for entry in bank.items:
        if entry.explain is not None:
            continue
        for seed in range(4):
            variant = entry.question(seed).variant
            for _, answer, listed in variant.listed:
                fresh = _sorted_mistakes(answer, listed, None)
                for cut in range(len(listed) + 1):
                    kept_mistakes(answer, listed[:cut])  # what a generator's check would have asked
                    assert kept_mistakes(answer, listed) == fresh, (entry.id, seed, cut)
                    compared += 1
    assert compared > 500


def test_another_answer_or_other_mistakes_are_decided_afresh() -> None:
    bank = banks.load("week1")
    first = bank.get("additive-score").question(1).variant
    second = bank.get("additive-score").question(2).variant
    (_, answer_one, listed_one), (_, answer_two, listed_two) = first.listed[0], second.listed[0]
    kept_mistakes(answer_one, listed_one)
    assert kept_mistakes(answer_two, listed_one) == _sorted_mistakes(answer_two, listed_one, None)
    kept_mistakes(answer_one, listed_one)
    reordered = tuple(reversed(listed_one))
    assert kept_mistakes(answer_one, reordered) == _sorted_mistakes(answer_one, reordered, None)
    assert kept_mistakes(answer_two, listed_two) == second.mistakes
