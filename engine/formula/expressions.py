"""Expressions of formula items (answers, mistakes, ``where:`` conditions, placeholders), never eval'd.

A formula item's expressions are read by the tokenizer of `attnquiz.engine.answers.parse`, the reader
of student responses, and computed with its bounded arithmetic (`attnquiz.engine.answers.arithmetic`:
exact fractions while only rationals are involved, the same limits on length, nesting, exponents and
magnitudes), so ``9^9^9`` fails at once here as it does in a response. What instructors may write on
top of a response is kept in this module, so that students gain none of it:

- names of parameters (``d``, ``d_model``), looked up in the variables of the variant;
- comparisons ``< <= > >= == !=`` (chained as in ``1 <= h <= 16``) and ``and``, ``or``, ``not``,
  ``true``, ``false``, for ``where:`` conditions;
- lists ``[a, b]`` (vectors; ``[[a, b], [c, d]]`` for matrices), with ``+ - * /`` entry by
  entry or with a number, and functions of whole numbers and lists (see ``FUNCTIONS``).

Grammar (``^`` is right-associative and binds tighter than a sign, so ``-2^2`` is -4)::

    expr       := conjunct ("or" conjunct)*
    conjunct   := negation ("and" negation)*
    negation   := "not" negation | comparison
    comparison := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)*
    sum        := product (("+" | "-") product)*
    product    := signed (("*" | "/") signed)*
    signed     := ("+" | "-") signed | power
    power      := postfix ("^" signed)?
    postfix    := atom [superscript]
    atom       := number | name | function "(" expr ("," expr)* ")" | "(" expr ")"
                | "[" [expr ("," expr)*] "]" | "√" postfix

An expression is compiled once into closures (no Python ``eval``, ``exec`` or ``compile``), so a
bank's names are checked when it loads and each variant only runs the closures.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeAlias

from attnquiz.engine.answers import parse

# The reader of student responses; its tokenizer, literals and bounded arithmetic are reused
# as they are, which is what keeps the two languages equally safe.
from attnquiz.engine.answers.arithmetic import call_function, checked, divide, power, read_literal
from attnquiz.engine.answers.parse import ReadError, Token, match_brackets, tokenize
from attnquiz.engine.errors import QuizError

# As in the reader: exact whole numbers are ints, other rationals Fractions, the rest floats.
Num: TypeAlias = int | Fraction | float
Value: TypeAlias = "int | Fraction | float | bool | tuple[Value, ...]"
Env = Mapping[str, Value]
_Run = Callable[[Env], Value]

MAX_LIST = 1000
"""Longest list an expression may build (``divisors`` of a large number, a long vector)."""
MAX_DIVISORS_OF = 10**9
"""Largest number ``divisors`` accepts (its divisors are found by trial division up to its root)."""
MAX_INTEGER = 10**15
"""Largest whole number that integer functions (``gcd``, ``mod``, ...) accept."""

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
KEYWORDS = frozenset({"and", "or", "not", "true", "false"})
_COMPARISONS = ("<=", ">=", "==", "!=", "<", ">")


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
        return _checked_value(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExpressionError(f"{what} must be a finite number, not {value}")
        return _checked_value(Fraction(repr(value)))
    if isinstance(value, list | tuple):
        if len(value) > MAX_LIST:
            raise ExpressionError(f"{what} is a list longer than {MAX_LIST}")
        return tuple(from_python(v, what) for v in value)
    raise ExpressionError(f"{what} must be a number or a list of numbers, not {type(value).__name__}")


def _checked_value(value: Num) -> Num:
    return _guarded(lambda: checked(value))


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
    exact = _exact(value)
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
# Arithmetic
# ---------------------------------------------------------------------------------------------


def _sentence(reason: str) -> str:
    """A message of the response reader as a clause: no final point, a lower-case first letter."""
    text = reason.strip().rstrip(".")
    if len(text) > 1 and text[1].isupper():
        return text
    return text[:1].lower() + text[1:]


def _number(value: Value, where: str) -> Num:
    if isinstance(value, bool | tuple):
        raise ExpressionError(f"{where} needs a number, not {kind_of(value)}")
    return value


def _guarded(fn: Callable[[], Num]) -> Num:
    """Run one step of the reader's arithmetic, turning its limits into expression errors."""
    try:
        return fn()
    except ReadError as err:
        raise ExpressionError(_sentence(err.reason)) from None


def _binary(op: str, a: Value, b: Value) -> Value:
    if isinstance(a, tuple) or isinstance(b, tuple):
        if isinstance(a, tuple) and isinstance(b, tuple):
            if len(a) != len(b):
                raise ExpressionError(f"`{op}` of lists of different lengths ({len(a)} and {len(b)})")
            return tuple(_binary(op, x, y) for x, y in zip(a, b, strict=True))
        if op == "^":
            raise ExpressionError("`^` needs numbers, not lists")
        if isinstance(a, tuple):
            return tuple(_binary(op, x, b) for x in a)
        assert isinstance(b, tuple)
        return tuple(_binary(op, a, y) for y in b)
    x = _number(a, f"`{op}`")
    y = _number(b, f"`{op}`")
    if op == "+":
        return _guarded(lambda: checked(x + y))
    if op == "-":
        return _guarded(lambda: checked(x - y))
    if op == "*":
        return _guarded(lambda: checked(x * y))
    if op == "/":
        if y == 0:
            raise ExpressionError("division by zero")
        # The reader's division: exact operands give an exact quotient (1/3 stays a third).
        return _guarded(lambda: divide(x, y))
    return _guarded(lambda: power(x, y))


def _negate(value: Value) -> Value:
    if isinstance(value, tuple):
        return tuple(_negate(v) for v in value)
    return -_number(value, "`-`")


def _compare(op: str, a: Value, b: Value) -> bool:
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


def _truth(value: Value, word: str) -> bool:
    if not isinstance(value, bool):
        raise ExpressionError(f"`{word}` needs conditions (such as d > 0), not {kind_of(value)}")
    return value


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
            return _guarded(lambda: checked(call_function(name, x)))

        return one(args[0])

    return run


def _exact(value: Num) -> Fraction:
    # A float is read as its shortest decimal, so that round(2.675, 2) is 2.68 as people expect.
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)


def _floor(args: list[Value]) -> Value:
    return _checked_value(math.floor(_exact(_number(args[0], "floor()"))))


def _ceil(args: list[Value]) -> Value:
    return _checked_value(math.ceil(_exact(_number(args[0], "ceil()"))))


def _round(args: list[Value]) -> Value:
    places = _whole(args[1], "round", 0, 12) if len(args) > 1 else 0
    scaled = _exact(_number(args[0], "round()")) * 10**places
    # Half away from zero, as rounding is taught (Python's round() goes to even).
    whole = math.floor(abs(scaled) + Fraction(1, 2))
    return _checked_value(Fraction(whole if scaled >= 0 else -whole, 10**places))


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
        total = _binary("+", total, value)
    return total


def _len(args: list[Value]) -> Value:
    return len(_list(args[0], "len"))


def _gcd(args: list[Value]) -> Value:
    return math.gcd(*(_whole(a, "gcd") for a in args))


def _lcm(args: list[Value]) -> Value:
    return _checked_value(math.lcm(*(_whole(a, "lcm") for a in args)))


def _mod(args: list[Value]) -> Value:
    x = _exact(_number(args[0], "mod()"))
    y = _exact(_number(args[1], "mod()"))
    if y == 0:
        raise ExpressionError("mod() by zero")
    return _checked_value(x - y * math.floor(x / y))


def _divisors(args: list[Value]) -> Value:
    n = _whole(args[0], "divisors", 1, MAX_DIVISORS_OF)
    small = [k for k in range(1, math.isqrt(n) + 1) if n % k == 0]
    large = [n // k for k in reversed(small) if k * k != n]
    return tuple(small + large)


def _dot(args: list[Value]) -> Value:
    u, v = _list(args[0], "dot"), _list(args[1], "dot")
    if len(u) != len(v):
        raise ExpressionError(f"dot() of lists of different lengths ({len(u)} and {len(v)})")
    return _sum([tuple(_binary("*", x, y) for x, y in zip(u, v, strict=True))])


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
RESERVED = frozenset(FUNCTIONS) | frozenset(CONSTANTS) | KEYWORDS
"""Names a parameter cannot take."""


# ---------------------------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Expression:
    """A compiled expression: its text, the variables it reads, and how to compute it."""

    text: str
    names: frozenset[str]
    _run: _Run = field(repr=False, compare=False)

    def evaluate(self, variables: Env) -> Value:
        """The value for these variables; an ExpressionError says why it cannot be computed."""
        missing = sorted(self.names - variables.keys())
        if missing:
            raise ExpressionError(f"unknown name{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return self._run(variables)


# The compiled form: a tree of small nodes, each called with the variables. Nodes rather than closures,
# so that a compiled bank can be pickled into the bank cache (a closure cannot be); plain classes with
# __slots__ rather than dataclasses, which would cost milliseconds of every start-up to build.


class _Const:
    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value

    def __call__(self, env: Env) -> Value:
        return self.value


class _Variable:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, env: Env) -> Value:
        return env[self.name]


class _Binary:
    __slots__ = ("left", "op", "right")

    def __init__(self, op: str, left: _Run, right: _Run) -> None:
        self.op, self.left, self.right = op, left, right

    def __call__(self, env: Env) -> Value:
        return _binary(self.op, self.left(env), self.right(env))


class _Negated:
    __slots__ = ("inner",)

    def __init__(self, inner: _Run) -> None:
        self.inner = inner

    def __call__(self, env: Env) -> Value:
        return _negate(self.inner(env))


class _Plus:
    __slots__ = ("inner",)

    def __init__(self, inner: _Run) -> None:
        self.inner = inner

    def __call__(self, env: Env) -> Value:
        return _number_or_list(self.inner(env), "`+`")


class _Not:
    __slots__ = ("inner",)

    def __init__(self, inner: _Run) -> None:
        self.inner = inner

    def __call__(self, env: Env) -> Value:
        return not _truth(self.inner(env), "not")


class _Any:
    __slots__ = ("parts",)

    def __init__(self, parts: tuple[_Run, ...]) -> None:
        self.parts = parts

    def __call__(self, env: Env) -> Value:
        return any(_truth(part(env), "or") for part in self.parts)


class _All:
    __slots__ = ("parts",)

    def __init__(self, parts: tuple[_Run, ...]) -> None:
        self.parts = parts

    def __call__(self, env: Env) -> Value:
        return all(_truth(part(env), "and") for part in self.parts)


class _Chain:
    """``a < b <= c``: every comparison holds, each side computed once."""

    __slots__ = ("chain", "first")

    def __init__(self, first: _Run, chain: tuple[tuple[str, _Run], ...]) -> None:
        self.first, self.chain = first, chain

    def __call__(self, env: Env) -> Value:
        left = self.first(env)
        for op, part in self.chain:
            right = part(env)
            if not _compare(op, left, right):
                return False
            left = right
        return True


class _Call:
    """A call of one of `FUNCTIONS`, found by its name when called (so that the node pickles)."""

    __slots__ = ("args", "name")

    def __init__(self, name: str, args: tuple[_Run, ...]) -> None:
        self.name, self.args = name, args

    def __call__(self, env: Env) -> Value:
        return FUNCTIONS[self.name].run([arg(env) for arg in self.args])


class _ListOf:
    __slots__ = ("items",)

    def __init__(self, items: tuple[_Run, ...]) -> None:
        self.items = items

    def __call__(self, env: Env) -> Value:
        return tuple(item(env) for item in self.items)


def _const(value: Value) -> _Run:
    return _Const(value)


def _describe(tok: Token) -> str:
    return parse.describe_char(tok.text) if tok.kind == "bad" else f"`{tok.text}`"


def _tokens(text: str) -> list[Token]:
    """The reader's tokens, with comparisons joined (``<=``) and new lines taken as spaces."""
    raw = tokenize(text, grouping=False)
    tokens: list[Token] = []
    i = 0
    pending_space = False
    while i < len(raw):
        tok = raw[i]
        if tok.kind == "nl":
            pending_space = True
            i += 1
            continue
        space = tok.space or pending_space
        pending_space = False
        if tok.kind == "bad" and tok.text in "<>=!":
            nxt = raw[i + 1] if i + 1 < len(raw) else None
            pair = tok.text + "=" if nxt is not None and nxt.text == "=" and nxt.pos == tok.pos + 1 else ""
            if pair:
                tokens.append(Token("op", pair, tok.pos, space))
                i += 2
                continue
            if tok.text in "<>":
                tokens.append(Token("op", tok.text, tok.pos, space))
                i += 1
                continue
            hint = "write `==` to compare" if tok.text == "=" else "write `not` or `!=`"
            raise ExpressionError(f"unexpected `{tok.text}` at character {tok.pos + 1}: {hint}")
        if tok.kind == "bad":
            if tok.text in "'\"`":
                raise ExpressionError(
                    f"unexpected quote at character {tok.pos + 1}: an expression is numbers, names "
                    "and operators (quote the whole expression in YAML, not parts of it)"
                )
            raise ExpressionError(f"unexpected character {_describe(tok)} at character {tok.pos + 1}")
        if tok.text == "%":
            raise ExpressionError(
                f"unexpected `%` at character {tok.pos + 1}: write mod(a, b) for a remainder"
            )
        if tok.text in "{}":
            raise ExpressionError(
                f"unexpected `{tok.text}` at character {tok.pos + 1}: use [ ] for lists and ( ) for grouping"
            )
        if tok.text == ";":
            raise ExpressionError(f"unexpected `;` at character {tok.pos + 1}: separate entries with commas")
        tokens.append(Token(tok.kind, tok.text, tok.pos, space))
        i += 1
    return tokens


_STARTS_OPERAND = frozenset({"num", "name", "open", "sqrt"})
_ENDS_OPERAND = frozenset({"num", "name", "close", "sup"})


class _Compiler:
    """Recursive descent over the tokens, building closures (see the grammar in the module docstring)."""

    def __init__(self, tokens: list[Token], variables: Collection[str] | None) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.variables = variables
        self.names: set[str] = set()

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def enter(self) -> None:
        self.depth += 1
        if self.depth > parse.MAX_DEPTH:
            raise ExpressionError(f"the expression is nested too deeply (more than {parse.MAX_DEPTH} levels)")

    def leave(self) -> None:
        self.depth -= 1

    def at(self, kind: str, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == kind and (not texts or tok.text in texts)

    def whole(self) -> _Run:
        if not self.tokens:
            raise ExpressionError("the expression is empty")
        run = self.disjunction()
        tok = self.peek()
        if tok is not None:
            raise self.unexpected(tok)
        return run

    def unexpected(self, tok: Token) -> ExpressionError:
        where = f"at character {tok.pos + 1}"
        prev = self.tokens[self.i - 1] if self.i > 0 else None
        if prev is not None and prev.text == "]" and tok.text == "[" and tok.space:
            return ExpressionError(f"a comma is missing before `[` {where}: write [[a, b], [c, d]]")
        if prev is not None and tok.kind == "open" and tok.text == "[" and prev.kind in _ENDS_OPERAND:
            return ExpressionError(
                f"`[` {where} picks an entry, and indexing is not supported: write the entry's own "
                "formula (softmax([a, b])[0] is exp(a) / (exp(a) + exp(b))), or give the whole list "
                "as the answer (kind: vector)"
            )
        if prev is not None and tok.kind in _STARTS_OPERAND and prev.kind in _ENDS_OPERAND:
            return ExpressionError(
                f"missing operator between `{prev.text}` and `{tok.text}` {where}: write `*` for a product"
            )
        if tok.kind == "close":
            return ExpressionError(f"unexpected `{tok.text}` {where}")
        if tok.kind == "sep":
            return ExpressionError(f"unexpected `,` {where}: use [a, b] for a list")
        return ExpressionError(f"unexpected {_describe(tok)} {where}")

    def keyword(self, word: str) -> bool:
        if self.at("name", word):
            self.take()
            return True
        return False

    def disjunction(self) -> _Run:
        parts = [self.conjunction()]
        while self.keyword("or"):
            parts.append(self.conjunction())
        if len(parts) == 1:
            return parts[0]
        return _Any(tuple(parts))

    def conjunction(self) -> _Run:
        parts = [self.negation()]
        while self.keyword("and"):
            parts.append(self.negation())
        if len(parts) == 1:
            return parts[0]
        return _All(tuple(parts))

    def negation(self) -> _Run:
        if not self.keyword("not"):
            return self.comparison()
        self.enter()
        inner = self.negation()
        self.leave()
        return _Not(inner)

    def comparison(self) -> _Run:
        first = self.sum()
        chain: list[tuple[str, _Run]] = []
        while self.at("op", *_COMPARISONS):
            op = self.take().text
            chain.append((op, self.sum()))
        if not chain:
            return first
        return _Chain(first, tuple(chain))

    def sum(self) -> _Run:
        left = self.product()
        while self.at("op", "+", "-"):
            left = self.binary(self.take().text, left, self.product())
        return left

    def product(self) -> _Run:
        left = self.signed()
        while self.at("op", "*", "/"):
            left = self.binary(self.take().text, left, self.signed())
        return left

    @staticmethod
    def binary(op: str, left: _Run, right: _Run) -> _Run:
        return _Binary(op, left, right)

    def signed(self) -> _Run:
        if not self.at("op", "+", "-"):
            return self.power()
        sign = self.take().text
        self.enter()
        inner = self.signed()
        self.leave()
        if sign == "+":
            return _Plus(inner)
        return _Negated(inner)

    def power(self) -> _Run:
        base = self.postfix()
        if not self.at("op", "^"):
            return base
        self.take()
        self.enter()
        exponent = self.signed()
        self.leave()
        return self.binary("^", base, exponent)

    def postfix(self) -> _Run:
        run = self.atom()
        tok = self.peek()
        if tok is not None and tok.kind == "sup" and not tok.space:
            self.take()
            try:
                exponent = int(tok.text)
            except ValueError:
                raise ExpressionError(f"cannot read the superscript at character {tok.pos + 1}") from None
            return self.binary("^", run, _const(exponent))
        return run

    def atom(self) -> _Run:
        tok = self.peek()
        if tok is None:
            prev = self.tokens[self.i - 1] if self.i > 0 else None
            after = f" after `{prev.text}`" if prev is not None else ""
            raise ExpressionError(f"the expression ends too early: a number or a name is missing{after}")
        if tok.kind == "num":
            self.take()
            return _const(_guarded(lambda: read_literal(tok.text).value))
        if tok.kind == "name":
            return self.name()
        if tok.kind == "open":
            self.take()
            self.enter()
            if tok.text == "[":
                items = self.arguments("]", "a list")
                self.leave()
                return _list_of(items)
            inner = self.disjunction()
            self.close(tok, ")")
            self.leave()
            return inner
        if tok.kind == "sqrt":
            self.take()
            self.enter()
            inner = self.postfix()
            self.leave()
            return self.call("sqrt", [inner])
        if tok.kind == "op":
            raise ExpressionError(
                f"unexpected `{tok.text}` at character {tok.pos + 1}: a number is missing before it"
            )
        raise self.unexpected(tok)

    def close(self, opening: Token, text: str) -> None:
        tok = self.peek()
        if tok is None:
            raise ExpressionError(f"`{opening.text}` at character {opening.pos + 1} is not closed")
        if tok.kind != "close" or tok.text != text:
            raise self.unexpected(tok)
        self.take()

    def arguments(self, closing: str, what: str) -> list[_Run]:
        """Comma-separated expressions up to ``closing`` (which is consumed)."""
        items: list[_Run] = []
        if self.at("close", closing):
            self.take()
            return items
        while True:
            items.append(self.disjunction())
            tok = self.peek()
            if tok is None:
                raise ExpressionError(f"{what} is not closed: `{closing}` is missing")
            if tok.kind == "sep" and tok.text == ",":
                self.take()
                continue
            if tok.kind == "close" and tok.text == closing:
                self.take()
                return items
            raise self.unexpected(tok)

    def name(self) -> _Run:
        tok = self.take()
        word = tok.text
        if word in {"true", "false"}:
            return _const(word == "true")
        if word in KEYWORDS:
            raise ExpressionError(f"`{word}` at character {tok.pos + 1} needs a condition before it")
        follows_call = self.at("open", "(") and not self.tokens[self.i].space
        if word in FUNCTIONS:
            if not self.at("open", "("):
                raise ExpressionError(f"`{word}` needs its arguments in parentheses, e.g. {word}(x)")
            opening = self.take()
            self.enter()
            args = self.arguments(")", f"the call of {word}() at character {opening.pos + 1}")
            self.leave()
            low, high = FUNCTIONS[word].arity
            if not low <= len(args) <= (high if high is not None else len(args)):
                wanted = f"{low}" if low == high else f"{low} to {high}" if high else f"at least {low}"
                plural = "" if wanted.endswith(" 1") or wanted == "1" else "s"
                raise ExpressionError(f"{word}() takes {wanted} argument{plural}, not {len(args)}")
            return self.call(word, args)
        if word in CONSTANTS:
            return _const(CONSTANTS[word])
        if follows_call:
            raise ExpressionError(f"`{word}` is not a function: {_unknown_hint(word, FUNCTIONS)}")
        if self.variables is not None and word not in self.variables:
            raise ExpressionError(_unknown_name(word, self.variables))
        self.names.add(word)
        return _Variable(word)

    @staticmethod
    def call(name: str, args: list[_Run]) -> _Run:
        return _Call(name, tuple(args))


def _number_or_list(value: Value, where: str) -> Value:
    if isinstance(value, tuple):
        return tuple(_number_or_list(v, where) for v in value)
    return _number(value, where)


def _list_of(items: Sequence[_Run]) -> _Run:
    if len(items) > MAX_LIST:
        raise ExpressionError(f"a list may hold at most {MAX_LIST} entries")
    return _ListOf(tuple(items))


def _unknown_hint(word: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else f"functions are {', '.join(sorted(FUNCTIONS))}"


def _unknown_name(word: str, variables: Collection[str]) -> str:
    # Only names that can stand here: a function would need parentheses, which it does not have.
    close = difflib.get_close_matches(word, [*variables, *CONSTANTS], n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    known = ", ".join(sorted(variables)) if variables else "none"
    return f"unknown name `{word}`{hint}; the parameters are: {known}"


def compile_expression(text: str, variables: Collection[str] | None = None) -> Expression:
    """Read an expression once; ``variables``, when given, are the only names it may use.

    Raises:
        ExpressionError: the text is not an expression, or uses a name it may not.
    """
    if len(text) > parse.MAX_LENGTH:
        raise ExpressionError(
            f"the expression is too long ({len(text):,} characters; the limit is {parse.MAX_LENGTH:,})"
        )
    clean = parse.normalise(text).strip()
    if not clean:
        raise ExpressionError("the expression is empty")
    tokens = _tokens(clean)
    try:
        match_brackets(tokens)
    except ReadError as err:
        raise ExpressionError(_sentence(err.reason)) from None
    compiler = _Compiler(tokens, variables)
    run = compiler.whole()
    return Expression(clean, frozenset(compiler.names), run)


def evaluate(text: str, variables: Env | None = None) -> Value:
    """Compile and compute an expression in one step (for one-off uses and tests)."""
    env = variables or {}
    return compile_expression(text, env.keys()).evaluate(env)


__all__ = [
    "CONSTANTS",
    "FUNCTIONS",
    "KEYWORDS",
    "MAX_LIST",
    "RESERVED",
    "Expression",
    "ExpressionError",
    "Function",
    "Value",
    "compile_expression",
    "equal",
    "evaluate",
    "format_value",
    "formula_literal",
    "from_python",
    "is_number",
    "is_whole",
    "kind_of",
    "plain",
    "to_python",
]
