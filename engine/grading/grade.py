"""Grading: a response to a question becomes a Grade (status, score, feedback, the mistake recognised).

One scoring function serves every caller (the terminal session, ``quiz answer``, class grading
and the exports' answer keys). The order of the checks, for every kind:

1. **invalid**: the response cannot be read as the kind asked for (empty, unreadable, an unknown
   name, a number where a vector is asked). It costs nothing, is never compared with mistakes, and
   the feedback says what was expected.
2. **correct** within the answer's tolerance.
3. **precision too low**: a number that agrees with the answer as far as its own digits go, but
   gives fewer digits than asked (1.9 for 1.9281 with 2 decimal places asked). It is wrong, and it
   is not taken for a method mistake, since its digits are those of the right method. Two
   exceptions, where the response is a listed mistake: it equals the mistake's value exactly
   (``[[2, 3], [2, 3]]`` for whole-number mistakes, written without trailing zeros), or the answer
   is an exact count (whose trailing zeros may be real digits).
4. the variant's **listed mistakes**, compared at the answer's tolerance; the first match names the
   mistake and gives its feedback (score 0 unless the mistake carries one).
5. **generic slips**, when no listed mistake matched: a sign error, a power of ten, a percentage
   given as a number, a transposed matrix, the dimensions of a shape in reverse order.
6. otherwise **wrong**, saying which entries are off, or that the length or shape is wrong.

Generic slips come back as a `Mistake` with one of the tags in
`attnquiz.engine.grading.outcome.GENERIC_TAGS`, so that stored attempts can count them like the listed
ones. Multiple-select items score by their scheme (see `attnquiz.engine.grading.choices.choice_score`)
and are ``partial`` when the score is strictly between 0 and 1.

This module is the entry point; each kind is graded in its own module of this package: ``numbers``
(numbers and counts), ``vectors_and_matrices``, ``shapes``, ``formulas``, ``choices``, ``concepts``
(concept questions, never scored) and ``parts`` (questions in parts, with error carried forward);
``single`` hands a single answer to its kind's module, and ``outcome`` holds `Grade` and the
statuses. Code answers are graded by `attnquiz.engine.code.grading`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attnquiz.engine.answers.kinds import (
    Answer,
    CodeAnswer,
    ExplainAnswer,
    Mistake,
    PartsAnswer,
    SingleAnswer,
)
from attnquiz.engine.grading.concepts import grade_explain
from attnquiz.engine.grading.outcome import Grade
from attnquiz.engine.grading.parts import grade_joined
from attnquiz.engine.grading.single import grade_single

if TYPE_CHECKING:
    from attnquiz.engine.variant import Question


def grade(question: Question, response: str) -> Grade:
    """Grade a response to a question (its answer, and its variant's listed mistakes)."""
    return grade_answer(question.answer, response, question.variant.mistakes)


def grade_answer(
    answer: Answer,
    response: str,
    mistakes: Sequence[Mistake] = (),
    *,
    alternatives: Sequence[SingleAnswer] = (),
) -> Grade:
    """Grade a response against an answer, naming the first of ``mistakes`` it matches.

    ``alternatives``: other answers of the same kind that a part in a chain accepts (recomputed from
    the student's own earlier values); a vector's or matrix's entry that agrees with one of them is
    not called off in the feedback.
    """
    if isinstance(answer, PartsAnswer):
        return grade_joined(answer, response)
    if isinstance(answer, ExplainAnswer):
        return grade_explain(answer, response)
    if isinstance(answer, CodeAnswer):
        from attnquiz.engine.code.grading import grade_code  # runs the code: imported only for code

        verdict = grade_code(answer, response, mistakes)
        return Grade(verdict.status, verdict.score, verdict.feedback, verdict.mistake, verdict.read_as)
    return grade_single(answer, response, mistakes, alternatives=alternatives)


__all__ = ["grade", "grade_answer"]
