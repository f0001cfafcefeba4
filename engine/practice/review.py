"""Spaced repetition with FSRS: how a graded attempt rates an item, its next card, and what is due.

Each bank item has one FSRS card (the item, not a variant, is what a student learns: every review
shows a fresh variant). A correct answer rates Good, or Easy when it came quickly and without a
hint; a partial answer rates Hard; a wrong answer, or one that matched a named mistake, rates
Again; an invalid answer rates nothing. A concept question (never scored) rates as the student
rated their own answer against the model answer, and nothing while it is unrated. ``quiz review``
serves the due cards, most overdue first, with new items mixed in at a steady rate up to a daily
allowance.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from datetime import datetime, time, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from msgspec import Struct

from attnquiz.engine.practice.history_records import CardRecord, CardUpdate

if TYPE_CHECKING:
    from fsrs import Card, Rating, Scheduler

    from attnquiz.engine.answers.kinds import Answer
    from attnquiz.engine.bank.loaded import Bank, BankItem
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.variant import Question

# A correct answer faster than this (seconds) rates Easy. The times are what a student who knows
# the method needs to read the question and type the answer, by answer kind; slower but correct
# is Good, the ordinary pass.
EASY_SECONDS: dict[str, float] = {
    "single-choice": 20.0,
    "multiple-choice": 40.0,
    "integer": 30.0,
    "shape": 30.0,
    "numeric": 60.0,
    "vector": 90.0,
    "matrix": 120.0,
}
DEFAULT_EASY_SECONDS = 60.0

NEW_PER_DAY = 10
"""New items begun per day by ``quiz review`` (Anki's default is 20 for short cards; ours take minutes)."""
NEW_EVERY = 4
"""In a review queue, one new item after every this many due ones."""
REVIEW_LIMIT = 20
"""Questions in one ``quiz review`` session unless told otherwise."""

RatingName = Literal["again", "hard", "good", "easy"]


@lru_cache(maxsize=1)
def scheduler() -> Scheduler:
    """The FSRS scheduler with its published default weights and 90 % desired retention."""
    from fsrs import Scheduler

    return Scheduler()


def easy_seconds(answer: Answer) -> float:
    """How quickly a correct answer must come to rate Easy."""
    # Imported here: `quiz stats` reads cards through this module and needs no answer kinds (numpy).
    from attnquiz.engine.answers.kinds import ChoiceAnswer

    if isinstance(answer, ChoiceAnswer):
        return EASY_SECONDS["multiple-choice" if answer.multiple else "single-choice"]
    return EASY_SECONDS.get(answer.kind, DEFAULT_EASY_SECONDS)


def rate(grade: Grade, *, answer: Answer, seconds: float | None, hinted: bool = False) -> Rating | None:
    """The FSRS rating an attempt earns, or None when it does not count (an invalid response).

    Args:
        grade: The attempt's grade.
        answer: The question's answer (its kind sets what "fast" means).
        seconds: How long the student took; None when that means nothing (answers piped in, all
            at once): a correct answer is then Good, never Easy.
        hinted: Whether the student asked for the hint (a hinted answer is never Easy).

    Returns:
        Again for wrong answers and named mistakes, Hard for partial credit, Good or Easy for a
        correct answer, None for an invalid response.
    """
    from fsrs import Rating

    if not grade.counts:
        return None
    if grade.status == "unscored":
        # A concept question: the student's own rating of their answer, or nothing while unrated.
        return None if grade.rating is None else self_rating(grade.rating)
    if grade.status == "correct":
        fast = seconds is not None and seconds <= easy_seconds(answer) and not hinted
        return Rating.Easy if fast else Rating.Good
    if grade.mistake is not None or grade.status == "wrong":
        # A recognised misconception is a lapse even when the item grants it some credit.
        return Rating.Again
    return Rating.Hard


def self_rating(name: str) -> Rating:
    """The FSRS rating of a student's own rating of a concept answer (again, hard, good or easy)."""
    from fsrs import Rating

    ratings = {"again": Rating.Again, "hard": Rating.Hard, "good": Rating.Good, "easy": Rating.Easy}
    if name not in ratings:
        raise ValueError(f"a self-rating is one of again, hard, good or easy, not {name!r}")
    return ratings[name]


def card_id(bank: str, item: str) -> int:
    """A stable id for the item's card (FSRS would otherwise use the clock, and sleep a millisecond)."""
    return zlib.crc32(f"{bank}/{item}".encode())


def load_card(record: CardRecord) -> Card:
    """The FSRS card a stored record holds.

    A state FSRS cannot read (a JSON object of another shape: the store already skips text that
    is not JSON) starts the item afresh, due when the record says, rather than stopping a review.
    """
    from fsrs import Card

    try:
        return Card.from_json(record.state)
    except (KeyError, ValueError, TypeError, AttributeError):
        return Card(card_id=card_id(record.bank, record.item), due=record.due)


def next_card(
    current: CardRecord | None,
    *,
    bank: str,
    item: str,
    topic: str,
    rating: Rating,
    when: datetime,
    seconds: float | None = None,
    fsrs_scheduler: Scheduler | None = None,
) -> CardRecord:
    """The item's card after a review with ``rating`` at ``when`` (a new card if it had none)."""
    from fsrs import Card, Rating

    chosen = fsrs_scheduler or scheduler()
    card = load_card(current) if current is not None else Card(card_id=card_id(bank, item), due=when)
    duration = int(seconds * 1000) if seconds is not None else None
    card, _log = chosen.review_card(card, rating, review_datetime=when, review_duration=duration)
    return CardRecord(
        bank=bank,
        item=item,
        topic=topic,
        state=card.to_json(),
        due=card.due,
        created=current.created if current is not None else when,
        reviews=(current.reviews if current is not None else 0) + 1,
        lapses=(current.lapses if current is not None else 0) + (rating == Rating.Again),
    )


def intervals(
    current: CardRecord | None,
    *,
    bank: str,
    item: str,
    topic: str,
    when: datetime,
    fsrs_scheduler: Scheduler | None = None,
) -> dict[str, timedelta]:
    """How long after ``when`` the item falls due again for each rating (again, hard, good, easy):
    `due_after_each` as spans of time."""
    due = due_after_each(current, bank=bank, item=item, topic=topic, when=when, fsrs_scheduler=fsrs_scheduler)
    return {str(name): moment - when for name, moment in due.items()}


def card_update(
    *,
    bank: str,
    item: str,
    topic: str,
    rating: Rating,
    when: datetime,
    seconds: float | None = None,
    fsrs_scheduler: Scheduler | None = None,
) -> CardUpdate:
    """The update `Store.record` applies to the item's card inside the attempt's transaction."""

    def update(current: CardRecord | None) -> CardRecord:
        return next_card(
            current,
            bank=bank,
            item=item,
            topic=topic,
            rating=rating,
            when=when,
            seconds=seconds,
            fsrs_scheduler=fsrs_scheduler,
        )

    return update


def due_after_each(
    current: CardRecord | None,
    *,
    bank: str,
    item: str,
    topic: str,
    when: datetime,
    fsrs_scheduler: Scheduler | None = None,
) -> dict[RatingName, datetime]:
    """When the item would be due after each rating given at ``when`` to its card ``current`` (a
    new card if None): what a rating button tells before it is pressed (Anki's habit).

    The interval is the scheduler's own, before the small random spread FSRS adds to intervals of
    three days and more (so that cards learnt together do not fall due together): pressing the
    button schedules the item within a day or a few of the date said, never at another scale."""
    from fsrs import Rating, Scheduler

    chosen = fsrs_scheduler or scheduler()
    plain = Scheduler(
        parameters=chosen.parameters,
        desired_retention=chosen.desired_retention,
        learning_steps=chosen.learning_steps,
        relearning_steps=chosen.relearning_steps,
        maximum_interval=chosen.maximum_interval,
        enable_fuzzing=False,
    )
    return {
        rating_name(rating): next_card(
            current, bank=bank, item=item, topic=topic, rating=rating, when=when, fsrs_scheduler=plain
        ).due
        for rating in (Rating.Again, Rating.Hard, Rating.Good, Rating.Easy)
    }


def skip_update(*, bank: str, item: str, topic: str, when: datetime) -> CardUpdate:
    """The card update of a skipped question: due again now, with no review and no lapse counted.

    A skip says "not now", not "I forgot": the item's FSRS state is kept (a new item gets a new
    card), and only its due time comes forward, so that ``quiz review`` brings it back.
    """
    from fsrs import Card
    from msgspec.structs import replace

    def update(current: CardRecord | None) -> CardRecord:
        if current is not None:
            return replace(current, due=min(current.due, when))
        card = Card(card_id=card_id(bank, item), due=when)
        return CardRecord(bank=bank, item=item, topic=topic, state=card.to_json(), due=when, created=when)

    return update


def rating_name(rating: Rating) -> RatingName:
    """The rating as JSON and the terminal show it."""
    names: dict[int, RatingName] = {1: "again", 2: "hard", 3: "good", 4: "easy"}
    return names[int(rating)]


def is_due(record: CardRecord, now: datetime) -> bool:
    """Whether the card is due: by the minute while it is being learnt, by the local day once in review.

    A card reviewed last night "in 1 day" is due this morning, as in Anki: intervals of days are
    counted in calendar days, while the learning steps of minutes are counted exactly.
    """
    if record.due <= now:
        return True
    from fsrs import State

    if load_card(record).state != State.Review:
        return False
    local_now = now.astimezone()
    end_of_day = datetime.combine(local_now.date() + timedelta(days=1), time(0), tzinfo=local_now.tzinfo)
    return record.due < end_of_day


def next_change(records: Iterable[CardRecord], now: datetime) -> datetime:
    """The first moment after ``now`` at which `is_due` may answer differently for one of
    ``records`` (a learning card at its due time, a card in review at the start of its due day), or
    the local day ends (the new items of a day, a day's column): what counts due cards holds until
    then, whatever else is unchanged."""
    local_now = now.astimezone()
    moments = [datetime.combine(local_now.date() + timedelta(days=1), time(0), tzinfo=local_now.tzinfo)]
    for record in records:
        moments.extend(moment for moment in (start_of_day(record.due), record.due) if moment > now)
    return min(moments)


def in_review(record: CardRecord) -> bool:
    """Whether the item has been learnt (FSRS's Review state) rather than still in its first steps."""
    from fsrs import State

    return bool(load_card(record).state == State.Review)


def retrievability(record: CardRecord, now: datetime) -> float:
    """The predicted probability of recalling the item now (0 for an item never answered)."""
    return float(scheduler().get_card_retrievability(load_card(record), now))


def start_of_day(now: datetime) -> datetime:
    """Midnight of ``now``'s local day (where the daily allowance of new items restarts)."""
    local = now.astimezone()
    return datetime.combine(local.date(), time(0), tzinfo=local.tzinfo)


class ReviewSlot(Struct, frozen=True):
    """One question of a review queue: the item, why it is there, and when it fell due."""

    bank: str
    entry: BankItem
    reason: Literal["due", "new"]
    due: datetime | None = None


def review_queue(
    banks: Sequence[Bank],
    cards: Iterable[CardRecord],
    *,
    now: datetime,
    new_today: int,
    limit: int = REVIEW_LIMIT,
    new_per_day: int = NEW_PER_DAY,
    new_every: int = NEW_EVERY,
) -> list[ReviewSlot]:
    """What to review now: due items, most overdue first, with new items mixed in.

    Args:
        banks: The banks to review (their items, in course order, are the new ones).
        cards: The stored cards; cards of items no longer in a bank are ignored.
        now: The current time (UTC).
        new_today: New items already begun today (they count against ``new_per_day``).
        limit: The most questions to serve.
        new_per_day: The daily allowance of new items.
        new_every: One new item after every ``new_every`` due items.

    Returns:
        The queue, at most ``limit`` long.
    """
    entries = {(bank.name, entry.id): entry for bank in banks for entry in bank.items}
    seen: set[tuple[str, str]] = set()
    due: list[ReviewSlot] = []
    for record in sorted(cards, key=lambda c: c.due):
        key = (record.bank, record.item)
        seen.add(key)
        entry = entries.get(key)
        if entry is not None and is_due(record, now):
            due.append(ReviewSlot(record.bank, entry, "due", record.due))
    allowance = max(0, new_per_day - new_today)
    new = [
        ReviewSlot(bank, entry, "new") for (bank, _), entry in entries.items() if (bank, entry.id) not in seen
    ]
    new = new[:allowance]

    queue: list[ReviewSlot] = []
    due_iter, new_iter = iter(due), iter(new)
    since_new = 0
    while len(queue) < limit:
        pick: ReviewSlot | None = None
        if since_new >= new_every:
            pick = next(new_iter, None)
            since_new = 0
        if pick is None:
            pick = next(due_iter, None)
            since_new += 1
        if pick is None:
            pick = next(new_iter, None)
        if pick is None:
            break
        queue.append(pick)
    return queue


def fresh_question(entry: BankItem, seed: int, recent: Sequence[int | None], *, tries: int = 8) -> Question:
    """A variant of ``entry`` whose inputs differ from those of the recent attempts, when one can be found.

    Small items have few distinct variants, and two seeds can draw the same inputs; a review is
    only useful if the numbers are new, so a few more seeds are tried before settling.

    Args:
        entry: The bank item.
        seed: The session's seed for this item.
        recent: Seeds of the item's latest attempts (None: the original instance).
        tries: How many seeds to try.
    """
    from attnquiz.engine.seeding import derive_seed

    avoid = []
    for old in recent:
        old_question = (
            entry.question(old) if old is not None else (entry.original() if entry.has_original else None)
        )
        if old_question is not None:
            avoid.append(dict(old_question.variant.inputs))
    candidate = entry.question(seed)
    for attempt in range(1, tries):
        if dict(candidate.variant.inputs) not in avoid:
            break
        candidate = entry.question(derive_seed(seed, "fresh", attempt))
    return candidate


__all__ = [
    "EASY_SECONDS",
    "NEW_EVERY",
    "NEW_PER_DAY",
    "REVIEW_LIMIT",
    "ReviewSlot",
    "card_update",
    "due_after_each",
    "easy_seconds",
    "fresh_question",
    "in_review",
    "is_due",
    "load_card",
    "next_card",
    "rate",
    "rating_name",
    "retrievability",
    "review_queue",
    "scheduler",
    "skip_update",
    "start_of_day",
]
