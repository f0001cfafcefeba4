"""Student response text → values, never with eval: the core the readers of every answer form share.

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

This module is the core every reader shares: the limits, the results (`Invalid`, `Number`), the
characters, the tokens, the allowed names and the brackets. Each form is read in its own module:
one number in `attnquiz.engine.answers.read_numbers`, vectors and matrices in
`attnquiz.engine.answers.read_matrices`, tensor shapes in `attnquiz.engine.answers.read_shapes`,
the letters of a choice in `attnquiz.engine.answers.read_choices` and formulas in symbols in
`attnquiz.engine.answers.read_formulas`. The arithmetic they evaluate (literals, the expression
grammar, exact values with limits) is `attnquiz.engine.answers.arithmetic`'s.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Callable
from fractions import Fraction
from typing import Literal, ParamSpec, TypeVar

from msgspec import Struct

# ---------------------------------------------------------------------------------------------
# Limits
# ---------------------------------------------------------------------------------------------

MAX_LENGTH = 2000
"""Longest response read, in characters (a 10×10 matrix fits; a megabyte is refused unread)."""
MAX_DEPTH = 50
"""Deepest nesting of brackets, signs, powers and function calls."""
MAX_MAGNITUDE = 1e300
"""Largest absolute value of any literal or intermediate result."""

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


class Invalid(Struct, frozen=True):
    """A response that cannot be graded: ``reason`` says why (Markdown); ``read_as`` echoes what was read.

    ``read_as`` is plain text (not markup), empty when nothing could be read.
    """

    reason: str
    read_as: str = ""


class Number(Struct, frozen=True):
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
"""Texts each reader remembers its reading of (`remembered`)."""


def remembered(read: Callable[_P, _R]) -> Callable[_P, _R]:
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


class Several(ReadError):
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


def clip(text: str, width: int = 40) -> str:
    """``text`` cut to ``width`` characters, ending in ``…`` where it was cut (for messages)."""
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


def prepare(text: str) -> str:
    """``text`` normalised and stripped, refused when it is too long or empty."""
    if len(text) > MAX_LENGTH:
        raise ReadError(f"The response is too long ({len(text):,} characters; the limit is {MAX_LENGTH:,}).")
    clean = normalise(text).strip(" \n")
    if not clean:
        raise ReadError("The response is empty.")
    return clean


_APPROX = "\u2248"  # ≈, as a worked solution writes an answer: ≈ 1.93


# A decimal times a power of ten, as people and worked solutions write one: 2.0 × 10^-9 (× is `*`
# by now), 2.0 x 10^-9, 2.0*10^(-9), 2.0 × 10⁻⁹. Read as the literal 2.0e-9, so that its digits
# keep their precision (2.0 has two significant figures). Compiled when a response first holds a 10
# (most hold none, and the pattern takes most of a millisecond to compile).
@functools.cache
def _times_ten() -> re.Pattern[str]:
    return re.compile(
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

    return _times_ten().sub(literal, clean)


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------

TokenKind = Literal["num", "name", "op", "open", "close", "sep", "nl", "sqrt", "sup", "bad"]


class Token(Struct):
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


@functools.cache
def _token_pattern(*, grouping: bool, exponents: bool) -> re.Pattern[str]:
    """The tokenizer's pattern for this reading, compiled when first used: each is a large pattern
    (about a millisecond to compile), and a command reads one kind of answer."""
    number = _NUMBER_NO_EXPONENT if not exponents else _NUMBER_GROUPED if grouping else _NUMBER_PLAIN
    return re.compile(rf"(?P<num>{number}){_REST}", re.DOTALL)


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
    pattern = _token_pattern(grouping=grouping and exponents, exponents=exponents)
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


def bad_char_reason(tok: Token) -> str:
    """Why a character that no reader allows cannot be read, naming it and where it is."""
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
# Names, brackets and words
# ---------------------------------------------------------------------------------------------


def canonical_name(name: str) -> str:
    """A function's name or pi as the allow-list spells it (``Sqrt`` is ``sqrt``); other names as written."""
    # Function names and pi forgive case (Sqrt, PI); e stays lower case, since E reads as an exponent.
    lower = name.lower()
    return lower if lower in FUNCTIONS or lower == "pi" else name


def known(name: str) -> bool:
    """Whether ``name`` is an allowed function or constant, in any case `canonical_name` forgives."""
    key = canonical_name(name)
    return key in FUNCTIONS or key in CONSTANTS


@functools.lru_cache(maxsize=512)  # the same junk ("no idea") in many rows: difflib once per word
def unknown_name_reason(name: str) -> str:
    """Why a name cannot be used in an answer, naming it and listing the allowed ones."""
    shown = f"`{clip(name)}`"
    lower = name.lower()
    if lower in _NOT_FINITE:
        return f"{shown} is not a number that can be graded: give a finite number."
    for fn in FUNCTIONS:
        rest = name[len(fn) :]
        if lower.startswith(fn) and rest.isdigit():
            return f"Unknown name {shown}: write {fn}({rest}), with parentheses."
    import difflib  # only to suggest a name for an unknown one

    close = difflib.get_close_matches(lower, [*FUNCTIONS, *CONSTANTS], n=1, cutoff=0.75)
    hint = f" Did you mean `{close[0]}`?" if close else ""
    return f"Unknown name {shown}: an answer may use only the names {ALLOWED_NAMES}.{hint}"


def check_words(tokens: list[Token], *, names: bool) -> None:
    """The first character that cannot appear (or name that is not allowed, unless ``names``), if any.

    Checked before brackets and grammar, so the reason given is the first foreign thing typed.
    """
    for tok in tokens:
        if tok.kind == "bad":
            raise ReadError(bad_char_reason(tok))
        if tok.kind == "name" and not names and not known(tok.text):
            raise ReadError(unknown_name_reason(tok.text))


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
    "describe_char",
    "echo_shape",
    "echo_structure",
    "format_plain",
    "normalise",
    "unknown_name_reason",
]
