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

The item's pieces are compiled by `attnquiz.engine.formula.params` (the parameters),
`.templates` (the texts with ``{{ }}``) and `.asked` (the answers and mistakes); this module ties
them into the compiled item, draws and builds its variants, and checks them for `quiz check`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from attnquiz.engine.answers.kinds import ExpressionAnswer, Mistake, Part, PartsAnswer, SingleAnswer
from attnquiz.engine.answers.values import Formula as WrittenFormula
from attnquiz.engine.answers.values import MistakeValue
from attnquiz.engine.errors import GeneratorRunError, Issue, QuizError
from attnquiz.engine.formula import figures as formula_figures
from attnquiz.engine.formula.asked import (
    Asked,
    FormulaMistake,
    FormulaPart,
    compile_asked,
    compile_parts,
    make_answer,
    mistake_value,
)
from attnquiz.engine.formula.expressions import Expression
from attnquiz.engine.formula.params import Param, compile_params, original_values, random_inputs
from attnquiz.engine.formula.templates import Loc, Template, checked_expression, checked_template
from attnquiz.engine.formula.values import (
    ExpressionError,
    Value,
    equal,
    from_python,
    kind_of,
    plain,
    to_python,
)
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.registry import GeneratorSpec
from attnquiz.engine.seeding import question_rng
from attnquiz.engine.variant import Variant

if TYPE_CHECKING:
    from attnquiz.engine.figures import Figure
    from attnquiz.engine.schema import FormulaItem

MAX_TRIES = 1000
"""Draws of the parameters tried before a ``where:`` condition that none meets is an error."""
LOAD_SEEDS = range(10)
"""Seeds whose variants are built when a bank loads (with the original), so that a broken
expression stops the bank at once; ``quiz check`` tries many more."""
MAX_COMBINATIONS = 20_000
"""Steps spent listing every combination of an item's parameters for `quiz check` before giving up."""


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
# The compiled item
# ---------------------------------------------------------------------------------------------


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
        params = compile_params(item.params, problems)
        names = [p.name for p in params]
        where = tuple(
            checked_expression(text, ("where", i), names, problems) for i, text in enumerate(item.where)
        )
        asked: Asked | None = None
        parts: tuple[FormulaPart, ...] = ()
        if item.answer is not None:
            asked = compile_asked(item.answer, item.tolerance, item.mistakes, (), None, names, problems)
        if item.parts is not None:
            parts = compile_parts(item.parts, names, problems)
        prompt = checked_template(item.prompt, ("prompt",), names, problems)
        solution = tuple(
            checked_template(s, ("solution", i), names, problems) for i, s in enumerate(item.solution or ())
        )
        hint = checked_template(item.hint, ("hint",), names, problems) if item.hint else None
        figures = formula_figures.compile_figures(
            item.figures, names, problems, checked_template, checked_expression
        )
        original = original_values(item.original, params, problems)
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
            _where_free=tuple(random_inputs(expression, params) for expression in where),
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
            return make_answer(asked.kind, value, asked.tolerance), value
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
            return mistake_value(asked.kind, value)
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
            summary=self.summary(),
            module=self.file,
            fields={},  # no inputs: the (empty) params model is built only if something validates with it
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
# Field names and students' values
# ---------------------------------------------------------------------------------------------


def _field(prefix: Loc, loc: Loc) -> str:
    text = ""
    for part in (*prefix, *loc):
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _as_list(value: Any) -> Any:
    """A student's value (a number, or tuples of them) as `from_python` reads YAML: lists."""
    return [_as_list(v) for v in value] if isinstance(value, tuple | list) else value


__all__ = [
    "LOAD_SEEDS",
    "MAX_TRIES",
    "Formula",
    "FormulaCompileError",
    "FormulaError",
    "Instance",
]
