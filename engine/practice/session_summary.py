"""The summary of a session: a row per question, the score, what to revisit, and the commands to type next.

`SummarisingSession` is the layer of `attnquiz.engine.practice.session.Session` that draws it up from the
session's slots and history.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.practice.session_history import RecordingSession

if TYPE_CHECKING:
    from attnquiz.engine.practice.planning import Mode
    from attnquiz.engine.practice.session_state import Ending, RowStatus


class SummaryRow(Struct, frozen=True):
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


class Summary(Struct, frozen=True):
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


class SummarisingSession(RecordingSession):
    """A session with its history, summarised: the rows and the summary, as far as it has gone."""

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


__all__ = [
    "SummarisingSession",
    "Summary",
    "SummaryRow",
]
