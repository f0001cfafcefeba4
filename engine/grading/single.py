"""A single answer (any kind a part may have): its kind's grader, the value it stands for, and the value
a response to it is read as."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attnquiz.engine.answers import parse
from attnquiz.engine.answers.kinds import (
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.grading.outcome import Grade

# Each kind's reader and grader is imported where a response of that kind is first graded or read: a
# command that grades one answer (`quiz answer`, a session's first answer) loads one kind's modules,
# not all six (their regular expressions and tables cost a few milliseconds at start-up).


def grade_single(
    answer: SingleAnswer,
    response: str,
    mistakes: Sequence[Mistake] = (),
    *,
    alternatives: Sequence[SingleAnswer] = (),
) -> Grade:
    """Grade a response against a single answer by its kind (see
    `attnquiz.engine.grading.grade.grade_answer`, which grades every kind)."""
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        from attnquiz.engine.grading.numbers import grade_number

        return grade_number(answer, response, mistakes)
    if isinstance(answer, VectorAnswer):
        from attnquiz.engine.grading.vectors_and_matrices import grade_vector

        others = [a.values for a in alternatives if isinstance(a, VectorAnswer)]
        return grade_vector(answer, response, mistakes, others)
    if isinstance(answer, MatrixAnswer):
        from attnquiz.engine.grading.vectors_and_matrices import grade_matrix

        others_rows = [a.rows for a in alternatives if isinstance(a, MatrixAnswer)]
        return grade_matrix(answer, response, mistakes, others_rows)
    if isinstance(answer, ShapeAnswer):
        from attnquiz.engine.grading.shapes import grade_shape

        return grade_shape(answer, response, mistakes)
    if isinstance(answer, ExpressionAnswer):
        from attnquiz.engine.grading.formulas import grade_expression

        return grade_expression(answer, response, mistakes)
    from attnquiz.engine.grading.choices import grade_choice

    return grade_choice(answer, response, mistakes)


def answer_value(answer: SingleAnswer) -> Any:
    """The value an answer stands for, in the form `read_value` gives a response of its kind."""
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return answer.value
    if isinstance(answer, VectorAnswer):
        return answer.values
    if isinstance(answer, MatrixAnswer):
        return answer.rows
    if isinstance(answer, ShapeAnswer):
        return answer.dims
    if isinstance(answer, ExpressionAnswer):
        return answer.formula
    return answer.correct_letters


def read_value(answer: SingleAnswer, response: str) -> Any:
    """The value a response was read as, in the answer's kind (None where it cannot be read)."""
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        from attnquiz.engine.answers import read_numbers

        number = read_numbers.number(
            response, allow_percent=isinstance(answer, NumericAnswer) and answer.allow_percent
        )
        return None if isinstance(number, parse.Invalid) else number.value
    if isinstance(answer, VectorAnswer | MatrixAnswer):
        from attnquiz.engine.answers import read_matrices
        from attnquiz.engine.grading.vectors_and_matrices import flattened, split

        found = read_matrices.structure(response)
        if isinstance(found, parse.Invalid):
            return None
        if isinstance(found, parse.Number):
            return None
        flat, matrix = split(found)
        if isinstance(answer, VectorAnswer):
            rows = list(matrix) if matrix is not None else [flat]
            if len(rows) != 1 and not all(len(r) == 1 for r in rows):
                return None
            return tuple(v.value for v in flattened(rows))
        if matrix is None:
            return None
        return tuple(tuple(v.value for v in row) for row in matrix)
    if isinstance(answer, ShapeAnswer):
        from attnquiz.engine.answers import read_shapes

        found_shape = read_shapes.shape(response)
        return None if isinstance(found_shape, parse.Invalid) else found_shape
    if isinstance(answer, ExpressionAnswer):
        from attnquiz.engine.answers import formula_tree, read_formulas

        tree = read_formulas.formula(response, answer.symbols)
        return None if isinstance(tree, parse.Invalid) else Formula(formula_tree.formula_text(tree), tree)
    from attnquiz.engine.answers import read_choices

    letters = read_choices.letters(response, answer.letters, multiple=answer.multiple)
    return None if isinstance(letters, parse.Invalid) else letters


__all__ = ["answer_value", "grade_single", "read_value"]
