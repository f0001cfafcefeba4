"""Formulas: a response read as an expression in the question's symbols, compared by equivalence."""

from __future__ import annotations

from collections.abc import Sequence

from attnquiz.engine.answers import formula_tree, parse, read_formulas
from attnquiz.engine.answers.kinds import Answer, ExpressionAnswer, Mistake
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.grading.outcome import SIGN, Grade, correct, invalid, named, slip, wrong


def formula_reading(answer: Answer, response: str) -> str | None:
    """How a response to a formula answer is read, written back as a formula (``12d^2+13d`` is
    ``12*d^2 + 13*d``), so that the student can check it before it is graded; None when ``answer``
    is not a formula or the response cannot be read (grading it says why)."""
    if not isinstance(answer, ExpressionAnswer):
        return None
    tree = read_formulas.formula(response, answer.symbols)
    if isinstance(tree, parse.Invalid):
        return None
    return formula_tree.formula_text(tree)


def grade_expression(answer: ExpressionAnswer, response: str, mistakes: Sequence[Mistake]) -> Grade:
    """Grade a formula: right when it is equivalent to the answer, whatever its form."""
    from attnquiz.engine.answers import symbolic

    tree = read_formulas.formula(response, answer.symbols)
    if isinstance(tree, parse.Invalid):
        return invalid(answer, tree.reason, tree.read_as)
    read = formula_tree.formula_text(tree)
    if symbolic.equivalent(tree, answer.formula.tree):
        # A code span: the formula's * would otherwise be read as emphasis ("N(12d^2 + 13*d)").
        return correct(read, "Correct." if read == answer.value else f"Correct: that is `{answer.value}`.")
    for mistake in mistakes:
        if isinstance(mistake.value, Formula) and symbolic.equivalent(tree, mistake.value.tree):
            return named(mistake, read)
    negated: formula_tree.Tree = ("neg", tree)
    if symbolic.agrees(negated, answer.formula.tree):
        return slip(SIGN, Formula(read, tree), "The terms are right but the sign is wrong.", read)
    return wrong("Not correct: that formula is not equal to the answer.", read)


__all__ = ["formula_reading", "grade_expression"]
