"""Student response text → values (numbers, vectors, matrices, shapes, letters), never with eval.

A response is read by a small tokenizer and a recursive-descent parser over an allow-list of
operators (``+ - * / ^ **``, signs, parentheses), functions (``sqrt exp log ln log10 log2 tanh sin
cos tan abs``) and constants (``pi``/``π``, ``e``). Nothing a student types is ever handed to
Python's ``eval``/``exec`` or to sympy. Every step is bounded before it is computed: the length of
the text, the nesting depth, the size of exponents, of results and of exact integers, so hostile
input (``9**9**9``, a megabyte of digits, ten thousand parentheses) is refused at once.

Arithmetic is exact (``fractions.Fraction``) while only rationals are involved, so counts such as
``768^2 + 768`` stay exact, and continues in floats after a function or a constant.

Readers return the value or an ``Invalid`` that says why in a sentence (Markdown within the
`attnquiz.engine.markup.tex` subset) and echoes what could be read. What separates entries depends on the kind
being read, because the same characters mean different things: in a single number ``589,824`` and
``589 824`` group thousands, while in a vector commas and spaces separate entries, and MATLAB's
rule tells ``[1 -2]`` (two entries) from ``[1 - 2]`` (one).

Characters (one rule, in `normalise`): a response is read in ASCII. Decimal digits of every script
(Unicode category Nd: Arabic-Indic ``٢٥٫٥``, Devanagari ``१.७६``, fullwidth ``１.７６``, mathematical
bold ``𝟏.𝟕𝟔``) are the digits 0-9, and fullwidth forms of ASCII characters (``．``, ``－``, ``Ａ``)
are those characters; the echo shows what was read, in ASCII. Minus signs, dashes, ``×``, ``÷``
and unusual spaces are folded as well. Nothing else is: other look-alikes (``①``, subscript digits,
Greek letters) are invalid, naming the character, rather than guessed at.

Every string gives a value or an ``Invalid`` in bounded time: a malformed literal (``.5.``,
``1.2.3``) is named, a literal below 1e-1000 is refused before 10**1000000 is built, and a float
divided by a tiny exact value is computed exactly before it is rounded.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, NamedTuple, ParamSpec, TypeVar

# ---------------------------------------------------------------------------------------------
# Limits
# ---------------------------------------------------------------------------------------------

MAX_LENGTH = 2000
"""Longest response read, in characters (a 10×10 matrix fits; a megabyte is refused unread)."""
MAX_DEPTH = 50
"""Deepest nesting of brackets, signs, powers and function calls."""
MAX_MAGNITUDE = 1e300
"""Largest absolute value of any literal or intermediate result."""
_MAX_LOG10 = 300.0
_MAX_BITS = 4096  # exact rationals beyond this size continue as floats, so big-integer work stays tiny
_MAX_EXPONENT_DIGITS = 6  # 1e9999999 is judged by the length of its exponent, never computed
_INT_LIMIT = 10**300
_EXACT_LIMIT = Fraction(_INT_LIMIT)
_SAFE_BITS = 996  # 2**996 < 1e300

FUNCTIONS: dict[str, str] = {
    "sqrt": "square root",
    "exp": "exponential",
    "log": "natural logarithm",
    "ln": "natural logarithm",
    "log10": "base-10 logarithm",
    "log2": "base-2 logarithm",
    "tanh": "hyperbolic tangent",
    "sin": "sine",
    "cos": "cosine",
    "tan": "tangent",
    "abs": "absolute value",
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
ALLOWED_NAMES = ", ".join([*CONSTANTS, *FUNCTIONS])
_NOT_FINITE = {"nan", "inf", "infinity", "infty", "oo"}


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Invalid:
    """A response that cannot be graded: ``reason`` says why (Markdown); ``read_as`` echoes what was read.

    ``read_as`` is plain text (not markup), empty when nothing could be read.
    """

    reason: str
    read_as: str = ""


@dataclass(frozen=True, slots=True)
class Number:
    """One number as read: its value (exact where possible) and how precisely it was written.

    ``text`` is the response normalised (``2*tanh(2)``, ``589824``). For a plain literal such as
    ``1.90`` or ``-5.9e5`` (one number as written, perhaps signed), ``last_place`` is the power of
    ten of its last significant digit (-2 for ``1.90``, 4 for ``5.9e5``) and ``sigfigs`` its count
    of significant figures; trailing zeros of a whole number count as not significant (``590000``
    has 2), the reading that gives a student the benefit of the doubt. Both are None for
    expressions, whose precision is exact.
    """

    value: float
    exact: Fraction | None
    text: str
    last_place: int | None = None
    sigfigs: int | None = None
    percent: bool = False

    @property
    def is_literal(self) -> bool:
        """Whether the response was one number as written (so its precision is known)."""
        return self.last_place is not None

    def echo(self) -> str:
        """How the number was read, e.g. ``1.93`` or ``2*tanh(2) = 1.92806``."""
        if self.is_literal and not self.percent:
            return self.text
        return f"{self.text} = {format_plain(self.value)}"


Dim = int | str
Vector = tuple[Number, ...]
Matrix = tuple[tuple[Number, ...], ...]
Structure = Number | Vector | Matrix


_P = ParamSpec("_P")
_R = TypeVar("_R")
REMEMBERED = 4096
"""Texts each reader remembers its reading of (`_remembered`)."""


def _remembered(read: Callable[_P, _R]) -> Callable[_P, _R]:
    """``read``, remembering its last `REMEMBERED` readings of texts within `MAX_LENGTH`.

    A reader is pure and its result immutable, and the same texts come back: grading reads a
    part's text up to four times, a formula item's generator reads the same formula for every
    variant, and a class writes the same answers. A longer text is refused unread anyway, and is
    never kept: a server that remembered hostile megabyte responses would grow without bound.
    """
    cached = functools.lru_cache(maxsize=REMEMBERED)(read)

    @functools.wraps(read)
    def reader(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        text = args[0] if args else kwargs.get("text")
        if isinstance(text, str) and len(text) <= MAX_LENGTH:
            return cached(*args, **kwargs)  # type: ignore[arg-type]
        return read(*args, **kwargs)

    return reader


def format_plain(value: float) -> str:
    """A number for echoes: whole numbers in full, others to 6 significant figures."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def echo_structure(value: Structure) -> str:
    """A number, vector or matrix as read, e.g. ``[0.881, 0.119]``."""
    if isinstance(value, Number):
        return value.echo()
    parts = [echo_structure(v) if isinstance(v, tuple) else _entry_echo(v) for v in value]
    return "[" + ", ".join(parts) + "]"


def _entry_echo(value: Number) -> str:
    return value.text if value.is_literal else format_plain(value.value)


def echo_shape(dims: tuple[Dim, ...]) -> str:
    """A shape as read, e.g. ``[T, 512]``."""
    return "[" + ", ".join(str(d) for d in dims) + "]"


class ReadError(Exception):
    """Internal: the first problem found, with what was read up to it."""

    def __init__(self, reason: str, read_as: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.read_as = read_as


class _Several(ReadError):
    """Internal: a single number was expected but the response goes on with another entry."""

    def __init__(self) -> None:
        super().__init__("Expected a single number, but read several.")


# ---------------------------------------------------------------------------------------------
# Characters
# ---------------------------------------------------------------------------------------------

TRANSLATE = str.maketrans(
    {
        "\u2212": "-",  # minus sign
        "\u2013": "-",  # en dash, which word processors put in place of a minus
        "\u00b7": "*",
        "\u22c5": "*",
        "\u2219": "*",
        "\u00d7": "*",
        "\u00f7": "/",
        "\u2044": "/",
        "\u2215": "/",
        "\r": "\n",
        "\t": " ",
        "\u00a0": " ",
        "\u2007": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\u3000": " ",  # ideographic space
        "\u066b": ".",  # Arabic decimal separator, typed with Arabic-Indic digits
        "\u066c": ",",  # Arabic thousands separator
    }
)
_SUPERSCRIPTS = {
    "⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8",
    "⁹": "9", "⁻": "-", "⁺": "+",
}  # fmt: skip
_SHOWN_AS_IS = set("!\"#%&'()*+,-./:;<=>?@[]^_{|}~")


def describe_char(ch: str) -> str:
    """A character named so that feedback can show it safely, whatever it is."""
    if (ch.isascii() and ch.isalnum()) or ch in _SHOWN_AS_IS:
        return f"`{ch}`"
    name = unicodedata.name(ch, "")
    code = f"U+{ord(ch):04X}"
    return f"{code} ({name.lower()})" if name else code


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


_FULLWIDTH = range(0xFF01, 0xFF5F)  # fullwidth forms of the printable ASCII characters ！ … ～
_FULLWIDTH_OFFSET = 0xFEE0


def _fold_char(ch: str) -> str:
    digit = unicodedata.decimal(ch, None)
    if digit is not None:
        return str(digit)
    if ord(ch) in _FULLWIDTH:
        return chr(ord(ch) - _FULLWIDTH_OFFSET)
    return ch


def normalise(text: str) -> str:
    """Text with the characters that stand for ASCII ones replaced by them (see the module docstring).

    Minus signs, dashes, times and division signs and unusual spaces become ``- * /`` and a space;
    decimal digits of any script (Unicode category Nd: Arabic-Indic, Devanagari, fullwidth,
    mathematical bold ...) become ``0``-``9``; fullwidth forms of ASCII characters (what an input
    method in full-width mode types) become those characters. Nothing else is folded: a translation
    table, not NFKC, which would turn 768² into 7682. Whatever is left that is not ASCII is
    refused by the tokenizer, naming the character.
    """
    clean = text.replace("\r\n", "\n").translate(TRANSLATE)
    if clean.isascii():
        return clean
    return "".join(ch if ch.isascii() else _fold_char(ch) for ch in clean)


def _prepare(text: str) -> str:
    if len(text) > MAX_LENGTH:
        raise ReadError(f"The response is too long ({len(text):,} characters; the limit is {MAX_LENGTH:,}).")
    clean = normalise(text).strip(" \n")
    if not clean:
        raise ReadError("The response is empty.")
    return clean


_APPROX = "\u2248"  # ≈, as a worked solution writes an answer: ≈ 1.93

# A decimal times a power of ten, as people and worked solutions write one: 2.0 × 10^-9 (× is `*`
# by now), 2.0 x 10^-9, 2.0*10^(-9), 2.0 × 10⁻⁹. Read as the literal 2.0e-9, so that its digits
# keep their precision (2.0 has two significant figures).
_TIMES_TEN = re.compile(
    r"(?<![\w.])(?P<m>\d+(?:\.\d*)?|\.\d+)\s*(?:\*|[xX])\s*10\s*"
    r"(?:(?:\^|\*\*)\s*(?:\(\s*(?P<p>[+-]?\d+)\s*\)|(?P<e>[+-]?\d+))|(?P<s>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
    r"(?![\w.(^⁰¹²³⁴⁵⁶⁷⁸⁹]|\s*(?:\^|\*\*))"
)
_AFTER_OPERAND = set(")]}.") | set("0123456789")


def _power_of_ten_may_bind(text: str, start: int) -> bool:
    """Whether the decimal at ``start`` is a whole factor of its term, so that reading ``a × 10^k``
    as one literal keeps the value: not after ``^``, ``*`` or ``/`` (2^3 × 10^2 is 800, not 2^300),
    nor after a sign that follows one of them; after a space that follows an operand it starts the
    next entry of a list."""
    j = start - 1
    while j >= 0 and text[j] == " ":
        j -= 1
    if j < 0 or text[j] in "([{,;\n":
        return True
    if j < start - 1 and (text[j] in _AFTER_OPERAND or text[j].isalpha()):
        return True  # an entry of a list separated by spaces: 1x10^2 3x10^2
    if text[j] not in "+-":
        return False
    k = j - 1
    while k >= 0 and text[k] == " ":
        k -= 1
    if k >= 0 and text[k] in "eE" and k > 0 and (text[k - 1].isdigit() or text[k - 1] == "."):
        return False  # the sign of an exponent: 1e-3 × 10^2
    return k < 0 or text[k] in "([{,;\n" or text[k] in _AFTER_OPERAND or text[k].isalpha()


def as_written(clean: str) -> str:
    """A normalised number, vector or matrix with the forms a worked solution prints made plain: a
    leading ``≈`` dropped (``≈ 1.93``) and a decimal times a power of ten as one literal (``2.0 × 10^-9``
    is ``2.0e-9``). Not for formulas, where ``x`` may be a symbol."""
    if clean.startswith(_APPROX):
        clean = clean[1:].lstrip(" ")
        if not clean:
            raise ReadError("Only `≈` was read: give the number after it.")
    if "10" not in clean:
        return clean

    def literal(match: re.Match[str]) -> str:
        if not _power_of_ten_may_bind(match.string, match.start()):
            return match.group(0)
        exponent = match.group("p") or match.group("e")
        if exponent is None:
            exponent = "".join(_SUPERSCRIPTS[ch] for ch in match.group("s"))
        return f"{match.group('m')}e{exponent}"

    return _TIMES_TEN.sub(literal, clean)


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------

TokenKind = Literal["num", "name", "op", "open", "close", "sep", "nl", "sqrt", "sup", "bad"]


@dataclass(slots=True)
class Token:
    kind: TokenKind
    text: str
    pos: int
    space: bool  # whitespace before it


# Digits are ASCII here: `normalise` has folded the digits of other scripts.
_EXP = r"(?:[eE][+-]?[0-9]+)?"
_TAIL = rf"(?:\.[0-9]*)?{_EXP}"
# Digits with two or more points (.5., .9.9, 1.2.3) are one token, so that `read_literal` can say what
# is wrong with it instead of the tokens reading as two numbers.
_POINTS = r"[0-9]*\.[0-9]*\.[0-9.]*|"
# In a single number, commas, spaces or underscores (one kind per number) group digits in threes;
# the first group never starts with 0 (0,622 is a decimal comma, not 622).
_NUMBER_GROUPED = (
    rf"{_POINTS}(?:[1-9][0-9]{{0,2}}(?P<sep>[,_ ])[0-9]{{3}}(?:(?P=sep)[0-9]{{3}})*(?![0-9])|[0-9]+){_TAIL}"
    rf"|\.[0-9]+{_EXP}"
)
_NUMBER_PLAIN = rf"{_POINTS}(?:[1-9][0-9]{{0,2}}(?:_[0-9]{{3}})+(?![0-9])|[0-9]+){_TAIL}|\.[0-9]+{_EXP}"
# Without scientific notation: a formula whose symbols include e (or E, e1...) reads 2e+2f as 2*e + 2*f.
_NUMBER_NO_EXPONENT = (
    r"[0-9]*\.[0-9]*\.[0-9.]*|(?:[1-9][0-9]{0,2}(?:_[0-9]{3})+(?![0-9])|[0-9]+)(?:\.[0-9]*)?|\.[0-9]+"
)
_REST = r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<pow>\*\*)|(?P<single>[-+*/^%()\[\]{},;\n√π])"
_REST += r"|(?P<sup>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)|(?P<space> +)|(?P<bad>.)"
_TOKEN_GROUPED = re.compile(rf"(?P<num>{_NUMBER_GROUPED}){_REST}", re.DOTALL)
_TOKEN_PLAIN = re.compile(rf"(?P<num>{_NUMBER_PLAIN}){_REST}", re.DOTALL)
_TOKEN_NO_EXPONENT = re.compile(rf"(?P<num>{_NUMBER_NO_EXPONENT}){_REST}", re.DOTALL)
_SINGLE: dict[str, TokenKind] = {
    "+": "op", "-": "op", "*": "op", "/": "op", "^": "op", "%": "op",
    "(": "open", "[": "open", "{": "open", ")": "close", "]": "close", "}": "close",
    ",": "sep", ";": "sep", "\n": "nl", "√": "sqrt", "π": "name",
}  # fmt: skip
_PARTNER = {"(": ")", "[": "]", "{": "}"}


def tokenize(text: str, *, grouping: bool, exponents: bool = True) -> list[Token]:
    """Split normalised text into tokens; unknown characters become ``bad`` tokens, reported in order.

    ``exponents=False`` reads no scientific notation (``2e+2`` is 2, e, +, 2), for formulas in a
    symbol named like an exponent; it implies no grouping by commas or spaces.
    """
    tokens: list[Token] = []
    space = False
    pattern = _TOKEN_NO_EXPONENT if not exponents else _TOKEN_GROUPED if grouping else _TOKEN_PLAIN
    for m in pattern.finditer(text):
        kind, piece, pos = m.lastgroup, m.group(), m.start()
        if kind == "space":
            space = True
            continue
        if kind == "single":
            tokens.append(Token(_SINGLE[piece], "pi" if piece == "π" else piece, pos, space))
        elif kind == "pow":
            tokens.append(Token("op", "^", pos, space))
        elif kind == "sup":
            tokens.append(Token("sup", "".join(_SUPERSCRIPTS[c] for c in piece), pos, space))
        elif kind == "num":
            tokens.append(Token("num", piece, pos, space))
        elif kind == "name":
            tokens.append(Token("name", piece, pos, space))
        else:
            tokens.append(Token("bad", piece, pos, space))
        space = False
    return tokens


def _bad_char_reason(tok: Token) -> str:
    ch = tok.text
    where = f"at character {tok.pos + 1}"
    if ch == "∞":
        return "Infinity is not a number that can be graded: give a finite number."
    if ch in "'\"`":
        return f"Unexpected {describe_char(ch)} {where}: type the answer without quotes."
    if unicodedata.category(ch).startswith("C"):
        return f"The response contains a control character, {describe_char(ch)}, {where}."
    return f"Unexpected character {describe_char(ch)} {where}."


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


def _log10_abs(value: Num) -> float:
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
        size = float(n) * _log10_abs(base)
        if size > _MAX_LOG10:
            raise _too_large()
        if size < -_MAX_LOG10:
            return 0.0
        if not isinstance(base, float) and abs(n) * _bits(base) <= _MAX_BITS:
            return checked(Fraction(base) ** n) if n < 0 else checked(base**n)
        return checked(_float_op(math.pow, float(base), float(n)))
    if base < 0:
        raise ReadError("A negative number to a fractional power is not a real number.")
    size = float(exponent) * _log10_abs(base)
    if size > _MAX_LOG10:
        raise _too_large()
    if size < -_MAX_LOG10:
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
        log10 = _log10_abs(arg)
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
_MIN_LOG10 = -1000  # smaller literals are refused; larger ones stay exact (10**1000 has 3,322 bits)


def _malformed_reason(text: str) -> str:
    shown = f"`{_clip(text)}`"
    if text.count(".") > 1:
        return (
            f"{shown} is not a number: it has more than one point. Write decimals with one point, "
            "and group thousands with commas or spaces (1,234,567)."
        )
    if "." in text.lower().partition("e")[2]:
        return f"{shown} is not a number: the exponent after `e` is a whole number (1.5e-3, not 1e-3.5)."
    return f"{shown} is not a number as written."


@dataclass(frozen=True, slots=True)
class _Literal:
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
        raise ReadError(f"The exponent of `{_clip(text)}` is too large to grade.")
    exponent = int(exp_text) if exp_text else 0
    int_part, point, frac_part = mantissa.partition(".")
    whole = int_part.lstrip("0")
    digits = (whole + frac_part).lstrip("0")
    if not digits:
        return _Literal(0, _clip(text), -len(frac_part) + exponent, 0)
    # The place of the leading digit bounds the magnitude before any big number is built.
    leading = len(whole) - 1 if whole else -(len(frac_part) - len(frac_part.lstrip("0")) + 1)
    if leading + exponent > _MAX_LOG10:
        raise _too_large()
    if point:
        last_place, sigfigs = exponent - len(frac_part), len(digits)
    else:
        significant = whole.rstrip("0")
        last_place, sigfigs = exponent + len(whole) - len(significant), len(significant)
    if leading + exponent < _MIN_LOG10:
        # Refused before 10**999999 is built: the work is bounded, not only the exponent's digits.
        raise ReadError(
            f"`{_clip(text)}` is too close to zero to grade (the limit is 1e{_MIN_LOG10}); write 0 for zero."
        )
    scale = 10 ** len(frac_part)
    value = Fraction(int(int_part or "0") * scale + int(frac_part or "0"), scale) * Fraction(10) ** exponent
    return _Literal(checked(value), _clip(text), last_place, sigfigs)


# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Val:
    num: Num
    text: str
    literal: _Literal | None = None


class _Expr:
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

    def parse(self) -> _Val:
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

    def sum(self) -> _Val:
        left = self.product()
        while (tok := self._op("+-")) is not None:
            right = self.product()
            num = left.num + right.num if tok.text == "+" else left.num - right.num
            left = _Val(checked(num), f"{left.text}{tok.text}{right.text}")
        return left

    def product(self) -> _Val:
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
                left = _Val(num, f"{left.text}{tok.text}{right.text}")
            elif self._implicit(tok):
                if divided:
                    raise ReadError(
                        "A product written without `*` after a `/` is ambiguous: write 1/(2*pi) or (1/2)*pi.",
                        left.text,
                    )
                right = self.signed()
                left = _Val(checked(left.num * right.num), f"{left.text}*{right.text}")
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
            or (tok.kind == "name" and _known(tok.text))
        )
        # 2pi, 2(3+4), 2sqrt(2), 2√2, (1+2)(3+4), (1+2)pi; never pi(2), which looks like a call.
        return starts and (prev.kind in {"num", "sup"} or (prev.kind == "close" and prev.text == ")"))

    def signed(self) -> _Val:
        tok = self._op("+-")
        if tok is None:
            return self.power()
        self.enter()
        inner = self.signed()
        self.depth -= 1
        num = inner.num if tok.text == "+" else -inner.num
        # A signed literal keeps its precision; a sign on a sign or on an expression does not.
        bare = inner.literal is not None and inner.text.removesuffix("%") == inner.literal.text
        return _Val(num, f"{tok.text}{inner.text}", inner.literal if bare else None)

    def power(self) -> _Val:
        base = self.postfix()
        if self._op("^") is None:
            return base
        self.enter()
        exponent = self.signed()
        self.depth -= 1
        return _Val(power(base.num, exponent.num), f"{base.text}^{exponent.text}")

    def postfix(self) -> _Val:
        val = self.atom()
        tok = self.peek()
        if tok is not None and tok.kind == "sup" and not tok.space:
            self.take()
            if not re.fullmatch(r"[+-]?\d{1,4}", tok.text):
                raise ReadError(f"Could not read the superscript at character {tok.pos + 1}.", val.text)
            val = _Val(power(val.num, int(tok.text)), f"{val.text}^{int(tok.text)}")
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text == "%":
            if not self.allow_percent:
                raise ReadError(
                    "A percent sign is not expected here: give the number as a decimal (35% is 0.35).",
                    val.text,
                )
            self.take()
            val = _Val(divide(val.num, 100), f"{val.text}%", val.literal)
        return val

    def atom(self) -> _Val:
        tok = self.peek()
        if tok is None:
            prev = self.tokens[self.i - 1] if self.i > self.start else None
            after = f" after `{prev.text}`" if prev is not None else ""
            raise ReadError(f"The expression ends too early: a number is missing{after}.")
        if tok.kind == "num":
            self.take()
            lit = read_literal(tok.text)
            return _Val(lit.value, lit.text, lit)
        if tok.kind == "name":
            return self.name()
        if tok.kind == "open" and tok.text == "(":
            self.take()
            self.enter()
            inner = self.sum()
            self.close(tok)
            self.depth -= 1
            return _Val(inner.num, f"({inner.text})")
        if tok.kind == "open":
            raise _Several()
        if tok.kind == "sqrt":
            self.take()
            self.enter()
            inner = self.postfix()
            self.depth -= 1
            text = inner.text if inner.text.startswith("(") else f"({inner.text})"
            return _Val(checked(call_function("sqrt", inner.num)), f"sqrt{text}")
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

    def name(self) -> _Val:
        tok = self.take()
        key = _canonical_name(tok.text)
        if key in CONSTANTS:
            return _Val(CONSTANTS[key], key)
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
        return _Val(checked(call_function(key, inner.num)), f"{key}({inner.text})")

    def _unexpected(self, tok: Token) -> str:
        where = f"at character {tok.pos + 1}"
        if tok.kind == "bad":
            return _bad_char_reason(tok)
        if tok.kind == "close":
            return f"Unexpected `{tok.text}` {where}: there is no bracket to close."
        if tok.kind == "sup":
            return f"The superscript {where} has nothing to raise."
        if tok.kind == "op":
            return f"Unexpected `{tok.text}` {where}: a number is missing before it."
        return f"Unexpected `{tok.text}` {where}."

    def _leftover(self, tok: Token, val: _Val | None) -> None:
        """Raise the error for a token that cannot continue the expression."""
        read = val.text if val is not None else ""
        if tok.kind in {"bad", "close", "sup"}:
            raise ReadError(self._unexpected(tok), read)
        if tok.kind == "name" and not _known(tok.text):
            raise ReadError(unknown_name_reason(tok.text), read)
        if tok.kind in {"sep", "nl"} or tok.space or (tok.kind == "open" and tok.text != "("):
            raise _Several()
        prev = self.tokens[self.i - 1]
        if prev.kind == "num" and tok.kind == "num" and tok.text.startswith("."):
            raise ReadError(_malformed_reason(prev.text + tok.text), read)
        raise ReadError(
            f"Missing operator between `{prev.text}` and `{tok.text}`: write `*` for a product.", read
        )


def _canonical_name(name: str) -> str:
    # Function names and pi forgive case (Sqrt, PI); e stays lower case, since E reads as an exponent.
    lower = name.lower()
    return lower if lower in FUNCTIONS or lower == "pi" else name


def _known(name: str) -> bool:
    key = _canonical_name(name)
    return key in FUNCTIONS or key in CONSTANTS


@functools.lru_cache(maxsize=512)  # the same junk ("no idea") in many rows: difflib once per word
def unknown_name_reason(name: str) -> str:
    """Why a name cannot be used in an answer, naming it and listing the allowed ones."""
    shown = f"`{_clip(name)}`"
    lower = name.lower()
    if lower in _NOT_FINITE:
        return f"{shown} is not a number that can be graded: give a finite number."
    for fn in FUNCTIONS:
        rest = name[len(fn) :]
        if lower.startswith(fn) and rest.isdigit():
            return f"Unknown name {shown}: write {fn}({rest}), with parentheses."
    close = difflib.get_close_matches(lower, [*FUNCTIONS, *CONSTANTS], n=1, cutoff=0.75)
    hint = f" Did you mean `{close[0]}`?" if close else ""
    return f"Unknown name {shown}: an answer may use only the names {ALLOWED_NAMES}.{hint}"


def _number_from(val: _Val) -> Number:
    exact = None if isinstance(val.num, float) else Fraction(val.num)
    lit = val.literal  # set only for a literal, perhaps signed, perhaps a percentage
    if lit is not None:
        return Number(float(val.num), exact, val.text, lit.last_place, lit.sigfigs, val.text.endswith("%"))
    return Number(float(val.num), exact, val.text)


# ---------------------------------------------------------------------------------------------
# One number
# ---------------------------------------------------------------------------------------------


@_remembered
def number(text: str, *, allow_percent: bool = False) -> Number | Invalid:
    """Read one number, or an arithmetic expression of numbers.

    Commas, spaces or underscores between groups of three digits group thousands (``589,824``,
    ``589 824``, ``589_824``); ``0,35`` is refused with a request for a point. ``35%`` is read as
    0.35 where ``allow_percent``, after a single number only. A list of numbers is invalid here.
    """
    try:
        clean = as_written(_prepare(text))
        tokens = tokenize(clean, grouping=True)
        _check_words(tokens, names=False)
        _check_decimal_comma(tokens)
        _check_percent(tokens, allow_percent)
        match_brackets(tokens)
        return _number_from(_Expr(tokens, 0, len(tokens), allow_percent=allow_percent).parse())
    except _Several:
        return _several_numbers(clean)
    except ReadError as err:
        return Invalid(err.reason, err.read_as)


def _several_numbers(text: str) -> Invalid:
    """The message for a list where one number was expected, showing the list when it can be read."""
    found = structure(text)
    if isinstance(found, tuple):
        return Invalid(
            "Expected a single number, but read a list. Write decimals with a point and products with `*`.",
            echo_structure(found),
        )
    if isinstance(found, Invalid) and "several" not in found.reason:
        return Invalid(f"Expected a single number, but read several. {found.reason}", found.read_as)
    return Invalid("Expected a single number, but read several. Write products with `*`.")


def _check_words(tokens: list[Token], *, names: bool) -> None:
    """The first character that cannot appear (or name that is not allowed, unless ``names``), if any.

    Checked before brackets and grammar, so the reason given is the first foreign thing typed.
    """
    for tok in tokens:
        if tok.kind == "bad":
            raise ReadError(_bad_char_reason(tok))
        if tok.kind == "name" and not names and not _known(tok.text):
            raise ReadError(unknown_name_reason(tok.text))


def _check_decimal_comma(tokens: list[Token]) -> None:
    """``0,35`` (a decimal comma) and ``1234,567`` (misplaced grouping) are refused with advice."""
    for a, sep, b in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if a.kind != "num" or sep.text != "," or b.kind != "num" or sep.space or b.space:
            continue
        pair = _clip(f"{a.text},{b.text}")
        # 1234,567 misplaces a grouping comma; 0,622 (no group of thousands starts with 0) is a decimal.
        if b.text.isdigit() and len(b.text) == 3 and a.text.isdigit() and not a.text.startswith("0"):
            raise ReadError(f"`{pair}`: commas group thousands in threes (589,824).")
        raise ReadError(
            f"`{pair}`: write decimals with a point ({_clip(a.text)}.{_clip(b.text)}), not a comma."
        )


def _check_percent(tokens: list[Token], allowed: bool) -> None:
    """A percent sign only ends a single number: ``35%`` or ``-2.5%``."""
    if not any(tok.kind == "op" and tok.text == "%" for tok in tokens):
        return
    if not allowed:
        raise ReadError("A percent sign is not expected here: give the number as a decimal (35% is 0.35).")
    kinds = [(tok.kind, tok.text) for tok in tokens]
    if kinds and kinds[0] in {("op", "-"), ("op", "+")}:
        kinds = kinds[1:]
    if len(kinds) != 2 or kinds[0][0] != "num" or kinds[1] != ("op", "%"):
        raise ReadError("A percent sign may only follow a single number, as in 35%.")


def match_brackets(tokens: list[Token]) -> list[int]:
    """Each bracket's partner, refusing unbalanced or too deeply nested brackets before any parsing."""
    partner = [-1] * len(tokens)
    stack: list[int] = []
    for j, tok in enumerate(tokens):
        if tok.kind == "open":
            stack.append(j)
            if len(stack) > MAX_DEPTH:
                raise ReadError(f"The response is nested too deeply (more than {MAX_DEPTH} brackets).")
        elif tok.kind == "close":
            if not stack:
                raise ReadError(
                    f"Unexpected `{tok.text}` at character {tok.pos + 1}: there is no bracket to close."
                )
            k = stack.pop()
            if _PARTNER[tokens[k].text] != tok.text:
                raise ReadError(
                    f"`{tokens[k].text}` at character {tokens[k].pos + 1} is closed by `{tok.text}` "
                    f"at character {tok.pos + 1}."
                )
            partner[j], partner[k] = k, j
    if stack:
        first = tokens[stack[-1]]
        raise ReadError(f"A `{first.text}` is not closed (opened at character {first.pos + 1}).")
    return partner


# ---------------------------------------------------------------------------------------------
# Lists: vectors, matrices and shapes
# ---------------------------------------------------------------------------------------------

_OPERAND_STARTS = {"num", "name", "open", "sqrt"}


def _ends_operand(tok: Token) -> bool:
    if tok.kind == "name":
        return _canonical_name(tok.text) not in FUNCTIONS
    return tok.kind in {"num", "close", "sup"} or (tok.kind == "op" and tok.text == "%")


def _starts_operand(tokens: list[Token], j: int) -> bool:
    tok = tokens[j]
    if tok.kind in _OPERAND_STARTS:
        return True
    # MATLAB's rule: "1 -2" is two entries, while "1 - 2" and "1 -  2" are one.
    if tok.kind == "op" and tok.text in "+-" and j + 1 < len(tokens):
        nxt = tokens[j + 1]
        return not nxt.space and nxt.kind in _OPERAND_STARTS
    return False


def _soften_newlines(tokens: list[Token]) -> list[Token]:
    """New lines separate rows only between two entries; elsewhere (after a comma, before a closing
    bracket, around an operator, blank lines) they are spaces."""
    kept: list[Token] = []
    pending = False
    for j, tok in enumerate(tokens):
        if tok.kind == "nl":
            prev = kept[-1] if kept else None
            nxt = tokens[j + 1] if j + 1 < len(tokens) else None
            hard = (
                prev is not None
                and nxt is not None
                and _ends_operand(prev)
                and (nxt.kind in _OPERAND_STARTS or (nxt.kind == "op" and nxt.text in "+-"))
            )
            if not hard:
                pending = True
                continue
        if pending:
            tok = Token(tok.kind, tok.text, tok.pos, True)
            pending = False
        kept.append(tok)
    return kept


Item = list["Item"] | tuple[int, int]  # a list of items, or the token span (start, end) of one entry


class _Lists:
    """Splits tokens into nested lists of entries: brackets; ``,`` between entries; ``;`` or a new
    line between rows; whitespace between two operands (MATLAB's rule)."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = _soften_newlines(tokens)
        self.partner = match_brackets(self.tokens)
        self.is_list = self._mark_lists()

    def splits(self, j: int) -> bool:
        """Whether the whitespace before token ``j`` separates two entries."""
        return (
            self.tokens[j].space
            and j > 0
            and _ends_operand(self.tokens[j - 1])
            and _starts_operand(self.tokens, j)
        )

    def _mark_lists(self) -> list[bool]:
        """Which opening brackets hold a list: every ``[`` and ``{``, and a ``(`` holding a separator."""
        marks = [tok.kind == "open" and tok.text != "(" for tok in self.tokens]
        stack: list[int] = []
        for j, tok in enumerate(self.tokens):
            if stack and (tok.kind in {"sep", "nl"} or self.splits(j)):
                marks[stack[-1]] = True
            if tok.kind == "open":
                stack.append(j)
            elif tok.kind == "close":
                stack.pop()
        return marks

    def top(self) -> tuple[list[Item], bool]:
        """The items of the whole response, and whether it was one bracketed list."""
        items = self.level(0, len(self.tokens))
        whole = bool(self.tokens) and self.is_list[0] and self.partner[0] == len(self.tokens) - 1
        return items, whole

    def level(self, start: int, end: int) -> list[Item]:
        """The items between ``start`` and ``end``; several rows become a list of rows."""
        rows: list[list[Item]] = [[]]
        j = entry = start
        after_separator = True
        while j < end:
            tok = self.tokens[j]
            if tok.kind in {"sep", "nl"}:
                if j > entry:
                    rows[-1].append((entry, j))
                elif tok.text == "," and after_separator:
                    raise ReadError(f"An entry is missing before the comma at character {tok.pos + 1}.")
                if tok.text != ",":
                    rows.append([])
                after_separator = True
                j = entry = j + 1
                continue
            if j > entry and self.splits(j):
                rows[-1].append((entry, j))
                entry = j
            after_separator = False
            if tok.kind == "open" and self.is_list[j]:
                if j != entry:
                    raise ReadError(f"Unexpected `{tok.text}` at character {tok.pos + 1}, inside an entry.")
                close = self.partner[j]
                follow = close + 1
                if follow < end and self.tokens[follow].kind not in {"sep", "nl"} and not self.splits(follow):
                    bad = self.tokens[follow]
                    raise ReadError(
                        f"Unexpected `{_clip(bad.text)}` at character {bad.pos + 1}, after a bracket."
                    )
                rows[-1].append(self.level(j + 1, close))
                j = entry = close + 1
                continue
            j = self.partner[j] + 1 if tok.kind == "open" else j + 1
        if end > entry:
            rows[-1].append((entry, end))
        filled = [row for row in rows if row]
        if len(filled) <= 1:
            return filled[0] if filled else []
        # A row holding a single bracketed list is that list: "[1, 2]; [3, 4]".
        return [row[0] if len(row) == 1 and isinstance(row[0], list) else list(row) for row in filled]


Entry = Number | str
Nested = list["Nested"] | Entry
EntryReader = Callable[[list[Token], int, int], Entry]


def _read_entries(lists: _Lists, items: list[Item], read: EntryReader) -> list[Nested]:
    return [
        read(lists.tokens, item[0], item[1]) if isinstance(item, tuple) else _read_entries(lists, item, read)
        for item in items
    ]


def _read_number(tokens: list[Token], start: int, end: int) -> Entry:
    tok = tokens[start]
    if end - start == 1 and tok.kind == "num":  # the common entry, without the expression machinery
        lit = read_literal(tok.text)
        return _number_from(_Val(lit.value, lit.text, lit))
    return _number_from(_Expr(tokens, start, end).parse())


def _read_dim(tokens: list[Token], start: int, end: int) -> Entry:
    tok = tokens[start]
    if end - start == 1 and tok.kind == "name" and _canonical_name(tok.text) not in FUNCTIONS:
        return tok.text
    product = _dim_product(tokens[start:end])
    if product is not None:
        return product
    if any(t.kind == "name" and not _known(t.text) for t in tokens[start:end]):
        written = _clip("".join(t.text for t in tokens[start:end] if t.kind != "bad"))
        raise ReadError(
            f"`{written}` is not a dimension: write one name (such as T or d_model) or a whole number."
        )
    return _read_number(tokens, start, end)


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
    if not any(t.kind == "name" and not _known(t.text) for t in factors):
        return None  # numbers and constants only (8*64, 2*pi): read as a number
    return "*".join(t.text for t in factors)


def _lists(text: str, read: EntryReader, *, names: bool) -> tuple[list[Nested], bool]:
    clean = _prepare(text)
    tokens = tokenize(clean if names else as_written(clean), grouping=False)
    _check_words(tokens, names=names)
    lists = _Lists(tokens)
    items, whole = lists.top()
    return _read_entries(lists, items, read), whole


@_remembered
def structure(text: str) -> Structure | Invalid:
    """Read a number, a vector or a matrix, whichever the response is.

    A vector is ``[0.881, 0.119]``, ``(0.881, 0.119)``, ``0.881 0.119`` or ``0.881, 0.119``; a
    matrix is ``[[1, 2], [3, 4]]``, ``[1 2; 3 4]``, ``1 2; 3 4`` or rows on separate lines. A
    single entry without brackets is a number. Ragged rows and deeper nesting are invalid.
    """
    try:
        values, whole = _lists(text, _read_number, names=False)
    except _Several:
        return Invalid("Could not tell the entries apart: separate them with commas, e.g. [a, b].")
    except ReadError as err:
        return Invalid(err.reason, err.read_as)
    if whole:
        inner = values[0]
        values = inner if isinstance(inner, list) else [inner]
    elif len(values) == 1 and isinstance(values[0], Number):
        return values[0]
    if not values:
        return Invalid("The list is empty.")
    if all(isinstance(v, Number) for v in values):
        return tuple(v for v in values if isinstance(v, Number))
    if not all(isinstance(v, list) for v in values):
        return Invalid("The response mixes numbers and rows: write [a, b] or [[a, b], [c, d]].")
    rows: list[tuple[Number, ...]] = []
    for row in values:
        if not isinstance(row, list) or not all(isinstance(v, Number) for v in row):
            return Invalid("Too many levels of brackets: a matrix is a list of rows of numbers.")
        rows.append(tuple(v for v in row if isinstance(v, Number)))
    lengths = [len(r) for r in rows]
    if len(set(lengths)) != 1:
        shown = ", ".join(str(n) for n in lengths)
        return Invalid(
            f"The rows have different lengths ({shown}): every row needs the same number of entries.",
            "[" + ", ".join(echo_structure(r) for r in rows) + "]",
        )
    return tuple(rows)


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


@_remembered
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
        values, whole = _lists(spelled, _read_dim, names=True)
    except _Several:
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


def example_formula(symbols: Sequence[str]) -> str:
    """A formula in an item's own symbols, for help text: 3*d_model^2 + d_ff."""
    first = symbols[0] if symbols else "d"
    last = symbols[-1] if symbols else "d"
    return f"3*{first}^2 + {last}"


def formula_instructions(symbols: Sequence[str]) -> str:
    """What to type for a formula in these symbols, with examples in them (not in a ``d`` the
    question does not have)."""
    names = ", ".join(symbols)
    first = symbols[0] if symbols else "d"
    top = symbols[-1] if len(symbols) > 1 else first
    products = f"3{first}, 3 {first} or 3*{first}" if len(first) == 1 else f"3 {first} or 3*{first}"
    below = f"{top}/(2*{first})" if top != first else f"1/(2*{first})"
    return (
        f"Give a formula in {names}: products as {products}, powers as {first}^2 or {first}**2, "
        f"fractions as {top}/2, with brackets around a product below the line ({below}); any equivalent "
        "form is right."
    )


def canonical_symbol(name: str) -> str:
    """A dimension name without subscript marks, so ``d_model``, ``dmodel`` and ``d_{model}`` agree.

    Case still matters (``T`` is not ``t``), and no other aliases are made: a bare ``d`` could
    mean d_model, d_k or d_ff.
    """
    return spell_dimensions(name).replace("_", "").replace("{", "").replace("}", "")


# ---------------------------------------------------------------------------------------------
# Letters
# ---------------------------------------------------------------------------------------------

_CHOICE_SPLIT = re.compile(r"[\s,;/&+()\[\]{}]+")


@_remembered
def letters(text: str, options: str, *, multiple: bool) -> frozenset[str] | Invalid:
    """Read the letters of a choice: ``B``, ``b``, ``(b)``, ``B.``, ``A, C, D``, ``acd``, ``C D A``,
    ``A and C``, ``{A,C}``. Duplicates are ignored; letters outside ``options`` and an empty
    selection are invalid, and a single-choice item takes exactly one letter."""
    span = f"{options[0]}–{options[-1]}"
    try:
        clean = _prepare(text)
    except ReadError as err:
        if len(text) > MAX_LENGTH:
            return Invalid(err.reason)
        return Invalid(f"No option chosen: type the letter{'s' if multiple else ''} of your choice ({span}).")
    words = [w.rstrip(".):") for w in _CHOICE_SPLIT.split(clean)]
    chosen: set[str] = set()
    for word in words:
        if not word or word.lower() == "and":
            continue
        bad = next((ch for ch in word if not (ch.isascii() and ch.isalpha())), None)
        if bad is not None:
            return Invalid(f"Unexpected {describe_char(bad)}: type the letters of your choice ({span}).")
        outside = sorted({ch.upper() for ch in word} - set(options))
        if outside and len(word) > 1 and len(outside) > 1:
            return Invalid(f"`{_clip(word)}` is not a choice: type the letters of your choice ({span}).")
        if outside:
            return Invalid(f"There is no option {', '.join(outside)}: the options are {span}.")
        chosen.update(ch.upper() for ch in word)
    if not chosen:
        return Invalid(f"No option chosen: type the letter{'s' if multiple else ''} of your choice ({span}).")
    if not multiple and len(chosen) > 1:
        shown = ", ".join(sorted(chosen))
        return Invalid(f"Choose one option only (read {shown}).", shown)
    return frozenset(chosen)


__all__ = [
    "ALLOWED_NAMES",
    "CONSTANTS",
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MAX_MAGNITUDE",
    "Dim",
    "Invalid",
    "Matrix",
    "Number",
    "Structure",
    "Vector",
    "canonical_symbol",
    "describe_char",
    "divide",
    "echo_shape",
    "echo_structure",
    "format_plain",
    "letters",
    "normalise",
    "number",
    "shape",
    "spell_dimensions",
    "structure",
    "unknown_name_reason",
]


# ---------------------------------------------------------------------------------------------
# Formulas in symbols (the `expression` answer kind)
# ---------------------------------------------------------------------------------------------
#
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
    size = _log10_abs(value)
    if size > _MAX_LOG10:
        raise ReadError(f"`{_shown(tree)}` is too large to grade (the limit is 1e{int(_MAX_LOG10)}).")
    if size < _MIN_LOG10:
        raise ReadError(f"`{_shown(tree)}` is too close to zero to grade (the limit is 1e{_MIN_LOG10}).")
    return value


def _too_costly(tree: Tree, bits: int) -> ReadError:
    digits = int(bits * _LOG10_2)
    return ReadError(
        f"`{_shown(tree)}` is too large to grade: computing it exactly takes numbers of "
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
                raise ReadError(f"Division by zero: `{_shown(tree)}` divides by 0.")
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
            raise ReadError(f"Division by zero: `{_shown(tree)}` is 0 to a negative power.")
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


# -- names --------------------------------------------------------------------------------------


def _pieces(word: str, declared: dict[str, str]) -> list[tuple[str, ...]]:
    """Up to two ways of reading ``word`` as declared names written one after another (``Nd`` as N, d),
    in linear time: each position is tried once, against names of at most `MAX_SYMBOL_LENGTH`.

    A piece is a declared name in any spelling `canonical_symbol` folds, except that it neither
    starts nor ends with ``_`` nor holds ``__`` (so ``d_k`` is never d, k).
    """
    n = len(word)
    longest = max((len(key) for key in declared), default=0)
    # ways[i]: up to two readings of word[i:], each as (name, end of the name, reading at the end)
    ways: list[list[tuple[str, int, int]]] = [[] for _ in range(n + 1)]
    complete = [0] * (n + 1)
    complete[n] = 1
    for i in range(n - 1, -1, -1):
        if word[i] == "_":
            continue
        key = ""
        j = i
        while j < n and len(key) < longest and len(ways[i]) < 2:
            ch = word[j]
            if ch == "_":
                if j + 1 >= n or word[j + 1] == "_":
                    break
                j += 1
                continue
            key += ch
            j += 1
            name = declared.get(key)
            if name is None or not complete[j]:
                continue
            for k in range(complete[j]):
                if len(ways[i]) < 2:
                    ways[i].append((name, j, k))
        complete[i] = len(ways[i])
    readings: list[tuple[str, ...]] = []
    for first in range(complete[0]):
        names: list[str] = []
        i, k = 0, first
        while i < n:
            name, i, k = ways[i][k]
            names.append(name)
        readings.append(tuple(names))
    return readings


def _readings(word: str, declared: dict[str, str]) -> list[tuple[str, ...]]:
    """The distinct readings of a name as written: the declared name it spells, and the declared
    names it is written as one after another (at most two are found: two already make it ambiguous)."""
    found: list[tuple[str, ...]] = []
    whole = declared.get(canonical_symbol(word))
    if whole is not None:
        found.append((whole,))
    if len(word) <= MAX_LENGTH:
        for reading in _pieces(word, declared):
            if reading not in found:
                found.append(reading)
    return found[:2]


def _exponent_like(declared: dict[str, str]) -> bool:
    """Whether a symbol could be read as scientific notation (e, E, e1, E_2): then numbers in the
    formula have no exponent, so that 2e+2f is 2*e + 2*f and never 200*f."""
    return any(re.fullmatch(r"[eE][0-9]*", key) is not None for key in declared)


def _split_runs(tokens: list[Token], declared: dict[str, str]) -> list[Token]:
    """Names written one after another (``Nd``, ``hd_k``) as separate names, where that is the only
    reading; a name with two readings is refused, naming both."""
    out: list[Token] = []
    for tok in tokens:
        if tok.kind != "name" or _canonical_name(tok.text) in FUNCTIONS:
            out.append(tok)
            continue
        readings = _readings(tok.text, declared)
        if len(readings) > 1:
            shown = " or as ".join("`" + "*".join(reading) + "`" for reading in readings)
            raise ReadError(
                f"`{_clip(tok.text)}` at character {tok.pos + 1} can be read as {shown}: write the one you "
                "mean, with `*` between symbols."
            )
        if len(readings) == 1 and len(readings[0]) > 1:
            if len(readings[0]) > MAX_FORMULA_NODES:
                raise ReadError(
                    f"The formula is too long (more than {MAX_FORMULA_NODES} terms and operations)."
                )
            for k, name in enumerate(readings[0]):
                out.append(Token("name", name, tok.pos, tok.space if k == 0 else False))
            continue
        out.append(tok)
    return out


class _FormulaReader:
    """Recursive descent over a formula's tokens, building a tree (the grammar of `_Expr`).

    Products may be written without ``*`` where nothing else is meant: ``12d``, ``12 d``,
    ``4 d_model^2``, ``d(12d + 13)``, ``h d_k``, ``(d + 1)(d + 2)``, ``d² h``, and declared names run
    together (``4nd``, ``12Nd^2``: `_split_runs` has split them). A product without ``*`` right after a
    divisor (``n/6d``) is refused, naming its two readings.
    """

    def __init__(self, tokens: list[Token], symbols: dict[str, str]) -> None:
        self.tokens = tokens
        self.symbols = symbols  # canonical spelling → the declared name
        self.seen: dict[str, str] = {}  # a name as written → its declared name ("" for none), read once
        self.i = 0
        self.depth = 0
        self.nodes = 0

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def node(self, tree: Tree) -> Tree:
        self.nodes += 1
        if self.nodes > MAX_FORMULA_NODES:
            raise ReadError(f"The formula is too long (more than {MAX_FORMULA_NODES} terms and operations).")
        return tree

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ReadError(f"The formula is nested too deeply (more than {MAX_DEPTH} levels).")

    def read(self) -> Tree:
        tree = self.sum()
        tok = self.peek()
        if tok is not None:
            raise ReadError(self._leftover(tok))
        return tree

    def _op(self, ops: str) -> Token | None:
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text in ops:
            self.i += 1
            return tok
        return None

    def sum(self) -> Tree:
        terms = [self.product()]
        while (tok := self._op("+-")) is not None:
            term = self.product()
            terms.append(term if tok.text == "+" else self.node(("neg", term)))
        return terms[0] if len(terms) == 1 else self.node(("add", tuple(terms)))

    def product(self) -> Tree:
        tree = self.signed()
        factors = [tree]
        after_divisor = False  # the last factor read is the divisor of a `/`
        while (tok := self.peek()) is not None:
            if tok.kind == "op" and tok.text in "*/":
                self.i += 1
                right = self.signed()
                if tok.text == "/":
                    left = factors[0] if len(factors) == 1 else self.node(("mul", tuple(factors)))
                    factors = [self.node(("div", left, right))]
                    after_divisor = True
                else:
                    factors.append(right)
                    after_divisor = False
            elif self._implicit(tok):
                if after_divisor:
                    raise ReadError(self._ambiguous_quotient(factors[0]))
                factors.append(self.signed())
            else:
                break
        return factors[0] if len(factors) == 1 else self.node(("mul", tuple(factors)))

    def _ambiguous_quotient(self, quotient: Tree) -> str:
        """The reason for ``n/6d``: its two readings, n/(6*d) and (n/6)*d."""
        left, divisor = quotient[1], quotient[2]
        assert isinstance(left, tuple)
        assert isinstance(divisor, tuple)
        more: list[Tree] = []
        while (tok := self.peek()) is not None and self._implicit(tok):
            more.append(self.signed())
        together: Tree = ("div", left, ("mul", (divisor, *more)))
        apart: Tree = ("mul", (quotient, *more))
        return (
            f"A product written without `*` right after a `/` can be read two ways: as "
            f"`{_shown(together)}` or as `{_shown(apart)}`. Write the "
            "one you mean, with brackets."
        )

    def _implicit(self, tok: Token) -> bool:
        """Whether ``tok`` starts a factor multiplied without ``*``."""
        if self.i == 0:
            return False
        prev = self.tokens[self.i - 1]
        starts = tok.kind == "name" or (tok.kind == "open" and tok.text == "(")
        if not starts or (tok.kind == "name" and not self._symbol(tok.text)):
            return False
        # 12d, 12 d, d(…), h d_k, (…)(…), (…)d, d²h; never a number after a name (d 2 is unclear).
        return prev.kind in {"num", "sup", "name"} or (prev.kind == "close" and prev.text == ")")

    def _symbol(self, text: str) -> str | None:
        found = self.seen.get(text)
        if found is None:
            found = self.seen[text] = self.symbols.get(canonical_symbol(text), "")
        return found or None

    def signed(self) -> Tree:
        tok = self._op("+-")
        if tok is None:
            return self.power()
        self.enter()
        inner = self.signed()
        self.depth -= 1
        return inner if tok.text == "+" else self.node(("neg", inner))

    def power(self) -> Tree:
        base = self.atom()
        tok = self.peek()
        if tok is not None and tok.kind == "sup":
            self.i += 1
            return self.node(("pow", base, self._exponent(tok.text, tok)))
        if self._op("^") is None:
            return base
        sign = self._op("+-")
        tok = self.peek()
        if tok is None or tok.kind != "num":
            raise ReadError(
                "An exponent in a formula is a whole number written as digits, e.g. d^2: a power of a "
                "symbol or of an expression cannot be graded."
            )
        self.i += 1
        text = tok.text if sign is None else sign.text + tok.text
        after = self.peek()
        if after is not None and after.kind == "op" and after.text == "^":
            raise ReadError("A power of a power is not read in a formula: write the exponent as one number.")
        return self.node(("pow", base, self._exponent(text, tok)))

    def _exponent(self, text: str, tok: Token) -> int:
        if not re.fullmatch(r"[+-]?\d{1,6}", text):
            raise ReadError(
                f"The exponent at character {tok.pos + 1} is not a whole number: a formula uses whole "
                "powers such as d^2."
            )
        value = int(text)
        if abs(value) > MAX_FORMULA_EXPONENT:
            raise ReadError(
                f"The exponent {value} is too large to grade (a formula here uses powers up to "
                f"{MAX_FORMULA_EXPONENT})."
            )
        return value

    def atom(self) -> Tree:
        tok = self.peek()
        if tok is None:
            raise ReadError("The formula ends too early: a term is missing at the end.")
        if tok.kind == "num":
            self.i += 1
            lit = read_literal(tok.text)
            return self.node(("num", Fraction(lit.value)))
        if tok.kind == "name":
            self.i += 1
            name = self._symbol(tok.text)
            if name is None:
                raise ReadError(self._unknown(tok.text))
            return self.node(("sym", name))
        if tok.kind == "open" and tok.text == "(":
            self.i += 1
            self.enter()
            inner = self.sum()
            closing = self.peek()
            if closing is None:
                raise ReadError(f"A `(` is not closed (opened at character {tok.pos + 1}).")
            if closing.kind != "close" or closing.text != ")":
                raise ReadError(self._leftover(closing))
            self.i += 1
            self.depth -= 1
            return inner
        raise ReadError(self._leftover(tok))

    def _unknown(self, text: str) -> str:
        names = ", ".join(dict.fromkeys(self.symbols.values()))
        if _canonical_name(text) in FUNCTIONS or text in CONSTANTS:
            return (
                f"`{_clip(text)}` cannot be used in this formula: it uses only {names}, numbers, `+ - * / ^`."
            )
        meant = similar_symbols(text, tuple(dict.fromkeys(self.symbols.values())))
        guess = f" Did you mean {' or '.join(meant)}?" if meant else ""
        return f"This question has no symbol `{_clip(text)}` (case matters).{guess} Its symbols are {names}."

    def _leftover(self, tok: Token) -> str:
        where = f"at character {tok.pos + 1}"
        if tok.kind == "bad":
            return _bad_char_reason(tok)
        if tok.kind == "name" and self._symbol(tok.text) is None:
            return self._unknown(tok.text)
        if tok.kind == "close":
            return f"Unexpected `{tok.text}` {where}: there is no bracket to close."
        if tok.kind in {"open", "sep", "nl"}:
            example = example_formula(tuple(dict.fromkeys(self.symbols.values())))
            return f"Unexpected `{tok.text}` {where}: a formula is one expression, e.g. {example}."
        if tok.kind == "op":
            return f"Unexpected `{tok.text}` {where}: a term is missing before it."
        return f"Missing operator before `{_clip(tok.text)}` {where}: write `*` for a product."


_TERM = re.compile(r"[A-Za-z0-9_.]+")


@_remembered
def formula(text: str, symbols: tuple[str, ...]) -> Tree | Invalid:
    """Read a formula in the declared ``symbols`` (any spelling `canonical_symbol` folds: ``d_model``,
    ``dmodel``, ``d_{model}``, ``dₘₒdₑₗ``) into a tree, or say why it cannot be graded.

    Every tree returned has passed `formula_cost`: comparing it takes bounded work.
    """
    if len(text) > MAX_LENGTH:
        return Invalid(f"The response is too long ({len(text):,} characters; the limit is {MAX_LENGTH:,}).")
    long = next((name for name in symbols if len(name) > MAX_SYMBOL_LENGTH), None)
    if long is not None:
        return Invalid(
            f"The symbol `{_clip(long)}` is too long: a symbol's name has at most {MAX_SYMBOL_LENGTH} "
            "characters."
        )
    declared = {canonical_symbol(name): name for name in symbols}
    if len(declared) < len(symbols):
        spelled: dict[str, list[str]] = {}
        for name in symbols:
            spelled.setdefault(canonical_symbol(name), []).append(name)
        same = next(names for names in spelled.values() if len(names) > 1)
        return Invalid(
            f"The symbols {' and '.join(f'`{_clip(name)}`' for name in same[:2])} are one name written two "
            "ways (d_k is dk): declare each symbol once."
        )
    if len(_TERM.findall(text)) > MAX_FORMULA_NODES:  # counted before any token is made
        return Invalid(f"The formula is too long (more than {MAX_FORMULA_NODES} terms and operations).")
    try:
        clean = _prepare(spell_dimensions(text))
        tokens = tokenize(clean, grouping=False, exponents=not _exponent_like(declared))
        tree = _FormulaReader(_split_runs(tokens, declared), declared).read()
        if degree(tree) > MAX_FORMULA_DEGREE:
            return Invalid(
                f"The formula's degree is above {MAX_FORMULA_DEGREE}: no answer here is a polynomial of "
                "such a high degree."
            )
        formula_cost(tree)
    except ReadError as err:
        return Invalid(err.reason, err.read_as)
    return tree


_PRECEDENCE = {"add": 1, "neg": 2, "mul": 3, "div": 3, "pow": 4, "num": 5, "sym": 5}


def formula_text(tree: Tree) -> str:
    """A formula written as the reader reads it back: ``12*d^2 + 13*d``, ``T*(T - 1)/2``."""
    return _text(tree, compact=False)


def _shown(tree: Tree) -> str:
    """A part of a formula for a message: long numbers in scientific notation (``1e300``), clipped."""
    return _clip(_text(tree, compact=True), 60)


def _number_text(value: Fraction, compact: bool) -> str:
    text = str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    if not compact or len(text) <= 15:
        return text
    size = _log10_abs(value)
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
