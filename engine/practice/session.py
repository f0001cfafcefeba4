"""A practice, exam or review session without a terminal: which questions, grading, timing, history, summary.

The command line drives a `Session` (cli/session_loop.py) and draws it (cli/session_view.py); tests
drive it directly. A session is planned first (a `Plan`: items and seeds, nothing generated yet),
then its questions are built one at a time as they are shown, so the first question appears
without waiting for the rest.

Practice and review grade each answer at once and store it, with its FSRS review, in one
transaction. An exam keeps answers (stored as they are given, so a killed process loses none)
but shows nothing until it is submitted; the reviews are applied at submission.
"""

from __future__ import annotations

import re
import shlex
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from attnquiz.engine.answers.kinds import ExplainAnswer, PartsAnswer
from attnquiz.engine.errors import QuizError
from attnquiz.engine.practice import review
from attnquiz.engine.practice.store import Attempt, CardRecord, CardUpdate, Store, StoreError, utc_now
from attnquiz.engine.seeding import derive_seed
from attnquiz.engine.typed_numbers import whole

if TYPE_CHECKING:
    from fsrs import Scheduler

    from attnquiz.engine.answers.kinds import Part
    from attnquiz.engine.bank.loaded import Bank, BankItem
    from attnquiz.engine.grading.grade import Grade
    from attnquiz.engine.variant import Question

Mode = Literal["practice", "exam", "review"]
SolutionPolicy = Literal["always", "wrong", "never"]
Ending = Literal["completed", "submitted", "quit", "interrupted", "time-up", "end-of-input"]
RowStatus = Literal["correct", "partial", "wrong", "unscored", "skipped", "unanswered"]

DEFAULT_COUNT = 10
_BANK_PLACE = re.compile(r"^.*?:\d+: [\w\[\].]+: ")
"""Questions in a practice session when --count is not given (fewer if the selection is smaller)."""


class SelectionError(QuizError):
    """The options select no questions (an unknown topic, no original instances, ...)."""


# ---------------------------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Planned:
    """One question of a plan: an item and the seed of its variant (None: the past paper's own)."""

    entry: BankItem
    seed: int | None
    reason: str = ""
    prebuilt: Question | None = None

    def build(self) -> Question:
        """The question (generated now unless the planner already built it)."""
        if self.prebuilt is not None:
            return self.prebuilt
        return self.entry.original() if self.seed is None else self.entry.question(self.seed)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a session will ask, and how to ask it again."""

    title: str
    mode: Mode
    seed: int
    questions: tuple[Planned, ...]
    banks: tuple[str, ...]
    repeat: str
    bank_ref: str | None = None
    time_limit: float | None = None

    def __len__(self) -> int:
        return len(self.questions)


def format_duration(seconds: float) -> str:
    """A duration as the options write it and the summary shows it: ``20m``, ``1h30m``, ``45s``."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs else ""]
    return "".join(parts) or "0s"


# ASCII digits only (re.ASCII): \d would take any script's digits, and more than int reads.
_DURATION = re.compile(r"^(?:(\d{1,6})h)?(?:(\d{1,6})m(?:in)?)?(?:(\d{1,6})s)?$", re.ASCII)
_CLOCK = re.compile(r"\d{1,6}(:\d{1,2}){1,2}", re.ASCII)


def parse_duration(text: str) -> float:
    """Seconds in ``20m``, ``1h30m``, ``90s``, ``45`` (minutes) or ``1:30:00`` / ``20:00``.

    Raises:
        SelectionError: the text is not a duration, or is zero or longer than a day.
    """
    cleaned = text.strip().lower().replace(" ", "")
    seconds: float | None = None
    minutes = whole(cleaned)
    if minutes is not None:
        seconds = minutes * 60.0
    elif _CLOCK.fullmatch(cleaned):
        parts = [int(p) for p in cleaned.split(":")]
        while len(parts) < 3:
            parts.insert(0, 0)
        seconds = parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
    else:
        match = _DURATION.fullmatch(cleaned)
        if match and any(match.groups()):
            h, m, s = (int(g) if g else 0 for g in match.groups())
            seconds = h * 3600.0 + m * 60.0 + s
    if seconds is None:
        raise SelectionError(
            f"{text[:20]!r} is not a duration: write it like 20m, 1h30m, 90s or 45 (minutes)"
        )
    if not 1 <= seconds <= 24 * 3600:
        raise SelectionError(f"a time limit is from 1s to 24h, not {text[:20]!r}")
    return seconds


def plan_practice(
    bank: Bank,
    *,
    seed: int,
    bank_ref: str | None = None,
    topic: str | None = None,
    items: Sequence[str] = (),
    count: int | None = None,
    original: bool = False,
    exam: bool = False,
    time_limit: float | None = None,
) -> Plan:
    """Choose the questions of a ``quiz run`` session.

    Items are drawn at random (from the session seed) without repeats until every selected item
    has appeared once; a count larger than the selection goes round again with new variants. The
    variant of an item depends only on the session seed, the bank, the item and its round, so the
    same ``--seed`` gives the same questions whatever the count. ``original`` asks the past
    papers' own questions in the bank's order.

    Args:
        bank: The loaded bank.
        seed: The session's seed (printed in the header, so the session can be repeated).
        bank_ref: How the user named the bank (for the repeat command); the bank's name if None.
        topic: Only items of this topic.
        items: Only these items, in this order.
        count: How many questions (default: all originals, or up to `DEFAULT_COUNT`).
        original: The past papers' own instances instead of variants.
        exam: Exam conditions (no feedback until the end).
        time_limit: The exam's time limit in seconds.

    Raises:
        SelectionError: the options select nothing.
        ItemNotFoundError: an item id is not in the bank.
    """
    if count is not None and count < 1:
        raise SelectionError(f"--count must be at least 1, not {count}")
    pool = list(bank.items)
    if topic is not None:
        bank.check_topic(topic)
        pool = [e for e in pool if e.item.topic == topic]
    if items:
        chosen = [bank.get(i) for i in items]
        for entry in chosen:
            if entry.unavailable:  # named: said, not skipped in silence
                raise SelectionError(f"item {entry.id!r} {entry.unavailable}")
        pool = [e for e in chosen if e in pool]
        if not pool:
            raise SelectionError(f"none of the items {', '.join(items)} is in topic {topic!r}")
    else:
        # An item whose optional package (PyTorch) is missing is not offered: its answers could
        # not be run. `quiz list` and `quiz check` say which and why.
        pool = [e for e in pool if not e.unavailable]
        if not pool:
            raise SelectionError(
                f"no item of bank {bank.name!r} can run here: each needs a package that is not installed "
                f"(quiz list {bank.name} says which)"
            )
    if original:
        pool = [e for e in pool if e.has_original]
        if not pool:
            where = f"topic {topic!r} of " if topic else ""
            raise SelectionError(
                f"no item of {where}bank {bank.name!r} has an original instance; drop --original for variants"
            )

    if original:
        picked = pool[:count] if count is not None else pool
        planned = tuple(Planned(e, None) for e in picked)
    else:
        wanted = count if count is not None else (len(pool) if items else min(DEFAULT_COUNT, len(pool)))
        order_rng = np.random.default_rng(derive_seed(seed, bank.name, "order"))
        sequence: list[BankItem] = []
        while len(sequence) < wanted:
            if items:
                sequence.extend(pool)
            else:
                sequence.extend(pool[i] for i in order_rng.permutation(len(pool)))
        rounds: dict[str, int] = {}
        planned_list = []
        for entry in sequence[:wanted]:
            k = rounds.get(entry.id, 0)
            rounds[entry.id] = k + 1
            planned_list.append(Planned(entry, derive_seed(seed, bank.name, entry.id, k)))
        planned = tuple(planned_list)

    mode: Mode = "exam" if exam or time_limit is not None else "practice"
    words = ["quiz", "run", bank_ref or bank.name]
    if topic:
        words += ["--topic", topic]
    for item_id in items:
        words += ["--item", item_id]
    if count is not None:
        words += ["--count", str(count)]
    if original:
        words.append("--original")
    if mode == "exam":
        words.append("--exam")
    if time_limit is not None:
        words += ["--time", format_duration(time_limit)]
    if not original:
        words += ["--seed", str(seed)]
    return Plan(
        # A bank from QUIZ_PATH or a path says which file it is (it may share a built-in bank's name).
        title=bank.title if bank.origin in {"built-in", ""} else f"{bank.title}  ({bank.path})",
        mode=mode,
        seed=seed,
        questions=planned,
        banks=(bank.name,),
        repeat=shlex.join(words),
        bank_ref=bank_ref or bank.name,
        time_limit=time_limit,
    )


def plan_review(
    banks: Sequence[Bank],
    store: Store | None,
    *,
    seed: int,
    now: datetime | None = None,
    limit: int = review.REVIEW_LIMIT,
    new_per_day: int = review.NEW_PER_DAY,
) -> Plan:
    """Choose the questions of a ``quiz review`` session: what is due, new items mixed in, fresh variants.

    Without a store (no history) every item is new.
    """
    moment = now or utc_now()
    cards = store.cards([b.name for b in banks]) if store is not None else []
    new_today = store.cards_created_since(review.start_of_day(moment)) if store is not None else 0
    queue = review.review_queue(
        banks, cards, now=moment, new_today=new_today, limit=limit, new_per_day=new_per_day
    )
    planned = []
    for slot in queue:
        recent = store.recent_seeds(slot.bank, slot.entry.id) if store is not None else []
        item_seed = derive_seed(seed, slot.bank, slot.entry.id)
        try:
            question = review.fresh_question(slot.entry, item_seed, recent)
        except Exception:  # a variant that cannot be built: the session reports it
            planned.append(Planned(slot.entry, item_seed, slot.reason))
            continue
        planned.append(Planned(slot.entry, question.seed, slot.reason, question))
    names = tuple(b.name for b in banks)
    title = banks[0].title if len(banks) == 1 else "Banks " + ", ".join(names)
    return Plan(
        title=title,
        mode="review",
        seed=seed,
        questions=tuple(planned),
        banks=names,
        repeat="quiz review",
    )


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Slot:
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


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One question in the end-of-session table."""

    position: int
    source: str
    item: str
    topic: str
    status: RowStatus
    score: float
    mistake: str | None
    seconds: float
    variant_code: str
    response: str
    answer: str
    rating: str | None = None
    """A concept question's self-rating (again, hard, good, easy), None while unrated."""
    concept: bool = False
    """Whether the question is a concept question: never in the score, answered, skipped or not."""

    @property
    def scored(self) -> bool:
        """Whether the row counts towards the score (a concept question never does, even skipped)."""
        return not self.concept and self.status != "unscored"

    def to_json(self) -> dict[str, Any]:
        """The row as the JSON summary shows it."""
        return {
            "rating": self.rating,
            "position": self.position,
            "source": self.source,
            "item": self.item,
            "topic": self.topic,
            "status": self.status,
            "score": round(self.score, 4),
            "mistake": self.mistake,
            "seconds": round(self.seconds, 1),
            "variant_code": self.variant_code,
            "response": self.response,
            "answer": self.answer,
        }


@dataclass(frozen=True, slots=True)
class Summary:
    """The end of a session: score, time, a row per question, what to revisit, and what to type next."""

    title: str
    mode: Mode
    seed: int
    planned: int
    rows: tuple[SummaryRow, ...]
    score: float
    out_of: int
    seconds: float
    ended: Ending
    revisit: tuple[str, ...]
    mistakes: tuple[str, ...]
    repeat: str
    follow_up: str | None
    history: str | None
    stored: int
    unscored: int = 0
    """Concept questions answered: not in the score (``out_of`` counts the scored questions only, so
    a concept question skipped or left unanswered is in neither)."""
    due_now: int | None = None
    """Items of the session's banks due for review now (None: no history to tell)."""
    next_due: datetime | None = None
    """When the next review falls due, when nothing is due now (None: unknown, or nothing scheduled)."""
    concepts: int = 0
    """Concept questions among the rows, answered or not: none is in the score."""

    @property
    def correct(self) -> int:
        """Questions answered correctly."""
        return sum(r.status == "correct" for r in self.rows)

    def to_json(self) -> dict[str, Any]:
        """The summary object that ``--json`` prints last."""
        return {
            "type": "summary",
            "title": self.title,
            "mode": self.mode,
            "seed": self.seed,
            "ended": self.ended,
            "planned": self.planned,
            "asked": len(self.rows),
            "score": round(self.score, 4),
            "out_of": self.out_of,
            "correct": self.correct,
            "unscored": self.unscored,
            "seconds": round(self.seconds, 1),
            "rows": [r.to_json() for r in self.rows],
            "revisit": list(self.revisit),
            "mistakes": list(self.mistakes),
            "repeat": self.repeat,
            "follow_up": self.follow_up,
            "history": self.history,
            "stored": self.stored,
            "due_now": self.due_now,
            "next_due": self.next_due.isoformat() if self.next_due is not None else None,
        }


class Session:
    """A session in progress. Practice/review: `answer` grades at once. Exam: `answer` saves; `submit` grades.

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
        self.on_change: Callable[[Session], None] | None = None
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

    def _changed(self) -> None:
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

    # -- timing ---------------------------------------------------------------------------------

    def _stop_timer(self) -> None:
        if self._visit_started is not None and self.index is not None:
            self.slots[self.index].seconds += self._clock() - self._visit_started
        self._visit_started = None

    def show(self) -> Question | None:
        """The current question, starting its timer (call when it is put on screen).

        A question whose variant cannot be built is passed over (see `take_warnings`).
        """
        while True:
            slot = self.current
            if slot is None:
                return None
            question = self._build(slot)
            if question is not None:
                break
            self._pass_broken()
        if self._visit_started is None:
            self._visit_started = self._clock()
        return question

    def _pass_broken(self) -> None:
        """Move past the current slot, whose variant cannot be built."""
        if not self.exam:
            self._advance_practice()
            return
        assert self.index is not None
        after = self.slots[self.index + 1 :] + self.slots[: self.index]
        self.index = next((s.position - 1 for s in after if s.broken is None), None)

    # -- answering ------------------------------------------------------------------------------

    def hint(self) -> str:
        """The current question's hint (Markdown), counted against an Easy rating; "" if it has none."""
        slot = self.current
        if slot is None:
            return ""
        slot.hints += 1
        return self.question(slot).variant.hint

    def next_hint(self) -> tuple[str, int, int]:
        """The current question's next hint, in steps: (Markdown, its number, how many there are).

        The first is the item's hint; each one after it is the next step of the worked solution, the
        last step excepted (it states the answer). Every hint shown counts against an Easy rating.
        ("", n, n) when every hint has been given (the count is then unchanged).
        """
        slot = self.current
        if slot is None:
            return "", 0, 0
        steps = hint_steps(self.question(slot))
        if slot.hints >= len(steps):
            return "", len(steps), len(steps)
        slot.hints += 1
        return steps[slot.hints - 1], slot.hints, len(steps)

    def rating_intervals(self, slot: Slot) -> dict[str, timedelta]:
        """How long until the item comes back after each rating the student may give now (again, hard,
        good, easy), from its review card: a concept answer waiting for its rating, or a scored answer
        that may be re-rated. Empty without history, or when there is nothing to rate."""
        if self.store is None or slot.question is None or slot.grade is None:
            return {}
        question = slot.question
        if slot.awaiting_rating:
            try:
                current = self.store.card(question.bank, question.item_id)
            except StoreError:
                return {}
        elif self.can_rerate(slot):
            current = slot.card_before
        else:
            return {}
        return review.intervals(
            current,
            bank=question.bank,
            item=question.item_id,
            topic=question.topic,
            when=self._now(),
            fsrs_scheduler=self._scheduler,
        )

    def another(self, position: int) -> Slot:
        """A fresh variant of question ``position``'s item, asked next ("another like this"), in practice
        or review: the session goes on with it, even after its last question.

        Raises:
            ValueError: an exam (feedback waits for submission), no such question, or it was never asked.
        """
        if self.exam:
            raise ValueError("an exam asks only its own questions")
        if not 1 <= position <= len(self.slots) or self.slots[position - 1].question is None:
            raise ValueError(f"question {position} has not been asked")
        asked = self.slots[position - 1]
        entry = asked.planned.entry
        before = asked.question
        assert before is not None
        question = None
        for attempt in range(8):
            candidate = entry.question(
                derive_seed(self.plan.seed, entry.bank, entry.id, "another", position, attempt)
            )
            question = candidate
            if candidate.code != before.code:
                break  # an item with few variants may give the same one back: tried again, then taken
        assert question is not None
        # Asked right after the question it is like: the slots after it (none asked yet in practice)
        # move down one place. The time of a question already on screen stops counting here.
        self._stop_timer()
        at = self.index if self.index is not None else len(self.slots)
        slot = Slot(at + 1, Planned(entry, question.seed, "another like this", question), question)
        self.slots.insert(at, slot)
        for later in self.slots[at + 1 :]:
            later.position += 1
        self.index = at
        if self.ended is not None:
            # The last question's answer ended the session: it goes on with this one.
            self.ended = None
            self._finished_at = None
            self._due_at_end = None
        return slot

    def answer(self, response: str) -> Grade:
        """Grade a response to the current question.

        An invalid response (one that cannot be read) changes nothing and is not stored. In
        practice and review, a readable response is stored with its review and the session moves
        on. In an exam it is stored without review (so that it survives a crash) and the session
        moves to the next question; answering again replaces it.
        """
        result = self._answered(response)
        if result.counts:
            self._changed()
        return result

    def _answered(self, response: str) -> Grade:
        from attnquiz.engine.grading.grade import grade

        slot = self.current
        if slot is None:
            raise RuntimeError("the session has no current question")
        question = self.question(slot)
        if question.variant.parts:
            return self._answer_part(slot, question, response)
        result = grade(question, response)
        if not result.counts:
            return result
        if isinstance(question.answer, ExplainAnswer) and not self.exam:
            return self._await_rating(slot, response, result)
        return self._accept(slot, response, result)

    def _await_rating(self, slot: Slot, response: str, result: Grade) -> Grade:
        """Keep a concept answer (stored at once, so that an interrupted session keeps the text) and
        stay on the question until the student rates it (`rate`)."""
        self._stop_timer()
        slot.response = response
        slot.grade = result
        slot.skipped = False
        self._record(slot, review_now=False)
        return result

    @property
    def awaiting_rating(self) -> bool:
        """Whether the current question is a concept question answered and waiting for its rating."""
        slot = self.current
        return slot is not None and slot.awaiting_rating

    def rate(self, rating: str) -> Grade:
        """The student's own rating (again, hard, good or easy) of their answer to the current concept
        question: stored with the answer, it schedules the item's review; the session moves on.

        Raises:
            RuntimeError: the current question is not a concept question waiting for its rating.
            ValueError: not one of the four ratings.
        """
        slot = self.current
        if slot is None or slot.grade is None or not slot.awaiting_rating:
            raise RuntimeError("no concept answer is waiting for a rating")
        slot.grade = slot.grade.rated(rating)
        self._record(slot, review_now=True)
        self._advance_practice()
        return slot.grade

    def pending_part(self, slot: Slot) -> Part | None:
        """The part of a question in parts that the next response answers (None: not in parts)."""
        question = self.question(slot)
        parts = question.variant.parts
        return parts[len(slot.part_responses) % len(parts)] if parts else None

    def part_in_progress(self, slot: Slot) -> bool:
        """Whether some but not all parts of the slot's question in parts have been answered."""
        parts = self.question(slot).variant.parts
        return 0 < len(slot.part_responses) < len(parts)

    def _answer_part(self, slot: Slot, question: Question, response: str) -> Grade:
        """Grade the response to the next part, with errors carried forward from the parts before it.

        A readable response is kept and the next part is asked; after the last part the question is
        graded as a whole (every part again, together) and stored like any answer. Answering a
        question in parts again (an exam's revisit) starts over at (a).
        """
        from attnquiz.engine.grading.grade import Grade, grade_parts

        parts = question.variant.parts
        answer = question.answer
        assert isinstance(answer, PartsAnswer)
        if len(slot.part_responses) >= len(parts):
            slot.earlier_parts = list(slot.part_responses)
            slot.part_responses = []
        index = len(slot.part_responses)
        trial = [*slot.part_responses, response] + [""] * (len(parts) - index - 1)
        part = grade_parts(answer, trial).parts[index]
        if not part.grade.counts:
            shown = part.grade
            return Grade(shown.status, shown.score, shown.feedback, shown.mistake, shown.read_as, (part,))
        slot.part_responses.append(response)
        from attnquiz.engine.grading.grade import PART_SEPARATOR

        if index + 1 < len(parts) and self.exam and slot.answered and slot.earlier_parts:
            # An exam's revision of a question answered whole: each part revised replaces that part
            # at once, the later parts keeping their earlier answers until they are answered again,
            # so that leaving the question part-way never grades the old answer as if nothing had
            # been revised (`kept_parts` says which still stand).
            merged = [*slot.part_responses, *slot.earlier_parts[index + 1 :]]
            self._stop_timer()
            slot.response = f" {PART_SEPARATOR} ".join(merged)
            slot.grade = grade_parts(answer, merged)
            self._record(slot, review_now=False)
            shown = part.grade
            return Grade(shown.status, shown.score, shown.feedback, shown.mistake, shown.read_as, (part,))
        if index + 1 < len(parts):
            # Stored at once, as the parts answered so far (the rest blank), so that an interrupted
            # session keeps them; the whole question's attempt replaces it after the last part.
            given = [*slot.part_responses, *[""] * (len(parts) - index - 1)]
            self._record_partial(slot, f" {PART_SEPARATOR} ".join(given), grade_parts(answer, given))
            shown = part.grade
            return Grade(shown.status, shown.score, shown.feedback, shown.mistake, shown.read_as, (part,))
        whole = grade_parts(answer, slot.part_responses)
        return self._accept(slot, f" {PART_SEPARATOR} ".join(slot.part_responses), whole)

    def kept_parts(self, slot: Slot) -> list[tuple[str, str]]:
        """An exam question in parts being revised: the later parts (label, response) whose earlier
        answers still stand until they are answered again (empty when none is being revised)."""
        if not self.exam or not slot.answered or not self.part_in_progress(slot):
            return []
        parts = self.question(slot).variant.parts
        done = len(slot.part_responses)
        return [(p.label, r) for p, r in zip(parts[done:], slot.earlier_parts[done:], strict=False)]

    def _left_in_parts(self, slot: Slot) -> tuple[str, Grade]:
        """A question in parts left part-way (skipped, or the session ended): its response and grade.

        One rule everywhere: once a part is answered, the question is an attempt graded with the
        parts not answered as blank (they earn nothing). The history stores it so as soon as (a) is
        answered; the summary, the stats and the review schedule count that same attempt.
        """
        from attnquiz.engine.grading.grade import PART_SEPARATOR, grade_parts

        question = self.question(slot)
        answer = question.answer
        assert isinstance(answer, PartsAnswer)
        given = [*slot.part_responses, *[""] * (len(answer.parts) - len(slot.part_responses))]
        return f" {PART_SEPARATOR} ".join(given), grade_parts(answer, given, unanswered="Not answered.")

    def _record_partial(self, slot: Slot, response: str, result: Grade) -> None:
        """Store a question in parts answered in part, without a review (the slot is not answered yet)."""
        if self.store is None:
            return
        try:
            self.store.record(self._attempt(slot, reviewed=False, grade=result, response=response))
        except StoreError as exc:
            self._warnings.append(f"{exc}; the session goes on without saving history")
            self.store = None
            return
        self._stored.add(slot.position)

    def _accept(self, slot: Slot, response: str, result: Grade) -> Grade:
        """Keep a readable response's grade, store it, and move on (the practice or exam way)."""
        self._stop_timer()
        slot.response = response
        slot.grade = result
        slot.skipped = False
        if self.exam:
            self._record(slot, review_now=False)
            self._advance_exam()
        else:
            self._record(slot, review_now=True)
            self._advance_practice()
        return result

    def skip(self) -> None:
        """Move on without answering (in an exam, the question stays open for a later visit)."""
        slot = self.current
        if slot is None:
            return
        if not self.exam and slot.part_responses and self.part_in_progress(slot):
            # Left after (a): the parts answered count, the rest are unanswered (see `_left_in_parts`).
            self._accept(slot, *self._left_in_parts(slot))
            return
        self._stop_timer()
        if self.exam:
            self._advance_exam()
            self._changed()
        else:
            slot.skipped = True
            self._record_skip(slot)
            self._advance_practice()

    def _record_skip(self, slot: Slot) -> None:
        """Bring a skipped item's review forward to now (no attempt, no lapse), so `quiz review` asks it."""
        if self.store is None or slot.question is None:
            return
        question = slot.question
        update = review.skip_update(
            bank=question.bank, item=question.item_id, topic=question.topic, when=self._now()
        )
        try:
            card = self.store.update_card(question.bank, question.item_id, update)
        except StoreError as exc:
            self._warnings.append(f"{exc}; the session goes on without saving history")
            self.store = None
            return
        slot.next_due = card.due if card is not None else None

    def _advance_practice(self) -> None:
        assert self.index is not None
        self.index += 1
        if self.index >= len(self.slots):
            self.index = None
            self.finish("completed")

    # -- exam navigation ------------------------------------------------------------------------

    def unanswered(self) -> list[int]:
        """Positions (1-based) of the exam's questions without an answer (those left out excepted)."""
        return [s.position for s in self.slots if not s.answered and s.broken is None]

    def go(self, position: int) -> None:
        """Visit question ``position`` (1-based) of an exam.

        Raises:
            ValueError: no such question.
        """
        if not 1 <= position <= len(self.slots):
            raise ValueError(f"there is no question {position}: choose 1 to {len(self.slots)}")
        if self.slots[position - 1].broken is not None:
            raise ValueError(f"question {position} was left out: its variant could not be built")
        self._stop_timer()
        self.index = position - 1
        self._changed()

    def next(self) -> None:
        """The exam's next question (from the last, the first), passing over those left out."""
        self._step(+1)

    def back(self) -> None:
        """The exam's previous question (from the first, the last), passing over those left out."""
        self._step(-1)

    def _step(self, direction: int) -> None:
        position = self._position()
        for _ in self.slots:
            position = (position - 1 + direction) % len(self.slots) + 1
            if self.slots[position - 1].broken is None:
                self.go(position)
                return

    def _position(self) -> int:
        return self.index + 1 if self.index is not None else len(self.slots)

    def _advance_exam(self) -> None:
        """After an answer: the next question if there is one, else the first unanswered, else none."""
        assert self.index is not None
        if self.index + 1 < len(self.slots):
            self.index += 1
            return
        remaining = self.unanswered()
        self.index = remaining[0] - 1 if remaining else None

    # -- ending ---------------------------------------------------------------------------------

    def finish(self, ending: Ending) -> Summary:
        """End the session (an exam is submitted: its answers are reviewed) and summarise it.

        Safe to call more than once: the first ending is kept.
        """
        if self.ended is None:
            self._stop_timer()
            self._finished_at = self._clock()
            for slot in self.slots:
                # (A question skipped part-way in practice was graded then; one answered whole keeps
                # its grade: an exam's revision of it is the revision's business.)
                pending = slot.grade is None and bool(slot.part_responses) and slot.broken is None
                if pending and self.part_in_progress(slot):
                    # A question in parts left part-way counts as answered with the rest blank.
                    slot.response, slot.grade = self._left_in_parts(slot)
                    slot.skipped = False
                    if not self.exam:
                        self._record(slot, review_now=True)
            if self.exam:
                for slot in self.slots:
                    if slot.answered:
                        self._record(slot, review_now=True)
            for slot in self.slots:
                if slot.awaiting_rating:
                    # A concept answer never rated (an exam's, or a session quit before rating): its
                    # text is kept, and the item comes back in `quiz review` to be rated.
                    self._record_skip(slot)
            self.ended = ending
            # What is due is read once, at the end: the summary is the same however often it is
            # drawn, and after the history is closed.
            self._due_at_end = self._due()
            self._changed()
        return self.summary()

    def _attempt(
        self, slot: Slot, *, reviewed: bool, grade: Grade | None = None, response: str | None = None
    ) -> Attempt:
        """The slot's attempt (``grade`` and ``response``: a question in parts answered in part)."""
        question = self.question(slot)
        graded = grade if grade is not None else slot.grade
        assert graded is not None
        mistake = graded.mistake
        return Attempt(
            session=self.id,
            position=slot.position,
            mode=self.plan.mode,
            bank=question.bank,
            item=question.item_id,
            topic=question.topic,
            source=question.source,
            seed=question.seed,
            variant_code=question.code,
            response=slot.response if response is None else response,
            status=graded.status,
            score=graded.score,
            mistake=mistake.tag if mistake is not None else None,
            seconds=slot.seconds,
            at=self._now(),
            hints=slot.hints,
            reviewed=reviewed,
            rating=graded.rating,
        )

    def _record(self, slot: Slot, *, review_now: bool) -> None:
        """Store the attempt (and its review when ``review_now``); on failure, go on without history."""
        question = self.question(slot)
        assert slot.grade is not None
        update = None
        if review_now:
            rating = review.rate(
                slot.grade,
                answer=question.answer,
                seconds=slot.seconds if self.timed else None,
                hinted=slot.hints > 0,
            )
            if rating is not None:
                slot.rating = review.rating_name(rating)
                update = self._noting_due(
                    slot,
                    self._keeping_before(
                        slot,
                        review.card_update(
                            bank=question.bank,
                            item=question.item_id,
                            topic=question.topic,
                            rating=rating,
                            when=self._now(),
                            seconds=slot.seconds,
                            fsrs_scheduler=self._scheduler,
                        ),
                    ),
                )
        if self.store is None:
            return
        try:
            self.store.record(self._attempt(slot, reviewed=False), update)
        except StoreError as exc:
            self._warnings.append(f"{exc}; the session goes on without saving history")
            self.store = None
            return
        self._stored.add(slot.position)

    def can_rerate(self, slot: Slot) -> bool:
        """Whether the student may rate a scored answer themselves (`rerate`): a practice or review
        answer whose card has been scheduled, in a session with history."""
        if self.exam or self.store is None or not slot.reviewed or slot.grade is None:
            return False
        # Not once the same item has been reviewed again later in the session (a count beyond the
        # bank's items): rating from the card before would undo that later review.
        item = slot.planned.entry.id
        later = self.slots[slot.position :]
        return slot.grade.status != "unscored" and not any(
            s.reviewed and s.planned.entry.id == item for s in later
        )

    def rerate(self, position: int, rating: str) -> Grade:
        """The student's own rating of a scored answer, in place of the one its grade earned: a lucky
        guess (``again``) is not scheduled as Easy.

        The item's review is scheduled again from its card as it was before this answer (so the
        answer counts once), and the attempt keeps the rating; its score is unchanged.

        Raises:
            ValueError: no such question, nothing to re-rate there, or not one of the four ratings.
        """
        if not 1 <= position <= len(self.slots):
            raise ValueError(f"there is no question {position}")
        slot = self.slots[position - 1]
        if not self.can_rerate(slot):
            raise ValueError(f"question {position} has no scheduled answer to rate")
        assert slot.grade is not None
        assert self.store is not None
        fsrs_rating = review.self_rating(rating)  # ValueError for anything else
        question = self.question(slot)
        before = slot.card_before

        def again_from_before(_current: CardRecord | None) -> CardRecord:
            return review.next_card(
                before,
                bank=question.bank,
                item=question.item_id,
                topic=question.topic,
                rating=fsrs_rating,
                when=self._now(),
                seconds=slot.seconds,
                fsrs_scheduler=self._scheduler,
            )

        slot.grade = replace(slot.grade, rating=rating)
        slot.rating = review.rating_name(fsrs_rating)
        try:
            self.store.record(self._attempt(slot, reviewed=False), self._noting_due(slot, again_from_before))
        except StoreError as exc:
            self._warnings.append(f"{exc}; the session goes on without saving history")
            self.store = None
        if self._due_at_end is not None:  # rated after the last answer ended the session
            self._due_at_end = self._due()
        return slot.grade

    @staticmethod
    def _keeping_before(slot: Slot, update: CardUpdate) -> CardUpdate:
        """``update``, keeping on the slot the card it replaces (for `rerate`) and that it ran."""

        def kept(current: CardRecord | None) -> CardRecord | None:
            slot.card_before = current
            new = update(current)
            slot.reviewed = new is not None
            return new

        return kept

    @staticmethod
    def _noting_due(slot: Slot, update: CardUpdate) -> CardUpdate:
        """``update``, noting on the slot when the card it stores is due (told to the student)."""

        def noted(current: CardRecord | None) -> CardRecord | None:
            new = update(current)
            if new is not None:
                slot.next_due = new.due
            return new

        return noted

    @property
    def stored(self) -> int:
        """How many of the session's questions have an attempt in the history."""
        return len(self._stored)

    # -- summary --------------------------------------------------------------------------------

    def rows(self) -> list[SummaryRow]:
        """The summary's rows: every question of an exam; the questions reached in practice."""
        shown = self.slots if self.exam else [s for s in self.slots if s.answered or s.skipped]
        rows = []
        for slot in shown:
            question = self._build(slot)
            if question is None:
                continue  # left out: it was never asked
            mistake = slot.grade.mistake if slot.grade is not None else None
            rows.append(
                SummaryRow(
                    position=slot.position,
                    source=question.source,
                    item=question.item_id,
                    topic=question.topic,
                    status=slot.status,
                    score=slot.score,
                    mistake=mistake.tag if mistake is not None else None,
                    seconds=slot.seconds,
                    variant_code=question.code,
                    response=slot.response,
                    answer=question.answer.format(),
                    rating=slot.grade.rating if slot.grade is not None else None,
                    concept=isinstance(question.answer, ExplainAnswer),
                )
            )
        return rows

    def summary(self) -> Summary:
        """The summary of the session so far."""
        rows = self.rows()
        scored = [row for row in rows if row.scored]
        by_topic: dict[str, list[float]] = {}
        for row in scored:
            # Only what was tried says what to revisit: an exam question left unanswered says nothing.
            if row.status != "unanswered":
                by_topic.setdefault(row.topic, []).append(row.score)
        weak = [t for t, scores in by_topic.items() if min(scores) < 1.0]
        weak.sort(key=lambda t: sum(by_topic[t]) / len(by_topic[t]))
        mistakes = tuple(dict.fromkeys(r.mistake for r in rows if r.mistake is not None))
        due_now, next_due = self._due_at_end if self._due_at_end is not None else self._due()
        return Summary(
            title=self.plan.title,
            mode=self.plan.mode,
            seed=self.plan.seed,
            planned=len(self.slots),
            rows=tuple(rows),
            score=sum(r.score for r in scored),
            out_of=len(scored),
            seconds=self.elapsed(),
            ended=self.ended or "quit",
            revisit=tuple(weak),
            mistakes=mistakes,
            repeat=self._repeat(),
            follow_up=self._follow_up(rows, due_now),
            history=self.history,
            stored=self.stored,
            unscored=sum(row.status == "unscored" for row in rows),
            concepts=sum(row.concept for row in rows),
            due_now=due_now,
            next_due=next_due,
        )

    def _repeat(self) -> str:
        """The command that runs the session again. An exam handed in has shown its answers and worked
        solutions: its seed would ask the very questions just solved, so it gets fresh variants."""
        if not self.exam or self.ended is None:
            return self.plan.repeat
        words = shlex.split(self.plan.repeat)
        if "--seed" in words:
            at = words.index("--seed")
            del words[at : at + 2]
        return shlex.join(words)

    def _due(self) -> tuple[int | None, datetime | None]:
        """How many of the banks' items are due now, and (when none is) when the next one falls due."""
        if self.store is None:
            return None, None
        try:
            cards = self.store.cards(list(self.plan.banks))
        except (StoreError, ValueError):  # a closed or unreadable history: nothing to tell
            return None, None
        moment = self._now()
        due = sum(review.is_due(card, moment) for card in cards)
        later = [card.due for card in cards if not review.is_due(card, moment)]
        return due, (min(later) if later and not due else None)

    def _follow_up(self, rows: Sequence[SummaryRow], due_now: int | None = None) -> str | None:
        """The command that practises what went wrong, with fresh variants (None: nothing went wrong,
        or only ``quiz review`` would practise it and nothing is due)."""
        # A concept question counts as missed when the student rated their answer "again"; an exam
        # question left unanswered was not missed (nothing was tried).
        missed = list(
            dict.fromkeys(
                r.item
                for r in rows
                if r.status != "unanswered" and (r.score < 1.0 if r.scored else r.rating == "again")
            )
        )
        if not missed:
            return None
        if self.plan.bank_ref is None or len(missed) > 4:
            return None if due_now == 0 else "quiz review"
        words = ["quiz", "run", self.plan.bank_ref]
        for item in missed:
            words += ["--item", item]
        return shlex.join(words)


def hint_steps(question: Question) -> list[str]:
    """The hints of a question, in the order they are given: its hint, then the steps of its worked
    solution but the last (which states the answer). A question in parts has its hint only: its
    steps run through every part, later ones included."""
    steps = [question.variant.hint] if question.variant.hint else []
    if not question.variant.parts and not isinstance(question.answer, ExplainAnswer):
        steps += list(question.variant.solution[:-1])
    return steps


def graded_json(session: Session, slot: Slot, result: Grade, response: str) -> dict[str, Any]:
    """The object ``quiz run --json`` prints for one response: the grade and the question it answers."""
    question = session.question(slot)
    return {
        "type": "grade",
        "position": slot.position,
        "bank": question.bank,
        "item": question.item_id,
        "source": question.source,
        "topic": question.topic,
        "seed": question.seed,
        "variant_code": question.code,
        "response": response,
        **result.to_json(),
        "seconds": round(slot.seconds, 1) if result.counts else None,
        "review": slot.rating,
        "next_due": slot.next_due.isoformat() if slot.next_due is not None and result.counts else None,
    }


__all__ = [
    "DEFAULT_COUNT",
    "Ending",
    "Mode",
    "Plan",
    "Planned",
    "SelectionError",
    "Session",
    "Slot",
    "SolutionPolicy",
    "Summary",
    "SummaryRow",
    "format_duration",
    "graded_json",
    "hint_steps",
    "parse_duration",
    "plan_practice",
    "plan_review",
]
