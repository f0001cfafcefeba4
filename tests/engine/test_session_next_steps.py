"""Hints in steps, "another like this" and the interval of each rating, in the engine (every front end)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice import review
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.session import Session, hint_steps
from attnquiz.engine.practice.store import Store
from tests.engine.test_session import DEMO, FakeClock


def practice(store: Store | None, *, count: int = 2, exam: bool = False) -> Session:
    demo = banks.load(str(DEMO))
    plan = plan_practice(demo, seed=3, items=["score-a", "score-b"], count=count, exam=exam)
    clock = FakeClock()
    return Session(plan, store=store, clock=clock.monotonic, now=clock.now)


def test_hints_come_one_step_at_a_time_and_never_state_the_answer() -> None:
    session = practice(None)
    question = session.show()
    assert question is not None
    steps = hint_steps(question)
    assert steps[0] == question.variant.hint
    assert steps[1:] == list(question.variant.solution[:-1])
    given = [session.next_hint() for _ in range(len(steps) + 2)]
    assert [text for text, _, _ in given[: len(steps)]] == steps
    assert [(n, of) for _, n, of in given[: len(steps)]] == [
        (n, len(steps)) for n in range(1, len(steps) + 1)
    ]
    assert given[len(steps) :] == [("", len(steps), len(steps))] * 2
    assert session.slots[0].hints == len(steps)  # each one counted against an Easy rating, once


def test_another_like_this_is_asked_next_even_after_the_last_question(tmp_path: Path) -> None:
    with Store.open(tmp_path / "history.sqlite3") as store:
        session = practice(store)
        first = session.show()
        assert first is not None
        session.answer("0")  # wrong
        added = session.another(1)
        assert added.position == 2
        assert added.question is not None
        assert added.question.item_id == first.item_id
        assert added.question.code != first.code
        assert [s.position for s in session.slots] == [1, 2, 3]
        assert session.show() is added.question
        session.answer("0")
        second = session.show()
        assert second is not None
        session.answer("0")
        assert session.ended == "completed"
        # After the last answer, the session goes on with one more like it.
        session.another(3)
        assert session.current is not None
        assert session.show() is not None
        session.skip()
        summary = session.finish("completed")
        assert [row.position for row in summary.rows] == [1, 2, 3, 4]
        assert summary.planned == 4
        assert store.count_attempts() == 3


def test_an_exam_offers_no_other_question() -> None:
    session = practice(None, exam=True)
    session.show()
    with pytest.raises(ValueError, match="an exam asks only its own questions"):
        session.another(1)


def test_each_rating_interval_is_the_schedulers_and_they_grow_with_the_rating() -> None:
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    spans = review.intervals(None, bank="b", item="i", topic="t", when=now)
    assert list(spans) == ["again", "hard", "good", "easy"]
    assert spans["again"] <= spans["hard"] <= spans["good"] <= spans["easy"]
    plain = unfuzzed()
    for name, span in spans.items():
        # What the scheduler gives before the review spreads intervals of days at random (its fuzz,
        # which no test can pin down): the same, to the second.
        exact = (
            review.next_card(
                None, bank="b", item="i", topic="t", rating=review.self_rating(name), when=now,
                fsrs_scheduler=plain,
            ).due
            - now
        )  # fmt: skip
        assert exact == span, name


def unfuzzed() -> Any:
    """quiz's scheduler with FSRS's random spread of long intervals turned off."""
    from fsrs import Scheduler

    chosen = review.scheduler()
    return Scheduler(
        parameters=chosen.parameters,
        desired_retention=chosen.desired_retention,
        learning_steps=chosen.learning_steps,
        relearning_steps=chosen.relearning_steps,
        maximum_interval=chosen.maximum_interval,
        enable_fuzzing=False,
    )
