"""The arithmetic of a response: numbers as written, the expression grammar, exact values with limits.

A literal (``1.90``, ``-5.9e5``, ``589,824``) is read with the place of its last significant digit;
an expression (``2*tanh(2)``, ``768^2 + 768``) is evaluated as it is parsed, by recursive descent over
the tokens of `attnquiz.engine.answers.parse`, exactly while only rationals are involved. Every
operation is bounded before it is computed (see `attnquiz.engine.answers.parse`'s docstring). The
readers of numbers, of vectors and matrices and of shapes evaluate their entries here; a formula
item's expressions (`attnquiz.engine.formula.expressions`) reuse the same bounded arithmetic.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction

from msgspec import Struct

from attnquiz.engine.answers.parse import (
    CONSTANTS,
    FUNCTIONS,
    MAX_DEPTH,
    MAX_MAGNITUDE,
    Number,
    ReadError,
    Several,
    Token,
    bad_char_reason,
    canonical_name,
    clip,
    known,
    unknown_name_reason,
)

# ---------------------------------------------------------------------------------------------
# Limits
# ---------------------------------------------------------------------------------------------

MAX_LOG10 = 300.0
"""Largest power of ten of any value read or written (the 1e300 of `MAX_MAGNITUDE`)."""
_MAX_BITS = 4096  # exact rationals beyond this size continue as floats, so big-integer work stays tiny
_MAX_EXPONENT_DIGITS = 6  # 1e9999999 is judged by the length of its exponent, never computed
_INT_LIMIT = 10**300
_EXACT_LIMIT = Fraction(_INT_LIMIT)
_SAFE_BITS = 996  # 2**996 < 1e300


# ---------------------------------------------------------------------------------------------
# Arithmetic with limits
# ---------------------------------------------------------------------------------------------

Num = int | Fraction | float  # exact whole numbers stay ints (fast); other rationals are Fractions


def _too_large() -> ReadError:
    return ReadError("The number is too large to grade (the limit is 1e300).")


def checked(value: Num) -> Num:
    """``value`` if it is finite and not too large; exact values that grew too long become floats."""
    if isinstance(value, int):
        # Below 2**996 (< 1e300) there is nothing to compare.
        if value.bit_length() > _SAFE_BITS and abs(value) > _INT_LIMIT:
            raise _too_large()
        return value
    if isinstance(value, Fraction):
        top, bottom = value.numerator.bit_length(), value.denominator.bit_length()
        if top > _SAFE_BITS and abs(value) > _EXACT_LIMIT:
            raise _too_large()
        if bottom == 1:
            return value.numerator
        if top > _MAX_BITS or bottom > _MAX_BITS:
            return float(value)
        return value
    if math.isnan(value):
        raise ReadError("The result is not a number (NaN).")
    if abs(value) > MAX_MAGNITUDE:
        raise _too_large()
    return value


def divide(a: Num, b: Num) -> Num:
    """``a / b``: exact for exact operands (1/3 stays a third), refused for a zero divisor.

    A float divided by a tiny exact value (``pi/1e-400``) is computed exactly and then rounded, since
    converting the divisor to a float first would divide by 0.0 (or overflow).
    """
    if b == 0:
        raise ReadError("Division by zero.")
    if isinstance(a, int) and isinstance(b, int):
        q, r = divmod(a, b)
        return q if r == 0 else checked(Fraction(a, b))
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, float) and isinstance(b, float):
            return checked(a / b)
        quotient = checked(Fraction(a) / Fraction(b))
        return float(quotient)
    return checked(Fraction(a) / b)


def _int_log10(n: int) -> float:
    bits = n.bit_length()
    if bits < 1000:
        return math.log10(n)
    shift = bits - 64
    return math.log10(n >> shift) + shift * math.log10(2)


def log10_abs(value: Num) -> float:
    """log10 of a nonzero value, without converting huge exact values to float."""
    if isinstance(value, int):
        return _int_log10(abs(value))
    if isinstance(value, Fraction):
        return _int_log10(abs(value.numerator)) - _int_log10(value.denominator)
    return math.log10(abs(value))


def _bits(value: int | Fraction) -> int:
    if isinstance(value, int):
        return value.bit_length()
    return max(value.numerator.bit_length(), value.denominator.bit_length())


def _float_op(fn: Callable[..., float], *args: float) -> float:
    """A math function whose overflow or domain error becomes an invalid response, not a crash."""
    try:
        return fn(*args)
    except OverflowError:
        raise _too_large() from None
    except ValueError:
        raise ReadError("The expression is not defined for these numbers.") from None


def power(base: Num, exponent: Num) -> Num:
    """``base ** exponent``, refused before it is computed when the result would be too large."""
    if isinstance(exponent, Fraction) and exponent.denominator == 1:
        exponent = exponent.numerator
    if base == 0:
        if exponent < 0:
            raise ReadError("Division by zero (zero to a negative power).")
        return 1 if exponent == 0 else 0
    if isinstance(exponent, int):
        n = exponent
        if abs(base) == 1:
            return base if n % 2 else _abs(base)
        size = float(n) * log10_abs(base)
        if size > MAX_LOG10:
            raise _too_large()
        if size < -MAX_LOG10:
            return 0.0
        if not isinstance(base, float) and abs(n) * _bits(base) <= _MAX_BITS:
            return checked(Fraction(base) ** n) if n < 0 else checked(base**n)
        return checked(_float_op(math.pow, float(base), float(n)))
    if base < 0:
        raise ReadError("A negative number to a fractional power is not a real number.")
    size = float(exponent) * log10_abs(base)
    if size > MAX_LOG10:
        raise _too_large()
    if size < -MAX_LOG10:
        return 0.0
    return checked(_float_op(math.pow, float(base), float(exponent)))


def _abs(value: Num) -> Num:
    return -value if value < 0 else value


def _exact_sqrt(value: int | Fraction) -> Num | None:
    """The square root of a rational square (sqrt(4/9) = 2/3), else None."""
    value = Fraction(value)
    num, den = math.isqrt(value.numerator), math.isqrt(value.denominator)
    if num * num == value.numerator and den * den == value.denominator:
        return checked(Fraction(num, den))
    return None


def call_function(name: str, arg: Num) -> Num:
    """An allowed function applied to a value, with its domain checked."""
    if name == "abs":
        return _abs(arg)
    if name == "sqrt":
        if arg < 0:
            raise ReadError("The square root of a negative number is not real.")
        exact = None if isinstance(arg, float) else _exact_sqrt(arg)
        return exact if exact is not None else math.sqrt(float(arg))
    if name in {"log", "ln", "log10", "log2"}:
        if arg <= 0:
            raise ReadError(f"The logarithm of {'zero' if arg == 0 else 'a negative number'} is not defined.")
        log10 = log10_abs(arg)
        return {"log10": log10, "log2": log10 / math.log10(2)}.get(name, log10 * math.log(10))
    x = float(arg)
    if name == "exp":
        if x > 690:
            raise _too_large()
        return math.exp(x)
    functions: dict[str, Callable[[float], float]] = {"tanh": math.tanh, "sin": math.sin, "cos": math.cos}
    if name in functions:
        return functions[name](x)
    if name == "tan":
        return checked(math.tan(x))
    raise ReadError(unknown_name_reason(name))  # pragma: no cover - names are checked before calls


# ---------------------------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------------------------


_LITERAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
MIN_LOG10 = -1000  # smaller literals are refused; larger ones stay exact (10**1000 has 3,322 bits)
"""Smallest power of ten of any nonzero literal (1e-1000)."""


def _malformed_reason(text: str) -> str:
    shown = f"`{clip(text)}`"
    if text.count(".") > 1:
        return (
            f"{shown} is not a number: it has more than one point. Write decimals with one point, "
            "and group thousands with commas or spaces (1,234,567)."
        )
    if "." in text.lower().partition("e")[2]:
        return f"{shown} is not a number: the exponent after `e` is a whole number (1.5e-3, not 1e-3.5)."
    return f"{shown} is not a number as written."


class _Literal(Struct, frozen=True):
    value: Num
    text: str
    last_place: int
    sigfigs: int


def read_literal(raw: str) -> _Literal:
    """A number as written: its exact value, and the place of its last significant digit."""
    if raw.isascii() and raw.isdigit() and len(raw) < 19:
        # The common case (a plain whole number) without the general bookkeeping below.
        significant = raw.lstrip("0").rstrip("0")
        zeros = len(raw) - len(raw.rstrip("0")) if significant else 0
        return _Literal(int(raw), raw, zeros, len(significant))
    text = raw.replace(",", "").replace("_", "").replace(" ", "")
    if _LITERAL.fullmatch(text) is None:
        raise ReadError(_malformed_reason(text))
    mantissa, _, exp_text = text.replace("E", "e").partition("e")
    if len(exp_text.lstrip("+-")) > _MAX_EXPONENT_DIGITS:
        raise ReadError(f"The exponent of `{clip(text)}` is too large to grade.")
    exponent = int(exp_text) if exp_text else 0
    int_part, point, frac_part = mantissa.partition(".")
    whole = int_part.lstrip("0")
    digits = (whole + frac_part).lstrip("0")
    if not digits:
        return _Literal(0, clip(text), -len(frac_part) + exponent, 0)
    # The place of the leading digit bounds the magnitude before any big number is built.
    leading = len(whole) - 1 if whole else -(len(frac_part) - len(frac_part.lstrip("0")) + 1)
    if leading + exponent > MAX_LOG10:
        raise _too_large()
    if point:
        last_place, sigfigs = exponent - len(frac_part), len(digits)
    else:
        significant = whole.rstrip("0")
        last_place, sigfigs = exponent + len(whole) - len(significant), len(significant)
    if leading + exponent < MIN_LOG10:
        # Refused before 10**999999 is built: the work is bounded, not only the exponent's digits.
        raise ReadError(
            f"`{clip(text)}` is too close to zero to grade (the limit is 1e{MIN_LOG10}); write 0 for zero."
        )
    scale = 10 ** len(frac_part)
    value = Fraction(int(int_part or "0") * scale + int(frac_part or "0"), scale) * Fraction(10) ** exponent
    return _Literal(checked(value), clip(text), last_place, sigfigs)


# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------


class Val(Struct, frozen=True):
    """A value while an expression is evaluated: the number, its text, and the literal it is, if one."""

    num: Num
    text: str
    literal: _Literal | None = None


class Expr:
    """Recursive descent over ``tokens[start:end]``, evaluating as it goes (no tree is kept).

    Grammar (``^`` is right-associative and binds tighter than a sign, so -2^2 = -4)::

        sum     := product (("+" | "-") product)*
        product := signed (("*" | "/") signed | <implicit> signed)*
        signed  := ("+" | "-") signed | power
        power   := postfix ("^" signed)?
        postfix := atom [superscript] ["%"]
        atom    := number | constant | function "(" sum ")" | "(" sum ")" | "√" postfix
    """

    def __init__(self, tokens: list[Token], start: int, end: int, *, allow_percent: bool = False) -> None:
        self.tokens = tokens
        self.start = start
        self.i = start
        self.end = end
        self.depth = 0
        self.allow_percent = allow_percent

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < self.end else None

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ReadError(f"The expression is nested too deeply (more than {MAX_DEPTH} levels).")

    def parse(self) -> Val:
        """The value of the whole span (an error if anything is left over)."""
        if self.i >= self.end:
            raise ReadError("An entry is empty.")
        val = self.sum()
        tok = self.peek()
        if tok is not None:
            self._leftover(tok, val)
        return val

    def _op(self, ops: str) -> Token | None:
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text in ops:
            return self.take()
        return None

    def sum(self) -> Val:
        left = self.product()
        while (tok := self._op("+-")) is not None:
            right = self.product()
            num = left.num + right.num if tok.text == "+" else left.num - right.num
            left = Val(checked(num), f"{left.text}{tok.text}{right.text}")
        return left

    def product(self) -> Val:
        left = self.signed()
        divided = False
        while (tok := self.peek()) is not None:
            if tok.kind == "op" and tok.text in "*/":
                self.take()
                right = self.signed()
                if tok.text == "/":
                    if right.num == 0:
                        raise ReadError("Division by zero.", f"{left.text}/{right.text}")
                    divided = True
                num = checked(left.num * right.num) if tok.text == "*" else divide(left.num, right.num)
                left = Val(num, f"{left.text}{tok.text}{right.text}")
            elif self._implicit(tok):
                if divided:
                    raise ReadError(
                        "A product written without `*` after a `/` is ambiguous: write 1/(2*pi) or (1/2)*pi.",
                        left.text,
                    )
                right = self.signed()
                left = Val(checked(left.num * right.num), f"{left.text}*{right.text}")
            else:
                break
        return left

    def _implicit(self, tok: Token) -> bool:
        """Whether ``tok`` starts a factor multiplied without ``*``: only where it is unambiguous."""
        if tok.space or self.i == self.start:
            return False
        prev = self.tokens[self.i - 1]
        starts = (
            tok.kind == "sqrt"
            or (tok.kind == "open" and tok.text == "(")
            or (tok.kind == "name" and known(tok.text))
        )
        # 2pi, 2(3+4), 2sqrt(2), 2√2, (1+2)(3+4), (1+2)pi; never pi(2), which looks like a call.
        return starts and (prev.kind in {"num", "sup"} or (prev.kind == "close" and prev.text == ")"))

    def signed(self) -> Val:
        tok = self._op("+-")
        if tok is None:
            return self.power()
        self.enter()
        inner = self.signed()
        self.depth -= 1
        num = inner.num if tok.text == "+" else -inner.num
        # A signed literal keeps its precision; a sign on a sign or on an expression does not.
        bare = inner.literal is not None and inner.text.removesuffix("%") == inner.literal.text
        return Val(num, f"{tok.text}{inner.text}", inner.literal if bare else None)

    def power(self) -> Val:
        base = self.postfix()
        if self._op("^") is None:
            return base
        self.enter()
        exponent = self.signed()
        self.depth -= 1
        return Val(power(base.num, exponent.num), f"{base.text}^{exponent.text}")

    def postfix(self) -> Val:
        val = self.atom()
        tok = self.peek()
        if tok is not None and tok.kind == "sup" and not tok.space:
            self.take()
            if not re.fullmatch(r"[+-]?\d{1,4}", tok.text):
                raise ReadError(f"Could not read the superscript at character {tok.pos + 1}.", val.text)
            val = Val(power(val.num, int(tok.text)), f"{val.text}^{int(tok.text)}")
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text == "%":
            if not self.allow_percent:
                raise ReadError(
                    "A percent sign is not expected here: give the number as a decimal (35% is 0.35).",
                    val.text,
                )
            self.take()
            val = Val(divide(val.num, 100), f"{val.text}%", val.literal)
        return val

    def atom(self) -> Val:
        tok = self.peek()
        if tok is None:
            prev = self.tokens[self.i - 1] if self.i > self.start else None
            after = f" after `{prev.text}`" if prev is not None else ""
            raise ReadError(f"The expression ends too early: a number is missing{after}.")
        if tok.kind == "num":
            self.take()
            lit = read_literal(tok.text)
            return Val(lit.value, lit.text, lit)
        if tok.kind == "name":
            return self.name()
        if tok.kind == "open" and tok.text == "(":
            self.take()
            self.enter()
            inner = self.sum()
            self.close(tok)
            self.depth -= 1
            return Val(inner.num, f"({inner.text})")
        if tok.kind == "open":
            raise Several()
        if tok.kind == "sqrt":
            self.take()
            self.enter()
            inner = self.postfix()
            self.depth -= 1
            text = inner.text if inner.text.startswith("(") else f"({inner.text})"
            return Val(checked(call_function("sqrt", inner.num)), f"sqrt{text}")
        raise ReadError(self._unexpected(tok))

    def close(self, opening: Token) -> None:
        tok = self.peek()
        if tok is None:
            raise ReadError(f"A `{opening.text}` is not closed (opened at character {opening.pos + 1}).")
        if tok.kind != "close":
            self._leftover(tok, None)
        if tok.text != ")":
            raise ReadError(f"`(` at character {opening.pos + 1} is closed by `{tok.text}`.")
        self.take()

    def name(self) -> Val:
        tok = self.take()
        key = canonical_name(tok.text)
        if key in CONSTANTS:
            return Val(CONSTANTS[key], key)
        if key not in FUNCTIONS:
            raise ReadError(unknown_name_reason(tok.text))
        opening = self.peek()
        if opening is None or opening.kind != "open" or opening.text != "(":
            raise ReadError(f"`{key}` needs its argument in parentheses, e.g. {key}(2).")
        self.take()
        self.enter()
        inner = self.sum()
        self.close(opening)
        self.depth -= 1
        return Val(checked(call_function(key, inner.num)), f"{key}({inner.text})")

    def _unexpected(self, tok: Token) -> str:
        where = f"at character {tok.pos + 1}"
        if tok.kind == "bad":
            return bad_char_reason(tok)
        if tok.kind == "close":
            return f"Unexpected `{tok.text}` {where}: there is no bracket to close."
        if tok.kind == "sup":
            return f"The superscript {where} has nothing to raise."
        if tok.kind == "op":
            return f"Unexpected `{tok.text}` {where}: a number is missing before it."
        return f"Unexpected `{tok.text}` {where}."

    def _leftover(self, tok: Token, val: Val | None) -> None:
        """Raise the error for a token that cannot continue the expression."""
        read = val.text if val is not None else ""
        if tok.kind in {"bad", "close", "sup"}:
            raise ReadError(self._unexpected(tok), read)
        if tok.kind == "name" and not known(tok.text):
            raise ReadError(unknown_name_reason(tok.text), read)
        if tok.kind in {"sep", "nl"} or tok.space or (tok.kind == "open" and tok.text != "("):
            raise Several()
        prev = self.tokens[self.i - 1]
        if prev.kind == "num" and tok.kind == "num" and tok.text.startswith("."):
            raise ReadError(_malformed_reason(prev.text + tok.text), read)
        raise ReadError(
            f"Missing operator between `{prev.text}` and `{tok.text}`: write `*` for a product.", read
        )


def number_from(val: Val) -> Number:
    """The `Number` a whole response or entry evaluated to, with its precision if it is a literal."""
    exact = None if isinstance(val.num, float) else Fraction(val.num)
    lit = val.literal  # set only for a literal, perhaps signed, perhaps a percentage
    if lit is not None:
        return Number(float(val.num), exact, val.text, lit.last_place, lit.sigfigs, val.text.endswith("%"))
    return Number(float(val.num), exact, val.text)


__all__ = [
    "divide",
]
