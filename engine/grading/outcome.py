"""A grade and its parts: the statuses, the generic slips' tags, and the grades every answer kind gives.

Each answer kind's module builds its grade with the functions here (`invalid`, `correct`, `wrong`,
`named`, `slip`), so that a status means the same for every kind.
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct

from attnquiz.engine.answers.kinds import Answer, Mistake, SingleAnswer
from attnquiz.engine.answers.rounding import ROUNDED_EARLY
from attnquiz.engine.answers.values import MistakeValue
from attnquiz.engine.markup import tex as markup

Status = Literal["correct", "partial", "wrong", "invalid", "unscored"]
"""``unscored``: a response to a concept question (`ExplainAnswer`), kept as written and never
scored by its content; the student rates it themselves (``rating``) and a teacher may mark it."""

PRECISION = "precision-too-low"
SIGN = "sign-error"
POWER_OF_TEN = "power-of-ten"
PERCENT = "percent-as-number"
TRANSPOSED = "transposed"
REVERSED = "dims-reversed"
GENERIC_TAGS = (PRECISION, SIGN, POWER_OF_TEN, PERCENT, TRANSPOSED, REVERSED, ROUNDED_EARLY)
"""Tags of the slips recognised for any item, in addition to each variant's listed mistakes.

``ROUNDED_EARLY`` comes with the variant (`attnquiz.engine.answers.rounding`): only the generator knows the
intermediates its answer is computed from."""


class Grade(Struct, frozen=True):
    """The outcome of grading one response.

    ``score`` is 0..1 (0 for wrong and invalid unless a recognised mistake carries a score);
    ``feedback`` is Markdown with TeX maths in the `attnquiz.engine.markup.tex` subset; ``read_as`` is plain
    text echoing how the response was read ("" when nothing could be read).
    """

    status: Status
    score: float
    feedback: str
    mistake: Mistake | None
    read_as: str
    # A question in parts: each part's grade, in order (the fields above sum them up).
    parts: tuple[PartGrade, ...] = ()
    # A concept question (status ``unscored``): the student's own rating of their answer, once given
    # ("again", "hard", "good" or "easy"; None while unrated). It drives the review schedule.
    rating: str | None = None

    @property
    def counts(self) -> bool:
        """Whether the attempt counts: an invalid response costs nothing."""
        return self.status != "invalid"

    @property
    def scored(self) -> bool:
        """Whether the attempt has a score by its content (a concept question's never has)."""
        return self.status not in {"invalid", "unscored"}

    def rated(self, rating: str | None) -> Grade:
        """This (unscored) grade with the student's own rating of their answer."""
        from msgspec.structs import replace

        if rating is not None and rating not in SELF_RATINGS:
            raise ValueError(f"a self-rating is one of {', '.join(SELF_RATINGS)}, not {rating!r}")
        return replace(self, rating=rating)

    def to_json(self) -> dict[str, Any]:
        """The grade as ``quiz answer --json`` and the session logs show it."""
        data: dict[str, Any] = {
            "status": self.status,
            "score": self.score,
            "feedback": self.feedback,
            "mistake": self.mistake.tag if self.mistake is not None else None,
            "read_as": self.read_as,
        }
        if self.parts:
            data["parts"] = [p.to_json() for p in self.parts]
        if self.status == "unscored":
            data["rating"] = self.rating
        return data


SELF_RATINGS = ("again", "hard", "good", "easy")
"""What a student may rate their own answer to a concept question (FSRS's four ratings, in order)."""


class PartGrade(Struct, frozen=True):
    """One part's grade, with what it was graded against.

    ``expected`` is the answer the response was compared with: the part's own, or the one recomputed
    from the student's earlier values, which ``carried_forward`` then lists (label → the value used).
    """

    label: str
    grade: Grade
    expected: SingleAnswer
    carried_forward: dict[str, str]
    weight: float = 1.0

    def to_json(self) -> dict[str, Any]:
        """The part's grade as ``quiz answer --json`` prints it."""
        grade = self.grade
        return {
            "label": self.label,
            "status": grade.status,
            "score": grade.score,
            "feedback": grade.feedback,
            "mistake": grade.mistake.tag if grade.mistake is not None else None,
            "read_as": grade.read_as,
            "expected": self.expected.json_value(),
            "expected_text": self.expected.format(),
            "carried_forward": dict(self.carried_forward) or None,
        }


PLAIN_WRONG = "Not correct: that is not the answer, within the precision asked for."
"""The feedback of a wrong answer that no mistake or slip explains."""


def invalid(answer: Answer, reason: str, read_as: str = "") -> Grade:
    """The grade for a response that cannot be read as the kind asked for: it costs nothing, and the
    feedback says why and what is expected."""
    # Feedback is Markdown, the instructions plain text: "3*d, powers as d**2" must not turn into
    # emphasis when the feedback is shown.
    return Grade("invalid", 0.0, f"{reason} {markup.escape_markdown(answer.instructions())}", None, read_as)


def correct(read_as: str, feedback: str = "Correct.") -> Grade:
    """The grade for a right response (``feedback`` may say how it was read)."""
    return Grade("correct", 1.0, feedback, None, read_as)


def wrong(feedback: str, read_as: str, mistake: Mistake | None = None) -> Grade:
    """The grade for a wrong response, with the mistake it shows where one was recognised."""
    return Grade("wrong", 0.0, feedback, mistake, read_as)


def named(mistake: Mistake, read_as: str) -> Grade:
    """The grade for a listed mistake: wrong, or partial/correct when the item gives it credit."""
    score = min(max(mistake.score, 0.0), 1.0)
    return Grade(status_of(score), score, mistake.feedback, mistake, read_as)


def status_of(score: float) -> Status:
    """The status a score from 0 to 1 earns: correct at 1, wrong at 0, partial between."""
    return "correct" if score >= 1 else "wrong" if score <= 0 else "partial"


def slip(tag: str, value: MistakeValue, feedback: str, read_as: str) -> Grade:
    """The grade for a generic slip: wrong, naming it as a `Mistake` tagged ``tag`` (one of
    `GENERIC_TAGS`), so that stored attempts count it like a listed one."""
    return wrong(feedback, read_as, Mistake(tag, value, feedback))


__all__ = [
    "GENERIC_TAGS",
    "PERCENT",
    "PLAIN_WRONG",
    "POWER_OF_TEN",
    "PRECISION",
    "REVERSED",
    "SELF_RATINGS",
    "SIGN",
    "TRANSPOSED",
    "Grade",
    "PartGrade",
    "Status",
    "correct",
    "invalid",
    "named",
    "slip",
    "status_of",
    "wrong",
]
