"""A running session's state: its slots, where it is, its clock and time limit, questions built as shown.

`SessionState` is the first layer of `attnquiz.engine.practice.session.Session`: what the session holds
and the questions it asks, without answering, history or summary (the layers above it).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Self

from msgspec import Struct, field

from attnquiz.engine.practice.history_records import CardRecord, utc_now

if TYPE_CHECKING:
    from fsrs import Scheduler

    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.practice.planning import Plan, Planned
    from attnquiz.engine.practice.store import Store
    from attnquiz.engine.variant import Question

Ending = Literal["completed", "submitted", "quit", "interrupted", "time-up", "end-of-input"]
RowStatus = Literal["correct", "partial", "wrong", "unscored", "skipped", "unanswered"]

_BANK_PLACE = re.compile(r"^.*?:\d+: [\w\[\].]+: ")


class Slot(Struct):
    """One question of a running session and what happened to it."""

    position: int
    planned: Planned
    question: Question | None = None
    response: str = ""
    grade: Grade | None = None
    skipped: bool = False
    seconds: float = 0.0
    hints: int = 0
    rating: str | None = None
    next_due: datetime | None = None
    """When the item comes back for review (after its attempt or skip was stored)."""
    broken: str | None = None
    """Why the slot's variant could not be built (the session left it out), or None."""
    part_responses: list[str] = field(default_factory=list)
    """A question in parts: the readable responses given so far to its parts, in order."""
    earlier_parts: list[str] = field(default_factory=list)
    """A question in parts answered whole and being answered again (an exam's revisit): the whole
    answer's responses, whose later parts stand until they are revised."""
    card_before: CardRecord | None = None
    """The item's review card as it was before this slot's answer was reviewed (`Session.rerate`
    schedules the review again from it)."""
    reviewed: bool = False
    """Whether this slot's answer has been reviewed (its card scheduled), so that it can be re-rated."""

    @property
    def answered(self) -> bool:
        """Whether a readable answer was given."""
        return self.grade is not None

    @property
    def status(self) -> RowStatus:
        """How the question went (in an exam, only meaningful after submission)."""
        if self.grade is not None:
            status = self.grade.status
            if status in ("correct", "partial", "wrong", "unscored"):
                return status
        return "skipped" if self.skipped else "unanswered"

    @property
    def score(self) -> float:
        """The score earned (0 when unanswered)."""
        return self.grade.score if self.grade is not None else 0.0

    @property
    def awaiting_rating(self) -> bool:
        """Whether a concept answer was given and the student has not yet rated it."""
        return self.grade is not None and self.grade.status == "unscored" and self.grade.rating is None


class SessionState:
    """What a session holds as it runs: its plan, its slots, the current one, its clock and its warnings.

    Args:
        plan: What to ask.
        store: Where attempts go; None runs without history.
        clock: Monotonic seconds (for durations and the exam's time limit).
        now: The wall-clock time in UTC (for the stored timestamps and the reviews).
        session_id: Identifies the session's attempts in the history (random if None).
        fsrs_scheduler: The FSRS scheduler (the default one if None).
        timed: Whether response times mean something (a person answering at a terminal); piped
            answers arrive all at once, so a correct one is never rated Easy for its speed.
    """

    def __init__(
        self,
        plan: Plan,
        *,
        store: Store | None = None,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = utc_now,
        session_id: str | None = None,
        fsrs_scheduler: Scheduler | None = None,
        timed: bool = True,
    ) -> None:
        self.plan = plan
        self.timed = timed
        self.store = store
        self.history = str(store.path) if store is not None else None
        self._clock = clock
        self._now = now
        self.id = session_id or uuid.uuid4().hex
        self._scheduler = fsrs_scheduler
        self.slots = [Slot(i + 1, p) for i, p in enumerate(plan.questions)]
        self.index: int | None = 0 if self.slots else None
        self.started = clock()
        self.deadline = self.started + plan.time_limit if plan.time_limit is not None else None
        self.ended: Ending | None = None
        self._stored: set[int] = set()
        self._warnings: list[str] = []
        self._visit_started: float | None = None
        self._finished_at: float | None = None
        self._due_at_end: tuple[int | None, datetime | None] | None = None
        self.on_change: Callable[[Self], None] | None = None
        """Called after every change an exam must not lose (an answer, a move, the end): what keeps
        its state on disk for resuming (`attnquiz.engine.practice.exam_state`)."""

    # -- state ----------------------------------------------------------------------------------

    @property
    def exam(self) -> bool:
        """Whether feedback waits until submission."""
        return self.plan.mode == "exam"

    @property
    def finished(self) -> bool:
        """Whether the session has ended (no more answers are taken)."""
        return self.ended is not None

    @property
    def current(self) -> Slot | None:
        """The question being asked, or None when there is none left (or the session has ended)."""
        if self.ended is not None or self.index is None:
            return None
        return self.slots[self.index]

    def question(self, slot: Slot) -> Question:
        """The slot's question, generated on first use (for a slot already shown, or known to build)."""
        if slot.question is None:
            slot.question = slot.planned.build()
        return slot.question

    def _build(self, slot: Slot) -> Question | None:
        """The slot's question, or None when its variant cannot be built (said once in a warning).

        A generator or a formula that fails for one rare seed is a fault of the bank, not of the
        student's session: that question is left out and the session goes on.
        """
        if slot.broken is not None:
            return None
        if slot.question is None:
            try:
                slot.question = slot.planned.build()
            except Exception as exc:  # any failure of bank code or data, reported below
                entry = slot.planned.entry
                seed = slot.planned.seed
                text = str(exc).strip()
                # The bank's file:line: field prefix is for its author, who gets the command below.
                detail = _BANK_PLACE.sub("", text.splitlines()[0]) if text else type(exc).__name__
                slot.broken = detail
                variant = f"--seed {seed}" if seed is not None else "--original"
                self._warnings.append(
                    f"question {slot.position} is left out, its variant cannot be built: {detail}. "
                    f"Please report it: quiz show {self.plan.bank_ref or entry.bank} {entry.id} {variant}"
                )
                return None
        return slot.question

    def note_warning(self, message: str) -> None:
        """Add a warning for the front end to show (see `take_warnings`)."""
        self._warnings.append(message)

    def _changed(self: Self) -> None:
        """Tell `on_change` that the exam's state changed."""
        if self.exam and self.on_change is not None:
            self.on_change(self)

    def take_warnings(self) -> list[str]:
        """Warnings not yet shown (e.g. that history could not be written), cleared once taken."""
        warnings, self._warnings = self._warnings, []
        return warnings

    def remaining(self) -> float | None:
        """Seconds left in a timed exam (never negative), None when untimed."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self._clock())

    def overtime(self) -> float:
        """Seconds since a timed exam's time ran out (0 while it has not, or when untimed)."""
        if self.deadline is None:
            return 0.0
        return max(0.0, self._clock() - self.deadline)

    @property
    def time_up(self) -> bool:
        """Whether a timed exam has run out of time."""
        remaining = self.remaining()
        return remaining is not None and remaining <= 0

    def elapsed(self) -> float:
        """Seconds since the session began (until it ended)."""
        end = self._finished_at if self._finished_at is not None else self._clock()
        return end - self.started

    def _stop_timer(self) -> None:
        if self._visit_started is not None and self.index is not None:
            self.slots[self.index].seconds += self._clock() - self._visit_started
        self._visit_started = None


__all__ = [
    "Ending",
    "RowStatus",
    "SessionState",
    "Slot",
]
