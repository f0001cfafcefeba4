"""STACK question tests: the responses each exported question is tested on, and quiz's grades of them.

Moodle runs a STACK question's tests on import. Every exported question carries: the right answer
(and, for a formula, a factored and a reordered form: each scores 1), each listed mistake (each ends
in its own branch), each wrong option ticked, and for a question in parts a wrong earlier part with
the later parts consistent with it (they earn the carried score). The expected score and answer
note of each PRT are what quiz's grader gives the same response (`graded`), never typed by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from attnquiz.engine.answers import symbolic
from attnquiz.engine.answers.carry import rounded_chain
from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.export.lms.stack_inputs import Unit, typed
from attnquiz.engine.export.lms.stack_nodes import explained_options, listed_mistakes, mistake_notes, note
from attnquiz.engine.export.lms.stack_prt import Chain
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.grading.outcome import Grade
from attnquiz.engine.grading.parts import grade_parts
from attnquiz.engine.grading.single import answer_value
from attnquiz.engine.variant import Question


@dataclass(frozen=True, slots=True)
class QTest:
    """A STACK question test: the inputs typed, and each PRT's expected score and final answer note."""

    description: str
    inputs: tuple[tuple[str, str], ...]
    expected: tuple[tuple[str, float, str], ...]


# ---------------------------------------------------------------------------------------------
# Question tests: responses, and what quiz's grader says of them
# ---------------------------------------------------------------------------------------------


def rounded(answer: SingleAnswer, value: object) -> object:
    """``value`` as a student who gives it at the precision asked types it (numbers as the key
    writes them; names, letters and formulas as they are)."""
    if isinstance(answer, NumericAnswer):
        assert isinstance(value, int | float)
        return float(answer.tolerance.format(float(value)))
    if isinstance(answer, VectorAnswer):
        assert isinstance(value, tuple)
        return tuple(float(answer.tolerance.format(float(v))) for v in value)
    if isinstance(answer, MatrixAnswer):
        assert isinstance(value, tuple)
        return tuple(tuple(float(answer.tolerance.format(float(v))) for v in row) for row in value)
    return value


def quiz_text(answer: SingleAnswer, value: object) -> str:
    """The same value as a student types it into quiz (numbers at the precision asked, with their
    trailing zeros: 2.00, not 2.0, which quiz would call coarser than asked)."""
    tolerance = answer.tolerance
    if isinstance(answer, IntegerAnswer):
        assert isinstance(value, int | float)
        return str(int(value))
    if isinstance(answer, NumericAnswer):
        assert isinstance(value, int | float)
        return _number_typed(tolerance, float(value))
    if isinstance(answer, VectorAnswer):
        assert isinstance(value, tuple)
        return "[" + ", ".join(_number_typed(tolerance, float(v)) for v in value) + "]"
    if isinstance(answer, ShapeAnswer):
        assert isinstance(value, tuple)
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(answer, MatrixAnswer):
        assert isinstance(value, tuple)
        rows = ("[" + ", ".join(_number_typed(tolerance, float(v)) for v in row) + "]" for row in value)
        return "[" + ", ".join(rows) + "]"
    if isinstance(answer, ExpressionAnswer):
        assert isinstance(value, Formula)
        return value.text
    assert isinstance(value, frozenset)
    return ", ".join(sorted(value))


def _number_typed(tolerance: Tolerance, value: float) -> str:
    """A number as typed: at the precision asked where it is written so (keeping its trailing
    zeros), else with every digit."""
    shown = tolerance.format(value)
    return shown if float(shown) == value else repr(value)


def formula_forms(answer: ExpressionAnswer) -> list[tuple[str, Formula]]:
    """The answer as quiz writes it, factored, and with its terms in the reverse order: three
    equivalent forms a STACK question test must mark right (each read by quiz's own reader)."""
    import sympy

    expr = symbolic.to_sympy(answer.formula.tree)
    expanded = sympy.expand(expr)
    terms = list(sympy.Add.make_args(expanded))
    forms: list[tuple[str, Formula]] = [("as written", answer.formula)]
    candidates = [("factored", str(sympy.factor(expr)))]
    if len(terms) > 1:
        candidates.append(("reordered", " + ".join(f"({t})" for t in reversed(terms))))
    else:
        candidates.append(
            ("reordered", str(sympy.Mul(*reversed(sympy.Mul.make_args(expanded)), evaluate=False)))
        )
    for label, text in candidates:
        try:
            forms.append((label, Formula.of(text, answer.symbols)))
        except ValueError:
            continue  # a form quiz's own reader refuses is not one to test
    return forms


@dataclass(frozen=True, slots=True)
class Attempt:
    """One response per unit, and what it is meant to show."""

    description: str
    values: tuple[object, ...]


def _expected_note(unit: Unit, grade: Grade, carried: str, value: object) -> str | None:
    """The answer note the unit's PRT ends at for quiz's grade (None: quiz finds the response
    invalid). ``carried`` says how quiz marked it from the student's earlier values: "right" (given
    an error), "rounded" (right from right earlier values, rounded as asked), "wrong" (wrong even
    given an error), or "" (against its own answer)."""
    if grade.status == "invalid":
        return None
    answer = unit.answer
    if isinstance(answer, ChoiceAnswer):
        assert isinstance(value, frozenset)
        if value == answer.correct_letters:
            return note(unit, "correct")
        letters = explained_options(answer)
        if answer.multiple:
            return note(unit, f"ticked-{letters[-1]}" if letters and letters[-1] in value else "ticks")
        (chosen,) = value
        if chosen in letters:
            return note(unit, f"chose-{chosen}")
    if carried:
        return note(
            unit, {"right": "carried-right", "rounded": "rounded-right", "wrong": "carried-wrong"}[carried]
        )
    if grade.status == "correct":
        return note(unit, "correct")
    for mistake, mistake_note in zip(listed_mistakes(unit), mistake_notes(unit), strict=True):
        if grade.mistake == mistake:
            return mistake_note
    return note(unit, "wrong")


def graded(
    question: Question, all_units: list[Unit], chain: Chain, values: Sequence[object]
) -> list[tuple[float, str | None]]:
    """(score, final answer note) of each unit's PRT, as quiz's grader decides for ``values``.

    Which branch a later part ends in follows quiz's rule: a part carries an error on ("slipped")
    when it is wrong, or right only given an earlier error."""
    texts = [quiz_text(u.answer, v) for u, v in zip(all_units, values, strict=True)]
    answer = question.answer
    if not isinstance(answer, PartsAnswer):
        (unit,) = all_units
        grade = grade_answer(unit.answer, texts[0], unit.mistakes)
        return [(grade.score, _expected_note(unit, grade, "", values[0]))]
    out = []
    slipped: dict[str, bool] = {}
    parts = grade_parts(answer, texts).parts
    for unit, part_grade, value, text in zip(all_units, parts, values, texts, strict=True):
        grade, carried = part_grade.grade, ""
        from_error = any(slipped.get(label, False) for label in unit.uses)
        if unit.uses and not chain.carried.get(unit.index, False):
            grade = grade_answer(unit.answer, text, unit.mistakes)  # STACK: against its own answer
        elif part_grade.carried_forward:
            right = grade_answer(part_grade.expected, text).status == "correct"
            carried = ("right" if from_error else "rounded") if right else "wrong"
        slipped[unit.label] = grade.status != "correct" or carried == "right"
        out.append((grade.score, _expected_note(unit, grade, carried, value)))
    return out


def _consistent(all_units: list[Unit], first_wrong: int, wrong: object) -> list[object] | None:
    """Responses where unit ``first_wrong`` is ``wrong`` and every later part that uses it follows
    from the student's own values (each recomputed by quiz's reference numerics and rounded as asked)."""
    values: list[object] = []
    given: dict[str, object] = {}
    for unit in all_units:
        answer = unit.answer
        if unit.index < first_wrong:
            value = rounded(answer, answer_value(answer))
        elif unit.index == first_wrong:
            value = wrong
        elif unit.uses:
            try:
                recomputed = unit.group.target_for([given[label] for label in unit.uses])
            except (ArithmeticError, ValueError, TypeError):
                return None
            value = rounded(answer, answer_value(recomputed))
        else:
            value = rounded(answer, answer_value(answer))
        values.append(value)
        given[unit.label] = value
    return values


def _wrong_value(unit: Unit) -> object | None:
    """A wrong value for a unit that is not one of its mistakes (for a carried-forward test)."""
    answer = unit.answer
    if isinstance(answer, IntegerAnswer):
        return answer.value + max(1, abs(answer.value) // 10)
    if isinstance(answer, NumericAnswer):
        step = max(abs(answer.value) * 0.1, answer.tolerance.half_width(answer.value) * 20, 0.05)
        return rounded(answer, answer.value + step)
    if isinstance(answer, VectorAnswer):
        return rounded(answer, tuple(v + max(abs(v) * 0.1, 0.05) for v in answer.values))
    if isinstance(answer, MatrixAnswer):
        return rounded(answer, tuple(tuple(v + max(abs(v) * 0.1, 0.05) for v in row) for row in answer.rows))
    return None


def attempts(question: Question, all_units: list[Unit]) -> list[Attempt]:
    """The responses every exported question is tested on: all right (and each right formula in
    its other forms), each listed mistake in its unit, and for each part that later parts use, a
    wrong value there with the later parts consistent with it."""
    right = [rounded(u.answer, answer_value(u.answer)) for u in all_units]
    found = [Attempt("the right answer", tuple(right))]
    if isinstance(question.answer, PartsAnswer):  # each part from the earlier ones as rounded: right too
        links = rounded_chain(question.answer)
        if any(link.differs for link in links):
            chained = [
                rounded(u.answer, answer_value(link.target)) for u, link in zip(all_units, links, strict=True)
            ]
            found.append(Attempt("each part from the earlier ones, rounded as asked", tuple(chained)))
    for unit in all_units:
        pos = unit.index - 1
        if isinstance(unit.answer, ExpressionAnswer):
            for label, form in formula_forms(unit.answer)[1:]:
                found.append(
                    Attempt(f"{_where(unit)}right, {label}", (*right[:pos], form, *right[pos + 1 :]))
                )
        for mistake in listed_mistakes(unit):
            value = rounded(unit.answer, mistake.value)
            if unit.answer.matches(value):  # type: ignore[arg-type]
                continue
            found.append(
                Attempt(f"{_where(unit)}mistake {mistake.tag}", (*right[:pos], value, *right[pos + 1 :]))
            )
        if isinstance(unit.answer, ChoiceAnswer) and unit.answer.multiple:
            wrong_ticks = frozenset(explained_options(unit.answer)[:1]) | unit.answer.correct_letters
            if wrong_ticks != unit.answer.correct_letters:
                found.append(
                    Attempt(
                        f"{_where(unit)}a wrong option ticked",
                        (*right[:pos], wrong_ticks, *right[pos + 1 :]),
                    )
                )
    used = {label for u in all_units for label in u.uses}
    for unit in all_units:
        if unit.label not in used:
            continue
        candidates = [*[rounded(unit.answer, m.value) for m in listed_mistakes(unit)][:1], _wrong_value(unit)]
        for wrong in candidates:
            if wrong is None or unit.answer.matches(wrong):  # type: ignore[arg-type]
                continue
            values = _consistent(all_units, unit.index, wrong)
            if values is not None:
                found.append(Attempt(f"({unit.label}) wrong, later parts consistent with it", tuple(values)))
                break
    return found


def _where(unit: Unit) -> str:
    return f"({unit.label}) " if unit.label else ""


def question_tests(question: Question, all_units: list[Unit], chain: Chain) -> list[QTest]:
    """STACK question tests whose expectations are quiz's grades of the same responses."""
    tests: list[QTest] = []
    for attempt in attempts(question, all_units):
        expected = graded(question, all_units, chain, attempt.values)
        if any(n is None for _, n in expected):
            continue  # quiz finds a response invalid: nothing STACK could be expected to mark
        tests.append(
            QTest(
                attempt.description,
                tuple((u.input, typed(u.answer, v)) for u, v in zip(all_units, attempt.values, strict=True)),
                tuple((u.prt, score, str(n)) for u, (score, n) in zip(all_units, expected, strict=True)),
            )
        )
    return tests


__all__ = [
    "Attempt",
    "QTest",
    "attempts",
    "formula_forms",
    "graded",
    "question_tests",
    "quiz_text",
    "rounded",
]
