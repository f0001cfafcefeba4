"""Concept questions (``kind: explain``): the answer, loading, grading, sessions, reviews, the history."""

from __future__ import annotations

import pickle
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Scheduler

from attnquiz.engine.answers.kinds import ExplainAnswer, answer_json
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.bank.loader import load_bank_text
from attnquiz.engine.errors import BankError
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.grading.outcome import SELF_RATINGS
from attnquiz.engine.practice import history_schema
from attnquiz.engine.practice.history_file import StoreError
from attnquiz.engine.practice.history_records import Attempt
from attnquiz.engine.practice.planning import Plan, plan_practice, plan_review
from attnquiz.engine.practice.session import Session
from attnquiz.engine.practice.store import Store

BANK = Path(__file__).resolve().parent.parent / "data" / "explain" / "explain.yaml"
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
def bank() -> Bank:
    return banks.load(str(BANK))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "history.sqlite3")
    yield opened
    opened.close()


def session_of(plan: Plan, store: Store | None, clock: FakeClock) -> Session:
    return Session(
        plan,
        store=store,
        clock=clock.monotonic,
        now=clock.now,
        session_id="test",
        fsrs_scheduler=Scheduler(enable_fuzzing=False),
    )


# -- the answer kind --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "points", "message"),
    [
        ("", ("a", "b"), "model answer"),
        ("   ", ("a", "b"), "model answer"),
        ("ok", ("a",), "2 to 6 key points, not 1"),
        ("ok", tuple("abcdefg"), "2 to 6 key points, not 7"),
        ("ok", ("a", " "), "cannot be empty"),
    ],
)
def test_an_explain_answer_refuses_what_is_not_a_concept_question(
    value: str, points: tuple[str, ...], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ExplainAnswer(value, points)


def test_an_explain_answer_is_its_model_answer_and_never_matches_anything() -> None:
    answer = ExplainAnswer("Because $x$.", ("one", "two"))
    assert answer.points == ("one", "two")
    assert answer.format() == "Because $x$."
    assert answer.json_value() == "Because $x$."
    assert not answer.matches(1.0)
    assert not answer.matches(frozenset({"A"}))
    assert "press Enter" in answer.instructions()
    assert answer_json(answer) == {
        "kind": "explain",
        "value": "Because $x$.",
        "tolerance": {"exact": True},
        "points": ["one", "two"],
    }


@pytest.mark.parametrize("response", ["", "  because of the variance  ", "1.93", "#?", "A, C", "x" * 4000])
def test_every_response_to_a_concept_question_is_unscored_and_kept_as_typed(response: str) -> None:
    result = grade_answer(ExplainAnswer("Because.", ("a", "b")), response)
    assert result.status == "unscored"
    assert result.score == 0.0
    assert result.mistake is None
    assert not result.scored
    assert result.counts  # it is an attempt (stored), just not a scored one
    assert result.read_as == response.strip()
    assert result.to_json()["rating"] is None


def test_a_concept_answer_beyond_the_limit_is_invalid_not_cut_off() -> None:
    result = grade_answer(ExplainAnswer("Because.", ("a", "b")), "x" * 4001)
    assert (result.status, result.score, result.counts) == ("invalid", 0.0, False)
    assert result.feedback == "The answer is too long (4,001 characters; the limit is 4,000)."


def test_a_self_rating_is_one_of_the_four_and_is_kept_in_the_grade() -> None:
    result = grade_answer(ExplainAnswer("Because.", ("a", "b")), "text")
    for name in SELF_RATINGS:
        assert result.rated(name).rating == name
        assert result.rated(name).to_json()["rating"] == name
    with pytest.raises(ValueError, match="self-rating"):
        result.rated("great")


# -- loading ------------------------------------------------------------------------------------------


def test_an_explain_item_has_one_instance_whatever_the_seed(bank: Bank) -> None:
    entry = bank.get("why-scale")
    assert entry.has_original
    original = entry.original()
    seeded = [entry.question(seed) for seed in (0, 1, 7, 2**32 - 1)]
    assert all(q.variant == original.variant for q in seeded)
    assert isinstance(original.answer, ExplainAnswer)
    assert len(original.answer.points) == 3
    assert original.variant.solution == ()
    assert original.variant.hint.startswith("What is the variance")
    assert original.to_json()["answer"]["points"] == list(original.answer.points)
    assert original.answer.value in set(original.variant.texts())


def test_a_bank_with_explain_items_pickles_for_the_cache(bank: Bank) -> None:
    again = pickle.loads(pickle.dumps(bank))
    assert again.get("why-mask").original().variant == bank.get("why-mask").original().variant
    assert banks._cacheable(bank)


def test_an_explain_items_problems_are_located_at_their_lines() -> None:
    text = (
        "bank: b\ntitle: T\nitems:\n"
        "  - id: q\n    kind: explain\n    source: s\n    topic: t\n"
        '    prompt: "Why?"\n    answer: "Because."\n'
        '    points: ["fine", "bad $\\\\nosuchcommand$"]\n'
    )
    with pytest.raises(BankError) as caught:
        load_bank_text(text, "b.yaml")
    assert str(caught.value).splitlines()[0] == (
        "b.yaml:10: items[0].points[1]: unsupported TeX command \\nosuchcommand in $\\nosuchcommand$"
    )


# -- practice: typed answer, model answer, self-rating --------------------------------------------------


def test_a_concept_answer_is_stored_at_once_and_waits_for_its_rating(bank: Bank, store: Store) -> None:
    clock = FakeClock()
    session = session_of(plan_practice(bank, seed=1, items=["why-scale", "score"]), store, clock)
    session.show()
    clock.advance(30)
    result = session.answer("  the variance of q.k grows with d_k ")
    assert result.status == "unscored"
    assert session.awaiting_rating
    assert session.current is not None
    assert session.current.position == 1
    [stored] = store.attempts()
    assert (stored.status, stored.response, stored.rating, stored.reviewed) == (
        "unscored",
        "  the variance of q.k grows with d_k ",
        None,
        False,
    )
    assert store.card("explain", "why-scale") is None  # no review before the rating
    session.rate("good")
    [stored] = store.attempts()
    assert (stored.rating, stored.reviewed, stored.seconds) == ("good", True, 30.0)
    card = store.card("explain", "why-scale")
    assert card is not None
    assert card.reviews == 1
    assert session.slots[0].rating == "good"
    assert session.slots[0].next_due == card.due
    assert session.current is not None
    assert session.current.position == 2
    with pytest.raises(RuntimeError):
        session.rate("good")  # nothing waits for a rating now


def due_after(bank: Bank, tmp_path: Path, rating: str) -> datetime:
    with Store.open(tmp_path / f"{rating}.sqlite3") as history:
        session = session_of(plan_practice(bank, seed=1, items=["why-scale"]), history, FakeClock())
        session.show()
        session.answer("")
        session.rate(rating)
        card = history.card("explain", "why-scale")
        assert card is not None
        return card.due


def test_the_self_rating_drives_the_schedule(bank: Bank, tmp_path: Path) -> None:
    due = {rating: due_after(bank, tmp_path, rating) for rating in SELF_RATINGS}
    assert due["again"] < due["hard"] < due["good"] < due["easy"]
    assert due["again"] - T0 < timedelta(minutes=15)  # again: back within the session's day
    assert due["easy"] - T0 >= timedelta(days=1)


def test_rating_again_lists_the_item_to_practise_and_the_summary_scores_only_scored_questions(
    bank: Bank,
) -> None:
    session = session_of(
        plan_practice(bank, seed=1, items=["why-scale", "why-mask", "score"]), None, FakeClock()
    )
    session.show()
    session.answer("no idea")
    session.rate("again")
    session.show()
    session.answer("")
    session.rate("easy")
    session.show()
    session.answer("3.51")
    summary = session.finish("completed")
    assert (summary.score, summary.out_of, summary.unscored) == (0.0, 1, 2)
    assert [r.status for r in summary.rows] == ["unscored", "unscored", "wrong"]
    assert [r.rating for r in summary.rows] == ["again", "easy", None]
    data = summary.to_json()
    assert data["unscored"] == 2
    assert data["out_of"] == 1
    assert summary.follow_up is not None
    assert "why-scale" in summary.follow_up
    assert "why-mask" not in summary.follow_up
    assert "masking" not in summary.revisit  # a concept question has no score to revisit by


def test_an_interrupted_session_keeps_the_typed_answer_and_brings_the_item_back(
    bank: Bank, store: Store
) -> None:
    clock = FakeClock()
    session = session_of(plan_practice(bank, seed=1, items=["why-scale"]), store, clock)
    session.show()
    session.answer("softmax saturates")
    summary = session.finish("interrupted")
    [stored] = store.attempts()
    assert (stored.response, stored.status, stored.rating) == ("softmax saturates", "unscored", None)
    card = store.card("explain", "why-scale")
    assert card is not None
    assert card.due <= clock.now()
    assert card.reviews == 0
    assert [r.rating for r in summary.rows] == [None]
    review = plan_review([bank], store, seed=3, now=clock.now())
    assert "why-scale" in [p.entry.id for p in review.questions]


# -- exams ----------------------------------------------------------------------------------------------


def test_an_exam_collects_concept_answers_unrated_and_scores_only_the_scored_questions(
    bank: Bank, store: Store
) -> None:
    clock = FakeClock()
    session = session_of(plan_practice(bank, seed=2, items=["why-scale", "score"], exam=True), store, clock)
    session.show()
    assert session.answer("the variance grows").status == "unscored"
    assert not session.awaiting_rating  # an exam moves on; the rating waits for quiz review
    question = session.show()
    assert question is not None
    assert question.item_id == "score"
    session.answer(question.answer.format())
    summary = session.finish("submitted")
    assert (summary.score, summary.out_of, summary.unscored, summary.correct) == (1.0, 1, 1, 1)
    by_item = {a.item: a for a in store.attempts()}
    assert by_item["why-scale"].response == "the variance grows"
    assert (by_item["why-scale"].status, by_item["why-scale"].rating) == ("unscored", None)
    card = store.card("explain", "why-scale")
    assert card is not None
    assert card.due <= clock.now()


# -- the history ----------------------------------------------------------------------------------------


def attempt(position: int, status: str, score: float, topic: str = "t", rating: str | None = None) -> Attempt:
    return Attempt(
        session="s",
        position=position,
        mode="practice",
        bank="b",
        item=f"i{position}",
        topic=topic,
        source="src",
        seed=1,
        variant_code="0000-0001",
        response="r",
        status=status,
        score=score,
        mistake=None,
        seconds=1.0,
        at=T0,
        rating=rating,
    )


def test_statistics_count_unscored_attempts_apart_from_the_accuracy(store: Store) -> None:
    store.record(attempt(1, "correct", 1.0))
    store.record(attempt(2, "wrong", 0.0))
    store.record(attempt(3, "unscored", 0.0, rating="good"))
    store.record(attempt(4, "unscored", 0.0, topic="only-concepts"))
    topics = {g.topic: g for g in store.group_stats(by_topic=True)}
    assert (topics["t"].attempts, topics["t"].unscored, topics["t"].scored) == (3, 1, 2)
    assert topics["t"].accuracy == pytest.approx(0.5)
    assert (topics["only-concepts"].scored, topics["only-concepts"].accuracy) == (0, 0.0)
    [bank_total] = store.group_stats(by_topic=False)
    assert (bank_total.attempts, bank_total.unscored) == (4, 2)
    [day] = store.daily_stats(T0 - timedelta(days=1))
    assert (day.attempts, day.unscored, day.accuracy) == (4, 2, 0.5)
    # Replacing an unscored attempt by a scored one (and back) keeps the totals right.
    store.record(attempt(3, "correct", 1.0))
    assert {g.topic: g.unscored for g in store.group_stats(by_topic=True)}["t"] == 0
    [read] = [a for a in store.attempts() if a.position == 4]
    assert read.rating is None
    assert read.status == "unscored"


def test_the_history_refuses_a_rating_that_is_not_one_of_the_four(store: Store) -> None:
    with pytest.raises(StoreError):
        store.record(attempt(1, "unscored", 0.0, rating="great"))


def test_a_schema_2_history_is_upgraded_with_its_attempts_and_totals(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    raw = sqlite3.connect(path)
    for step in history_schema.MIGRATIONS[:2]:
        for statement in step:
            raw.execute(statement)
    raw.execute("PRAGMA user_version = 2")
    columns = history_schema.ATTEMPT_COLUMNS.removesuffix(", rating")
    for n in range(6):
        row = history_schema.attempt_row(attempt(n, "correct" if n % 2 else "wrong", float(n % 2)))[:-1]
        raw.execute(f"INSERT INTO attempts ({columns}) VALUES ({', '.join('?' * len(row))})", row)
    raw.commit()
    raw.close()
    with Store.open(path) as opened:
        assert opened.schema_version == history_schema.SCHEMA_VERSION
        assert len(opened.attempts()) == 6
        [group] = opened.group_stats(by_topic=True)
        assert (group.attempts, group.correct, group.unscored) == (6, 3, 0)
        opened.record(attempt(9, "unscored", 0.0, rating="hard"))
        [group] = opened.group_stats(by_topic=True)
        assert (group.attempts, group.unscored, group.accuracy) == (7, 1, 0.5)
