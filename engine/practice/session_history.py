"""What a session writes to the history: its attempts, their reviews, skips, re-ratings, and what is due.

Every failure to write turns the history off for the rest of the session (with a warning): the
session goes on without it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from msgspec.structs import replace

from attnquiz.engine.practice import review
from attnquiz.engine.practice.history_file import StoreError
from attnquiz.engine.practice.history_records import Attempt, CardRecord, CardUpdate
from attnquiz.engine.practice.session_state import SessionState, Slot

if TYPE_CHECKING:
    from attnquiz.engine.grading.outcome import Grade


class RecordingSession(SessionState):
    """A session's state with its history: each attempt stored with its review, as the session goes."""

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


__all__ = ["RecordingSession"]
