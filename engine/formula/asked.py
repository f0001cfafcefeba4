"""What a formula item, or each of its parts, asks: its answer, tolerance and mistakes, compiled and computed.

Compiling reads an answer's expression (or a formula answer's template), its mistakes and, for an
item in parts, which earlier parts each part uses; computing turns a variant's values into the
answer and the mistakes' values of the answer's kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from attnquiz.engine.answers.kinds import (
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.tolerance import DEFAULT_REAL_TOLERANCE, EXACT, Tolerance
from attnquiz.engine.answers.values import Formula as WrittenFormula
from attnquiz.engine.answers.values import MistakeValue
from attnquiz.engine.formula.expressions import RESERVED, Expression
from attnquiz.engine.formula.templates import Loc, Placeholder, Template, checked_expression, checked_template
from attnquiz.engine.formula.values import ExpressionError, Value, is_whole, kind_of

if TYPE_CHECKING:
    from attnquiz.engine.schema import FormulaAnswer as AnswerSpec
    from attnquiz.engine.schema import FormulaMistake as MistakeSpec
    from attnquiz.engine.schema import FormulaPart as PartSpec
    from attnquiz.engine.schema import ToleranceSpec

AnswerKind = Literal["number", "integer", "vector", "matrix", "shape", "expression"]


@dataclass(frozen=True, slots=True)
class FormulaMistake:
    """A compiled mistake: its tag, the expression of its value (the formula's template, for an
    expression answer), its feedback template and score; ``loc`` is where it is written
    (``("mistakes", 2)`` or ``("parts", 1, "mistakes", 0)``) and ``label`` its part's, if any."""

    tag: str
    value: Expression | Template
    feedback: Template
    score: float
    loc: Loc
    label: str | None = None

    @property
    def key(self) -> str:
        """How the mistake is told apart in the item: its tag, after its part's label in a part."""
        return self.tag if self.label is None else f"({self.label}) {self.tag}"


@dataclass(frozen=True, slots=True)
class Asked:
    """What an item, or one of its parts, asks for: the answer's kind and expression (the formula's
    template, for an expression answer), its symbols, tolerance and mistakes. ``loc`` is where it is
    written: ``()`` for the item, ``("parts", 1)`` for part (b)."""

    loc: Loc
    kind: AnswerKind
    value: Expression | Template
    symbols: tuple[str, ...]
    tolerance: Tolerance
    mistakes: tuple[FormulaMistake, ...]


@dataclass(frozen=True, slots=True)
class FormulaPart:
    """One part of a formula item in parts, compiled. ``uses`` pairs the label and name of every
    earlier part its answer's expression names: it is graded with their errors carried forward."""

    label: str
    name: str | None
    prompt: Template
    asked: Asked
    solution: tuple[Template, ...]
    weight: float
    uses: tuple[tuple[str, str], ...]


# ---------------------------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------------------------


def _tolerance(
    answer: AnswerSpec, given: ToleranceSpec | None, prefix: Loc, problems: list[tuple[Loc, str]]
) -> Tolerance:
    kind = answer.kind
    if kind in {"integer", "shape", "expression"}:
        if given is not None:
            exactly = {"integer": "an integer answer", "shape": "a shape answer", "expression": "a formula"}
            problems.append(
                (
                    (*prefix, "tolerance"),
                    f"{exactly[kind]} is graded exactly: remove tolerance"
                    + (" (or use kind: number)" if kind == "integer" else ""),
                )
            )
        return EXACT
    return given.to_tolerance() if given is not None else DEFAULT_REAL_TOLERANCE


def compile_asked(
    answer: AnswerSpec,
    tolerance: ToleranceSpec | None,
    mistakes: Sequence[MistakeSpec],
    prefix: Loc,
    label: str | None,
    names: Sequence[str],
    problems: list[tuple[Loc, str]],
) -> Asked:
    """Compile an answer, its tolerance and its mistakes, written at ``prefix`` (``()`` for the item)."""
    formula = answer.kind == "expression"
    symbols = tuple(answer.symbols or ())
    value_loc: Loc = (*prefix, "answer", "value")
    # A formula is written in the answer's symbols, with {{ }} for parameters' values; it is read
    # (and refused with the reason) when a variant is built, and checked now where it has no {{ }}.
    value = (
        checked_template(answer.value, value_loc, names, problems, formula=True)
        if formula
        else checked_expression(answer.value, value_loc, names, problems)
    )
    if formula:
        _check_formula_text(answer.value, symbols, value_loc, problems)
    compiled: list[FormulaMistake] = []
    for i, mistake in enumerate(mistakes):
        loc: Loc = (*prefix, "mistakes", i)
        wrong = (
            checked_template(mistake.value, (*loc, "value"), names, problems, formula=True)
            if formula
            else checked_expression(mistake.value, (*loc, "value"), names, problems)
        )
        if formula:
            _check_formula_text(mistake.value, symbols, (*loc, "value"), problems)
        feedback = checked_template(mistake.feedback, (*loc, "feedback"), names, problems)
        compiled.append(FormulaMistake(mistake.tag, wrong, feedback, mistake.score, loc, label))
    return Asked(
        prefix, answer.kind, value, symbols, _tolerance(answer, tolerance, prefix, problems), tuple(compiled)
    )


def _check_formula_text(text: str, symbols: Sequence[str], loc: Loc, problems: list[tuple[Loc, str]]) -> None:
    """Read a formula without placeholders now, so that a typo is a load error at its line."""
    if "{{" in text:
        return
    try:
        WrittenFormula.of(text, symbols)
    except ValueError as exc:
        problems.append((loc, str(exc)))


def compile_parts(
    specs: Sequence[PartSpec], names: Sequence[str], problems: list[tuple[Loc, str]]
) -> tuple[FormulaPart, ...]:
    """Compile the parts in order: each may name the values of the named parts before it."""
    parts: list[FormulaPart] = []
    earlier: dict[str, tuple[str, AnswerKind]] = {}  # a part's name → its label and answer kind
    for index, spec in enumerate(specs):
        label = chr(ord("a") + index)
        prefix: Loc = ("parts", index)
        visible = [*names, *earlier]
        asked = compile_asked(spec.answer, spec.tolerance, spec.mistakes, prefix, label, visible, problems)
        named = asked.value.names if isinstance(asked.value, Expression) else _template_names(asked.value)
        uses = tuple((earlier[name][0], name) for name in earlier if name in named)
        formulas = [f"({used}) {name}" for used, name in uses if earlier[name][1] == "expression"]
        if formulas:
            problems.append(
                (
                    (*prefix, "answer", "value"),
                    f"a formula has no value to compute with: {', '.join(formulas)}",
                )
            )
        elif uses and spec.answer.kind == "expression":
            problems.append(
                (
                    (*prefix, "answer", "value"),
                    "a formula answer cannot use earlier parts (it cannot be recomputed from a "
                    "student's value): write their values with {{ }} of the parameters instead",
                )
            )
        own = [spec.name] if spec.name is not None and spec.answer.kind != "expression" else []
        if spec.name is not None:
            if spec.name in names or spec.name in earlier or spec.name in RESERVED:
                what = (
                    "a parameter"
                    if spec.name in names
                    else "an earlier part"
                    if spec.name in earlier
                    else "a function"
                )
                problems.append(
                    ((*prefix, "name"), f"{spec.name!r} is already {what}: give the part another name")
                )
            else:
                earlier[spec.name] = (label, spec.answer.kind)
        parts.append(
            FormulaPart(
                label=label,
                name=spec.name,
                prompt=checked_template(spec.prompt, (*prefix, "prompt"), visible, problems),
                asked=asked,
                # A part's own steps may write its value, by its name.
                solution=tuple(
                    checked_template(step, (*prefix, "solution", i), [*visible, *own], problems)
                    for i, step in enumerate(spec.solution)
                ),
                weight=spec.weight,
                uses=uses,
            )
        )
    return tuple(parts)


def _template_names(template: Template) -> frozenset[str]:
    return frozenset(
        name for p in template.parts if isinstance(p, Placeholder) for name in p.expression.names
    )


# ---------------------------------------------------------------------------------------------
# Values → answers
# ---------------------------------------------------------------------------------------------


def _scalar(value: Value, what: str) -> int | Fraction | float:
    if isinstance(value, bool | tuple):
        raise ExpressionError(f"{what} needs a number, not {kind_of(value)}")
    return value


def _numbers(value: Value, what: str) -> tuple[float, ...]:
    if not isinstance(value, tuple) or not value:
        raise ExpressionError(f"{what} needs a non-empty list of numbers, not {kind_of(value)}")
    return tuple(float(_scalar(v, f"each entry of {what}")) for v in value)


def _rows(value: Value, what: str) -> tuple[tuple[float, ...], ...]:
    if not isinstance(value, tuple) or not value or not all(isinstance(r, tuple) for r in value):
        raise ExpressionError(f"{what} needs a list of rows, e.g. [[1, 2], [3, 4]]")
    rows = tuple(_numbers(row, what) for row in value)
    if len({len(r) for r in rows}) != 1:
        raise ExpressionError(f"{what} needs rows of one length")
    return rows


def _dims(value: Value, what: str) -> tuple[int, ...]:
    if not isinstance(value, tuple) or not value:
        raise ExpressionError(f"{what} needs a list of dimensions, e.g. [d, 512]")
    dims = [_scalar(v, f"each dimension of {what}") for v in value]
    if not all(is_whole(v) and v >= 1 for v in dims):
        raise ExpressionError(f"{what} needs whole dimensions of at least 1")
    return tuple(int(v) for v in dims)


def make_answer(kind: AnswerKind, value: Value, tolerance: Tolerance) -> SingleAnswer:
    """The answer of a kind other than expression (a formula is read from its text, not computed)."""
    if kind == "number":
        return NumericAnswer(float(_scalar(value, "a number answer")), tolerance)
    if kind == "integer":
        number = _scalar(value, "an integer answer")
        if not is_whole(number):
            raise ExpressionError("an integer answer must be a whole number (use kind: number for others)")
        return IntegerAnswer(int(number))
    if kind == "vector":
        return VectorAnswer(_numbers(value, "a vector answer"), tolerance)
    if kind == "matrix":
        return MatrixAnswer(_rows(value, "a matrix answer"), tolerance)
    return ShapeAnswer(_dims(value, "a shape answer"))


def mistake_value(kind: AnswerKind, value: Value) -> MistakeValue:
    """A mistake's value as an answer of ``kind`` would be (a formula's is read from its text instead)."""
    if kind in {"number", "integer"}:
        number = _scalar(value, f"a mistake of a {kind} answer")
        return int(number) if is_whole(number) else float(number)
    if kind == "vector":
        return _numbers(value, "a mistake of a vector answer")
    if kind == "matrix":
        return _rows(value, "a mistake of a matrix answer")
    return _dims(value, "a mistake of a shape answer")


__all__ = [
    "AnswerKind",
    "Asked",
    "FormulaMistake",
    "FormulaPart",
    "compile_asked",
    "compile_parts",
    "make_answer",
    "mistake_value",
]
