"""What a student can say and is told in a session: a guess self-rated, a revised part graded, advice
only when it is true (issue 26)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.grading.parts import PART_SEPARATOR, grade_parts
from attnquiz.engine.practice.planning import plan_practice, plan_review
from attnquiz.engine.practice.store import Store
from tests.engine.test_session import DEMO, FakeClock, right, session_of


@pytest.fixture(scope="module")
def demo() -> Bank:
    return banks.load(str(DEMO))


@pytest.fixture(scope="module")
def week1() -> Bank:
    return banks.load("week1")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "history.sqlite3")
    yield opened
    opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


# -- a scored answer rated by the student ------------------------------------------------------------


def test_a_lucky_guess_rated_again_is_not_scheduled_as_easy(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    plan = plan_practice(demo, seed=1, items=["score-a"], count=1)
    session = session_of(plan, store, clock)
    session.show()
    clock.advance(5)  # quick and right: Easy, days away
    session.answer(right(session))
    slot = session.slots[0]
    assert slot.rating == "easy"
    easy_due = store.card("demo", "score-a")
    assert easy_due is not None
    assert easy_due.due - clock.now() > timedelta(days=2)
    assert session.can_rerate(slot)

    graded = session.rerate(1, "again")
    assert graded.score == 1.0  # the score stays
    card = store.card("demo", "score-a")
    assert card is not None
    assert card.due - clock.now() < timedelta(hours=1)  # back within the day, not in days
    assert card.reviews == 1  # scheduled again from the card before the answer: counted once
    assert slot.rating == "again"
    assert slot.next_due == card.due
    (attempt,) = store.attempts()
    assert (attempt.status, attempt.score, attempt.rating) == ("correct", 1.0, "again")

    assert session.finished  # the last answer ended the session: its summary says what is due now
    assert session.summary().next_due == card.due

    session.rerate(1, "good")  # changed again: still from the card before the answer
    card = store.card("demo", "score-a")
    assert card is not None
    assert card.reviews == 1
    assert store.attempts()[0].rating == "good"


def test_only_a_scheduled_scored_practice_answer_can_be_rated(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    exam = session_of(plan_practice(demo, seed=1, items=["score-a"], count=1, exam=True), store, clock)
    exam.show()
    exam.answer(right(exam))
    assert not exam.can_rerate(exam.slots[0])  # an exam's reviews wait for the submission

    untracked = session_of(plan_practice(demo, seed=1, items=["score-a"], count=1), None, clock)
    untracked.show()
    untracked.answer(right(untracked))
    assert not untracked.can_rerate(untracked.slots[0])  # no history: nothing is scheduled

    skipped = session_of(plan_practice(demo, seed=1, items=["score-a", "score-b"], count=2), store, clock)
    skipped.show()
    skipped.skip()
    assert not skipped.can_rerate(skipped.slots[0])
    with pytest.raises(ValueError, match="no scheduled answer"):
        skipped.rerate(1, "again")
    skipped.show()
    skipped.answer(right(skipped))
    with pytest.raises(ValueError, match="a self-rating is one of"):
        skipped.rerate(2, "lucky")
    with pytest.raises(ValueError, match="no question 9"):
        skipped.rerate(9, "again")


def test_an_item_reviewed_again_later_cannot_be_rated_from_its_first_answer(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    session = session_of(plan_practice(demo, seed=1, items=["score-a"], count=2), store, clock)
    for _ in range(2):
        session.show()
        session.answer(right(session))
    first, second = session.slots
    assert not session.can_rerate(first)  # it would undo the second answer's review
    assert session.can_rerate(second)


# -- an exam's revised part ----------------------------------------------------------------------------


def test_a_revised_part_is_graded_with_the_later_parts_kept(
    week1: Bank, store: Store, clock: FakeClock
) -> None:
    plan = plan_practice(week1, seed=3, items=["additive-chain"], count=1, exam=True)
    session = session_of(plan, store, clock)
    question = session.show()
    assert question is not None
    parts = question.variant.parts
    rights = [p.answer.format() for p in parts]
    for response in rights:
        session.answer(response)
    slot = session.slots[0]
    assert slot.answered
    assert slot.grade is not None
    assert slot.grade.status == "correct"

    session.go(1)
    session.show()
    session.answer("0.5")  # (a) revised, wrong; the student moves on without answering (b) again
    assert session.part_in_progress(slot)
    assert session.kept_parts(slot) == [(p.label, r) for p, r in zip(parts[1:], rights[1:], strict=True)]
    merged = ["0.5", *rights[1:]]
    assert slot.response == f" {PART_SEPARATOR} ".join(merged)
    assert slot.grade == grade_parts(question.answer, merged)  # type: ignore[arg-type]
    session.next()
    summary = session.finish("submitted")
    assert summary.rows[0].response.startswith("0.5")
    assert summary.score < 1.0  # the revision was graded, not the old answer
    (attempt,) = store.attempts()
    assert attempt.response.startswith("0.5")


# -- advice that is true ----------------------------------------------------------------------------


def test_an_exam_with_nothing_answered_advises_nothing(demo: Bank, store: Store, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=1, count=4, exam=True), store, clock)
    session.show()
    summary = session.finish("submitted")
    assert summary.revisit == ()
    assert summary.follow_up is None


def test_an_exam_revisits_only_what_was_tried(demo: Bank, store: Store, clock: FakeClock) -> None:
    session = session_of(
        plan_practice(demo, seed=1, items=["score-a", "score-c"], count=2, exam=True), store, clock
    )
    session.show()
    session.answer("12345")  # wrong; score-c left unanswered
    summary = session.finish("submitted")
    assert summary.revisit == ("additive-attention",)
    assert summary.follow_up == "quiz run demo --item score-a"


def test_a_review_that_leaves_nothing_due_offers_no_review(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    plan = plan_review([demo], store, seed=1, now=clock.now(), limit=4, new_per_day=4)
    session = session_of(plan, store, clock)
    while (slot := session.current) is not None:
        session.show()
        question = session.question(slot)
        if question.answer.kind == "explain":
            session.answer("")
            session.rate("good")
        elif not session.answer("12345").counts:  # wrong: back in minutes, not now
            session.answer("(a)" if "A" not in question.answer.format() else "(b)")
    summary = session.finish("completed")
    assert summary.due_now == 0
    assert summary.next_due is not None
    assert summary.next_due > clock.now()
    assert summary.follow_up is None  # not "quiz review", which would find nothing
    assert summary.to_json()["due_now"] == 0
