"""Sessions without a terminal: planning, grading, timing, exam navigation, history and the summary."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Scheduler

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.errors import ItemNotFoundError
from attnquiz.engine.practice.planning import (
    DEFAULT_COUNT,
    Plan,
    SelectionError,
    format_duration,
    parse_duration,
    plan_practice,
    plan_review,
)
from attnquiz.engine.practice.session import Session, graded_json
from attnquiz.engine.practice.store import Store

DEMO = Path(__file__).resolve().parent.parent / "data" / "practice" / "demo.yaml"
T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


class FakeClock:
    """Monotonic seconds and wall-clock time that only move when a test says so."""

    def __init__(self) -> None:
        self.seconds = 1000.0

    def monotonic(self) -> float:
        return self.seconds

    def now(self) -> datetime:
        return T0 + timedelta(seconds=self.seconds - 1000.0)

    def advance(self, seconds: float) -> None:
        self.seconds += seconds


@pytest.fixture(scope="module")
def demo() -> Bank:
    return banks.load(str(DEMO))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "history.sqlite3")
    yield opened
    opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def session_of(plan: Plan, store: Store | None, clock: FakeClock) -> Session:
    return Session(
        plan,
        store=store,
        clock=clock.monotonic,
        now=clock.now,
        session_id="test",
        fsrs_scheduler=Scheduler(enable_fuzzing=False),
    )


def right(session: Session) -> str:
    slot = session.current
    assert slot is not None
    return session.question(slot).answer.format()


def a_mistake(session: Session) -> tuple[str, str]:
    slot = session.current
    assert slot is not None
    question = session.question(slot)
    mistake = question.variant.mistakes[0]
    return mistake.format(question.answer), mistake.tag


# -- planning -------------------------------------------------------------------------------------


def test_the_same_seed_plans_the_same_session(demo: Bank) -> None:
    first = plan_practice(demo, seed=42)
    again = plan_practice(demo, seed=42)
    other = plan_practice(demo, seed=43)
    assert [(p.entry.id, p.seed) for p in first.questions] == [(p.entry.id, p.seed) for p in again.questions]
    assert [(p.entry.id, p.seed) for p in first.questions] != [(p.entry.id, p.seed) for p in other.questions]


def test_the_default_count_is_the_whole_selection_up_to_ten(demo: Bank) -> None:
    plan = plan_practice(demo, seed=1)
    assert len(plan) == min(DEFAULT_COUNT, len(demo.items))
    assert sorted(p.entry.id for p in plan.questions) == sorted(e.id for e in demo.items)


def test_a_larger_count_goes_round_again_with_new_variants(demo: Bank) -> None:
    plan = plan_practice(demo, seed=1, count=10)
    assert len(plan) == 10
    ids = [p.entry.id for p in plan.questions]
    # Every item appears once before any appears twice.
    assert len(set(ids[:4])) == 4
    seeds = [p.seed for p in plan.questions]
    assert len(set(seeds)) == 10


def test_an_items_variant_does_not_depend_on_the_count(demo: Bank) -> None:
    short = {p.entry.id: p.seed for p in plan_practice(demo, seed=9, count=2).questions}
    full = {p.entry.id: p.seed for p in plan_practice(demo, seed=9, count=4).questions}
    for item, seed in short.items():
        assert full[item] == seed


def test_a_topic_selects_its_items_and_an_unknown_one_suggests_the_closest(demo: Bank) -> None:
    plan = plan_practice(demo, seed=1, topic="additive-attention")
    assert {p.entry.id for p in plan.questions} == {"score-a", "score-b"}
    with pytest.raises(
        ItemNotFoundError, match=r"no topic 'additive-atention' .*did you mean additive-attention"
    ):
        plan_practice(demo, seed=1, topic="additive-atention")


def test_items_are_asked_in_the_order_given(demo: Bank) -> None:
    plan = plan_practice(demo, seed=1, items=["score-c", "score-a"])
    assert [p.entry.id for p in plan.questions] == ["score-c", "score-a"]
    with pytest.raises(ItemNotFoundError):
        plan_practice(demo, seed=1, items=["nope"])


def test_original_asks_the_papers_own_questions_in_bank_order(demo: Bank) -> None:
    plan = plan_practice(demo, seed=1, original=True)
    assert [p.entry.id for p in plan.questions] == ["score-a", "score-c", "pick-one"]
    assert all(p.seed is None for p in plan.questions)
    assert plan.questions[0].build().answer.format() == "1.93"
    assert "--seed" not in plan.repeat
    with pytest.raises(SelectionError, match=r"no item of topic 'additive-attention' .* has an original"):
        plan_practice(demo, seed=1, original=True, topic="additive-attention", items=["score-b"])


def test_the_repeat_command_plans_the_same_session_again(demo: Bank) -> None:
    plan = plan_practice(demo, seed=77, topic="additive-attention", count=3, exam=True, time_limit=1200)
    words = shlex.split(plan.repeat)
    assert words[:3] == ["quiz", "run", "demo"]
    assert words[words.index("--time") + 1] == "20m"
    assert "--exam" in words
    again = plan_practice(
        demo,
        seed=int(words[words.index("--seed") + 1]),
        topic=words[words.index("--topic") + 1],
        count=int(words[words.index("--count") + 1]),
        exam=True,
        time_limit=parse_duration(words[words.index("--time") + 1]),
    )
    assert [(p.entry.id, p.seed) for p in again.questions] == [(p.entry.id, p.seed) for p in plan.questions]


def test_a_time_limit_makes_an_exam(demo: Bank) -> None:
    assert plan_practice(demo, seed=1, time_limit=60).mode == "exam"
    assert plan_practice(demo, seed=1).mode == "practice"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("20m", 1200),
        ("1h30m", 5400),
        ("90s", 90),
        ("45", 2700),
        ("1:30:00", 5400),
        ("20:00", 1200),
        ("2 min", 120),
    ],
)
def test_durations_are_read_in_the_usual_ways(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "0", "25h", "m"])
def test_a_bad_duration_says_how_to_write_one(text: str) -> None:
    with pytest.raises(SelectionError):
        parse_duration(text)


def test_durations_are_written_back_compactly() -> None:
    assert format_duration(5400) == "1h30m"
    assert format_duration(90) == "1m30s"
    assert format_duration(1200) == "20m"


# -- practice -------------------------------------------------------------------------------------


def test_a_correct_answer_is_graded_timed_stored_and_reviewed(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    session = session_of(plan_practice(demo, seed=5, original=True), store, clock)
    question = session.show()
    assert question is not None
    assert question.item_id == "score-a"
    clock.advance(12.0)
    result = session.answer("1.93")
    assert result.status == "correct"
    [stored] = store.attempts()
    assert (stored.item, stored.status, stored.seed, stored.variant_code) == (
        "score-a",
        "correct",
        None,
        "original",
    )
    assert stored.seconds == pytest.approx(12.0)
    assert stored.reviewed
    card = store.card("demo", "score-a")
    assert card is not None
    assert card.reviews == 1
    assert session.slots[0].rating == "easy"
    assert session.current is not None
    assert session.current.position == 2


def test_an_invalid_answer_costs_nothing_and_is_not_stored(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    session = session_of(plan_practice(demo, seed=5, original=True), store, clock)
    session.show()
    result = session.answer("one point nine")
    assert result.status == "invalid"
    assert not result.counts
    assert store.attempts() == []
    assert session.current is not None
    assert session.current.position == 1
    assert session.answer("1.93").status == "correct"


def test_a_named_mistake_is_stored_and_rates_again(demo: Bank, store: Store, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=5, items=["score-b"]), store, clock)
    session.show()
    value, tag = a_mistake(session)
    result = session.answer(value)
    assert result.status == "wrong"
    assert result.mistake is not None
    assert result.mistake.tag == tag
    [stored] = store.attempts()
    assert stored.mistake == tag
    assert session.slots[0].rating == "again"
    card = store.card("demo", "score-b")
    assert card is not None
    assert card.lapses == 1


def test_a_hint_prevents_an_easy_rating(demo: Bank, store: Store, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=5, items=["score-a"]), store, clock)
    session.show()
    assert "tanh" in session.hint()
    session.answer(right(session))
    assert session.slots[0].rating == "good"
    assert store.attempts()[0].hints == 1


def test_skipping_stores_nothing_and_the_session_completes(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    session = session_of(plan_practice(demo, seed=5, items=["score-a", "score-c"]), store, clock)
    session.show()
    session.skip()
    session.show()
    session.answer(right(session))
    assert session.finished
    assert session.ended == "completed"
    summary = session.summary()
    assert [r.status for r in summary.rows] == ["skipped", "correct"]
    assert summary.score == 1.0
    assert summary.out_of == 2
    assert summary.revisit == ("additive-attention",)
    assert summary.follow_up == "quiz run demo --item score-a"
    assert summary.stored == 1
    assert len(store.attempts()) == 1


def test_the_summary_of_a_session_stopped_early_lists_what_was_answered(demo: Bank, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=5, count=4), None, clock)
    session.show()
    clock.advance(30)
    value = right(session)
    session.answer(value)
    session.show()
    clock.advance(5)
    summary = session.finish("interrupted")
    assert summary.ended == "interrupted"
    assert summary.planned == 4
    assert len(summary.rows) == 1
    assert summary.seconds == pytest.approx(35)
    assert summary.history is None
    assert summary.follow_up is None
    data = summary.to_json()
    assert data["type"] == "summary"
    assert data["asked"] == 1
    # Finishing again keeps the first ending.
    assert session.finish("quit").ended == "interrupted"


def test_topics_to_revisit_are_ordered_worst_first(demo: Bank, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=5, original=True), None, clock)
    session.show()
    session.answer("1.93")  # additive-attention right
    session.show()
    session.answer("5")  # scoring wrong
    session.show()
    session.answer("B")  # concepts wrong
    summary = session.summary()
    assert set(summary.revisit) == {"scoring", "concepts"}
    assert "additive-attention" not in summary.revisit


def test_a_store_that_fails_mid_session_becomes_a_warning(
    demo: Bank, tmp_path: Path, clock: FakeClock
) -> None:
    broken = Store.open(tmp_path / "history.sqlite3")
    session = session_of(plan_practice(demo, seed=5, original=True), broken, clock)
    session.show()
    broken.close()
    assert session.answer("1.93").status == "correct"
    [warning] = session.take_warnings()
    assert "without saving history" in warning
    assert session.store is None
    assert session.take_warnings() == []
    session.show()
    assert session.answer("0").status == "correct"


def test_graded_json_has_the_grade_and_the_question(demo: Bank, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=5, original=True), None, clock)
    session.show()
    slot = session.current
    assert slot is not None
    result = session.answer("1.93")
    data = graded_json(session, slot, result, "1.93")
    assert data["type"] == "grade"
    assert data["status"] == "correct"
    assert data["item"] == "score-a"
    assert data["variant_code"] == "original"
    assert data["source"] == "Demo Quiz, Q1"
    assert data["response"] == "1.93"
    assert data["review"] == "easy"


# -- exams ----------------------------------------------------------------------------------------


def test_an_exam_keeps_answers_revisable_and_reviews_them_on_submission(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    session = session_of(plan_practice(demo, seed=5, original=True, exam=True), store, clock)
    assert session.exam
    session.show()
    session.answer("2")  # question 1, wrong for now
    assert session.current is not None
    assert session.current.position == 2
    [saved] = store.attempts()
    assert not saved.reviewed
    assert store.card("demo", "score-a") is None

    session.back()
    assert session.current is not None
    assert session.current.position == 1
    session.show()
    session.answer("1.93")  # revised
    assert [a.response for a in store.attempts()] == ["1.93"]

    session.go(3)
    session.show()
    session.answer("A")
    assert session.unanswered() == [2]
    assert session.current is not None
    assert session.current.position == 2
    with pytest.raises(ValueError, match="no question 9"):
        session.go(9)

    summary = session.finish("submitted")
    assert [r.status for r in summary.rows] == ["correct", "unanswered", "correct"]
    assert summary.out_of == 3
    assert all(a.reviewed for a in store.attempts())
    assert store.card("demo", "score-a") is not None
    assert store.card("demo", "score-c") is None
    assert summary.stored == 2


def test_an_exam_moves_to_the_first_open_question_after_the_last(demo: Bank, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=5, original=True, exam=True), None, clock)
    session.next()
    session.next()
    session.show()
    session.answer("A")
    assert session.current is not None
    assert session.current.position == 1
    session.next()
    session.back()
    session.back()
    assert session.current is not None
    assert session.current.position == 3


def test_answering_every_exam_question_leaves_none_current(demo: Bank, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=5, original=True, exam=True), None, clock)
    for answer in ("1.93", "0", "A"):
        session.show()
        session.answer(answer)
    assert session.current is None
    assert not session.finished
    assert session.finish("submitted").score == 3


def test_a_timed_exam_counts_down(demo: Bank, clock: FakeClock) -> None:
    plan = plan_practice(demo, seed=5, original=True, time_limit=60)
    session = session_of(plan, None, clock)
    assert session.remaining() == 60
    clock.advance(59)
    assert session.remaining() == 1
    assert [session.time_up] == [False]
    clock.advance(2)
    assert session.remaining() == 0
    assert [session.time_up] == [True]
    assert session_of(plan_practice(demo, seed=5), None, clock).remaining() is None


def test_exam_time_per_question_adds_up_over_visits(demo: Bank, clock: FakeClock) -> None:
    session = session_of(plan_practice(demo, seed=5, original=True, exam=True), None, clock)
    session.show()
    clock.advance(10)
    session.next()
    session.show()
    clock.advance(3)
    session.back()
    session.show()
    clock.advance(5)
    session.answer("1.93")
    assert session.slots[0].seconds == pytest.approx(15)
    assert session.slots[1].seconds == pytest.approx(3)


# -- review ---------------------------------------------------------------------------------------


def test_a_review_serves_new_items_then_the_ones_that_lapsed(
    demo: Bank, store: Store, clock: FakeClock
) -> None:
    first = plan_review([demo], store, seed=1, now=T0, limit=2)
    assert first.mode == "review"
    assert [p.reason for p in first.questions] == ["new", "new"]
    session = session_of(first, store, clock)
    for _ in range(2):
        session.show()
        assert session.answer("99").status == "wrong"
    assert store.cards_created_since(T0) == 2

    later = T0 + timedelta(hours=1)
    second = plan_review([demo], store, seed=2, now=later, limit=10, new_per_day=3)
    reasons = [(p.entry.id, p.reason) for p in second.questions]
    assert reasons[:2] == [(first.questions[0].entry.id, "due"), (first.questions[1].entry.id, "due")]
    assert [r for _, r in reasons[2:]] == ["new"]
    # The variants are fresh.
    earlier = {p.entry.id: p.seed for p in first.questions}
    for planned in second.questions[:2]:
        assert planned.seed != earlier[planned.entry.id]
    assert second.repeat == "quiz review"


def test_a_review_without_history_serves_new_items(demo: Bank) -> None:
    plan = plan_review([demo], None, seed=1, now=T0, limit=3)
    assert [p.reason for p in plan.questions] == ["new", "new", "new"]
