"""The values of formula expressions (numbers, conditions, lists): read from YAML, compared, written out.

As in the reader of student responses (`attnquiz.engine.answers.parse`): exact whole numbers are
ints, other rationals Fractions, the rest floats; a value is checked against the reader's limits on
magnitude, and a limit the reader hits becomes an `ExpressionError` that says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, TypeAlias

from attnquiz.engine.answers.arithmetic import checked
from attnquiz.engine.answers.parse import ReadError
from attnquiz.engine.errors import QuizError

# As in the reader: exact whole numbers are ints, other rationals Fractions, the rest floats.
Num: TypeAlias = int | Fraction | float
Value: TypeAlias = "int | Fraction | float | bool | tuple[Value, ...]"
Env = Mapping[str, Value]
"""The variables an expression is computed with, by name."""

MAX_LIST = 1000
"""Longest list an expression may build (``divisors`` of a large number, a long vector)."""


class ExpressionError(QuizError):
    """An expression that cannot be read, or cannot be computed for these values (says why)."""


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


def from_python(value: Any, what: str = "a value") -> Value:
    """A YAML value (number, true/false, list of those) as an expression value.

    Decimals are read as written: ``0.1`` is exactly 1/10, so that sums of drawn values stay exact.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | Fraction):
        return checked_value(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExpressionError(f"{what} must be a finite number, not {value}")
        return checked_value(Fraction(repr(value)))
    if isinstance(value, list | tuple):
        if len(value) > MAX_LIST:
            raise ExpressionError(f"{what} is a list longer than {MAX_LIST}")
        return tuple(from_python(v, what) for v in value)
    raise ExpressionError(f"{what} must be a number or a list of numbers, not {type(value).__name__}")


def checked_value(value: Num) -> Num:
    """A number checked against the reader's limits on magnitude (an ExpressionError if it breaks one)."""
    return guarded(lambda: checked(value))


def to_python(value: Value) -> Any:
    """A value as plain Python: whole numbers as int, others as float, lists as lists."""
    if isinstance(value, bool):
        return value
    if isinstance(value, tuple):
        return [to_python(v) for v in value]
    if isinstance(value, int) or (isinstance(value, Fraction) and value.denominator == 1):
        return int(value)
    return float(value)


def is_number(value: Value) -> bool:
    """Whether ``value`` is a number (not a condition or a list)."""
    return isinstance(value, int | Fraction | float) and not isinstance(value, bool)


def is_whole(value: Value) -> bool:
    """Whether ``value`` is a whole number (exactly, or a float with no fractional part)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, Fraction):
        return value.denominator == 1
    return isinstance(value, float) and value.is_integer()


def kind_of(value: Value) -> str:
    """A value's kind in words, for messages."""
    if isinstance(value, bool):
        return "a condition (true/false)"
    if isinstance(value, tuple):
        return "a list"
    return "a number"


def equal(a: Value, b: Value) -> bool:
    """Exact equality of two values (numbers by value, lists entry by entry)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def exact_fraction(value: Num) -> Fraction:
    """A number as an exact fraction."""
    # A float is read as its shortest decimal, so that round(2.675, 2) is 2.68 as people expect.
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)


# ---------------------------------------------------------------------------------------------
# Writing values
# ---------------------------------------------------------------------------------------------

_GROUP_FROM = 10_000  # 2048 stays 2048; 589824 becomes 589,824, as the notes write counts


def format_value(value: Value, *, math_mode: bool = False, places: int | None = None) -> str:
    """A value for a prompt or a solution.

    Whole numbers are written in full, grouped in thousands from 10,000 (``589{,}824`` in TeX
    maths, ``589,824`` in prose); other numbers to ``places`` decimals when given, else to six
    significant figures with trailing zeros dropped. Lists are written ``[a, b]``, their whole
    numbers without grouping (``[768, 1179648]``), since in a list a comma separates entries.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        entries = (_ungrouped(v, math_mode=math_mode, places=places) for v in value)
        return "[" + ", ".join(entries) + "]"
    if places is not None:
        text = f"{float(value):.{places}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    if is_whole(value) and abs(float(value)) < 1e15:
        whole = int(value)
        if abs(whole) < _GROUP_FROM:
            return str(whole)
        grouped = f"{whole:,}"
        return grouped.replace(",", "{,}") if math_mode else grouped
    number = float(value)
    text = f"{number:.6g}"
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        power = int(exponent)
        return rf"{mantissa} \times 10^{{{power}}}" if math_mode else f"{mantissa}e{power}"
    return text


def formula_literal(value: Value, places: int | None = None) -> str:
    """A value written into a formula (the template of an expression answer or mistake): plain digits,
    exact, bracketed where a sign or a fraction bar could bind to its neighbours.

    ``24576``, never the prose ``24,576`` (which the formula reader cannot read); ``(1/3)``,
    ``(-2)``; a decimal value as the decimal it is (``0.1``); ``places`` rounds as in prose.
    """
    if isinstance(value, bool | tuple):
        raise ExpressionError(f"a formula takes numbers, not {kind_of(value)}")
    if places is not None:
        text = format_value(value, places=places)
        return f"({text})" if text.startswith("-") else text
    exact = exact_fraction(value)
    if exact.denominator == 1:
        text = str(exact.numerator)
    elif isinstance(value, float):
        text = repr(value)
    else:
        text = f"{exact.numerator}/{exact.denominator}"
    if "e" in text:  # a float in scientific notation, written as its exact fraction
        text = f"{exact.numerator}/{exact.denominator}"
    return f"({text})" if exact < 0 or "/" in text else text


def _ungrouped(value: Value, *, math_mode: bool, places: int | None) -> str:
    # is_whole is False for true/false, which are ints to isinstance.
    whole = places is None and isinstance(value, int | Fraction | float) and is_whole(value)
    if whole and isinstance(value, int | Fraction | float) and abs(float(value)) < 1e15:
        return str(int(value))
    return format_value(value, math_mode=math_mode, places=places)


def plain(value: Value) -> str:
    """A value for error messages: ``512``, ``0.3``, ``[1, 2]``."""
    if isinstance(value, tuple):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_whole(value) and abs(float(value)) < 1e15:
        return str(int(value))
    return f"{float(value):.6g}"


# ---------------------------------------------------------------------------------------------
# The reader's limits
# ---------------------------------------------------------------------------------------------


def sentence(reason: str) -> str:
    """A message of the response reader as a clause: no final point, a lower-case first letter."""
    text = reason.strip().rstrip(".")
    if len(text) > 1 and text[1].isupper():
        return text
    return text[:1].lower() + text[1:]


def guarded(fn: Callable[[], Num]) -> Num:
    """Run one step of the reader's arithmetic, turning its limits into expression errors."""
    try:
        return fn()
    except ReadError as err:
        raise ExpressionError(sentence(err.reason)) from None


__all__ = [
    "MAX_LIST",
    "Env",
    "ExpressionError",
    "Num",
    "Value",
    "checked_value",
    "equal",
    "exact_fraction",
    "format_value",
    "formula_literal",
    "from_python",
    "guarded",
    "is_number",
    "is_whole",
    "kind_of",
    "plain",
    "sentence",
    "to_python",
]
