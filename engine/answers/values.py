"""Answer values: the plain values answers and mistakes hold (numbers, vectors, shapes, letters, formulas).

`normalise_value` turns numpy scalars and arrays, lists and sets into them; `format_value` writes
one at a tolerance's precision and `values_close` compares two, entry by entry.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any, cast

from msgspec import Struct

from attnquiz.engine.answers.tolerance import Tolerance

Vector = tuple[float, ...]
Matrix = tuple[tuple[float, ...], ...]
Dim = int | str
ShapeValue = tuple[Dim, ...]


class Formula(Struct, frozen=True):
    """A formula as a value (an `expression` answer's mistakes; a response read as a formula).

    ``text`` is the formula as the reader writes it back (``12*d^2 + 13*d``); ``tree`` is what the
    reader built (see `attnquiz.engine.answers.read_formulas.formula`), kept so that it is read only once.
    """

    text: str
    tree: tuple[object, ...]

    # Compared, hashed and shown by its text alone: the tree is how that text was read.
    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Formula(text={self.text!r})"

    @classmethod
    def of(cls, text: str, symbols: Sequence[str]) -> Formula:
        """An item's own formula, read by the same reader as students' formulas (a `ValueError`
        with the reason if it refuses it)."""
        return _item_formula(text, tuple(symbols))


@functools.lru_cache(maxsize=4096)
def _item_formula(text: str, symbols: tuple[str, ...]) -> Formula:
    """`Formula.of`, read once per text: an item writes the same few formulas in every variant (the
    answer and its mistakes), and a class's worth of variants would read them thousands of times.
    A refusal raises and is not remembered; a `Formula` is immutable, so sharing one is safe."""
    from attnquiz.engine.answers import formula_tree, symbolic

    tree = symbolic.read(text, symbols)
    return Formula(formula_tree.formula_text(tree), tree)


MistakeValue = float | int | Vector | Matrix | ShapeValue | frozenset[str] | Formula


def as_vector(values: Iterable[Any]) -> Vector:
    """Numbers of any kind (numpy's too) as a vector of floats."""
    return tuple(float(v) for v in values)


def as_matrix(rows: Iterable[Iterable[Any]]) -> Matrix:
    """Rows of numbers of any kind as a matrix of floats."""
    return tuple(as_vector(row) for row in rows)


def normalise_value(value: Any) -> MistakeValue:
    """numpy scalars and arrays, lists and sets turned into the plain values the kinds hold."""
    if type(value) in _PLAIN_NUMBERS:  # the common case, without the ABC checks below
        return cast(MistakeValue, _scalar(value))
    if type(value) is tuple:  # vectors and matrices as generators build them: the same, entry by entry
        return cast(MistakeValue, tuple(_entry(v) for v in value))
    if isinstance(value, frozenset | set):
        return frozenset(str(v) for v in value)
    if isinstance(value, Formula):
        return value
    if isinstance(value, str):
        raise TypeError("a mistake value is a number, a vector, a matrix, a shape or a set of letters")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, Sequence):
        items: Any = tuple(
            _scalar(v)
            if type(v) in _PLAIN_NUMBERS or not isinstance(v, Sequence) or isinstance(v, str)
            else normalise_value(v)
            for v in value
        )
        return cast(MistakeValue, items)
    return cast(MistakeValue, _scalar(value))


_PLAIN_NUMBERS = (int, float)  # exact types: bool and numpy scalars take the general path


def _entry(value: Any) -> Any:
    """One entry of a tuple value, as the general path of `normalise_value` turns it."""
    if type(value) in _PLAIN_NUMBERS:
        return _scalar(value)
    if type(value) is tuple:
        return normalise_value(value)
    if not isinstance(value, Sequence) or isinstance(value, str):
        return _scalar(value)
    return normalise_value(value)


def _scalar(value: Any) -> Any:
    if type(value) is float:  # the common case, without the checks below
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, str | bool):
        return value
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, int):
        return value
    as_float = float(value)
    return int(as_float) if as_float.is_integer() and abs(as_float) < 2**53 else as_float


def format_value(value: MistakeValue | str, tolerance: Tolerance, *, grouped: bool = True) -> str:
    """Any answer-shaped value (or a symbolic dimension) written at a tolerance's precision.

    A whole number alone is grouped in thousands (``1,179,648``, as the notes write counts); inside
    a list it is not, since there commas and spaces separate entries (``[768, 1179648]``).
    """
    if isinstance(value, frozenset):
        return ", ".join(sorted(value))
    if isinstance(value, Formula):
        return value.text
    if isinstance(value, tuple):
        return "[" + ", ".join(format_value(v, tolerance, grouped=False) for v in value) + "]"
    if isinstance(value, str):
        return value
    if isinstance(value, int) and tolerance.mode == "exact":
        return f"{value:,}" if grouped else str(value)
    return tolerance.format(float(value))


def values_close(tolerance: Tolerance, target: object, value: object) -> bool:
    """Whether ``value`` equals ``target`` at ``tolerance``, entry by entry for vectors and matrices."""
    if type(target) is float and type(value) is float:  # the common case, first (bool is not float)
        return tolerance.accepts(target, value)
    if type(target) is tuple and type(value) is tuple:  # vectors and matrices: each variant's mistakes
        if len(target) != len(value):
            return False
        for t, v in zip(target, value, strict=True):
            close = tolerance.accepts(t, v) if type(t) is float and type(v) is float else None
            if not (close if close is not None else values_close(tolerance, t, v)):
                return False
        return True
    if isinstance(target, bool) or isinstance(value, bool):
        return target == value
    if isinstance(target, Formula) and isinstance(value, Formula):
        from attnquiz.engine.answers import symbolic

        return symbolic.agrees(target.tree, value.tree)
    if isinstance(target, int | float) and isinstance(value, int | float):
        return tolerance.accepts(float(target), float(value))
    if isinstance(target, tuple) and isinstance(value, tuple):
        return len(target) == len(value) and all(
            values_close(tolerance, t, v) for t, v in zip(target, value, strict=True)
        )
    return target == value


__all__ = [
    "Formula",
    "MistakeValue",
    "format_value",
    "normalise_value",
    "values_close",
]
