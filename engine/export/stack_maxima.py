"""quiz's values and formulas written as Maxima expressions, for STACK questions.

Everything here writes text that STACK's Maxima reads back as the same value: numbers with every
significant digit (``repr``, which Maxima reads as the same double), vectors as lists, matrices as
``matrix([...], ...)``, shapes as lists of numbers and dimension names, and formulas from the
reader's own tree (never from the text a bank author typed), exact fractions kept exact.

A name is written only if it is a plain Maxima identifier that means nothing to Maxima itself
(`maxima_name`): a bank's symbol ``e`` or ``pi`` would otherwise be a constant in STACK.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from attnquiz.engine.answers import Formula

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# Names Maxima or STACK give a meaning of their own (constants, truth values, operators that
# STACK's input parser reads as words): a symbol so named cannot be declared to a student.
RESERVED = frozenset(
    {"e", "i", "pi", "true", "false", "and", "or", "not", "if", "then", "else", "do", "for", "while",
     "inf", "minf", "und", "ind", "nan", "null", "done", "all", "none"}
)  # fmt: skip


class MaximaError(ValueError):
    """A value that has no faithful Maxima form (not finite, or a name Maxima would misread)."""


def maxima_name(name: str) -> str:
    """A dimension or symbol name as a Maxima atom (``d_model``), or a `MaximaError`."""
    if not _NAME.match(name) or name.lower() in RESERVED:
        raise MaximaError(f"the name {name!r} has no plain Maxima form (STACK reads it otherwise)")
    return name


def number(value: float | int) -> str:
    """A number as Maxima reads it: integers exactly, floats with every digit (``1.9280551601516338``)."""
    if isinstance(value, bool):
        raise MaximaError("a truth value is not a number")
    if isinstance(value, int):
        return str(value) if value >= 0 else f"({value})"
    if not math.isfinite(value):
        raise MaximaError(f"{value!r} is not a finite number")
    text = repr(float(value))
    if "e" in text or "E" in text:
        mantissa, _, exponent = text.lower().partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        text = f"{mantissa}e{int(exponent)}"
    return f"({text})" if text.startswith("-") else text


def fraction(value: Fraction) -> str:
    """An exact rational: ``3``, ``(3/2)``, ``(-1/4)``."""
    if value.denominator == 1:
        return number(int(value.numerator))
    return f"({value.numerator}/{value.denominator})"


def vector(values: tuple[float, ...] | list[float]) -> str:
    """A vector as a Maxima list: ``[0.881, 0.119]``."""
    return "[" + ",".join(number(v) for v in values) + "]"


def matrix(rows: tuple[tuple[float, ...], ...]) -> str:
    """A matrix: ``matrix([1,2],[3,4])``."""
    return "matrix(" + ",".join(vector(row) for row in rows) + ")"


def row_matrix(values: tuple[float | int | str, ...] | list[float | int | str]) -> str:
    """A one-row matrix (the grid of boxes of a STACK matrix input for a vector or a shape)."""
    return "matrix([" + ",".join(entry(v) for v in values) + "])"


def entry(value: float | int | str) -> str:
    """One entry of a vector, matrix or shape: a number or a dimension name."""
    if isinstance(value, str):
        return maxima_name(value)
    return number(value)


def shape(dims: tuple[int | str, ...]) -> str:
    """A shape as a Maxima list of numbers and names: ``[T,512]``."""
    return "[" + ",".join(entry(d) for d in dims) + "]"


def string(text: str) -> str:
    """A Maxima string literal (for feedback or a display text), with ``\\`` and ``"`` escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def formula(value: Formula) -> str:
    """A formula, from the reader's tree: sums, products, quotients, negation and whole powers."""
    return tree(value.tree)


def tree(node: tuple[object, ...]) -> str:
    """A formula tree of `attnquiz.engine.parse.formula` as Maxima (every operation parenthesised)."""
    tag = node[0]
    if tag == "num":
        value = node[1]
        if not isinstance(value, Fraction | int):
            raise MaximaError(f"a formula number {value!r} is not exact")
        return fraction(Fraction(value))
    if tag == "sym":
        return maxima_name(str(node[1]))
    if tag in {"add", "mul"}:
        children = node[1]
        assert isinstance(children, tuple)
        joiner = "+" if tag == "add" else "*"
        return "(" + joiner.join(tree(child) for child in children) + ")"
    if tag == "neg":
        return f"(-{tree(node[1])})"  # type: ignore[arg-type]
    if tag == "div":
        return f"({tree(node[1])}/{tree(node[2])})"  # type: ignore[arg-type]
    if tag == "pow":
        exponent = node[2]
        assert isinstance(exponent, int)
        return f"({tree(node[1])}^{number(exponent)})"  # type: ignore[arg-type]
    raise MaximaError(f"a formula node {tag!r} has no Maxima form")


__all__ = [
    "RESERVED",
    "MaximaError",
    "entry",
    "formula",
    "fraction",
    "matrix",
    "maxima_name",
    "number",
    "row_matrix",
    "shape",
    "string",
    "tree",
    "vector",
]
