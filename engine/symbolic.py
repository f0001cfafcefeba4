"""Formulas compared: exactly at random points, and algebraically with sympy built from the reader's tree.

A formula (the `expression` answer kind) is read by `attnquiz.engine.parse.formula` into a small tree
of numbers, symbols, sums, products, quotients and whole powers, within bounds on its length and
degree. Two formulas are equal when

1. they agree exactly (rational arithmetic) at a few random points with positive whole-number
   coordinates (the guard: cheap, and never fooled by float noise), and
2. sympy, given the two trees as sympy objects (never text: nothing is ``sympify``-ed), finds that
   their difference cancels to zero.

sympy is imported by the first algebraic comparison only, so that showing a question, or grading a
number, never pays for it. `agrees` (step 1 alone) is what variants use to drop a listed mistake
that equals the answer, so building a variant never imports sympy either.
"""

from __future__ import annotations

import zlib
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from attnquiz.engine import parse

if TYPE_CHECKING:
    import sympy

Tree = parse.Tree
POINTS = 4
"""Random points at which two formulas must agree before sympy is asked."""
_COORDINATE_RANGE = (3, 10_007)


class FormulaError(ValueError):
    """An item's own formula that the reader refuses (a bug of the item, not of a student)."""


def read(text: str, symbols: tuple[str, ...]) -> Tree:
    """An item's own formula as a tree; a `FormulaError` naming the reason if the reader refuses it."""
    tree = parse.formula(text, symbols)
    if isinstance(tree, parse.Invalid):
        raise FormulaError(f"the formula {text!r} cannot be read: {tree.reason}")
    return tree


def evaluate(tree: Tree, point: dict[str, Fraction]) -> Fraction | None:
    """The formula's exact value at ``point`` (None where a denominator is zero)."""
    tag = tree[0]
    if tag == "num":
        value = tree[1]
        assert isinstance(value, Fraction)
        return value
    if tag == "sym":
        return point[str(tree[1])]
    if tag in {"add", "mul"}:
        children = tree[1]
        assert isinstance(children, tuple)
        total = Fraction(0 if tag == "add" else 1)
        for child in children:
            part = evaluate(child, point)
            if part is None:
                return None
            total = total + part if tag == "add" else total * part
        return total
    if tag == "neg":
        inner = evaluate(tree[1], point)  # type: ignore[arg-type]
        return None if inner is None else -inner
    if tag == "div":
        top = evaluate(tree[1], point)  # type: ignore[arg-type]
        bottom = evaluate(tree[2], point)  # type: ignore[arg-type]
        if top is None or bottom is None or bottom == 0:
            return None
        return top / bottom
    base = evaluate(tree[1], point)  # type: ignore[arg-type]
    exponent = tree[2]
    assert isinstance(exponent, int)
    if base is None or (base == 0 and exponent < 0):
        return None
    return base**exponent


@lru_cache(maxsize=64)
def _points(symbols: tuple[str, ...]) -> tuple[dict[str, Fraction], ...]:
    """Fixed pseudo-random points per set of symbols, from a checksum of the names: the same every run,
    and no random generator whose state anything else shares."""
    low, high = _COORDINATE_RANGE
    return tuple(
        {
            name: Fraction(low + zlib.crc32(f"{name}|{k}|{len(symbols)}".encode()) % (high - low))
            for name in symbols
        }
        for k in range(POINTS)
    )


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


def agrees(a: Tree, b: Tree) -> bool:
    """Whether two formulas take the same exact value at every one of the random points."""
    names = tuple(sorted(symbols_of(a) | symbols_of(b)))
    compared = 0
    for point in _points(names):
        x, y = evaluate(a, point), evaluate(b, point)
        if x is None or y is None:
            continue
        if x != y:
            return False
        compared += 1
    return compared > 0


def to_sympy(tree: Tree) -> sympy.Expr:
    """The formula as a sympy expression, built node by node (symbols are positive)."""
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


def equivalent(a: Tree, b: Tree) -> bool:
    """Whether two formulas are algebraically equal: the random-point guard, then sympy."""
    if not agrees(a, b):
        return False
    import sympy

    difference = sympy.cancel(to_sympy(a) - to_sympy(b))
    return bool(difference == 0)


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
