"""Every item of every shipped bank, over many seeds: deterministic, finite, distinct mistakes, renders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from attnquiz.engine.answers.kinds import ChoiceAnswer, ExplainAnswer, is_finite
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import BankItem
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import plain

SEEDS = range(200)


def shipped_items() -> Iterator[BankItem]:
    for found in banks.discover():
        if found.origin == "built-in":
            yield from banks.load(found.name).items


def item_id(entry: BankItem) -> str:
    return f"{entry.bank}/{entry.id}"


ITEMS = list(shipped_items())
IDS = [item_id(entry) for entry in ITEMS]
ORIGINALS = [entry for entry in ITEMS if entry.has_original]
CHOICES = [entry for entry in ITEMS if isinstance(entry.question(0).answer, ChoiceAnswer)]


def test_there_is_a_week1_bank_with_at_least_30_items() -> None:
    assert len(banks.load("week1").items) >= 30


@pytest.mark.parametrize("entry", ITEMS, ids=IDS)
def test_item_generates_deterministic_finite_renderable_variants(entry: BankItem) -> None:
    distinct = set()
    for seed in SEEDS:
        question = entry.question(seed)
        assert question == entry.question(seed), f"seed {seed} is not deterministic"
        assert is_finite(question.answer), f"seed {seed}: the answer is not finite"
        values = [m.value for m in question.variant.mistakes]
        assert len(values) == len(set(values)), f"seed {seed}: two mistakes share a value"
        for mistake in question.variant.mistakes:
            assert not question.answer.matches(mistake.value), f"seed {seed}: {mistake.tag} equals the answer"
        for text in question.variant.texts():
            md.check(text)
            plain.to_terminal(text)
        distinct.add((question.variant.prompt, question.answer.format()))
    if isinstance(entry.question(0).answer, ExplainAnswer):
        assert len(distinct) == 1, "a concept question is one question, whatever the seed"
    else:
        assert len(distinct) > 1, "every seed gives the same variant: the generator ignores its rng"


@pytest.mark.parametrize("entry", ORIGINALS, ids=item_id)
def test_original_instance_builds_and_renders(entry: BankItem) -> None:
    question = entry.original()
    assert question.is_original
    assert question == entry.original()
    for text in question.variant.texts():
        md.check(text)


@pytest.mark.parametrize("entry", CHOICES, ids=item_id)
def test_choice_variants_have_a_true_and_a_false_option_and_no_repeats(entry: BankItem) -> None:
    for seed in range(100):
        answer = entry.question(seed).answer
        assert isinstance(answer, ChoiceAnswer)
        assert any(o.correct for o in answer.options)
        texts_ = [o.text for o in answer.options]
        assert len(texts_) == len(set(texts_))
        if answer.multiple:
            assert not all(o.correct for o in answer.options)
