"""Templates of formula items: Markdown with ``{{ expr }}`` placeholders, compiled once, filled per variant.

A placeholder is an expression of `attnquiz.engine.formula.expressions`, written with its value in
prose (grouped thousands, six figures) or, in a formula's template, as a formula reads it. Also here:
compiling an expression or a template while collecting an item's problems rather than stopping at
the first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attnquiz.engine.formula.expressions import Expression, compile_expression
from attnquiz.engine.formula.values import ExpressionError, Value, format_value, formula_literal

Loc = tuple[str | int, ...]
"""Where something is written in a formula item: ``("params", "d", "range")``, ``("parts", 1, "prompt")``."""

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
# Compiling among the item's other problems
# ---------------------------------------------------------------------------------------------


def checked_expression(
    text: str, loc: Loc, names: Sequence[str], problems: list[tuple[Loc, str]]
) -> Expression:
    """An expression compiled, or, when it cannot be, a stand-in with the problem added to ``problems``."""
    try:
        return compile_expression(text, names)
    except ExpressionError as exc:
        problems.append((loc, str(exc)))
        return PLACEHOLDER_EXPRESSION


def checked_template(
    text: str, loc: Loc, names: Sequence[str], problems: list[tuple[Loc, str]], *, formula: bool = False
) -> Template:
    """A template compiled, or, when it cannot be, an empty one with the problem added to ``problems``."""
    try:
        return compile_template(text, loc, names, formula=formula)
    except ExpressionError as exc:
        problems.append((loc, str(exc)))
        return Template(loc, (), formula)


PLACEHOLDER_EXPRESSION = compile_expression("0")
"""What a broken expression compiles to while the other problems of the item are collected."""


__all__ = [
    "PLACEHOLDER_EXPRESSION",
    "Loc",
    "Placeholder",
    "Template",
    "checked_expression",
    "checked_template",
    "compile_template",
]
