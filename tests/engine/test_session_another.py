"""`Session.another` as the browser uses it: a fresh variant of an item answered wrong, asked right
after it ("another like this"), in practice and review only; and `review.due_after_each`, the
moment each rating gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice import review
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.store import Store
from tests.engine.test_session import FakeClock, right, session_of
from tests.engine.test_session_next_steps import unfuzzed


def test_another_like_this_is_asked_next_and_the_rest_move_down(tmp_path: Path) -> None:
    bank = banks.load("week1")
    plan = plan_practice(bank, seed=7, topic="complexity", count=3)
    clock = FakeClock()
    with Store.open(tmp_path / "h.sqlite3") as store:
        session = session_of(plan, store, clock)
        first = session.current
        assert first is not None
        session.show()
        session.answer("123456789")  # wrong
        waiting = [s.planned.entry.id for s in session.slots[1:]]
        added = session.another(first.position)
        assert added.position == 2
        assert session.current is added
        assert [s.position for s in session.slots] == [1, 2, 3, 4]
        assert [s.planned.entry.id for s in session.slots[2:]] == waiting
        question = session.show()
        assert question is not None
        assert question.item_id == first.planned.entry.id
        assert question.code != session.question(first).code  # a fresh variant
        session.answer(right(session))
        for _ in range(2):
            session.show()
            session.answer(right(session))
        assert session.finished
        stored = {(a.position, a.item, a.status) for a in store.attempts()}
        assert (2, first.planned.entry.id, "correct") in stored
        assert len(stored) == 4


def test_an_exam_takes_no_other_question() -> None:
    plan = plan_practice(banks.load("week1"), seed=7, topic="complexity", count=2, exam=True)
    session = session_of(plan, None, FakeClock())
    with pytest.raises(ValueError, match="an exam asks only its own questions"):
        session.another(1)
    assert len(session.slots) == 2


@pytest.mark.parametrize("reviews", [0, 1, 3])
def test_each_rating_says_when_it_brings_the_item_back_as_rating_it_does(reviews: int) -> None:
    now = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    card = None
    for n in range(reviews):
        card = review.next_card(
            card,
            bank="b",
            item="i",
            topic="t",
            rating=review.self_rating("good"),
            when=now + timedelta(days=n * 9),
        )
    when = now + timedelta(days=reviews * 9)
    due = review.due_after_each(card, bank="b", item="i", topic="t", when=when)
    assert list(due) == ["again", "hard", "good", "easy"]
    plain = unfuzzed()
    for name, moment in due.items():
        # What the button says is what pressing it does, but for FSRS's random spread of long
        # intervals (no test can pin it down): with the spread off, the same moment.
        rated = review.next_card(
            card, bank="b", item="i", topic="t", rating=review.self_rating(name), when=when,
            fsrs_scheduler=plain,
        )  # fmt: skip
        assert rated.due == moment, name
    assert due["again"] <= due["hard"] <= due["good"] <= due["easy"]
    assert due["again"] < due["easy"]
