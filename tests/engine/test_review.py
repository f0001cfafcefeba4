"""Spaced repetition: ratings from grades, FSRS cards, what is due, new items mixed in, fresh variants."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Rating, Scheduler, State

from attnquiz.engine.answers.kinds import ChoiceAnswer, Mistake, NumericAnswer, Option
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.practice import review
from attnquiz.engine.practice.history_records import CardRecord

DEMO = Path(__file__).resolve().parent.parent / "data" / "practice" / "demo.yaml"
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
NO_FUZZ = Scheduler(enable_fuzzing=False)


@pytest.fixture(scope="module")
def demo() -> Bank:
    return banks.load(str(DEMO))


NUMBER = NumericAnswer(0.87, Tolerance.decimals(2))
MISTAKES = (Mistake("no-tanh", 3.0, "You left out the tanh."),)


@pytest.mark.parametrize(
    ("response", "seconds", "hinted", "expected"),
    [
        ("0.87", 10.0, False, Rating.Easy),
        ("0.87", 10.0, True, Rating.Good),
        ("0.87", 600.0, False, Rating.Good),
        ("3", 5.0, False, Rating.Again),
        ("5", 5.0, False, Rating.Again),
        ("zero point eight", 5.0, False, None),
    ],
    ids=[
        "fast-correct-easy",
        "hinted-correct-good",
        "slow-correct-good",
        "mistake-again",
        "wrong-again",
        "invalid",
    ],
)
def test_a_grade_rates_the_card(response: str, seconds: float, hinted: bool, expected: Rating | None) -> None:
    graded = grade_answer(NUMBER, response, MISTAKES)
    assert review.rate(graded, answer=NUMBER, seconds=seconds, hinted=hinted) == expected


def test_partial_credit_rates_hard() -> None:
    answer = ChoiceAnswer(
        (Option("a", True), Option("b", True), Option("c", False), Option("d", False)), multiple=True
    )
    graded = grade_answer(answer, "A")
    assert graded.status == "partial"
    assert review.rate(graded, answer=answer, seconds=5.0) == Rating.Hard


def test_a_mistake_with_partial_credit_is_still_a_lapse() -> None:
    generous = (Mistake("no-tanh", 3.0, "You left out the tanh.", score=0.5),)
    graded = grade_answer(NUMBER, "3", generous)
    assert graded.mistake is not None
    assert review.rate(graded, answer=NUMBER, seconds=5.0) == Rating.Again


def test_what_counts_as_fast_depends_on_the_answer_kind() -> None:
    single = ChoiceAnswer((Option("a", True), Option("b", False)), multiple=False)
    assert review.easy_seconds(single) < review.easy_seconds(NUMBER)


def test_a_first_review_creates_a_card_and_later_ones_update_it() -> None:
    first = review.next_card(
        None, bank="demo", item="score-a", topic="t", rating=Rating.Good, when=NOW, fsrs_scheduler=NO_FUZZ
    )
    assert first.created == NOW
    assert first.reviews == 1
    assert first.lapses == 0
    assert first.due > NOW
    card = review.load_card(first)
    assert card.card_id == review.card_id("demo", "score-a")

    later = review.next_card(
        first,
        bank="demo",
        item="score-a",
        topic="t",
        rating=Rating.Again,
        when=first.due,
        fsrs_scheduler=NO_FUZZ,
    )
    assert later.created == NOW
    assert later.reviews == 2
    assert later.lapses == 1
    # A lapse brings the item back within minutes.
    assert later.due - first.due <= timedelta(minutes=10)


def test_easy_schedules_later_than_good_and_good_later_than_again() -> None:
    dues = {
        rating: review.next_card(
            None, bank="demo", item="x", topic="t", rating=rating, when=NOW, fsrs_scheduler=NO_FUZZ
        ).due
        for rating in (Rating.Again, Rating.Good, Rating.Easy)
    }
    assert dues[Rating.Again] < dues[Rating.Good] < dues[Rating.Easy]


def test_card_update_applies_the_review_to_the_current_card() -> None:
    update = review.card_update(
        bank="demo", item="x", topic="t", rating=Rating.Good, when=NOW, seconds=12.0, fsrs_scheduler=NO_FUZZ
    )
    created = update(None)
    assert created is not None
    again = update(created)
    assert again is not None
    assert again.reviews == 2


def record(item: str, due: datetime, *, state: State = State.Review, bank: str = "demo") -> CardRecord:
    from fsrs import Card

    card = Card(
        card_id=review.card_id(bank, item), state=state, step=None if state == State.Review else 0, due=due
    )
    return CardRecord(
        bank=bank, item=item, topic="t", state=card.to_json(), due=due, created=NOW - timedelta(days=9)
    )


def test_a_learning_card_is_due_by_the_minute_and_a_review_card_by_the_day() -> None:
    soon = NOW + timedelta(minutes=5)
    assert not review.is_due(record("a", soon, state=State.Learning), NOW)
    assert review.is_due(record("a", NOW - timedelta(seconds=1), state=State.Learning), NOW)
    local_midnight = review.start_of_day(NOW) + timedelta(days=1)
    assert review.is_due(record("a", local_midnight - timedelta(minutes=1)), NOW)
    assert not review.is_due(record("a", local_midnight + timedelta(minutes=1)), NOW)


def test_the_queue_serves_overdue_first_and_mixes_in_new_items(demo: Bank) -> None:
    cards = [
        record("score-b", NOW - timedelta(days=1)),
        record("score-a", NOW - timedelta(days=3)),
        record("score-c", NOW + timedelta(days=5)),
    ]
    queue = review.review_queue([demo], cards, now=NOW, new_today=0, new_every=1)
    assert [(s.entry.id, s.reason) for s in queue] == [
        ("score-a", "due"),
        ("pick-one", "new"),
        ("score-b", "due"),
    ]


def test_new_items_come_in_course_order_up_to_the_daily_allowance(demo: Bank) -> None:
    queue = review.review_queue([demo], [], now=NOW, new_today=0, new_per_day=2)
    assert [s.entry.id for s in queue] == ["score-a", "score-b"]
    assert review.review_queue([demo], [], now=NOW, new_today=2, new_per_day=2) == []


def test_the_queue_respects_its_limit_and_a_steady_rate_of_new_items(demo: Bank) -> None:
    cards = [record(e.id, NOW - timedelta(days=1)) for e in demo.items[:3]]
    queue = review.review_queue([demo], cards, now=NOW, new_today=0, new_every=2, limit=3)
    assert [s.reason for s in queue] == ["due", "due", "new"]


def test_cards_of_items_no_longer_in_the_bank_are_ignored(demo: Bank) -> None:
    cards = [
        record("gone", NOW - timedelta(days=1)),
        *(record(e.id, NOW + timedelta(days=9)) for e in demo.items),
    ]
    assert review.review_queue([demo], cards, now=NOW, new_today=0) == []


def test_a_fresh_question_avoids_the_inputs_of_recent_attempts(demo: Bank) -> None:
    entry = demo.get("pick-one")
    # The two-statement pool has only two orders: whichever the seed draws, the previous one is avoided.
    for seed in range(20):
        previous = entry.question(seed)
        fresh = review.fresh_question(entry, seed, [seed])
        assert fresh.variant.inputs != previous.variant.inputs
    original = entry.original()
    fresh = review.fresh_question(entry, 3, [None])
    assert fresh.variant.inputs != original.variant.inputs


def test_retrievability_is_high_just_after_a_review_and_decays() -> None:
    card = review.next_card(
        None, bank="demo", item="x", topic="t", rating=Rating.Good, when=NOW, fsrs_scheduler=NO_FUZZ
    )
    assert review.retrievability(card, NOW) > review.retrievability(card, NOW + timedelta(days=60))
