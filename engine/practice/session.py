"""A practice, exam or review session without a terminal: showing, hints, answering, exam navigation, the end.

The command line drives a `Session` (cli/session_loop.py) and draws it (cli/session_view.py); tests
drive it directly. A session is planned first (a `Plan`: items and seeds, nothing generated yet,
`attnquiz.engine.practice.planning`), then its questions are built one at a time as they are shown,
so the first question appears without waiting for the rest.

Practice and review grade each answer at once and store it, with its FSRS review, in one
transaction. An exam keeps answers (stored as they are given, so a killed process loses none)
but shows nothing until it is submitted; the reviews are applied at submission.

`Session` is made in layers, each in its own module: its state and clock
(`attnquiz.engine.practice.session_state`), what it writes to the history
(`attnquiz.engine.practice.session_history`) and its summary (`attnquiz.engine.practice.session_summary`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from attnquiz.engine.answers.kinds import ExplainAnswer, PartsAnswer
from attnquiz.engine.practice import review
from attnquiz.engine.practice.history_file import StoreError
from attnquiz.engine.practice.planning import Planned
from attnquiz.engine.practice.session_state import Slot
from attnquiz.engine.practice.session_summary import SummarisingSession
from attnquiz.engine.seeding import derive_seed

if TYPE_CHECKING:
    from attnquiz.engine.answers.kinds import Part
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.practice.session_state import Ending
    from attnquiz.engine.practice.session_summary import Summary
    from attnquiz.engine.variant import Question

SolutionPolicy = Literal["always", "wrong", "never"]


class Session(SummarisingSession):
    """A session in progress. Practice/review: `answer` grades at once. Exam: `answer` saves; `submit` grades.

    Its arguments are those of `SessionState` (the plan, the store, the clocks, ...).
    """

    # -- timing ---------------------------------------------------------------------------------

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
        from attnquiz.engine.grading.outcome import Grade
        from attnquiz.engine.grading.parts import grade_parts

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
        from attnquiz.engine.grading.parts import PART_SEPARATOR

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
        from attnquiz.engine.grading.parts import PART_SEPARATOR, grade_parts

        question = self.question(slot)
        answer = question.answer
        assert isinstance(answer, PartsAnswer)
        given = [*slot.part_responses, *[""] * (len(answer.parts) - len(slot.part_responses))]
        return f" {PART_SEPARATOR} ".join(given), grade_parts(answer, given, unanswered="Not answered.")

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
    "Session",
    "SolutionPolicy",
    "graded_json",
    "hint_steps",
]
