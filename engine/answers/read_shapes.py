"""Reading tensor shapes (``[50, 512]``, ``50x512``, ``[T, d_model]``).

A dimension is a whole number (or an expression giving one) or a name;
`attnquiz.engine.answers.symbol_names` makes the ways a name is written (``d_model``, ``dmodel``,
``d_{model}``, ``dₘₒdₑₗ``) agree, for shapes and for formulas (`attnquiz.engine.answers.read_formulas`)
alike.
"""

from __future__ import annotations

import re

from attnquiz.engine.answers.parse import (
    FUNCTIONS,
    MAX_LENGTH,
    Dim,
    Invalid,
    Number,
    ReadError,
    Several,
    Token,
    canonical_name,
    clip,
    format_plain,
    known,
    remembered,
)
from attnquiz.engine.answers.read_matrices import Entry, lists, read_number
from attnquiz.engine.answers.symbol_names import spell_dimensions


def _read_dim(tokens: list[Token], start: int, end: int) -> Entry:
    tok = tokens[start]
    if end - start == 1 and tok.kind == "name" and canonical_name(tok.text) not in FUNCTIONS:
        return tok.text
    product = _dim_product(tokens[start:end])
    if product is not None:
        return product
    if any(t.kind == "name" and not known(t.text) for t in tokens[start:end]):
        written = clip("".join(t.text for t in tokens[start:end] if t.kind != "bad"))
        raise ReadError(
            f"`{written}` is not a dimension: write one name (such as T or d_model) or a whole number."
        )
    return read_number(tokens, start, end)


def _dim_product(span: list[Token]) -> str | None:
    """A dimension written as a product of names and whole numbers (``h*d_k``, ``8*d_k``, ``h·d_v``),
    as ``"h*d_k"``; None when the span is anything else (then it is a name or a number, or unreadable).
    """
    factors = [t for t in span if not (t.kind == "op" and t.text == "*")]
    if len(factors) < 2 or len(factors) != (len(span) + 1) // 2:
        return None
    operators = span[1::2]
    if any(t.kind != "op" or t.text != "*" for t in operators):
        return None
    if not all(t.kind == "name" or (t.kind == "num" and t.text.isdigit()) for t in factors):
        return None
    if not any(t.kind == "name" and not known(t.text) for t in factors):
        return None  # numbers and constants only (8*64, 2*pi): read as a number
    return "*".join(t.text for t in factors)


_SHAPE_TIMES = re.compile(r"×|(?<=\d)\s*[xX]\s*(?=[\d(])|(?<![\w.])[xX](?![\w.])|\s+by\s+")


@remembered
def shape(text: str) -> tuple[Dim, ...] | Invalid:
    """Read a tensor shape: ``[50, 512]``, ``(50,512)``, ``50x512``, ``50 × 512``, ``50 by 512``,
    ``[T, 512]``, ``(B, T, d_model)``. Each dimension is a whole number (or an expression giving
    one, like ``8*64``) or a name (``d_{model}`` is read as ``d_model``).

    ``[100; 768]`` is read as ``[100, 768]`` where ``;`` is the only separator: where the comma is the
    decimal mark (a comma-decimal spreadsheet's answers file) a list is written with semicolons, and a
    shape, one list of whole numbers, cannot mean rows by them."""
    if len(text) > MAX_LENGTH:
        return Invalid(f"The response is too long ({len(text):,} characters; the limit is {MAX_LENGTH:,}).")
    if ";" in text and "," not in text:
        text = text.replace(";", ",")
    spelled = spell_dimensions(_SHAPE_TIMES.sub(",", text))
    try:
        values, whole = lists(spelled, _read_dim, names=True)
    except Several:
        return Invalid("Could not tell the dimensions apart: separate them with commas, e.g. [T, 512].")
    except ReadError as err:
        return Invalid(err.reason, err.read_as)
    if whole or (len(values) == 1 and isinstance(values[0], list)):
        inner = values[0]
        values = inner if isinstance(inner, list) else [inner]
    dims: list[Dim] = []
    for position, value in enumerate(values, 1):
        if isinstance(value, str):
            dims.append(value)
        elif isinstance(value, Number):
            if value.exact is None or value.exact.denominator != 1 or value.exact < 1:
                return Invalid(
                    f"Dimension {position} is {format_plain(value.value)}: a dimension is a whole number "
                    "of at least 1, or a name such as T."
                )
            dims.append(value.exact.numerator)
        else:
            return Invalid("A shape is one list of dimensions, e.g. [T, 512]: there are too many brackets.")
    if not dims:
        return Invalid("The shape is empty: give its dimensions, e.g. [T, 512].")
    return tuple(dims)


__all__ = ["shape"]
