"""Concept questions: a response kept as written, never scored by its content (the student rates it)."""

from __future__ import annotations

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.grading.outcome import Grade

UNSCORED_FEEDBACK = "Not scored: compare your answer with the model answer and its key points."


def grade_explain(answer: ExplainAnswer, response: str) -> Grade:
    """A response to a concept question: kept as written (``read_as``), never scored by its content.

    An empty response is allowed (the student thought it through). A text beyond the length limit
    is invalid, as a response of any kind is (it costs nothing, and nothing is cut off unsaid), so
    that what is stored stays bounded.
    """
    if len(response) > EXPLAIN_MAX_LENGTH:  # refused unread, as a response of every kind is
        why = f"The answer is too long ({len(response):,} characters; the limit is {EXPLAIN_MAX_LENGTH:,})."
        return Grade("invalid", 0.0, why, None, "")
    return Grade("unscored", 0.0, UNSCORED_FEEDBACK, None, response.strip())


EXPLAIN_MAX_LENGTH = 4000
"""The longest response to a concept question that is kept (characters)."""


__all__ = ["EXPLAIN_MAX_LENGTH", "UNSCORED_FEEDBACK", "grade_explain"]
