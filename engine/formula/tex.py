"""Formula answers as a marker reads them: simplified, then written in TeX (``$49152\\,T$``, ``$4T^2 d$``).

A formula item's answer is the author's expression with this variant's ``{{ }}`` values put in, so
the reader's tree keeps every factor as written: ``2*24*1024*T``, ``2*12*T*d``. A key shows it
*simplified* and *typeset*, the way a marker would write it on the board. Simplifying here is
deliberately light and exact (rational arithmetic on the reader's own tree, no sympy):

- numbers in a product are multiplied out, and a repeated factor becomes a power (``T*T*4*d`` is
  ``4T^2 d``); a factor to the power 0 goes;
- like terms of a sum are added (``2d + 3d`` is ``5d``), terms that cancel go;
- a quotient by a number becomes a fraction coefficient, a quotient by a product a fraction;
- a bracket is never multiplied out: ``d(12d + 13)`` stays as the author factored it.

The result is equal to the tree it came from (the tests check that at random points), so a key
can never show a value other than the one graded. Everything here is the reader's public API
(`attnquiz.engine.answers.formula_tree`); every key renderer and the LMS feedback call `answer_markup`
and render its Markdown with TeX like any prompt text.
"""

from __future__ import annotations

from fractions import Fraction

from attnquiz.engine.answers import formula_tree
from attnquiz.engine.answers.kinds import Answer, ExpressionAnswer, Mistake, PartsAnswer
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.markup import tex as markup

Tree = formula_tree.Tree

# The normal form: a sum of terms; a term is a coefficient and factors (a base to a non-zero whole
# power); a base is a symbol's name or a sum of at least two terms that was not multiplied out.
Base = str | tuple["Term", ...]
Factors = tuple[tuple[Base, int], ...]
Term = tuple[Fraction, Factors]
Sum = tuple[Term, ...]


def simplify(tree: Tree) -> Sum:
    """The formula as a sum of terms (see the module's docstring for what is simplified)."""
    tag = tree[0]
    if tag == "num":
        value = tree[1]
        assert isinstance(value, Fraction)
        return ((value, ()),) if value else ()
    if tag == "sym":
        return ((Fraction(1), ((str(tree[1]), 1),)),)
    if tag == "add":
        children = tree[1]
        assert isinstance(children, tuple)
        return _add([term for child in children for term in simplify(child)])
    if tag == "neg":
        return tuple((-coef, factors) for coef, factors in simplify(_child(tree, 1)))
    if tag == "mul":
        children = tree[1]
        assert isinstance(children, tuple)
        product: Sum = ((Fraction(1), ()),)
        for child in children:
            product = _multiply(product, simplify(child))
        return product
    if tag == "div":
        return _multiply(simplify(_child(tree, 1)), _power(simplify(_child(tree, 2)), -1))
    exponent = tree[2]
    assert isinstance(exponent, int)
    return _power(simplify(_child(tree, 1)), exponent)


def _child(tree: Tree, index: int) -> Tree:
    """A node's operand (the reader's nodes hold their operands as trees)."""
    child = tree[index]
    assert isinstance(child, tuple)
    return child


def _add(terms: list[Term]) -> Sum:
    """Like terms added, in the order each first appears; zero terms dropped."""
    totals: dict[frozenset[tuple[Base, int]], Fraction] = {}
    first: dict[frozenset[tuple[Base, int]], Factors] = {}  # the factors as the first such term writes them
    for coef, factors in terms:
        key = frozenset(factors)
        totals[key] = totals.get(key, Fraction(0)) + coef
        first.setdefault(key, factors)
    return tuple((coef, first[key]) for key, coef in totals.items() if coef)


def _single(value: Sum) -> Term:
    """A sum as one term: itself when it has one, otherwise a factor that is the whole bracket."""
    if len(value) == 1:
        return value[0]
    if not value:
        return (Fraction(0), ())
    return (Fraction(1), ((value, 1),))


def _multiply(a: Sum, b: Sum) -> Sum:
    (coef_a, factors_a), (coef_b, factors_b) = _single(a), _single(b)
    coef = coef_a * coef_b
    if not coef:
        return ()
    powers: dict[Base, int] = dict(factors_a)
    for base, exponent in factors_b:
        powers[base] = powers.get(base, 0) + exponent
    factors = tuple((base, e) for base, e in powers.items() if e)
    if abs(coef) == 1 and len(factors) == 1 and not isinstance(factors[0][0], str) and factors[0][1] == 1:
        return tuple((coef * c, f) for c, f in factors[0][0])  # 1*(d + 1) is d + 1: no bracket left
    return ((coef, factors),)


def _power(value: Sum, exponent: int) -> Sum:
    if exponent == 0:
        return ((Fraction(1), ()),)
    if len(value) != 1:
        if not value:  # 0 to a negative power cannot be: the reader's tree never asks for it
            return ()
        return ((Fraction(1), ((value, exponent),)),)
    coef, factors = value[0]
    return ((coef**exponent, tuple((base, e * exponent) for base, e in factors)),)


# ---------------------------------------------------------------------------------------------
# TeX
# ---------------------------------------------------------------------------------------------

_THIN_AFTER = 4
"""Digits from which a coefficient is set off from its symbols by a thin space (49152\\,T, but 4T)."""


def symbol_tex(name: str) -> str:
    """A symbol's name in TeX: ``d_k`` as ``d_{k}``, ``d_model`` as ``d_{\\text{model}}``."""
    head, _, tail = name.partition("_")
    head_tex = head if len(head) == 1 else rf"\mathit{{{head}}}"
    if not tail:
        return head_tex
    return f"{head_tex}_{{{tail}}}" if len(tail) == 1 else rf"{head_tex}_{{\text{{{tail}}}}}"


def tex(tree: Tree) -> str:
    """The formula simplified and in TeX (without dollars): ``49152\\,T``, ``\\frac{T(T - 1)}{2}``."""
    return _sum_tex(simplify(tree))


def formula_tex(formula: Formula) -> str:
    """A `Formula` (an answer's or a listed mistake's) simplified, as inline maths ``$...$``."""
    return f"${tex(formula.tree)}$"


def _sum_tex(value: Sum) -> str:
    if not value:
        return "0"
    out = ""
    for index, (coef, factors) in enumerate(value):
        body = _term_tex(abs(coef), factors)
        if index == 0:
            out = ("-" if coef < 0 else "") + body
        else:
            out += (" - " if coef < 0 else " + ") + body
    return out


def _factor_tex(base: Base, exponent: int, *, alone: bool = False) -> str:
    """One factor; ``alone``: the whole of a fraction's numerator or denominator (no bracket needed)."""
    if isinstance(base, str):
        text = symbol_tex(base)  # d_{k}^{2}: a subscript and a power on the same letter
    elif alone and exponent == 1:
        return _sum_tex(base)
    else:
        text = rf"\left({_sum_tex(base)}\right)"
    return text if exponent == 1 else f"{text}^{{{exponent}}}"


def _product_tex(number: int, factors: list[tuple[Base, int]], *, in_fraction: bool = False) -> str:
    """A positive whole coefficient (1 is left out before factors) and factors, as TeX; in a
    fraction, a bracket that is all of the numerator or the denominator is written without one."""
    alone = in_fraction and number == 1 and len(factors) == 1
    pieces = [_factor_tex(base, exponent, alone=alone) for base, exponent in factors]
    if not pieces:
        return str(number)
    if number == 1:
        return " ".join(pieces)
    join = r"\," if len(str(number)) >= _THIN_AFTER else " "
    return str(number) + join + " ".join(pieces)


def _term_tex(coef: Fraction, factors: Factors) -> str:
    above = [(base, e) for base, e in factors if e > 0]
    below = [(base, -e) for base, e in factors if e < 0]
    if coef.denominator == 1 and not below:
        return _product_tex(coef.numerator, above)
    top = _product_tex(coef.numerator, above, in_fraction=True)
    bottom = _product_tex(coef.denominator, below, in_fraction=True)
    return rf"\frac{{{top}}}{{{bottom}}}"


# ---------------------------------------------------------------------------------------------
# Answers in keys
# ---------------------------------------------------------------------------------------------


def answer_markup(answer: Answer) -> str:
    """An answer as a key shows it, in Markdown with TeX: a formula typeset and simplified, every
    other kind as its plain text (escaped, so that ``[T, 512]`` is not read as Markdown)."""
    if isinstance(answer, ExpressionAnswer):
        return formula_tex(answer.formula)
    if isinstance(answer, PartsAnswer):
        bar = markup.escape_markdown(" | ")  # a bar of its own, not a table's (the brief key is a table)
        return bar.join(f"({p.label}) {answer_markup(p.answer)}" for p in answer.parts)
    return markup.escape_markdown(answer.format())


def mistake_markup(mistake: Mistake, answer: Answer) -> str:
    """A listed mistake's value as a key shows it (a formula typeset, like `answer_markup`)."""
    if isinstance(mistake.value, Formula):
        return formula_tex(mistake.value)
    return markup.escape_markdown(mistake.format(answer))


def is_typeset(answer: Answer) -> bool:
    """Whether `answer_markup` shows this answer as maths (then a renderer renders it as markup)."""
    if isinstance(answer, PartsAnswer):
        return any(isinstance(p.answer, ExpressionAnswer) for p in answer.parts)
    return isinstance(answer, ExpressionAnswer)


__all__ = [
    "answer_markup",
    "formula_tex",
    "is_typeset",
    "mistake_markup",
    "simplify",
    "symbol_tex",
    "tex",
]
