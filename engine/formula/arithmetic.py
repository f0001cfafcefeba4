"""The operators and functions of formula expressions, computed with the response reader's bounded arithmetic.

Numbers go through the arithmetic of the reader of student responses (`attnquiz.engine.answers.parse`:
exact fractions while only rationals are involved, the same limits on magnitudes); lists are
added, multiplied and divided entry by entry or with a number. `FUNCTIONS` are the functions an
expression may call, the reader's element-wise ones among them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from attnquiz.engine.answers import parse
from attnquiz.engine.answers.arithmetic import call_function, checked, divide, power
from attnquiz.engine.formula.values import (
    ExpressionError,
    Num,
    Value,
    checked_value,
    equal,
    exact_fraction,
    guarded,
    is_whole,
    kind_of,
    plain,
)

MAX_DIVISORS_OF = 10**9
"""Largest number ``divisors`` accepts (its divisors are found by trial division up to its root)."""
MAX_INTEGER = 10**15
"""Largest whole number that integer functions (``gcd``, ``mod``, ...) accept."""

# ---------------------------------------------------------------------------------------------
# Operators
# ---------------------------------------------------------------------------------------------


def _number(value: Value, where: str) -> Num:
    if isinstance(value, bool | tuple):
        raise ExpressionError(f"{where} needs a number, not {kind_of(value)}")
    return value


def binary(op: str, a: Value, b: Value) -> Value:
    """``a op b`` for ``+ - * / ^``: of numbers, entry by entry of lists, or of a list and a number."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        if isinstance(a, tuple) and isinstance(b, tuple):
            if len(a) != len(b):
                raise ExpressionError(f"`{op}` of lists of different lengths ({len(a)} and {len(b)})")
            return tuple(binary(op, x, y) for x, y in zip(a, b, strict=True))
        if op == "^":
            raise ExpressionError("`^` needs numbers, not lists")
        if isinstance(a, tuple):
            return tuple(binary(op, x, b) for x in a)
        assert isinstance(b, tuple)
        return tuple(binary(op, a, y) for y in b)
    x = _number(a, f"`{op}`")
    y = _number(b, f"`{op}`")
    if op == "+":
        return guarded(lambda: checked(x + y))
    if op == "-":
        return guarded(lambda: checked(x - y))
    if op == "*":
        return guarded(lambda: checked(x * y))
    if op == "/":
        if y == 0:
            raise ExpressionError("division by zero")
        # The reader's division: exact operands give an exact quotient (1/3 stays a third).
        return guarded(lambda: divide(x, y))
    return guarded(lambda: power(x, y))


def negate(value: Value) -> Value:
    """``-value``: of a number, or of each entry of a list."""
    if isinstance(value, tuple):
        return tuple(negate(v) for v in value)
    return -_number(value, "`-`")


def compare(op: str, a: Value, b: Value) -> bool:
    """``a op b`` for ``< <= > >= == !=``: equality of any values, order of numbers."""
    if op == "==":
        return equal(a, b)
    if op == "!=":
        return not equal(a, b)
    x = _number(a, f"`{op}`")
    y = _number(b, f"`{op}`")
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    return x >= y


def truth(value: Value, word: str) -> bool:
    """A condition's value, for ``word`` (``and``, ``or``, ``not``), refusing anything but true/false."""
    if not isinstance(value, bool):
        raise ExpressionError(f"`{word}` needs conditions (such as d > 0), not {kind_of(value)}")
    return value


def number_or_list(value: Value, where: str) -> Value:
    """``+value``: a number or a list of them as it is, refusing a condition."""
    if isinstance(value, tuple):
        return tuple(number_or_list(v, where) for v in value)
    return _number(value, where)


# ---------------------------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------------------------


def _whole(value: Value, fn: str, low: int = -MAX_INTEGER, high: int = MAX_INTEGER) -> int:
    number = _number(value, f"{fn}()")
    if not is_whole(number) or not low <= number <= high:
        span = f"from {low:,} to {high:,}" if low > -MAX_INTEGER else f"up to {high:,}"
        raise ExpressionError(f"{fn}() needs a whole number {span}, not {plain(number)}")
    return int(number)


def _list(value: Value, fn: str) -> tuple[Value, ...]:
    if not isinstance(value, tuple):
        raise ExpressionError(f"{fn}() needs a list, not {kind_of(value)}")
    return value


def _numbers(value: Value, fn: str) -> list[Num]:
    return [_number(v, f"{fn}()") for v in _list(value, fn)]


def _elementwise(name: str) -> Callable[[list[Value]], Value]:
    def run(args: list[Value]) -> Value:
        def one(value: Value) -> Value:
            if isinstance(value, tuple):
                return tuple(one(v) for v in value)
            x = _number(value, f"{name}()")
            return guarded(lambda: checked(call_function(name, x)))

        return one(args[0])

    return run


def _floor(args: list[Value]) -> Value:
    return checked_value(math.floor(exact_fraction(_number(args[0], "floor()"))))


def _ceil(args: list[Value]) -> Value:
    return checked_value(math.ceil(exact_fraction(_number(args[0], "ceil()"))))


def _round(args: list[Value]) -> Value:
    places = _whole(args[1], "round", 0, 12) if len(args) > 1 else 0
    scaled = exact_fraction(_number(args[0], "round()")) * 10**places
    # Half away from zero, as rounding is taught (Python's round() goes to even).
    whole = math.floor(abs(scaled) + Fraction(1, 2))
    return checked_value(Fraction(whole if scaled >= 0 else -whole, 10**places))


def _extreme(pick: Callable[[list[Num]], Num], name: str) -> Callable[[list[Value]], Value]:
    def run(args: list[Value]) -> Value:
        values = _numbers(args[0], name) if len(args) == 1 else [_number(a, f"{name}()") for a in args]
        if not values:
            raise ExpressionError(f"{name}() of an empty list")
        return pick(values)

    return run


def _sum(args: list[Value]) -> Value:
    total: Value = 0
    for value in _list(args[0], "sum"):
        total = binary("+", total, value)
    return total


def _len(args: list[Value]) -> Value:
    return len(_list(args[0], "len"))


def _gcd(args: list[Value]) -> Value:
    return math.gcd(*(_whole(a, "gcd") for a in args))


def _lcm(args: list[Value]) -> Value:
    return checked_value(math.lcm(*(_whole(a, "lcm") for a in args)))


def _mod(args: list[Value]) -> Value:
    x = exact_fraction(_number(args[0], "mod()"))
    y = exact_fraction(_number(args[1], "mod()"))
    if y == 0:
        raise ExpressionError("mod() by zero")
    return checked_value(x - y * math.floor(x / y))


def _divisors(args: list[Value]) -> Value:
    n = _whole(args[0], "divisors", 1, MAX_DIVISORS_OF)
    small = [k for k in range(1, math.isqrt(n) + 1) if n % k == 0]
    large = [n // k for k in reversed(small) if k * k != n]
    return tuple(small + large)


def _dot(args: list[Value]) -> Value:
    u, v = _list(args[0], "dot"), _list(args[1], "dot")
    if len(u) != len(v):
        raise ExpressionError(f"dot() of lists of different lengths ({len(u)} and {len(v)})")
    return _sum([tuple(binary("*", x, y) for x, y in zip(u, v, strict=True))])


def _softmax(args: list[Value]) -> Value:
    from attnquiz.engine import numerics

    scores = [float(x) for x in _numbers(args[0], "softmax")]
    if not scores:
        raise ExpressionError("softmax() of an empty list")
    return tuple(float(w) for w in numerics.softmax(scores))


@dataclass(frozen=True, slots=True)
class Function:
    """A function expressions may call: how many arguments it takes, and what it does."""

    arity: tuple[int, int | None]
    run: Callable[[list[Value]], Value]
    summary: str


# The element-wise functions are the response reader's own, so the two languages cannot drift apart.
_ELEMENTWISE = parse.FUNCTIONS
FUNCTIONS: dict[str, Function] = {
    **{
        name: Function((1, 1), _elementwise(name), f"{summary} (of each entry of a list)")
        for name, summary in _ELEMENTWISE.items()
    },
    "floor": Function((1, 1), _floor, "the whole number at or below x"),
    "ceil": Function((1, 1), _ceil, "the whole number at or above x"),
    "round": Function((1, 2), _round, "round(x) or round(x, places), halves away from zero"),
    "min": Function((1, None), _extreme(min, "min"), "the smallest of its arguments, or of a list"),
    "max": Function((1, None), _extreme(max, "max"), "the largest of its arguments, or of a list"),
    "sum": Function((1, 1), _sum, "the sum of a list"),
    "len": Function((1, 1), _len, "the number of entries of a list"),
    "gcd": Function((2, None), _gcd, "the greatest common divisor of whole numbers"),
    "lcm": Function((2, None), _lcm, "the least common multiple of whole numbers"),
    "mod": Function((2, 2), _mod, "mod(a, b), the remainder of a divided by b"),
    "divisors": Function((1, 1), _divisors, "the divisors of a whole number, smallest first"),
    "dot": Function((2, 2), _dot, "the dot product of two lists"),
    "softmax": Function((1, 1), _softmax, "the softmax of a list of scores"),
}


__all__ = [
    "FUNCTIONS",
    "MAX_DIVISORS_OF",
    "MAX_INTEGER",
    "Function",
    "binary",
    "compare",
    "negate",
    "number_or_list",
    "truth",
]
