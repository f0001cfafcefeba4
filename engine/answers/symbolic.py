"""Formulas compared exactly, by evaluation at random points: no computer algebra on the way.

A formula (the `expression` answer kind) is read by `attnquiz.engine.answers.read_formulas.formula`
into a small tree: a rational function of the declared symbols (numbers, symbols, ``+ - * /``, whole
powers), within bounds on its length, degree, and the size of every number its comparison computes
(`attnquiz.engine.answers.formula_tree.formula_cost`). Two formulas are equal when they take the same
exact value at ``POINTS`` random points. Nothing else is needed: the formula language has no square roots,
exponentials, logarithms or trigonometric functions (the reader refuses them), so no answer needs
sympy, and grading never imports it. (`to_sympy` remains, imported lazily, for tests that check
this module against sympy.)

Why the verdict can be trusted (the Schwartz–Zippel lemma). The evaluation builds each formula as a
fraction of two integers that it never reduces, so a formula is, as a function of its symbols, a
fraction ``a/b`` of polynomials, and two formulas ``a/b`` and ``c/d`` are equal as rational
functions exactly when ``N = a*d - c*b`` is the zero polynomial. If it is not, a point drawn
uniformly from ``{1, …, 2**48}`` in every coordinate is a root of ``N``, or a root of one of the
divisors the evaluation checks for zero (such a point is skipped), with probability at most
``D / 2**48``, where ``D`` is the degree of ``N`` plus those divisors' degrees. The reader bounds
each formula's share (`formula_tree.MAX_FORMULA_POLY_DEGREE`, 256), so ``D <= 512 = 2**9``, and the
points are drawn independently: two different formulas agree at three points with probability at
most ``(2**9 / 2**48)**3 = 2**-117`` (a "correct" needs the first three points tried to fall on
such roots). Equal formulas agree at every point where both are defined (the arithmetic is
exact); a right answer could be called wrong only if six of the ``MAX_POINTS`` (8) points fell on
a root of a divisor, which has probability below ``28 * 2**(-39 * 6) < 2**-229``.

The points are drawn once per process from the operating system's random source and never shown,
so a response cannot be built to vanish at them (fixed, published points could be: the answer plus
``(d - p1)(d - p2)(d - p3)`` would agree). Within a process every comparison uses the same points,
so verdicts are repeatable, and a formula's values are cached per point.
"""

from __future__ import annotations

import os
import threading
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from attnquiz.engine.answers import formula_tree, parse, read_formulas

if TYPE_CHECKING:
    import sympy

Tree = formula_tree.Tree
Pair = tuple[int, int]
"""A value as an unreduced fraction: (top, bottom), bottom never 0."""
POINTS = 3
"""Random points at which two formulas must agree, both defined, to be equal."""
MAX_POINTS = 8
"""Points tried at most: a point where a divisor is zero is skipped (it almost never happens)."""


class FormulaError(ValueError):
    """An item's own formula that the reader refuses (a bug of the item, not of a student)."""


class _RandomPoint(dict[str, Pair]):
    """A point of the comparison: each symbol's coordinate is drawn the first time it is asked for."""

    def __missing__(self, name: str) -> Pair:
        with _DRAWING:  # two threads grading at once must see one coordinate, not two
            coordinate = (
                int.from_bytes(os.urandom(formula_tree.POINT_BITS // 8), "big") + 1
            )  # uniform, 1 to 2**48
            return self.setdefault(name, (coordinate, 1))


_DRAWING = threading.Lock()
_POINTS: tuple[_RandomPoint, ...] = tuple(_RandomPoint() for _ in range(MAX_POINTS))


def read(text: str, symbols: tuple[str, ...]) -> Tree:
    """An item's own formula as a tree; a `FormulaError` naming the reason if the reader refuses it,
    or if it is defined nowhere (it divides by zero whatever its symbols are)."""
    tree = read_formulas.formula(text, symbols)
    if isinstance(tree, parse.Invalid):
        raise FormulaError(f"the formula {text!r} cannot be read: {tree.reason}")
    if all(_value(tree, k) is None for k in range(MAX_POINTS)):
        raise FormulaError(f"the formula {text!r} divides by zero whatever the values of its symbols")
    return tree


def _pair(tree: Tree, point: dict[str, Pair]) -> Pair | None:
    """The formula's value at ``point`` as an unreduced fraction (None where a divisor is zero).

    The operations are those `formula_tree.formula_cost` bounds, in the same order, so no number here is
    larger than the bound it checked before the formula was accepted.
    """
    tag = tree[0]
    if tag == "num":
        value = tree[1]
        assert isinstance(value, Fraction)
        return value.numerator, value.denominator
    if tag == "sym":
        return point[str(tree[1])]
    if tag == "neg":
        inner = _pair(tree[1], point)  # type: ignore[arg-type]
        return None if inner is None else (-inner[0], inner[1])
    if tag in {"add", "mul"}:
        children = tree[1]
        assert isinstance(children, tuple)
        total = _pair(children[0], point)
        for child in children[1:]:
            if total is None:
                return None
            part = _pair(child, point)
            if part is None:
                return None
            if tag == "add":
                total = (total[0] * part[1] + part[0] * total[1], total[1] * part[1])
            else:
                total = (total[0] * part[0], total[1] * part[1])
        return total
    if tag == "div":
        top = _pair(tree[1], point)  # type: ignore[arg-type]
        bottom = _pair(tree[2], point)  # type: ignore[arg-type]
        if top is None or bottom is None or bottom[0] == 0:
            return None
        return top[0] * bottom[1], top[1] * bottom[0]
    base = _pair(tree[1], point)  # type: ignore[arg-type]
    exponent = tree[2]
    assert isinstance(exponent, int)
    if base is None:
        return None
    if exponent >= 0:
        return base[0] ** exponent, base[1] ** exponent
    if base[0] == 0:
        return None
    return base[1] ** -exponent, base[0] ** -exponent


@lru_cache(maxsize=1024)
def _value(tree: Tree, k: int) -> Pair | None:
    """The formula's value at the comparison's point ``k`` (cached: a response is compared with the
    answer, each mistake and its own negation at the same points)."""
    negated = tree[1]
    if tree[0] == "neg" and isinstance(negated, tuple):
        inner = _value(negated, k)
        return None if inner is None else (-inner[0], inner[1])
    return _pair(tree, _POINTS[k])


def evaluate(tree: Tree, point: dict[str, Fraction]) -> Fraction | None:
    """The formula's exact value at ``point`` (None where a denominator is zero)."""
    pairs = {name: (value.numerator, value.denominator) for name, value in point.items()}
    value = _pair(tree, pairs)
    return None if value is None else Fraction(value[0], value[1])


def symbols_of(tree: Tree) -> set[str]:
    """The symbol names a formula uses."""
    tag = tree[0]
    if tag == "sym":
        return {str(tree[1])}
    if tag == "num":
        return set()
    if tag in {"add", "mul"}:
        children = tree[1]
        assert isinstance(children, tuple)
        return set().union(*(symbols_of(child) for child in children))
    if tag == "div":
        return symbols_of(tree[1]) | symbols_of(tree[2])  # type: ignore[arg-type]
    return symbols_of(tree[1])  # type: ignore[arg-type]


def equivalent(a: Tree, b: Tree) -> bool:
    """Whether two formulas are equal as rational functions: exact values at `POINTS` random points
    where both are defined (see the module's docstring for why that decides it)."""
    compared = 0
    for k in range(MAX_POINTS):
        x, y = _value(a, k), _value(b, k)
        if x is None or y is None:
            continue
        if x[0] * y[1] != y[0] * x[1]:
            return False
        compared += 1
        if compared == POINTS:
            return True
    return False


agrees = equivalent
"""What a variant uses to drop a listed mistake that equals the answer: the same decision."""


def to_sympy(tree: Tree) -> sympy.Expr:
    """The formula as a sympy expression, built node by node (symbols are positive); for tests that
    check this module against an algebra system (sympy is imported here only)."""
    import sympy

    return _build(tree, sympy)


def _build(tree: Tree, sp: Any) -> Any:
    tag = tree[0]
    if tag == "num":
        value = tree[1]
        assert isinstance(value, Fraction)
        return sp.Rational(value.numerator, value.denominator)
    if tag == "sym":
        return sp.Symbol(str(tree[1]), positive=True)
    if tag in {"add", "mul"}:
        children = tree[1]
        assert isinstance(children, tuple)
        parts = [_build(child, sp) for child in children]
        return sp.Add(*parts) if tag == "add" else sp.Mul(*parts)
    if tag == "neg":
        return -_build(tree[1], sp)  # type: ignore[arg-type]
    if tag == "div":
        return _build(tree[1], sp) / _build(tree[2], sp)  # type: ignore[arg-type]
    return sp.Pow(_build(tree[1], sp), sp.Integer(tree[2]))  # type: ignore[arg-type]


def to_tex(tree: Tree) -> str:
    """The formula in TeX, products written as the notes write them: ``12 d^{2} + 13 d``."""
    return _tex(tree, 0)


def _tex_symbol(name: str) -> str:
    head, _, tail = name.partition("_")
    return f"{head}_{{{tail}}}" if tail else head


_TEX_LEVEL = {"add": 1, "neg": 2, "mul": 3, "div": 3, "pow": 4, "num": 5, "sym": 5}


def _tex(tree: Tree, below: int) -> str:
    tag = str(tree[0])
    text = _tex_plain(tree)
    if _TEX_LEVEL[tag] < below:
        return rf"\left({text}\right)"
    return text


def _tex_plain(tree: Tree) -> str:
    tag = tree[0]
    if tag == "num":
        value = tree[1]
        assert isinstance(value, Fraction)
        if value.denominator == 1:
            return str(value.numerator)
        return rf"\frac{{{value.numerator}}}{{{value.denominator}}}"
    if tag == "sym":
        return _tex_symbol(str(tree[1]))
    if tag == "add":
        children = tree[1]
        assert isinstance(children, tuple)
        out = _tex(children[0], 1)
        for child in children[1:]:
            inner = child[1]
            negated = child[0] == "neg" and isinstance(inner, tuple)
            out += " - " + _tex(inner, 3) if negated and isinstance(inner, tuple) else " + " + _tex(child, 2)
        return out
    if tag == "neg":
        return "-" + _tex(tree[1], 3)  # type: ignore[arg-type]
    if tag == "mul":
        children = tree[1]
        assert isinstance(children, tuple)
        pieces = [_tex(child, 3) for child in children]
        out = pieces[0]
        for child, piece in zip(children[1:], pieces[1:], strict=True):
            # A number after another factor needs a visible product sign: 2 \cdot 3, not 23.
            out += r" \cdot " + piece if child[0] == "num" else " " + piece
        return out
    if tag == "div":
        return rf"\frac{{{_tex(tree[1], 0)}}}{{{_tex(tree[2], 0)}}}"  # type: ignore[arg-type]
    base = tree[1]
    assert isinstance(base, tuple)
    return f"{_tex(base, 5)}^{{{tree[2]}}}"


__all__ = ["FormulaError", "agrees", "equivalent", "evaluate", "read", "symbols_of", "to_sympy", "to_tex"]
