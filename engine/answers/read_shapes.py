"""Reading tensor shapes (``[50, 512]``, ``50x512``, ``[T, d_model]``) and dimension names in any spelling.

A dimension is a whole number (or an expression giving one) or a name; `canonical_symbol` makes the
ways a name is written (``d_model``, ``dmodel``, ``d_{model}``, ``dₘₒdₑₗ``) agree, for shapes and for
formulas (`attnquiz.engine.answers.read_formulas`) alike.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence

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
_SUBSCRIPT_BRACES = re.compile(r"_\{(\w+)\}")
_TEX_WORD = re.compile(r"\\(?:text|textrm|mathrm|mathit|operatorname)\s*\{([^{}]*)\}")
_SUBSCRIPT_LETTERS = dict(zip("ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ₀₁₂₃₄₅₆₇₈₉", "aeoxhklmnpstijruv0123456789", strict=True))
_SUBSCRIPT_RUN = re.compile(f"[{''.join(_SUBSCRIPT_LETTERS)}]+")


def _subscripts_as_underscores(text: str) -> str:
    """``dₖ`` → ``d_k``, ``dₘₒdₑₗ`` → ``d_model``: the terminal's rendering of a subscript, typed back."""
    return _SUBSCRIPT_RUN.sub(lambda m: "_" + "".join(_SUBSCRIPT_LETTERS[c] for c in m.group()), text)


def spell_dimensions(text: str) -> str:
    """A shape's dimension names in one spelling: ``d_{\\text{model}}``, ``d_{model}`` and ``dₖ`` become
    ``d_model`` and ``d_k`` (`canonical_symbol` then makes ``dmodel`` and ``d_model`` agree)."""
    return _SUBSCRIPT_BRACES.sub(r"_\1", _TEX_WORD.sub(r"\1", _subscripts_as_underscores(text)))


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


def similar_symbols(text: str, names: Sequence[str]) -> list[str]:
    """The declared names a student probably meant by an unknown one: the same name in another case
    (D_model), a name with the same stem (d for d_model, d_model for d, d_k for dk), or one a typo
    away (d_modle)."""
    typed = canonical_symbol(text)
    stem = text.split("_")[0]
    found: list[str] = []
    for name in names:
        canonical = canonical_symbol(name)
        if (
            canonical.lower() == typed.lower()
            or name.split("_")[0] == stem
            or (len(typed) > 1 and canonical.startswith(typed))
        ):
            found.append(name)
    close = difflib.get_close_matches(text, list(names), n=2, cutoff=0.75)
    return list(dict.fromkeys([*found, *close]))[:3]


@functools.lru_cache(maxsize=4096)  # the few names of a bank's shapes, asked for at every shape graded
def canonical_symbol(name: str) -> str:
    """A dimension name without subscript marks, so ``d_model``, ``dmodel`` and ``d_{model}`` agree.

    Case still matters (``T`` is not ``t``), and no other aliases are made: a bare ``d`` could
    mean d_model, d_k or d_ff.
    """
    return spell_dimensions(name).replace("_", "").replace("{", "").replace("}", "")


__all__ = [
    "canonical_symbol",
    "shape",
    "spell_dimensions",
]
