"""The parameters of formula items: compiled from YAML, drawn from their choices or ranges, or computed.

Each parameter may use only those above it; a ``where:`` condition is met by drawing again, which
helps only when the condition depends on a drawn parameter (`random_inputs`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from attnquiz.engine.formula.expressions import RESERVED, Expression, compile_expression
from attnquiz.engine.formula.templates import PLACEHOLDER_EXPRESSION, Loc
from attnquiz.engine.formula.values import ExpressionError, Value, from_python, is_number, kind_of, plain

if TYPE_CHECKING:
    from attnquiz.engine.schema import ParamSpec

MAX_RANGE_VALUES = 10**12


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


def compile_params(specs: Mapping[str, ParamSpec], problems: list[tuple[Loc, str]]) -> tuple[Param, ...]:
    """The item's parameters compiled in order; the problems found are added to ``problems``."""
    from attnquiz.engine.schema import NAME  # the bank format, needed only where a bank is validated

    params: list[Param] = []
    every = list(specs)
    for position, (name, spec) in enumerate(specs.items()):
        loc: Loc = ("params", name)
        if not re.match(NAME, name):
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
                return PLACEHOLDER_EXPRESSION

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


def original_values(
    given: Mapping[str, Any] | None, params: Sequence[Param], problems: list[tuple[Loc, str]]
) -> Mapping[str, Value] | None:
    """The original's values of the drawn parameters (None when the item gives none); the problems
    found are added to ``problems``."""
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


def random_inputs(expression: Expression, params: Sequence[Param]) -> frozenset[str]:
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


__all__ = [
    "MAX_RANGE_VALUES",
    "Param",
    "compile_params",
    "original_values",
    "random_inputs",
]
