"""What the history holds, as values: attempts, review cards, statistics, and the times the store writes.

Every time in the history is timezone-aware UTC, written in one fixed text format so that text order
is time order in SQL comparisons (`time_text`, `time_from_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from msgspec import Struct


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC (the only kind of time the store holds)."""
    return datetime.now(UTC)


def time_text(moment: datetime) -> str:
    """A timezone-aware time as the store writes it (a naive time is refused: ValueError)."""
    if moment.tzinfo is None:
        raise ValueError("the store holds timezone-aware times only")
    # One fixed format and zone, so that text order is time order in SQL comparisons.
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def time_from_text(text: str) -> datetime:
    """A stored time read back, in UTC (ValueError for text that is not a time with a zone)."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"time without a zone: {text!r}")
    return moment.astimezone(UTC)


class DamagedRow(ValueError):
    """A stored row whose values cannot be decoded (skipped and counted by the store)."""


class Attempt(Struct, frozen=True):
    """One graded answer to one question, as the history keeps it.

    ``session`` and ``position`` identify the question within a session: recording the same pair
    again replaces the earlier answer (an exam answer revised before submitting).
    """

    session: str
    position: int
    mode: str
    bank: str
    item: str
    topic: str
    source: str
    seed: int | None
    variant_code: str
    response: str
    status: str
    score: float
    mistake: str | None
    seconds: float
    at: datetime
    hints: int = 0
    reviewed: bool = False
    # A concept question's attempt (status ``unscored``): the student's own rating, once given.
    rating: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The attempt as JSON outputs show it."""
        return {
            "session": self.session,
            "position": self.position,
            "mode": self.mode,
            "bank": self.bank,
            "item": self.item,
            "topic": self.topic,
            "source": self.source,
            "seed": self.seed,
            "variant_code": self.variant_code,
            "response": self.response,
            "status": self.status,
            "score": self.score,
            "mistake": self.mistake,
            "seconds": round(self.seconds, 3),
            "at": time_text(self.at),
            "hints": self.hints,
            "reviewed": self.reviewed,
            "rating": self.rating,
        }


class CardRecord(Struct, frozen=True):
    """An item's review card: its scheduler state (opaque JSON), when it is due, and when it began."""

    bank: str
    item: str
    topic: str
    state: str
    due: datetime
    created: datetime
    reviews: int = 0
    lapses: int = 0


CardUpdate = Callable[[CardRecord | None], CardRecord | None]
"""Given the item's current card (None if it has none), the card to store (None: leave it)."""


class GroupStats(Struct, frozen=True):
    """Attempts of one bank or one topic of a bank: how many, how well, when last."""

    bank: str
    topic: str | None
    attempts: int
    correct: int
    score: float
    last: datetime | None
    unscored: int = 0
    """Attempts at concept questions (self-rated, never scored), included in ``attempts``."""

    @property
    def scored(self) -> int:
        """The attempts that have a score (all but the concept questions')."""
        return self.attempts - self.unscored

    @property
    def accuracy(self) -> float:
        """The mean score of the scored attempts (partial credit counts as its fraction)."""
        return self.score / self.scored if self.scored else 0.0


class MistakeStats(Struct, frozen=True):
    """How often a named misconception was made, where, and when last."""

    tag: str
    count: int
    topics: tuple[str, ...]
    last: datetime | None


class DayStats(Struct, frozen=True):
    """The attempts of one local calendar day."""

    day: str
    attempts: int
    score: float
    unscored: int = 0
    """Attempts at concept questions (self-rated, never scored), included in ``attempts``."""

    @property
    def accuracy(self) -> float:
        """The mean score of the day's scored attempts."""
        scored = self.attempts - self.unscored
        return self.score / scored if scored else 0.0


def bank_totals(topics: Sequence[GroupStats]) -> list[GroupStats]:
    """Per-bank totals of per-topic statistics (so that `quiz stats` reads the history once)."""
    merged: dict[str, GroupStats] = {}
    for t in topics:
        old = merged.get(t.bank)
        if old is None:
            merged[t.bank] = GroupStats(t.bank, None, t.attempts, t.correct, t.score, t.last, t.unscored)
            continue
        lasts = [x for x in (old.last, t.last) if x is not None]
        merged[t.bank] = GroupStats(
            t.bank,
            None,
            old.attempts + t.attempts,
            old.correct + t.correct,
            old.score + t.score,
            max(lasts) if lasts else None,
            old.unscored + t.unscored,
        )
    return list(merged.values())


__all__ = [
    "Attempt",
    "CardRecord",
    "CardUpdate",
    "DamagedRow",
    "DayStats",
    "GroupStats",
    "MistakeStats",
    "bank_totals",
    "time_from_text",
    "time_text",
    "utc_now",
]
