"""The week-1 choice items: the paper's letters for each original, fair variants, and well-written pools."""

from __future__ import annotations

import pytest

from attnquiz.engine.answers.kinds import ChoiceAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import BankItem, NoOriginalError
from attnquiz.engine.generators.statements import Pool
from attnquiz.engine.grading import grade as grading
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import plain

WEEK1 = banks.load("week1")
CHOICE = [entry for entry in WEEK1.items if entry.spec.name == "statements"]
TOPICS = {
    "seq2seq-rnn",
    "additive-attention",
    "self-attention",
    "scaled-dot-product",
    "multi-head-attention",
    "encoder-layer",
}

# The past-paper items and the correct letters the notes derive for them (000 "Where the exam asks
# this"): (item id, source, multiple select?, correct letters).
PAPER = [
    ("long-sentence-models", "2025 T1 Quiz 1, Q107", False, "A"),
    ("rnn-vs-transformer", "2026 T1 Quiz 2, Q9", True, "ACD"),
    ("traditional-attention", "2026 T2 Quiz 1, Q2", True, "AC"),
    ("why-sqrt-dk-q173", "2025 T3 Quiz 1, Q173", False, "D"),
    ("why-sqrt-dk-q3", "2026 T1 Quiz 1, Q3", False, "C"),
    ("mha-motivation", "2026 T1 Quiz 1, Q9", True, "ABD"),
    ("encoder-components", "2026 T1 Quiz 2, Q8", True, "AB"),
]
# Cited past-paper items whose wording or letters are not in the notes: no original instance.
NOT_IN_NOTES = [
    ("softmax-purpose", "2025 T2 Quiz 1, Q136", False),
    ("mha-statements", "2025 T3 Quiz 1, Q183", True),
    ("parallel-tokens", "2025 T2 Quiz 1, Q135", False),
]
CONCEPTS = [
    "scaling-effects",
    "self-attention-facts",
    "shuffled-tokens",
    "encoder-layer-facts",
    "w-o-placement",
]


def pool_of(entry: BankItem) -> Pool:
    pool = entry.kwargs["pool"]
    assert isinstance(pool, Pool)
    return pool


def choice(entry: BankItem, seed: int) -> ChoiceAnswer:
    answer = entry.question(seed).answer
    assert isinstance(answer, ChoiceAnswer)
    return answer


def test_every_listed_item_is_a_choice_item_of_the_bank() -> None:
    listed = {row[0] for row in PAPER} | {row[0] for row in NOT_IN_NOTES} | set(CONCEPTS)
    assert listed == {entry.id for entry in CHOICE}


@pytest.mark.parametrize(("item", "source", "multiple", "letters"), PAPER, ids=[row[0] for row in PAPER])
def test_original_has_the_papers_correct_letters(
    item: str, source: str, multiple: bool, letters: str
) -> None:
    entry = WEEK1.get(item)
    assert entry.item.source == source
    question = entry.original()
    answer = question.answer
    assert isinstance(answer, ChoiceAnswer)
    assert answer.multiple is multiple
    assert answer.correct_letters == frozenset(letters)
    # The notes quote no option text: the instructors' note says the wording is the bank's, and the
    # students doing the past paper are told that its key is the notes' derivation, not an official one.
    assert "no option text" in question.instructor_note
    assert "written for this bank" in question.instructor_note
    assert "not an official key" in question.student_note
    assert not entry.question(0).student_note, "the disclaimer is about the original only"


@pytest.mark.parametrize(("item", "source", "multiple"), NOT_IN_NOTES, ids=[row[0] for row in NOT_IN_NOTES])
def test_items_whose_paper_is_not_in_the_notes_have_no_original(
    item: str, source: str, multiple: bool
) -> None:
    entry = WEEK1.get(item)
    assert entry.item.source == source
    assert not entry.has_original
    assert not any(s.letter for s in pool_of(entry).root), "letters would claim to be the paper's"
    assert any("not in the notes" in note.text for note in entry.item.note)
    with pytest.raises(NoOriginalError, match="not in the notes"):
        entry.original()
    assert choice(entry, 0).multiple is multiple


@pytest.mark.parametrize("entry", CHOICE, ids=lambda e: e.id)
def test_every_variant_is_a_fair_choice(entry: BankItem) -> None:
    pool = pool_of(entry)
    group = {s.text: s.group for s in pool.root}
    expected_options = entry.kwargs["options"]
    selections = set()
    for seed in range(200):
        answer = choice(entry, seed)
        texts = [o.text for o in answer.options]
        assert len(texts) == expected_options
        assert len(set(texts)) == len(texts), f"seed {seed}: an option repeats"
        groups = [group[t] for t in texts if group[t] is not None]
        assert len(groups) == len(set(groups)), f"seed {seed}: two versions of one claim shown together"
        right = sum(o.correct for o in answer.options)
        assert right >= 1
        assert right < len(texts), f"seed {seed}: no false option"
        if not answer.multiple:
            assert right == 1
        selections.add(frozenset(texts))
    # Variants really differ: many different sets of options, not just reshuffles of a few.
    assert len(selections) >= 6


@pytest.mark.parametrize("entry", CHOICE, ids=lambda e: e.id)
def test_pool_is_well_written(entry: BankItem) -> None:
    assert entry.item.topic in TOPICS
    pool = pool_of(entry)
    for statement in pool.root:
        assert statement.why.strip(), f"{statement.text!r} has no why"
        md.check(statement.text)
        md.check(statement.why)
        plain.to_terminal(statement.text)
    stem = entry.kwargs["stem"]
    assert stem.rstrip().endswith("?")
    md.check(stem)
    assert entry.kwargs["hint"], "every choice item has a hint"
    if entry.kwargs["multiple"]:
        assert len(pool.true) >= 3
        assert len(pool.false) >= 3
    else:
        assert len(pool.false) >= entry.kwargs["options"]


@pytest.mark.parametrize("item", CONCEPTS)
def test_conceptual_items_cite_the_notes(item: str) -> None:
    entry = WEEK1.get(item)
    assert entry.item.source.startswith(("ELI12 Week 1 §", "Key results, "))
    assert "concept" in entry.item.tags


def test_mha_statements_is_scored_net_like_every_other_multiple_select_item() -> None:
    # Issue 3's example ("A, D" on seed 3: a right tick and a wrong one) scored 0.5 under the
    # each-answer scheme this item had; issue 13 made every multiple-select item net, where a wrong
    # tick cancels a right one.
    answer = choice(WEEK1.get("mha-statements"), 3)
    assert answer.scoring == "net"
    assert answer.correct_letters == frozenset("CD")
    assert grading.grade(WEEK1.get("mha-statements").question(3), "A, D").score == 0.0


def test_mha_statements_seed_3_grades_both_right_and_one_wrong_as_half() -> None:
    grade = grading.grade(WEEK1.get("mha-statements").question(3), "A, C, D")
    assert grade.status == "partial"
    assert grade.score == pytest.approx(0.5)
    assert "**A** is false" in grade.feedback
