"""A formula's tree (the `expression` answer kind): its limits, its degree, what comparing it costs, its text.

`attnquiz.engine.answers.read_formulas` builds the tree from a response and refuses one whose cost
(`formula_cost`) is beyond the limits; `formula_text` writes a tree back as the reader reads it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

from attnquiz.engine.answers.arithmetic import MAX_LOG10, MIN_LOG10, log10_abs
from attnquiz.engine.answers.parse import ReadError, clip

# A formula is read into a small tree rather than evaluated, since its symbols have no values:
# `attnquiz.engine.answers.symbolic` compares trees by exact evaluation at random points. The tree is a
# tuple ``(tag, ...)``:
#
#     ("num", Fraction)  ("sym", name)  ("add", children)  ("mul", children)
#     ("neg", child)     ("div", numerator, denominator)   ("pow", base, int)
#
# A formula is a rational function of the declared symbols: numbers, symbols, + - * /, brackets
# and whole-number powers. The work it can cause is bounded before anything is computed: its
# length, its nesting, the size of each exponent, the degree of the whole, and (`formula_cost`)
# the size of every exact number its comparison will compute and the magnitude of every number
# it writes, so that ((10^8)^8)^8 or (1e300)^2 is refused at once, with the reason.

Tree = tuple[object, ...]
MAX_FORMULA_EXPONENT = 8
"""Largest exponent a formula may write (d^2, T^3; never (d+1)^100000): the course needs 3 at most."""
MAX_FORMULA_DEGREE = 8
"""Largest degree of a whole formula, counted before anything is expanded (d^d^d is refused)."""
MAX_FORMULA_NODES = 400
"""Most numbers, symbols and operations in one formula."""
MAX_SYMBOL_LENGTH = 40
"""Longest name a formula's symbol may have (d_model is 7)."""
POINT_BITS = 48
"""Formulas are compared at points whose coordinates are whole numbers from 1 to 2**48 (a multiple
of 8: the coordinates are drawn as bytes)."""
MAX_FORMULA_BITS = 16_384
"""Largest size, in bits, of any exact number computed while a formula is compared (about 4,900
digits): the course's formulas need a few hundred."""
MAX_FORMULA_WORK = 400_000
"""Largest sum over a formula's operations of the bits each computes: a bound on the whole work."""
MAX_FORMULA_POLY_DEGREE = 256
"""Largest degree of the polynomials a comparison works with (numerator, denominator and every
divisor tested for zero, before anything cancels): what bounds the chance of a wrong verdict."""
_LOG10_2 = math.log10(2)


def degree(tree: Tree) -> int:
    """An upper bound of the formula's total degree (denominators count as if multiplied)."""
    tag = tree[0]
    if tag == "num":
        return 0
    if tag == "sym":
        return 1
    if tag in {"add", "mul"}:
        children = tree[1]
        assert isinstance(children, tuple)
        degrees = [degree(child) for child in children]
        return max(degrees) if tag == "add" else sum(degrees)
    if tag == "neg":
        return degree(tree[1])  # type: ignore[arg-type]
    if tag == "div":
        return degree(tree[1]) + degree(tree[2])  # type: ignore[arg-type]
    exponent = tree[2]
    assert isinstance(exponent, int)
    return degree(tree[1]) * abs(exponent)  # type: ignore[arg-type]


class FormulaCost(NamedTuple):
    """What comparing a formula costs, known before any of it is computed.

    `attnquiz.engine.answers.symbolic` evaluates a formula at a point as a fraction ``top / bottom`` that is
    never reduced: ``a/b + c/d`` is ``(a*d + c*b) / (b*d)``. ``top_bits`` and ``bottom_bits`` bound
    the sizes of those two integers at any point with coordinates up to ``2**POINT_BITS``;
    ``top_degree`` and ``bottom_degree`` bound their degrees as polynomials in the symbols, and
    ``zero_degree`` the summed degrees of every divisor that is checked for zero on the way.
    ``work`` is the sum of the bits of every operation. ``constant`` is the exact value of a
    formula without symbols (None otherwise).
    """

    top_bits: int
    bottom_bits: int
    top_degree: int
    bottom_degree: int
    zero_degree: int
    work: int
    constant: Fraction | None

    @property
    def poly_degree(self) -> int:
        """The degrees that bound the chance of a wrong verdict (see `attnquiz.engine.answers.symbolic`)."""
        return self.top_degree + self.bottom_degree + self.zero_degree


def _bits_of(value: Fraction) -> tuple[int, int]:
    return max(1, value.numerator.bit_length()), max(1, value.denominator.bit_length())


def _constant_checked(value: Fraction, tree: Tree) -> Fraction:
    """A number the formula writes, refused when it is beyond the limits of any number read."""
    if value == 0:
        return value
    size = log10_abs(value)
    if size > MAX_LOG10:
        raise ReadError(f"`{shown(tree)}` is too large to grade (the limit is 1e{int(MAX_LOG10)}).")
    if size < MIN_LOG10:
        raise ReadError(f"`{shown(tree)}` is too close to zero to grade (the limit is 1e{MIN_LOG10}).")
    return value


def _too_costly(tree: Tree, bits: int) -> ReadError:
    digits = int(bits * _LOG10_2)
    return ReadError(
        f"`{shown(tree)}` is too large to grade: computing it exactly takes numbers of "
        f"about {digits:,} digits (the limit is {int(MAX_FORMULA_BITS * _LOG10_2):,}). A formula here "
        "uses small numbers and powers up to "
        f"{MAX_FORMULA_EXPONENT}."
    )


class _Costing:
    """`formula_cost` over one tree: each node's cost from its children's, refused at the first node
    beyond a limit (so the refusal names the smallest part that is too large)."""

    def __init__(self) -> None:
        self.work = 0

    def node(self, tree: Tree, cost: FormulaCost) -> FormulaCost:
        bits = max(cost.top_bits, cost.bottom_bits)
        if bits > MAX_FORMULA_BITS:
            raise _too_costly(tree, bits)
        self.work += cost.top_bits + cost.bottom_bits
        if self.work > MAX_FORMULA_WORK:
            raise ReadError(
                "The formula is too large to grade: comparing it would compute too many large numbers. "
                "Write it with small numbers and few terms."
            )
        if cost.poly_degree > MAX_FORMULA_POLY_DEGREE:
            raise ReadError(
                f"The formula's degree is above {MAX_FORMULA_DEGREE} once its fractions are put over one "
                "denominator: no answer here is so complex."
            )
        return cost

    def cost(self, tree: Tree) -> FormulaCost:
        tag = tree[0]
        if tag == "num":
            value = tree[1]
            assert isinstance(value, Fraction)
            top_bits, bottom_bits = _bits_of(_constant_checked(value, tree))
            return self.node(tree, FormulaCost(top_bits, bottom_bits, 0, 0, 0, 0, value))
        if tag == "sym":
            return self.node(tree, FormulaCost(POINT_BITS + 1, 1, 1, 0, 0, 0, None))
        if tag == "neg":
            inner = self.cost(_child(tree, 1))
            constant = -inner.constant if inner.constant is not None else None
            return self.node(tree, _with_constant(inner, constant))
        if tag in {"add", "mul"}:
            children = tree[1]
            assert isinstance(children, tuple)
            costs = [self.cost(child) for child in children]
            total = costs[0]
            for each in costs[1:]:
                total = self.node(tree, _added(total, each) if tag == "add" else _multiplied(total, each))
            # The numbers among the terms or factors, combined: d*1e300*1e300 writes 1e600 as surely as
            # 1e300*1e300*d does (their size is bounded: each is, and so is their product's bits).
            numbers = [c.constant for c in costs if c.constant is not None]
            combined = _combined(tree, numbers) if len(numbers) > 1 else None
            constant = combined if len(numbers) == len(costs) else None
            return self.node(tree, _with_constant(total, constant))
        if tag == "div":
            top = self.cost(_child(tree, 1))
            bottom = self.cost(_child(tree, 2))
            if bottom.constant == 0:
                raise ReadError(f"Division by zero: `{shown(tree)}` divides by 0.")
            cost = FormulaCost(
                top.top_bits + bottom.bottom_bits,
                top.bottom_bits + bottom.top_bits,
                top.top_degree + bottom.bottom_degree,
                top.bottom_degree + bottom.top_degree,
                top.zero_degree + bottom.zero_degree + bottom.top_degree,
                0,
                None,
            )
            self.node(tree, cost)
            constant = (
                _constant_checked(top.constant / bottom.constant, tree)
                if top.constant is not None and bottom.constant is not None
                else None
            )
            return _with_constant(cost, constant)
        base = self.cost(_child(tree, 1))
        exponent = tree[2]
        assert isinstance(exponent, int)
        k = abs(exponent)
        if exponent < 0 and base.constant == 0:
            raise ReadError(f"Division by zero: `{shown(tree)}` is 0 to a negative power.")
        top_bits, bottom_bits = (
            (base.top_bits, base.bottom_bits) if exponent >= 0 else (base.bottom_bits, base.top_bits)
        )
        top_degree, bottom_degree = (
            (base.top_degree, base.bottom_degree) if exponent >= 0 else (base.bottom_degree, base.top_degree)
        )
        cost = FormulaCost(
            max(1, k * top_bits),
            max(1, k * bottom_bits),
            k * top_degree,
            k * bottom_degree,
            base.zero_degree + (base.top_degree if exponent < 0 else 0),
            0,
            None,
        )
        # The bits are bounded before the power is computed, so 10^8^8 is refused unbuilt.
        self.node(tree, cost)
        constant = _constant_checked(base.constant**exponent, tree) if base.constant is not None else None
        return _with_constant(cost, constant)


def _child(tree: Tree, index: int) -> Tree:
    child = tree[index]
    assert isinstance(child, tuple)
    return child


def _with_constant(cost: FormulaCost, constant: Fraction | None) -> FormulaCost:
    return FormulaCost(
        cost.top_bits, cost.bottom_bits, cost.top_degree, cost.bottom_degree, cost.zero_degree, 0, constant
    )


def _added(a: FormulaCost, b: FormulaCost) -> FormulaCost:
    # a/b + c/d = (a*d + c*b) / (b*d), unreduced
    return FormulaCost(
        max(a.top_bits + b.bottom_bits, b.top_bits + a.bottom_bits) + 1,
        a.bottom_bits + b.bottom_bits,
        max(a.top_degree + b.bottom_degree, b.top_degree + a.bottom_degree),
        a.bottom_degree + b.bottom_degree,
        a.zero_degree + b.zero_degree,
        0,
        None,
    )


def _multiplied(a: FormulaCost, b: FormulaCost) -> FormulaCost:
    return FormulaCost(
        a.top_bits + b.top_bits,
        a.bottom_bits + b.bottom_bits,
        a.top_degree + b.top_degree,
        a.bottom_degree + b.bottom_degree,
        a.zero_degree + b.zero_degree,
        0,
        None,
    )


def _combined(tree: Tree, values: list[Fraction]) -> Fraction:
    """The sum or product of a sum's or product's numbers, checked like any number it writes."""
    total = Fraction(0 if tree[0] == "add" else 1)
    for value in values:
        total = total + value if tree[0] == "add" else total * value
    return _constant_checked(total, tree)


def formula_cost(tree: Tree) -> FormulaCost:
    """What comparing ``tree`` costs (see `FormulaCost`), computed without evaluating it.

    Raises:
        ReadError: a number the formula writes, or one its comparison would compute, is too large
            (or too close to zero), a constant divisor is zero, or the whole work is too large.
    """
    costing = _Costing()
    cost = costing.cost(tree)
    return FormulaCost(
        cost.top_bits,
        cost.bottom_bits,
        cost.top_degree,
        cost.bottom_degree,
        cost.zero_degree,
        costing.work,
        cost.constant,
    )


_PRECEDENCE = {"add": 1, "neg": 2, "mul": 3, "div": 3, "pow": 4, "num": 5, "sym": 5}


def formula_text(tree: Tree) -> str:
    """A formula written as the reader reads it back: ``12*d^2 + 13*d``, ``T*(T - 1)/2``."""
    return _text(tree, compact=False)


def shown(tree: Tree) -> str:
    """A part of a formula for a message: long numbers in scientific notation (``1e300``), clipped."""
    return clip(_text(tree, compact=True), 60)


def _number_text(value: Fraction, compact: bool) -> str:
    text = str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    if not compact or len(text) <= 15:
        return text
    size = log10_abs(value)
    exponent = math.floor(size)
    mantissa = f"{10 ** (size - exponent):.3g}"
    if mantissa == "10":
        mantissa, exponent = "1", exponent + 1
    return f"{'-' if value < 0 else ''}{mantissa}e{exponent}"


def _wrapped(tree: Tree, below: int, compact: bool) -> str:
    text = _text(tree, compact)
    tag = str(tree[0])
    negative_number = (
        tag == "num" and isinstance(tree[1], Fraction) and (tree[1] < 0 or tree[1].denominator != 1)
    )
    if _PRECEDENCE[tag] < below or (negative_number and below > 2):
        return f"({text})"
    return text


def _text(tree: Tree, compact: bool) -> str:
    tag = tree[0]
    if tag == "num":
        value = tree[1]
        assert isinstance(value, Fraction)
        return _number_text(value, compact)
    if tag == "sym":
        return str(tree[1])
    if tag == "add":
        children = tree[1]
        assert isinstance(children, tuple)
        out = _wrapped(children[0], 1, compact)
        for child in children[1:]:
            if child[0] == "neg":
                out += " - " + _wrapped(child[1], 3, compact)
            else:
                out += " + " + _wrapped(child, 2, compact)
        return out
    if tag == "neg":
        return "-" + _wrapped(tree[1], 3, compact)  # type: ignore[arg-type]
    if tag == "mul":
        children = tree[1]
        assert isinstance(children, tuple)
        return "*".join(_wrapped(child, 3, compact) for child in children)
    if tag == "div":
        return _wrapped(tree[1], 3, compact) + "/" + _wrapped(tree[2], 4, compact)  # type: ignore[arg-type]
    return _wrapped(tree[1], 5, compact) + "^" + str(tree[2])  # type: ignore[arg-type]
