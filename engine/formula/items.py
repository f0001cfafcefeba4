"""Formula items: drawn parameters, ``where:`` conditions, templates and expressions → a Variant, no Python.

A formula item is compiled once when its bank loads: every expression is read (an unknown name
or a syntax error is a bank error at its own line), and every ``{{ expr }}`` placeholder of the
prompt, the solution steps, the hint and the mistakes' feedback too. A variant then draws the
parameters in their order from the item's random stream, draws again until every ``where:``
condition holds (at most ``MAX_TRIES`` times), computes the answer and the mistakes, and fills
the templates. Nothing here runs code from the bank: expressions go through
`attnquiz.engine.formula.expressions`.

An expression that fails for one variant (a division by zero, a square root of a negative
number) raises a `FormulaError` that names the file, line and field, the parameter values that
broke it and the seed that reproduces it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pydantic

from attnquiz.engine.answers.kinds import (
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    Part,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.tolerance import DEFAULT_REAL_TOLERANCE, EXACT, Tolerance
from attnquiz.engine.answers.values import Formula as WrittenFormula
from attnquiz.engine.answers.values import MistakeValue
from attnquiz.engine.errors import GeneratorRunError, Issue, QuizError
from attnquiz.engine.formula import figures as formula_figures
from attnquiz.engine.formula.expressions import (
    RESERVED,
    Expression,
    ExpressionError,
    Value,
    compile_expression,
    equal,
    format_value,
    formula_literal,
    from_python,
    is_number,
    is_whole,
    kind_of,
    plain,
    to_python,
)
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.registry import GeneratorSpec
from attnquiz.engine.schema import NAME, FormulaItem, ParamSpec, ToleranceSpec
from attnquiz.engine.schema import FormulaAnswer as AnswerSpec
from attnquiz.engine.schema import FormulaMistake as MistakeSpec
from attnquiz.engine.schema import FormulaPart as PartSpec
from attnquiz.engine.seeding import question_rng
from attnquiz.engine.variant import Variant

if TYPE_CHECKING:
    from attnquiz.engine.figures import Figure

Loc = tuple[str | int, ...]
AnswerKind = Literal["number", "integer", "vector", "matrix", "shape", "expression"]

MAX_TRIES = 1000
"""Draws of the parameters tried before a ``where:`` condition that none meets is an error."""
LOAD_SEEDS = range(10)
"""Seeds whose variants are built when a bank loads (with the original), so that a broken
expression stops the bank at once; ``quiz check`` tries many more."""
MAX_RANGE_VALUES = 10**12
MAX_COMBINATIONS = 20_000
"""Steps spent listing every combination of an item's parameters for `quiz check` before giving up."""
PARAM_NAME = re.compile(NAME)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


class FormulaError(QuizError):
    """An expression of a formula item that failed for one variant: where it is written, why, and the
    parameter values (and, once known, the seed) that reproduce it."""

    def __init__(
        self, file: str, line: int, field: str, message: str, values: Mapping[str, Value] | None = None
    ) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        self.values = dict(values or {})
        super().__init__(str(self.issue()))

    def details(self, seed: int | Literal["unknown"] | None = "unknown") -> str:
        """The message with the values that broke it and the seed: ``... (d=512, f=0, seed=17)``."""
        parts = [f"{name}={plain(value)}" for name, value in self.values.items()]
        if seed != "unknown":
            parts.append(f"seed={seed if seed is not None else 'original'}")
        return f"{self.message} ({', '.join(parts)})" if parts else self.message

    def issue(self, seed: int | Literal["unknown"] | None = "unknown") -> Issue:
        """The error as a bank issue (``file:line: field: message (values, seed)``)."""
        return Issue(self.file, self.line, self.field, self.details(seed))

    def for_seed(self, seed: int | None) -> GeneratorRunError:
        """The error a caller sees when building the variant of ``seed`` (None: the original)."""
        return GeneratorRunError(str(self.issue(seed)))


class FormulaCompileError(QuizError):
    """A formula item that cannot be compiled; ``problems`` are (location in the item, message) pairs."""

    def __init__(self, problems: list[tuple[Loc, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(message for _, message in problems))


# ---------------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Placeholder:
    """One ``{{ expr }}`` (or ``{{ expr :places }}``) of a template, and whether it sits in TeX maths."""

    expression: Expression
    math_mode: bool
    places: int | None


@dataclass(frozen=True, slots=True)
class Template:
    """Markdown text with placeholders, compiled; ``loc`` is where it is written in the item.

    A ``formula`` template (an expression answer or mistake) writes its values as a formula reads
    them: plain, exact digits (``24576``, not the prose ``24,576``; ``(1/3)``, not ``0.333333``).
    """

    loc: Loc
    parts: tuple[str | Placeholder, ...]
    formula: bool = False

    def render(self, values: Mapping[str, Value]) -> str:
        """The text with each placeholder replaced by its value (ExpressionError if one fails)."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = part.expression.evaluate(values)
            if self.formula:
                out.append(formula_literal(value, part.places))
            else:
                out.append(format_value(value, math_mode=part.math_mode, places=part.places))
        return "".join(out)

    def sketch(self) -> str:
        """The text with each placeholder shown as its expression (for summaries)."""
        return "".join(p if isinstance(p, str) else p.expression.text for p in self.parts)


def _math_spans(text: str, holes: Sequence[tuple[int, int]]) -> list[bool]:
    """For each placeholder span, whether it lies inside ``$...$`` or ``$$...$$``."""
    inside: list[bool] = []
    state = ""
    i = 0
    hole = 0
    while i < len(text):
        if hole < len(holes) and i >= holes[hole][0]:
            inside.append(bool(state))
            i = holes[hole][1]
            hole += 1
            continue
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "$":
            mark = "$$" if text.startswith("$$", i) else "$"
            if not state:
                state = mark
            elif state == mark:
                state = ""
            i += len(mark)
            continue
        i += 1
    inside.extend([bool(state)] * (len(holes) - len(inside)))
    return inside


def _glued_to_braces(text: str, match: re.Match[str]) -> str:
    """The error of a placeholder written against TeX's braces, ``\\sqrt{{{dk}}}``, with the fix the
    authoring guide gives: spaces between the braces, ``\\sqrt{ {{dk}} }``."""
    command = re.search(r"\\[A-Za-z]+$|[\^_]$", text[: match.start()])
    before = command.group(0) if command else ""
    inner = match.group(1)[1:].strip()
    closing = text.startswith("}", match.end())
    written = before + "{{{" + match.group(1)[1:] + "}}" + ("}" if closing else "")
    fixed = before + "{ {{" + inner + "}}" + (" }" if closing else "")
    return (
        f"write `{fixed}`, not `{written}`: a placeholder inside TeX braces needs spaces, so that "
        'its braces stay apart from TeX\'s (see "Templates" in docs/authoring.md)'
    )


def compile_template(text: str, loc: Loc, names: Sequence[str], *, formula: bool = False) -> Template:
    """Compile a template's placeholders; an ExpressionError names the placeholder that is wrong.

    ``formula``: the template is a formula in symbols, whose values are written as a formula reads
    them (see `Template`)."""
    matches = list(_PLACEHOLDER.finditer(text))
    rest = _PLACEHOLDER.sub("", text)
    if "{{" in rest:
        raise ExpressionError(
            "a `{{` is not closed by `}}` (write `{ {` for two TeX braces, and `{ {{x}} }` for a "
            'placeholder inside TeX braces: see "Templates" in docs/authoring.md)'
        )
    in_math = _math_spans(text, [m.span() for m in matches])
    parts: list[str | Placeholder] = []
    end = 0
    for match, math_mode in zip(matches, in_math, strict=True):
        parts.append(text[end : match.start()])
        body, places = match.group(1), None
        if body.startswith("{"):
            raise ExpressionError(_glued_to_braces(text, match))
        if ":" in body:
            body, _, spec = body.rpartition(":")
            if not spec.strip().isdigit() or int(spec) > 12:
                raise ExpressionError(
                    f"in `{{{{{match.group(1).strip()}}}}}`: after `:` give a number of decimal places "
                    "from 0 to 12, e.g. {{ x :3 }}"
                )
            places = int(spec)
        try:
            expression = compile_expression(body, names)
        except ExpressionError as exc:
            raise ExpressionError(f"in `{{{{{match.group(1).strip()}}}}}`: {exc}") from None
        parts.append(Placeholder(expression, math_mode, places))
        end = match.end()
    parts.append(text[end:])
    return Template(loc, tuple(p for p in parts if p != ""), formula)


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter: drawn from a fixed list, from a list an expression gives, from a range, or computed."""

    name: str
    loc: Loc
    choices: tuple[Value, ...] = ()
    choice_of: Expression | None = None
    low: Expression | None = None
    high: Expression | None = None
    step: Fraction | None = None
    expr: Expression | None = None

    @property
    def drawn(self) -> bool:
        """Whether the parameter is drawn (choice or range) rather than computed (expr)."""
        return self.expr is None

    def expressions(self) -> list[Expression]:
        """The expressions it reads (for the parameters it depends on)."""
        return [e for e in (self.choice_of, self.low, self.high, self.expr) if e is not None]

    def value(self, rng: np.random.Generator, values: Mapping[str, Value]) -> Value:
        """The parameter's value for this draw (an ExpressionError says why there is none)."""
        if self.expr is not None:
            return self.expr.evaluate(values)
        if self.low is not None and self.high is not None:
            start, step, count = self._range(values, self.low, self.high)
            return from_python(start + int(rng.integers(count)) * step)
        options = self._choices(values)
        return options[int(rng.integers(len(options)))]

    def options(self, values: Mapping[str, Value], limit: int) -> tuple[Value, ...] | None:
        """Every value the parameter can take after ``values`` (None when there are more than ``limit``)."""
        if self.expr is not None:
            return (self.expr.evaluate(values),)
        if self.low is not None and self.high is not None:
            start, step, count = self._range(values, self.low, self.high)
            if count > limit:
                return None
            return tuple(from_python(start + k * step) for k in range(count))
        return self._choices(values)

    def extremes(self, values: Mapping[str, Value]) -> tuple[Value, ...]:
        """The parameter's boundary values after ``values``: a range's first and last value, a
        choice's smallest and largest number (first and last entry of a list of lists); what
        `quiz check` tries when there are too many combinations to try them all."""
        if self.expr is not None:
            return (self.expr.evaluate(values),)
        if self.low is not None and self.high is not None:
            start, step, count = self._range(values, self.low, self.high)
            ends = (start, start + (count - 1) * step)
            return tuple(from_python(end) for end in dict.fromkeys(ends))
        options = self._choices(values)
        if all(is_number(option) for option in options):
            ordered = sorted(options, key=_exact)
            return tuple(dict.fromkeys((ordered[0], ordered[-1])))
        return (options[0], options[-1]) if len(options) > 1 else options

    def _choices(self, values: Mapping[str, Value]) -> tuple[Value, ...]:
        if self.choice_of is None:
            return self.choices
        options = self.choice_of.evaluate(values)
        if not isinstance(options, tuple):
            raise ExpressionError(f"choice gives {kind_of(options)} ({plain(options)}), not a list")
        if not options:
            raise ExpressionError("choice gives an empty list")
        return options

    def _range(
        self, values: Mapping[str, Value], low_expr: Expression, high_expr: Expression
    ) -> tuple[Fraction, Fraction, int]:
        """The range's first value, step and number of values."""
        low, high = low_expr.evaluate(values), high_expr.evaluate(values)
        for bound, value in (("low", low), ("high", high)):
            if not is_number(value):
                raise ExpressionError(f"the range's {bound} bound is {kind_of(value)}, not a number")
        start, stop = _exact(low), _exact(high)
        step = self.step if self.step is not None else Fraction(1)
        if stop < start:
            raise ExpressionError(f"the range is empty: {plain(low)} is above {plain(high)}")
        count = int((stop - start) // step) + 1
        if count > MAX_RANGE_VALUES:
            raise ExpressionError(f"the range holds more than {MAX_RANGE_VALUES:,} values: use a larger step")
        return start, step, count


def _exact(value: Value) -> Fraction:
    # Drawn decimals stay exact (0.1 + 2·0.1 is 0.3), so that a where: condition like x == 0.3 holds.
    if isinstance(value, float):
        return Fraction(repr(value))
    assert isinstance(value, int | Fraction)
    return Fraction(value)


# ---------------------------------------------------------------------------------------------
# The compiled item
# ---------------------------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class Combination:
    """One assignment of the parameters that meets the ``where:`` conditions, or the error it hits."""

    values: Mapping[str, Value]
    error: FormulaError | None = None


@dataclass(frozen=True, slots=True)
class Instance:
    """One variant of a formula item, with what `quiz check` needs beyond the Variant itself."""

    variant: Variant
    values: Mapping[str, Value]
    coinciding: tuple[str, ...]
    """Tags of the mistakes whose value is graded as the answer in this variant (so they were dropped)."""


class _NoInputs(pydantic.BaseModel):
    """A formula item takes no generator parameters: its original's values are checked by the formula."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Formula:
    """A formula item compiled: build it with `Formula.compile`, then call it like a generator."""

    item_id: str
    file: str
    lines: Mapping[Loc, tuple[int, str]]
    params: tuple[Param, ...]
    where: tuple[Expression, ...]
    asked: Asked | None  # None for an item in parts: each part asks its own
    parts: tuple[FormulaPart, ...]
    carried_score: float
    prompt: Template
    solution: tuple[Template, ...]
    hint: Template | None
    original: Mapping[str, Value] | None
    _where_free: tuple[frozenset[str], ...] = field(repr=False, compare=False)
    # Where a text is a literal block (``prompt: |``), the line before its first line: a Markdown
    # problem on one row of the text is then reported at that row's own line of the file.
    text_starts: Mapping[Loc, int] = field(default_factory=dict, repr=False, compare=False)
    figures: tuple[formula_figures.Recipe, ...] = ()  # heatmaps and line plots drawn per variant

    @property
    def mistakes(self) -> tuple[FormulaMistake, ...]:
        """Every mistake of the item: its own, or its parts' in order."""
        if self.asked is not None:
            return self.asked.mistakes
        return tuple(m for part in self.parts for m in part.asked.mistakes)

    # -- compiling --------------------------------------------------------------------------

    @classmethod
    def compile(
        cls,
        item: FormulaItem,
        *,
        file: str,
        prefix: Loc,
        line_of: Callable[[Loc], int],
        text_start: Callable[[Loc], int | None] | None = None,
    ) -> Formula:
        """Compile every expression and template of ``item``; all problems are raised at once.

        ``prefix`` is the item's location in the bank (``("items", 3)``) and ``line_of`` gives the
        line of a location in the bank file, for the messages of errors found later, per variant;
        ``text_start`` the line before a literal block's first line (None for another scalar).

        Raises:
            FormulaCompileError: the problems found, each with its location in the item.
        """
        problems: list[tuple[Loc, str]] = []
        params = _compile_params(item.params, problems)
        names = [p.name for p in params]
        where = tuple(_expr(text, ("where", i), names, problems) for i, text in enumerate(item.where))
        asked: Asked | None = None
        parts: tuple[FormulaPart, ...] = ()
        if item.answer is not None:
            asked = _asked(item.answer, item.tolerance, item.mistakes, (), None, names, problems)
        if item.parts is not None:
            parts = _compile_parts(item.parts, names, problems)
        prompt = _template(item.prompt, ("prompt",), names, problems)
        solution = tuple(
            _template(s, ("solution", i), names, problems) for i, s in enumerate(item.solution or ())
        )
        hint = _template(item.hint, ("hint",), names, problems) if item.hint else None
        figures = formula_figures.compile_figures(item.figures, names, problems, _template, _expr)
        original = _original(item.original, params, problems)
        if problems:
            raise FormulaCompileError(problems)

        locs: list[Loc] = [("where", i) for i in range(len(where))]
        locs += [p.loc for p in params]
        locs += [("prompt",), ("hint",), ("original",), *(figure.loc for figure in figures)]
        locs += [("solution", i) for i in range(len(solution))]
        for each in [asked] if asked is not None else [part.asked for part in parts]:
            locs.append((*each.loc, "answer", "value"))
            locs += [(*m.loc, field) for m in each.mistakes for field in ("value", "feedback")]
        for part in parts:
            locs += [(*part.asked.loc, "prompt"), *(step.loc for step in part.solution)]
        lines = {loc: (line_of(loc), _field(prefix, loc)) for loc in locs}
        starts = {
            loc: start for loc in locs if text_start is not None and (start := text_start(loc)) is not None
        }
        return cls(
            item_id=item.id,
            file=file,
            lines=lines,
            params=params,
            where=where,
            asked=asked,
            parts=parts,
            carried_score=item.carried_score,
            prompt=prompt,
            solution=solution,
            hint=hint,
            original=original,
            _where_free=tuple(_random_inputs(expression, params) for expression in where),
            text_starts=starts,
            figures=figures,
        )

    def error(self, loc: Loc, message: str, values: Mapping[str, Value] | None = None) -> FormulaError:
        """A FormulaError located at ``loc`` of this item."""
        line, where = self.lines[loc]
        return FormulaError(self.file, line, where, message, values)

    # -- running -----------------------------------------------------------------------------

    def generate(self, rng: np.random.Generator, /, **fixed: Any) -> Variant:
        """The variant for this random stream; ``fixed`` gives parameters their value (the original's)."""
        return self.instance(rng, fixed).variant

    def instance(self, rng: np.random.Generator, fixed: Mapping[str, Any]) -> Instance:
        """The variant for this random stream, with its parameter values and the mistakes it dropped.

        Raises:
            FormulaError: an expression failed, or no draw met the ``where:`` conditions.
        """
        return self.build(self._draw(rng, fixed))

    def build(self, values: Mapping[str, Value]) -> Instance:
        """The variant of these parameter values (FormulaError if an expression fails for them)."""
        coinciding: list[str] = []
        inputs = {name: to_python(value) for name, value in values.items()}
        hint = self._render(self.hint, values) if self.hint is not None else ""
        if self.asked is not None:
            answer, _, mistakes = self._answer_of(self.asked, values, coinciding)
            variant = Variant(
                prompt=self._render(self.prompt, values),
                answer=answer,
                solution=[self._render(step, values) for step in self.solution],
                mistakes=mistakes,
                inputs=inputs,
                hint=hint,
                figures=self._figures(values),
            )
            return Instance(variant, values, tuple(coinciding))
        known = dict(values)  # the parameters, then each named part's value, for the parts after it
        parts: list[Part] = []
        for part in self.parts:
            answer, value, mistakes = self._answer_of(part.asked, known, coinciding)
            prompt = self._render(part.prompt, known)
            if part.name is not None and value is not None:
                known[part.name] = value
            parts.append(
                Part(
                    part.label,
                    prompt,
                    answer,
                    [self._render(step, known) for step in part.solution],
                    mistakes,
                    weight=part.weight,
                    uses=tuple(label for label, _ in part.uses),
                    recompute=self._recompute(part, known) if part.uses else None,
                )
            )
        variant = Variant(
            prompt=self._render(self.prompt, values),
            answer=PartsAnswer(tuple(parts), carried_score=self.carried_score),
            solution=(),
            inputs=inputs,
            hint=hint,
            figures=self._figures(values),
        )
        return Instance(variant, values, tuple(coinciding))

    def _figures(self, values: Mapping[str, Value]) -> list[Figure]:
        return [formula_figures.draw(recipe, values, self.error) for recipe in self.figures]

    def _answer_of(
        self, asked: Asked, values: Mapping[str, Value], coinciding: list[str]
    ) -> tuple[SingleAnswer, Value | None, list[Mistake]]:
        """The answer ``asked`` gives for these values, its value (None for a formula) and its
        mistakes; the keys of the mistakes that give the answer itself are added to ``coinciding``."""
        answer, value = self._answer(asked, values)
        mistakes: list[Mistake] = []
        for mistake in asked.mistakes:
            wrong = self._mistake_value(asked, mistake, values)
            if answer.matches(wrong):
                coinciding.append(mistake.key)
            feedback = self._render(mistake.feedback, values)
            mistakes.append(Mistake(mistake.tag, wrong, feedback, mistake.score))
        return answer, value, mistakes

    def _recompute(self, part: FormulaPart, known: Mapping[str, Value]) -> Callable[..., Any]:
        """The function grading calls with the student's own values of the parts ``part`` uses:
        the part's own expression, evaluated with those values in place of the right ones."""
        assert isinstance(part.asked.value, Expression)  # a formula answer uses no earlier part
        expression = part.asked.value
        fixed = dict(known)

        def recompute(*given: Any) -> Any:
            values = dict(fixed)
            for (label, name), value in zip(part.uses, given, strict=True):
                try:
                    values[name] = from_python(_as_list(value), f"your ({label})")
                except ExpressionError as exc:
                    raise ValueError(str(exc)) from None
            try:
                return to_python(expression.evaluate(values))
            except ExpressionError as exc:  # e.g. a zero to divide by: nothing can be carried
                raise ValueError(str(exc)) from None

        return recompute

    def _evaluate(self, expression: Expression, loc: Loc, values: Mapping[str, Value]) -> Value:
        try:
            return expression.evaluate(values)
        except ExpressionError as exc:
            raise self.error(loc, f"cannot compute {expression.text!r}: {exc}", values) from None

    def _render(self, template: Template, values: Mapping[str, Value]) -> str:
        try:
            return template.render(values)
        except ExpressionError as exc:
            raise self.error(template.loc, f"cannot fill the template: {exc}", values) from None

    def _draw(self, rng: np.random.Generator, fixed: Mapping[str, Any]) -> dict[str, Value]:
        rejected: Counter[int] = Counter()
        for _ in range(MAX_TRIES):
            values: dict[str, Value] = {}
            for param in self.params:
                if param.name in fixed:
                    values[param.name] = fixed[param.name]
                    continue
                try:
                    values[param.name] = param.value(rng, values)
                except ExpressionError as exc:
                    raise self.error(param.loc, str(exc), values) from None
            failed = self._failed_condition(values)
            if failed is None:
                return values
            if not self._where_free[failed].difference(fixed):
                # Nothing random enters this condition: drawing again cannot help.
                text = self.where[failed].text
                given = {k: v for k, v in values.items() if k in fixed}
                message = (
                    f"the given values do not meet {text!r}"
                    if given
                    else f"{text!r} never holds: it depends on no drawn parameter"
                )
                raise self.error(("where", failed), message, given)
            rejected[failed] += 1
        index = rejected.most_common(1)[0][0]
        raise self.error(
            ("where", index),
            f"item {self.item_id!r}: no draw of the parameters meets {self.where[index].text!r} in "
            f"{MAX_TRIES:,} tries; widen the parameters' ranges or relax the condition",
        )

    def combinations(self, limit: int = MAX_COMBINATIONS) -> list[Combination] | None:
        """Every assignment of the parameters that meets the conditions, in order (None: more than
        ``limit`` steps to list them). Those an expression fails for carry the error instead."""
        found: list[Combination] = []
        steps = 0

        def walk(index: int, values: dict[str, Value]) -> bool:
            nonlocal steps
            steps += 1
            if steps > limit:
                return False
            if index == len(self.params):
                try:
                    if self._failed_condition(values) is None:
                        found.append(Combination(dict(values)))
                except FormulaError as exc:
                    found.append(Combination(dict(values), exc))
                return True
            param = self.params[index]
            try:
                options = param.options(values, limit)
            except ExpressionError as exc:
                found.append(Combination(dict(values), self.error(param.loc, str(exc), values)))
                return True
            if options is None:
                return False
            for option in options:
                values[param.name] = option
                if not walk(index + 1, values):
                    return False
            values.pop(param.name, None)
            return True

        return found if walk(0, {}) else None

    def drawn_by(self, values: Mapping[str, Value], bank: str, seeds: Iterable[int]) -> int | None:
        """The first of ``seeds`` whose variant has these parameter values (to reproduce a problem)."""
        for seed in seeds:
            try:
                drawn = self._draw(question_rng(seed, bank, self.item_id), {})
            except FormulaError:
                continue
            if drawn.keys() == values.keys() and all(equal(drawn[k], values[k]) for k in values):
                return seed
        return None

    def _failed_condition(self, values: Mapping[str, Value]) -> int | None:
        for index, condition in enumerate(self.where):
            result = self._evaluate(condition, ("where", index), values)
            if not isinstance(result, bool):
                raise self.error(
                    ("where", index),
                    f"{condition.text!r} gives {kind_of(result)}, not true or false "
                    "(write a comparison such as d/h >= 32)",
                    values,
                )
            if not result:
                return index
        return None

    def _answer(self, asked: Asked, values: Mapping[str, Value]) -> tuple[SingleAnswer, Value | None]:
        loc: Loc = (*asked.loc, "answer", "value")
        if isinstance(asked.value, Template):  # a formula in the answer's symbols
            text = self._render(asked.value, values)
            try:
                return ExpressionAnswer(text, asked.symbols), None
            except ValueError as exc:
                raise self.error(loc, str(exc), values) from None
        value = self._evaluate(asked.value, loc, values)
        try:
            return _make_answer(asked.kind, value, asked.tolerance), value
        except ExpressionError as exc:
            raise self.error(loc, f"{asked.value.text!r} gives {plain(value)}: {exc}", values) from None

    def _mistake_value(
        self, asked: Asked, mistake: FormulaMistake, values: Mapping[str, Value]
    ) -> MistakeValue:
        loc: Loc = (*mistake.loc, "value")
        if isinstance(mistake.value, Template):
            text = self._render(mistake.value, values)
            try:
                return WrittenFormula.of(text, asked.symbols)
            except ValueError as exc:
                raise self.error(loc, f"mistake {mistake.tag!r}: {exc}", values) from None
        value = self._evaluate(mistake.value, loc, values)
        try:
            return _mistake_value(asked.kind, value)
        except ExpressionError as exc:
            raise self.error(
                loc, f"mistake {mistake.tag!r}: {mistake.value.text!r} gives {plain(value)}: {exc}"
            ) from None

    # -- as a generator ------------------------------------------------------------------------

    def summary(self) -> str:
        """One line about the item, for listings: the start of its prompt."""
        text = " ".join(self.prompt.sketch().split())
        return text if len(text) <= 100 else text[:99] + "…"

    def spec(self) -> GeneratorSpec:
        """The item as a generator spec, so that a bank item runs it like any generator."""
        return GeneratorSpec(
            name="formula",
            fn=self.generate,
            params_model=_NoInputs,
            summary=self.summary(),
            module=self.file,
        )

    # -- checking ------------------------------------------------------------------------------

    def trial(self, bank: str, seeds: Iterable[int] = LOAD_SEEDS) -> list[Issue]:
        """The problems found by building the original and the variants of ``seeds`` (at load time).

        Stops at the first variant that fails. A mistake that gives the answer itself in the
        original, or in every variant tried, is a problem too: it could never be recognised.
        """
        runs: list[tuple[int | None, Mapping[str, Any]]] = []
        if self.original is not None:
            runs.append((None, self.original))
        runs += [(seed, {}) for seed in seeds]
        always: set[str] | None = None
        first: dict[str, tuple[int | None, Instance]] = {}
        for seed, fixed in runs:
            rng = question_rng(seed if seed is not None else 0, bank, self.item_id)
            try:
                instance = self.instance(rng, fixed)
            except FormulaError as exc:
                return [exc.issue(seed)]
            if seed is None and instance.coinciding:
                return [self.coinciding_issue(instance.coinciding[0], None, instance)]
            markup_issue = self.markup_issue(instance, seed)
            if markup_issue is not None:
                return [markup_issue]
            if seed is not None:
                always = set(instance.coinciding) if always is None else always & set(instance.coinciding)
                for tag in instance.coinciding:
                    first.setdefault(tag, (seed, instance))
        for mistake in self.mistakes:
            if always and mistake.key in always:
                seed, instance = first[mistake.key]
                return [self.coinciding_issue(mistake.key, seed, instance)]
        return []

    def coinciding_issue(self, key: str, seed: int | Literal["unknown"] | None, instance: Instance) -> Issue:
        """The problem of a mistake (by its `FormulaMistake.key`) that gives the answer itself here."""
        mistake = next(m for m in self.mistakes if m.key == key)
        answer = instance.variant.answer
        if isinstance(answer, PartsAnswer) and mistake.label is not None:
            answer = answer.part(mistake.label).answer
        error = self.error(
            (*mistake.loc, "value"),
            f"mistake {mistake.tag!r} gives the answer itself ({answer.format()}), so it can "
            "never be recognised; change its value, or exclude these parameters with where:",
            instance.values,
        )
        return error.issue(seed)

    def markup_issue(self, instance: Instance, seed: int | Literal["unknown"] | None) -> Issue | None:
        """The first text of the variant outside the supported TeX, as a problem at its template."""
        variant = instance.variant
        texts: list[tuple[Template, str]] = [(self.prompt, variant.stem)]  # each part's prompt below
        if self.hint is not None:
            texts.append((self.hint, variant.hint))
        asked: list[tuple[Asked, Sequence[Mistake]]] = []
        if self.asked is not None:
            texts += list(zip(self.solution, variant.solution, strict=True))
            asked.append((self.asked, variant.mistakes))
        elif isinstance(variant.answer, PartsAnswer):
            for spec, part in zip(self.parts, variant.answer.parts, strict=True):
                texts.append((spec.prompt, part.prompt))
                # The variant may add a step after the part's own (from the rounded earlier
                # parts, `attnquiz.engine.answers.carry`): only the templates' steps are checked here.
                texts += list(zip(spec.solution, part.solution[: len(spec.solution)], strict=True))
                asked.append((spec.asked, part.mistakes))
        for each, mistakes in asked:
            feedback = {m.tag: m.feedback for m in mistakes}
            texts += [(m.feedback, feedback[m.tag]) for m in each.mistakes if m.tag in feedback]
        for template, text in texts:
            try:
                md.check(text)
            except markup.MarkupError as exc:
                error = self._markup_error(template, exc, instance.values)
                return error.issue(seed if error.values else "unknown")
        return None

    def _markup_error(
        self, template: Template, exc: markup.MarkupError, values: Mapping[str, Value]
    ) -> FormulaError:
        """A text's markup problem at its own line: the row's, when the reader names one in a literal
        block; with the parameter values only when that row (or, else, the text) has a ``{{ }}``."""
        row = getattr(exc, "line", None)  # a Markdown problem found on one line of the text
        line, where = self.lines[template.loc]
        written = "".join(p if isinstance(p, str) else "{{}}" for p in template.parts)
        if isinstance(row, int):
            start = self.text_starts.get(template.loc)
            if start is not None:
                line = start + row
            rows = written.split("\n")
            written = rows[row - 1] if 0 < row <= len(rows) else written
        if "{{}}" not in written:
            return FormulaError(self.file, line, where, str(exc))
        return FormulaError(self.file, line, where, str(exc), values)


# ---------------------------------------------------------------------------------------------
# Compiling the parts
# ---------------------------------------------------------------------------------------------


def _field(prefix: Loc, loc: Loc) -> str:
    text = ""
    for part in (*prefix, *loc):
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _expr(text: str, loc: Loc, names: Sequence[str], problems: list[tuple[Loc, str]]) -> Expression:
    try:
        return compile_expression(text, names)
    except ExpressionError as exc:
        problems.append((loc, str(exc)))
        return _PLACEHOLDER_EXPRESSION


def _template(
    text: str, loc: Loc, names: Sequence[str], problems: list[tuple[Loc, str]], *, formula: bool = False
) -> Template:
    try:
        return compile_template(text, loc, names, formula=formula)
    except ExpressionError as exc:
        problems.append((loc, str(exc)))
        return Template(loc, (), formula)


# What a broken expression compiles to while the other problems of the item are collected.
_PLACEHOLDER_EXPRESSION = compile_expression("0")


def _compile_params(specs: Mapping[str, ParamSpec], problems: list[tuple[Loc, str]]) -> tuple[Param, ...]:
    params: list[Param] = []
    every = list(specs)
    for position, (name, spec) in enumerate(specs.items()):
        loc: Loc = ("params", name)
        if not PARAM_NAME.match(name):
            problems.append((loc, "a parameter name is letters, digits and _, starting with a letter"))
            continue
        if name in RESERVED:
            problems.append((loc, f"{name!r} is a function, a constant or a keyword: choose another name"))
            continue
        earlier = every[:position]
        later = every[position + 1 :]

        def compiled(
            text: str, part: str, loc: Loc = loc, earlier: list[str] = earlier, later: list[str] = later
        ) -> Expression:
            where: Loc = (*loc, part)
            try:
                return compile_expression(text, earlier)
            except ExpressionError as exc:
                used = _names_in(text)
                ahead = [n for n in later if n in used]
                message = (
                    f"uses {ahead[0]!r}, which is defined below it: a parameter can use only those above it"
                    if ahead
                    else str(exc)
                )
                problems.append((where, message))
                return _PLACEHOLDER_EXPRESSION

        if spec.expr is not None:
            params.append(Param(name, (*loc, "expr"), expr=compiled(spec.expr, "expr")))
        elif isinstance(spec.choice, str):
            params.append(Param(name, (*loc, "choice"), choice_of=compiled(spec.choice, "choice")))
        elif spec.choice is not None:
            choices: list[Value] = []
            for i, raw in enumerate(spec.choice):
                try:
                    value = from_python(raw, "a choice")
                except ExpressionError as exc:
                    problems.append(((*loc, "choice", i), str(exc)))
                    continue
                if isinstance(value, bool):
                    problems.append(((*loc, "choice", i), "a choice is a number or a list, not true/false"))
                    continue
                choices.append(value)
            params.append(Param(name, (*loc, "choice"), choices=tuple(choices)))
        elif spec.range is not None:
            low, high = spec.range
            step = Fraction(repr(spec.step)) if isinstance(spec.step, float) else spec.step
            if step is None and any(isinstance(b, float) and not b.is_integer() for b in (low, high)):
                problems.append(((*loc, "range"), "a range of decimals needs a step, e.g. step: 0.1"))
            params.append(
                Param(
                    name,
                    (*loc, "range"),
                    low=compiled(str(low), "range"),
                    high=compiled(str(high), "range"),
                    step=Fraction(step) if step is not None else None,
                )
            )
    return tuple(params)


def _names_in(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


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


def _asked(
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
        _template(answer.value, value_loc, names, problems, formula=True)
        if formula
        else _expr(answer.value, value_loc, names, problems)
    )
    if formula:
        _check_formula_text(answer.value, symbols, value_loc, problems)
    compiled: list[FormulaMistake] = []
    for i, mistake in enumerate(mistakes):
        loc: Loc = (*prefix, "mistakes", i)
        wrong = (
            _template(mistake.value, (*loc, "value"), names, problems, formula=True)
            if formula
            else _expr(mistake.value, (*loc, "value"), names, problems)
        )
        if formula:
            _check_formula_text(mistake.value, symbols, (*loc, "value"), problems)
        feedback = _template(mistake.feedback, (*loc, "feedback"), names, problems)
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


def _compile_parts(
    specs: Sequence[PartSpec], names: Sequence[str], problems: list[tuple[Loc, str]]
) -> tuple[FormulaPart, ...]:
    """Compile the parts in order: each may name the values of the named parts before it."""
    parts: list[FormulaPart] = []
    earlier: dict[str, tuple[str, AnswerKind]] = {}  # a part's name → its label and answer kind
    for index, spec in enumerate(specs):
        label = chr(ord("a") + index)
        prefix: Loc = ("parts", index)
        visible = [*names, *earlier]
        asked = _asked(spec.answer, spec.tolerance, spec.mistakes, prefix, label, visible, problems)
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
                prompt=_template(spec.prompt, (*prefix, "prompt"), visible, problems),
                asked=asked,
                # A part's own steps may write its value, by its name.
                solution=tuple(
                    _template(step, (*prefix, "solution", i), [*visible, *own], problems)
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


def _as_list(value: Any) -> Any:
    """A student's value (a number, or tuples of them) as `from_python` reads YAML: lists."""
    return [_as_list(v) for v in value] if isinstance(value, tuple | list) else value


def _original(
    given: Mapping[str, Any] | None, params: Sequence[Param], problems: list[tuple[Loc, str]]
) -> Mapping[str, Value] | None:
    if given is None:
        return None
    by_name = {p.name: p for p in params}
    values: dict[str, Value] = {}
    for name, raw in given.items():
        loc: Loc = ("original", name)
        param = by_name.get(name)
        if param is None:
            known = ", ".join(p.name for p in params if p.drawn) or "none"
            problems.append((loc, f"{name!r} is not a parameter of this item (drawn parameters: {known})"))
            continue
        if not param.drawn:
            problems.append(
                (loc, f"{name!r} is computed (expr) from other parameters: give the values it comes from")
            )
            continue
        try:
            values[name] = from_python(raw, f"the value of {name}")
        except ExpressionError as exc:
            problems.append((loc, str(exc)))
    return values


def _random_inputs(expression: Expression, params: Sequence[Param]) -> frozenset[str]:
    """The drawn parameters a condition depends on, through the computed ones."""
    by_name = {p.name: p for p in params}
    seen: set[str] = set()
    drawn: set[str] = set()
    stack = list(expression.names)
    while stack:
        name = stack.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        param = by_name[name]
        if param.drawn:
            drawn.add(name)
        for inner in param.expressions():
            stack.extend(inner.names)
    return frozenset(drawn)


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


def _make_answer(kind: AnswerKind, value: Value, tolerance: Tolerance) -> SingleAnswer:
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


def _mistake_value(kind: AnswerKind, value: Value) -> MistakeValue:
    if kind in {"number", "integer"}:
        number = _scalar(value, f"a mistake of a {kind} answer")
        return int(number) if is_whole(number) else float(number)
    if kind == "vector":
        return _numbers(value, "a mistake of a vector answer")
    if kind == "matrix":
        return _rows(value, "a mistake of a matrix answer")
    return _dims(value, "a mistake of a shape answer")


__all__ = [
    "LOAD_SEEDS",
    "MAX_TRIES",
    "Formula",
    "FormulaCompileError",
    "FormulaError",
    "Instance",
    "Template",
    "compile_template",
]
