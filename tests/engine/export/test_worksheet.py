"""The class plan: per-student seeds and codes, item selection, and keys that agree with the grader."""

from __future__ import annotations

import pytest

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.errors import ItemNotFoundError
from attnquiz.engine.grading.grade import grade
from attnquiz.engine.plan.class_plan import ExportError, plan_class, select_items, student_seed
from attnquiz.engine.seeding import ORIGINAL_CODE, derive_seed, variant_code


@pytest.fixture(scope="module")
def bank() -> Bank:
    return banks.load("week1")


def test_each_student_has_their_own_seed_code_and_variants(bank: Bank) -> None:
    plan = plan_class(bank, students=4, master_seed=2026)
    assert [s.seed for s in plan.sheets] == [derive_seed(2026, n) for n in range(1, 5)]
    assert [s.code for s in plan.sheets] == [variant_code(derive_seed(2026, n)) for n in range(1, 5)]
    assert plan.items == tuple(entry.id for entry in bank.items)
    for sheet in plan.sheets:
        assert [q.item_id for q in sheet.questions] == list(plan.items)
        assert all(q.seed == sheet.seed for q in sheet.questions)
    # The class does not share one variant: some item shows different numbers to different students.
    first, second = plan.sheets[0].questions, plan.sheets[1].questions
    assert any(a.variant.prompt != b.variant.prompt for a, b in zip(first, second, strict=True))


def test_the_code_on_a_sheet_rebuilds_that_sheet(bank: Bank) -> None:
    plan = plan_class(bank, students=2, master_seed=7)
    sheet = plan.sheets[1]
    assert sheet.seed == student_seed(7, 2)
    assert sheet.seed is not None
    rebuilt = [bank.get(q.item_id).question(sheet.seed) for q in sheet.questions]
    assert rebuilt == list(sheet.questions)


def test_every_key_answer_grades_correct_for_every_item(bank: Bank) -> None:
    plan = plan_class(bank, students=3, master_seed=11)
    for sheet in plan.sheets:
        for question in sheet.questions:
            result = grade(question, question.answer.format())
            # A concept question's model answer is not scored either: it is marked by hand.
            expected = "unscored" if isinstance(question.answer, ExplainAnswer) else "correct"
            assert result.status == expected, (question.item_id, question.answer.format(), result.feedback)


def test_original_sheets_are_the_past_papers_and_skip_items_without_one(bank: Bank) -> None:
    plan = plan_class(bank, students=1, master_seed=None)
    assert plan.original
    assert plan.sheets[0].code == ORIGINAL_CODE
    assert all(q.is_original for q in plan.sheets[0].questions)
    with_original = [e.id for e in bank.items if e.has_original]
    assert list(plan.items) == with_original
    assert set(plan.skipped) == {e.id for e in bank.items if not e.has_original}


def test_items_topics_and_count_select(bank: Bank) -> None:
    first, second = bank.items[0].id, bank.items[-1].id
    chosen, _ = select_items(bank, items=[second, first])
    assert [e.id for e in chosen] == [first, second]  # bank order, whatever order they were named in
    topic = bank.items[0].item.topic
    by_topic, _ = select_items(bank, topics=[topic])
    assert by_topic
    assert all(e.item.topic == topic for e in by_topic)
    drawn, _ = select_items(bank, count=3, master_seed=5)
    again, _ = select_items(bank, count=3, master_seed=5)
    assert len(drawn) == 3
    assert drawn == again
    order = [e.id for e in bank.items]
    assert [order.index(e.id) for e in drawn] == sorted(order.index(e.id) for e in drawn)


def test_bad_selections_are_errors_that_help(bank: Bank) -> None:
    with pytest.raises(ItemNotFoundError, match="did you mean"):
        select_items(bank, items=[bank.items[0].id + "x"])
    with pytest.raises(ItemNotFoundError, match="no topic"):
        select_items(bank, topics=["no-such-topic"])
    with pytest.raises(ExportError, match="students"):
        plan_class(bank, students=0, master_seed=1)


def test_by_item_groups_the_variants_for_lms_exports(bank: Bank) -> None:
    plan = plan_class(bank, students=3, master_seed=3, count=2)
    groups = plan.by_item()
    assert [item for item, _ in groups] == list(plan.items)
    assert all(len(questions) == 3 for _, questions in groups)
    assert [q.code for q in groups[0][1]] == [s.code for s in plan.sheets]


CHAIN = """\
bank: chain
title: Chain
items:
  - id: block-count-chain
    kind: formula
    source: "Key results"
    topic: parameter-count
    params:
      d: {choice: [256, 512]}
      n: {range: [2, 12]}
    prompt: "An encoder block of width $d$."
    CARRIED
    parts:
      - name: block
        prompt: "With $d = {{d}}$, how many parameters does one block hold?"
        answer: {kind: integer, value: "12*d^2 + 13*d"}
        solution: ["$12 \\\\cdot {{d}}^2 + 13 \\\\cdot {{d}} = {{block}}$."]
      - prompt: "A stack of {{n}} such blocks: how many parameters? Use your (a)."
        answer: {kind: integer, value: "n*block"}
        solution: ["${{n}} \\\\times {{block}} = {{n*block}}$."]
"""


@pytest.mark.parametrize(
    ("carried", "sentence"),
    [
        ("", "so one slip costs marks once."),
        ("carried_score: 1", "so one slip costs marks once."),
        ("carried_score: 0.5", "right from a wrong earlier answer, it earns half its marks."),
        ("carried_score: 0.25", "right from a wrong earlier answer, it earns a quarter of its marks."),
        ("carried_score: 0.75", "right from a wrong earlier answer, it earns three quarters of its marks."),
        ("carried_score: 0.4", "right from a wrong earlier answer, it earns 40 % of its marks."),
        ("carried_score: 0", None),
    ],
)
def test_the_carry_sentence_follows_carried_score(carried: str, sentence: str | None) -> None:
    """A sheet promises only what `quiz grade` gives: "one slip costs marks once" is said of full
    marks for a carried error, a share as that share, and nothing of no marks."""
    from attnquiz.engine.bank.loader import load_bank_text
    from attnquiz.engine.plan.class_plan import parts_instructions

    bank = load_bank_text(CHAIN.replace("CARRIED", carried or "original: {d: 512, n: 6}"), "chain.yaml")
    answer = bank.get("block-count-chain").question(1).answer
    said = parts_instructions(answer)  # type: ignore[arg-type]
    if sentence is None:
        assert said == "Answer each part."
        return
    assert said.startswith(
        "Answer each part. A part that uses an earlier one is marked with your own earlier"
    )
    assert said.endswith(sentence)
    if "costs marks once" not in sentence:
        assert "once" not in said
