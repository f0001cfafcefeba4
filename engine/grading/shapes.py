"""Shapes: a tensor's dimensions, as numbers or names, compared after each name stands for its value or
product, and a wrong one checked for the dimensions in reverse order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attnquiz.engine.answers import parse, read_shapes, symbol_names
from attnquiz.engine.answers.kinds import Mistake, ShapeAnswer
from attnquiz.engine.grading.outcome import REVERSED, Grade, correct, invalid, named, slip, wrong


def _canonical(dims: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(symbol_names.canonical_symbol(d) if isinstance(d, str) else d for d in dims)


def _declared(answer: ShapeAnswer, mistakes: Sequence[Mistake]) -> dict[str, int | None]:
    """Every name the question uses, canonical, with the number it stands for (None: a symbol).

    The answer declares the names its prompt uses; names in listed mistakes are readable too, so
    that every mistake can be typed back.
    """
    declared = {symbol_names.canonical_symbol(name): value for name, value in answer.symbols}
    for name, _ in answer.products:
        declared.setdefault(symbol_names.canonical_symbol(name), None)
    for mistake in mistakes:
        if isinstance(mistake.value, tuple):
            for d in mistake.value:
                for factor in _factors(d):
                    declared.setdefault(factor, None)
    return declared


def _factors(dim: Any) -> list[str]:
    """The names of a dimension, canonical: one for a name, several for a product (h*d_k)."""
    if not isinstance(dim, str):
        return []
    return [symbol_names.canonical_symbol(f.strip()) for f in dim.split("*") if not f.strip().isdigit()]


Monomial = tuple[int, tuple[str, ...]]


def _substituted(
    dims: Sequence[Any], declared: dict[str, int | None], products: dict[str, str] | None = None
) -> tuple[Monomial, ...]:
    """Each dimension as a product in normal form, (coefficient, sorted names): a name that stands
    for a number counts as that number, and a name stated as a product of others (d_model = h·d_k)
    as that product, so that [B, T, h*d_k] and [B, T, d_model] agree."""
    return tuple(_monomial(d, declared, products or {}) for d in dims)


def _monomial(
    dim: Any, declared: dict[str, int | None], products: dict[str, str], depth: int = 0
) -> Monomial:
    if isinstance(dim, int):
        return dim, ()
    coefficient, names = 1, list[str]()
    for factor in str(dim).split("*"):
        factor = factor.strip()
        if factor.isdigit():
            coefficient *= int(factor)
            continue
        key = symbol_names.canonical_symbol(factor)
        value = declared.get(key)
        if value is not None:
            coefficient *= value
        elif key in products and depth < 8:  # a product of products, bounded (a cycle stops here)
            inner, more = _monomial(products[key], declared, products, depth + 1)
            coefficient *= inner
            names += more
        else:
            names.append(key)
    return coefficient, tuple(sorted(names))


def _unreadable_names(
    answer: ShapeAnswer, found: tuple[Any, ...], declared: dict[str, int | None]
) -> str | None:
    """Why a response's dimension names cannot be graded for this item (None when they can).

    A name the question does not use is unreadable rather than wrong, as an unknown function name
    is for numbers (`banana`, `t` for `T`); so is a name for a size the student was asked to work
    out, where every dimension of the answer is a number.
    """
    names = [f for d in found if isinstance(d, str) for f in d.split("*") if not f.strip().isdigit()]
    strange = [d for d in names if symbol_names.canonical_symbol(d) not in declared]
    spelled = [name for name, _ in answer.symbols]
    if strange:
        if not spelled:
            return (
                f"{strange[0]} is not a number: this question gives every size, so each dimension is "
                "a number."
            )
        meant = symbol_names.similar_symbols(strange[0], spelled)
        guess = f" Did you mean {' or '.join(meant)}?" if meant else ""
        return (
            f"This question has no dimension named {strange[0]} (names are case-sensitive; it uses "
            f"{', '.join(spelled)}).{guess}"
        )
    if not answer.symbolic:
        unknown = [d for d in names if declared.get(symbol_names.canonical_symbol(d)) is None]
        if unknown:
            return (
                f"This question asks for the sizes as numbers, and {unknown[0]} is one to work out: "
                "write its value."
            )
    return None


def grade_shape(answer: ShapeAnswer, response: str, mistakes: Sequence[Mistake]) -> Grade:
    """Grade a shape: a name the question does not use is invalid, not wrong."""
    found = read_shapes.shape(response)
    if isinstance(found, parse.Invalid):
        return invalid(answer, found.reason, found.read_as)
    read = parse.echo_shape(found)
    declared = _declared(answer, mistakes)
    unreadable = _unreadable_names(answer, found, declared)
    if unreadable is not None:
        return invalid(answer, unreadable, read)
    products = {symbol_names.canonical_symbol(name): text for name, text in answer.products}
    given, target = _substituted(found, declared, products), _substituted(answer.dims, declared, products)
    if given == target:
        return correct(read)
    for mistake in mistakes:
        if isinstance(mistake.value, tuple) and _substituted(mistake.value, declared, products) == given:
            return named(mistake, read)
    n = len(target)
    if len(given) != n:
        return wrong(f"The answer has {n} dimensions; you gave {len(given)}.", read)
    if n > 1 and given[::-1] == target:
        feedback = "Those are the right dimensions in reverse order: check which axis comes first."
        return slip(REVERSED, found, feedback, read)
    off = [str(i + 1) for i, (t, g) in enumerate(zip(target, given, strict=True)) if t != g]
    where = (
        f"dimension {off[0]} is" if len(off) == 1 else f"dimensions {', '.join(off[:-1])} and {off[-1]} are"
    )
    return wrong(f"Not correct: {where} off.", read)


__all__ = ["Monomial", "grade_shape"]
