"""Answer kinds: what a correct answer is, how close is close enough, and the recognisable wrong answers.

Every kind is a frozen dataclass holding plain Python values (no numpy), so that variants compare,
hash and serialise the same way everywhere. Parsing a student's text is `attnquiz.engine.answers.parse`'s job
and
scoring it is `attnquiz.engine.grading.grade`'s; this module only says what the target is.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal
from typing import Any, ClassVar, Literal, cast

Scoring = Literal["net", "all-or-nothing", "each-answer"]
SCORING_SCHEMES: tuple[Scoring, ...] = ("net", "all-or-nothing", "each-answer")
# What a multiple-select question tells the student about its scoring (grading.choice_score computes it).
SCORING_RULES: dict[Scoring, str] = {
    "net": "Each right option earns 1/(number of right options) and each wrong one costs as much; the "
    "total is never below 0.",
    "all-or-nothing": "Only the exact set of right options earns the mark; anything else scores 0.",
    "each-answer": "Each option is a true-or-false decision worth an equal share: selecting a wrong "
    "option or missing a right one loses that share.",
}
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# ---------------------------------------------------------------------------------------------
# Tolerance
# ---------------------------------------------------------------------------------------------

ToleranceMode = Literal["decimals", "sigfigs", "relative", "exact"]


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How far a number may be from the target and still be right.

    - ``decimals n``: |x - t| <= 0.51 * 10**-n, i.e. the target rounded to n places, with a
      sliver of slack so that a correctly rounded answer is never refused by float noise.
    - ``sigfigs n``: the same, at the place of the n-th significant digit of the target.
    - ``relative``: |x - t| <= max(rtol * |t|, atol).
    - ``exact``: equal (integer counts).
    """

    mode: ToleranceMode = "relative"
    places: int = 0
    rtol: float = 1e-3
    atol: float = 1e-9

    @classmethod
    def decimals(cls, n: int) -> Tolerance:
        """Right when it rounds like the target does to ``n`` decimal places."""
        return cls(mode="decimals", places=n)

    @classmethod
    def sigfigs(cls, n: int) -> Tolerance:
        """Right when it agrees with the target to ``n`` significant figures."""
        return cls(mode="sigfigs", places=n)

    @classmethod
    def relative(cls, rtol: float = 1e-3, atol: float = 1e-9) -> Tolerance:
        """Right within a relative tolerance, with an absolute floor for targets near zero."""
        return cls(mode="relative", rtol=rtol, atol=atol)

    @classmethod
    def exact(cls) -> Tolerance:
        """Right only when equal (for integer counts)."""
        return cls(mode="exact")

    def half_width(self, target: float) -> float:
        """The largest accepted |x - target| (what an LMS export writes as its tolerance)."""
        if self.mode == "decimals":
            return 0.51 * 10.0 ** (-self.places)
        if self.mode == "sigfigs":
            if target == 0 or not math.isfinite(target):
                return 0.51 * 10.0 ** (-self.places)
            # The place of the settled target, not of the float: 0.0009999999999999 computed on one
            # machine and 0.001 on another are the same target, with the same tolerance.
            exponent = self._settled(target).adjusted() - self.places + 1
            return 0.51 * 10.0**exponent
        if self.mode == "relative":
            return max(self.rtol * abs(target), self.atol)
        return 0.0

    def accepts(self, target: float, value: float) -> bool:
        """Whether ``value`` is close enough to ``target``.

        Decided so that the same typed text gets the same grade on every machine: a reference value
        carries float noise that depends on the CPU, the BLAS kernel and the numpy build (1.58 is
        1.5800000000000001 on one and 1.5799999999999998 on another), and a value typed exactly at the
        edge of the tolerance (1.5749 for 1.58 to 2 places) would be right on one and wrong on the other.
        Near the edge the target is settled to `SETTLED_DIGITS` significant digits (far beyond any
        tolerance) and the comparison is done in decimal arithmetic, exactly.
        """
        if not (math.isfinite(target) and math.isfinite(value)):
            return False
        if self.mode == "exact":
            return value == target
        if self.mode != "sigfigs":  # a width that does not jump with the target's place
            gap = abs(value - target) - self.half_width(target)
            if abs(gap) > _EDGE * max(abs(target), abs(value), self.half_width(target)):
                return gap < 0  # far from the edge: float noise cannot change the decision
        settled = self._settled(target)
        typed = Decimal(repr(float(value)))
        return _DECIMAL.abs(_DECIMAL.subtract(typed, settled)) <= self._exact_half_width(settled)

    def _settled(self, target: float) -> Decimal:
        """``target`` rounded to `SETTLED_DIGITS` significant digits (more where the tolerance is finer
        than that, up to the 17 a float holds), in decimal."""
        exact = Decimal(repr(float(target)))
        if target == 0:
            return exact
        place = exact.adjusted() - SETTLED_DIGITS + 1
        if self.mode == "decimals":
            place = min(place, -self.places - 4)
        elif self.mode == "sigfigs":
            place = min(place, exact.adjusted() - self.places - 3)
        elif self.mode == "relative":
            if self.rtol > 0:
                place = min(place, exact.adjusted() + math.floor(math.log10(self.rtol)) - 3)
            place = min(place, math.floor(math.log10(self.atol)) - 3) if self.atol > 0 else place
        place = max(place, exact.adjusted() - 16)  # never finer than the float itself
        return exact.quantize(Decimal(1).scaleb(place), rounding=ROUND_HALF_EVEN, context=_DECIMAL)

    def _exact_half_width(self, settled: Decimal) -> Decimal:
        """`half_width` in decimal, for a settled target (0.51 is exactly 0.51 here)."""
        if self.mode == "decimals" or (self.mode == "sigfigs" and settled == 0):
            return _HALF.scaleb(-self.places, context=_DECIMAL)
        if self.mode == "sigfigs":
            return _HALF.scaleb(settled.adjusted() - self.places + 1, context=_DECIMAL)
        relative = _DECIMAL.multiply(Decimal(repr(self.rtol)), abs(settled))
        return max(relative, Decimal(repr(self.atol)))

    def describe(self) -> str:
        """The precision asked for, as a prompt states it."""
        if self.mode == "decimals":
            if self.places == 0:  # "to 0 decimal places" is how no one says it
                return "to the nearest whole number"
            return f"to {self.places} decimal place{'s' if self.places != 1 else ''}"
        if self.mode == "sigfigs":
            return f"to {self.places} significant figure{'s' if self.places != 1 else ''}"
        if self.mode == "exact":
            return "exactly"
        return f"to within {_percent(self.rtol)} of the exact value"

    def format(self, value: float) -> str:
        """``value`` written at the precision asked for (how a key or a model answer shows it)."""
        if self.mode == "decimals":
            return _fixed(value, self.places)
        if self.mode == "sigfigs":
            return _format_sigfigs(value, self.places)
        if self.mode == "exact":
            return _format_exact(value)
        return _format_sigfigs(value, max(4, 1 - math.floor(math.log10(self.rtol))))

    def rounded(self, value: float) -> float:
        """``value`` as a student who rounds to the precision asked for would type it (fast; for checks)."""
        if self.mode == "decimals":
            return round(value, self.places)
        if self.mode == "sigfigs" and value != 0 and math.isfinite(value):
            return round(value, self.places - 1 - math.floor(math.log10(abs(value))))
        return value

    def to_json(self) -> dict[str, Any]:
        """The tolerance as it would be written in a bank."""
        if self.mode == "decimals":
            return {"decimals": self.places}
        if self.mode == "sigfigs":
            return {"sigfigs": self.places}
        if self.mode == "exact":
            return {"exact": True}
        return {"rtol": self.rtol, "atol": self.atol}


SETTLED_DIGITS = 12
"""Significant digits of a reference value that decide a grade at the edge of a tolerance: beyond the
float noise of any machine (about 1e-15 relative, a little more after a long sum) and far beyond any
tolerance an item states."""

_EDGE = 1e-9
"""How close (relative to the numbers' size) a difference may come to the half width before the
decimal comparison decides: far more than float noise, so that the float comparison is only used
where it cannot disagree with the decimal one."""

_HALF = Decimal("0.51")
_DECIMAL = Context(prec=80, Emin=-999_999, Emax=999_999)  # exact for any two floats of like size

DEFAULT_REAL_TOLERANCE = Tolerance.relative()
EXACT = Tolerance.exact()


def _percent(fraction: float) -> str:
    text = f"{fraction * 100:.6g}"
    return f"{text} %"


def _strip_negative_zero(text: str) -> str:
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _format_exact(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


_SCIENTIFIC = 1e15
"""From this size on, `_fixed` writes a number in scientific notation (as sigfigs does)."""


def _fixed(value: float, places: int) -> str:
    """``value`` rounded half up to ``places`` decimals (negative: to tens, hundreds, ...).

    Rounding goes by the number as written (its shortest repr), the way a person rounds it:
    0.125 → 0.13 and 2.675 → 2.68, where binary floats and Python's format would give 0.12 and 2.67.
    """
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= _SCIENTIFIC:
        # Beyond a float's 16 digits the places asked for mean nothing (and quantizing them can
        # overflow the decimal context): the number as it is held, in scientific notation.
        return f"{Decimal(repr(float(value))).normalize():e}".replace("e+", "e")
    quantum = Decimal(1).scaleb(-places)
    rounded = Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP)
    text = f"{rounded:f}" if places > 0 else str(int(rounded))
    return _strip_negative_zero(text)


def _format_sigfigs(value: float, n: int) -> str:
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if abs(float(_fixed(value, n - 1 - exponent))) >= 10.0 ** (exponent + 1):
        exponent += 1  # rounding carried into the next power of ten: 9.9996 → 10.0, not 10.00
    if -4 <= exponent < 15:
        return _fixed(value, n - 1 - exponent)
    return f"{value:.{n - 1}e}"


def format_number(value: float, tolerance: Tolerance = DEFAULT_REAL_TOLERANCE) -> str:
    """A number for prompts and solutions: integers plainly, others at the tolerance's precision."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return tolerance.format(value)


# ---------------------------------------------------------------------------------------------
# Answer kinds
# ---------------------------------------------------------------------------------------------

Vector = tuple[float, ...]
Matrix = tuple[tuple[float, ...], ...]
Dim = int | str
ShapeValue = tuple[Dim, ...]


@dataclass(frozen=True, slots=True)
class Formula:
    """A formula as a value (an `expression` answer's mistakes; a response read as a formula).

    ``text`` is the formula as the reader writes it back (``12*d^2 + 13*d``); ``tree`` is what the
    reader built (see `attnquiz.engine.answers.parse.formula`), kept so that it is read only once.
    """

    text: str
    tree: tuple[object, ...] = field(compare=False, repr=False)

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
    from attnquiz.engine.answers import parse, symbolic

    tree = symbolic.read(text, symbols)
    return Formula(parse.formula_text(tree), tree)


MistakeValue = float | int | Vector | Matrix | ShapeValue | frozenset[str] | Formula


def _as_vector(values: Iterable[Any]) -> Vector:
    return tuple(float(v) for v in values)


def _as_matrix(rows: Iterable[Iterable[Any]]) -> Matrix:
    return tuple(_as_vector(row) for row in rows)


@dataclass(frozen=True, slots=True)
class NumericAnswer:
    """A real number, graded within a tolerance."""

    kind: ClassVar[str] = "numeric"
    value: float
    tolerance: Tolerance = DEFAULT_REAL_TOLERANCE
    allow_percent: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(self.value))

    def matches(self, value: MistakeValue) -> bool:
        """Whether ``value`` would be graded as this answer."""
        return isinstance(value, int | float) and self.tolerance.accepts(self.value, float(value))

    def format(self) -> str:
        """The answer at the precision asked for."""
        return self.tolerance.format(self.value)

    def instructions(self) -> str:
        """What the student should type, including the precision."""
        if self.tolerance.mode == "decimals" and self.tolerance.places == 0:
            return "Give a whole number, rounded to the nearest one."
        return f"Give a number {self.tolerance.describe()}."

    def json_value(self) -> Any:
        """The answer's value in JSON."""
        return self.value


@dataclass(frozen=True, slots=True)
class IntegerAnswer:
    """A count, graded exactly (parameters, entries, volumes)."""

    kind: ClassVar[str] = "integer"
    value: int
    tolerance: Tolerance = EXACT

    def __post_init__(self) -> None:
        given: Any = self.value
        if isinstance(given, float) and not given.is_integer():
            raise ValueError(f"an integer answer cannot be {given!r}")
        object.__setattr__(self, "value", int(given))

    def matches(self, value: MistakeValue) -> bool:
        """Whether ``value`` would be graded as this answer."""
        return isinstance(value, int | float) and float(value) == self.value

    def format(self) -> str:
        """The count with thousands separators, as the notes write it."""
        return f"{self.value:,}"

    def instructions(self) -> str:
        """What the student should type."""
        return "Give a whole number (exactly)."

    def json_value(self) -> Any:
        """The answer's value in JSON."""
        return self.value


@dataclass(frozen=True, slots=True)
class VectorAnswer:
    """A vector, graded entry by entry within a tolerance."""

    kind: ClassVar[str] = "vector"
    values: Vector
    tolerance: Tolerance = DEFAULT_REAL_TOLERANCE

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _as_vector(self.values))

    def matches(self, value: MistakeValue) -> bool:
        """Whether ``value`` would be graded as this answer."""
        return isinstance(value, tuple) and values_close(self.tolerance, self.values, value)

    def format(self) -> str:
        """The vector at the precision asked for."""
        return "[" + ", ".join(self.tolerance.format(v) for v in self.values) + "]"

    def instructions(self) -> str:
        """What the student should type, including the precision."""
        return f"Give {len(self.values)} numbers as a vector, e.g. [a, b], each {self.tolerance.describe()}."

    def json_value(self) -> Any:
        """The answer's value in JSON."""
        return list(self.values)


@dataclass(frozen=True, slots=True)
class MatrixAnswer:
    """A matrix, graded entry by entry within a tolerance."""

    kind: ClassVar[str] = "matrix"
    rows: Matrix
    tolerance: Tolerance = DEFAULT_REAL_TOLERANCE

    def __post_init__(self) -> None:
        rows = _as_matrix(self.rows)
        if not rows or len({len(r) for r in rows}) != 1:
            raise ValueError("a matrix answer needs rows of one length")
        object.__setattr__(self, "rows", rows)

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns)."""
        return len(self.rows), len(self.rows[0])

    def matches(self, value: MistakeValue) -> bool:
        """Whether ``value`` would be graded as this answer."""
        return isinstance(value, tuple) and values_close(self.tolerance, self.rows, value)

    def format(self) -> str:
        """The matrix at the precision asked for, row by row."""
        return (
            "["
            + ", ".join("[" + ", ".join(self.tolerance.format(v) for v in row) + "]" for row in self.rows)
            + "]"
        )

    def instructions(self) -> str:
        """What the student should type, including the precision."""
        r, c = self.shape
        return (
            f"Give the {r}×{c} matrix row by row, e.g. [[a, b], [c, d]] or a b; c d, "
            f"each entry {self.tolerance.describe()}."
        )

    def json_value(self) -> Any:
        """The answer's value in JSON."""
        return [list(row) for row in self.rows]


Symbols = tuple[tuple[str, int | None], ...]
"""Dimension names with the number each stands for (None where it stays a symbol), in prompt order."""


def symbols(**named: int | None) -> Symbols:
    """The dimension names a prompt uses, e.g. ``symbols(T=None, d_model=512, h=8)``."""
    return tuple((name, None if value is None else int(value)) for name, value in named.items())


@dataclass(frozen=True, slots=True)
class ShapeAnswer:
    """A tensor shape: integers, or symbols such as ``T`` where the item is symbolic.

    ``symbols`` declares every dimension name the prompt uses, with the number it stands for where
    the prompt gives one (``d_model = 512``) and None where it stays a symbol (``T``). A response may
    use any declared name in any spelling the tool prints (``d_k``, ``dk``, ``d_{k}``, ``dₖ``): a
    name with a number counts as that number, so ``[T, d_model]`` is ``[T, 512]``. The names in
    ``dims`` are declared implicitly; a name nobody declared is unreadable (invalid), not wrong.
    """

    kind: ClassVar[str] = "shape"
    dims: ShapeValue
    tolerance: Tolerance = EXACT
    # How responses may name dimensions, not part of the answer's value: not compared.
    symbols: Symbols = field(default=(), compare=False)
    # Names the prompt states as products of others, e.g. (("d_model", "h*d_k"),) for d_model = h·d_k:
    # a response's [B, T, h*d_k] is then [B, T, d_model]. Not compared either.
    products: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        dims = tuple(d if isinstance(d, str) else int(d) for d in self.dims)
        object.__setattr__(self, "dims", dims)
        declared = {name for name, _ in self.symbols}
        implicit = tuple(
            (d, None) for d in dict.fromkeys(d for d in dims if isinstance(d, str)) if d not in declared
        )
        object.__setattr__(self, "symbols", tuple((str(n), v) for n, v in self.symbols) + implicit)

    @property
    def symbolic(self) -> bool:
        """Whether some dimension is a symbol rather than a number."""
        return any(isinstance(d, str) for d in self.dims)

    def matches(self, value: MistakeValue) -> bool:
        """Whether ``value`` would be graded as this answer."""
        return isinstance(value, tuple) and value == self.dims

    def format(self) -> str:
        """The shape as the notes write it, e.g. [T, 512]."""
        return "[" + ", ".join(str(d) for d in self.dims) + "]"

    def instructions(self) -> str:
        """What the student should type."""
        # The example only shows the format: its numbers must not be a likely answer (the
        # notes' own [T, 512] and [50, 512] are answers of week-1 items).
        dims: list[str] = [str(n) for n in (3, 7, 11, 13, 17, 19, 23, 29)[: len(self.dims)]]
        if self.symbolic:
            dims[0] = "T"
        count = "1 dimension" if len(self.dims) == 1 else f"{len(self.dims)} dimensions"
        return f"Give the shape as a list of {count}, e.g. [{', '.join(dims)}]."

    def json_value(self) -> Any:
        """The answer's value in JSON."""
        return list(self.dims)


@dataclass(frozen=True, slots=True)
class ExpressionAnswer:
    """A formula in symbols the item declares (``12*d^2 + 13*d`` in ``d``), equal when algebraically equal.

    ``value`` is the formula as the reader writes it back; ``symbols`` are the names a response may
    use (each in any spelling `attnquiz.engine.answers.parse.canonical_symbol` folds). A response is graded
    by `attnquiz.engine.answers.symbolic.equivalent` (exact values at random points, no sympy); a listed
    mistake is
    a `Formula` too.
    """

    kind: ClassVar[str] = "expression"
    value: str
    symbols: tuple[str, ...]
    tolerance: Tolerance = EXACT
    formula: Formula = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        symbols_ = tuple(str(s) for s in self.symbols)
        if not symbols_:
            raise ValueError("an expression answer declares the symbols it uses")
        object.__setattr__(self, "symbols", symbols_)
        formula = Formula.of(self.value, symbols_)
        object.__setattr__(self, "formula", formula)
        object.__setattr__(self, "value", formula.text)

    def matches(self, value: MistakeValue) -> bool:
        """Whether ``value`` (a `Formula`) would be graded as this answer (the grader's own decision:
        exact values at random points; this runs whenever a variant is built)."""
        from attnquiz.engine.answers import symbolic

        return isinstance(value, Formula) and symbolic.agrees(self.formula.tree, value.tree)

    def format(self) -> str:
        """The formula as the reader accepts it, e.g. 12*d^2 + 13*d."""
        return self.value

    def tex(self) -> str:
        """The formula in TeX, as prompts and solutions write it."""
        from attnquiz.engine.answers import symbolic

        return symbolic.to_tex(self.formula.tree)

    def instructions(self) -> str:
        """What the student should type."""
        from attnquiz.engine.answers import parse

        return parse.formula_instructions(self.symbols)

    def json_value(self) -> Any:
        """The answer's value in JSON: the formula as the reader accepts it."""
        return self.value


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a choice item; ``why`` explains a false option (shown when it is ticked)."""

    text: str
    correct: bool
    why: str = ""


@dataclass(frozen=True, slots=True)
class ChoiceAnswer:
    """Single choice (exactly one option is right) or multiple select (any number, at least one)."""

    kind: ClassVar[str] = "choice"
    options: tuple[Option, ...]
    multiple: bool = True
    scoring: Scoring = "net"
    tolerance: Tolerance = EXACT

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        if not 2 <= len(self.options) <= len(LETTERS):
            raise ValueError(f"a choice item needs 2 to 26 options, not {len(self.options)}")
        right = sum(o.correct for o in self.options)
        if right == 0:
            raise ValueError("a choice item needs at least one correct option")
        if not self.multiple and right != 1:
            raise ValueError(f"a single-choice item needs exactly one correct option, not {right}")
        if self.scoring not in SCORING_SCHEMES:
            raise ValueError(f"unknown scoring scheme {self.scoring!r}")

    @property
    def letters(self) -> str:
        """The letters of the options, in order (A, B, C, ...)."""
        return LETTERS[: len(self.options)]

    @property
    def correct_letters(self) -> frozenset[str]:
        """The letters of the true options."""
        return frozenset(LETTERS[i] for i, o in enumerate(self.options) if o.correct)

    def matches(self, value: MistakeValue) -> bool:
        """Whether the set of letters ``value`` is exactly the correct set."""
        return isinstance(value, frozenset) and value == self.correct_letters

    def format(self) -> str:
        """The correct letters, e.g. "A, C"."""
        return ", ".join(sorted(self.correct_letters))

    def instructions(self) -> str:
        """What the student should type and, for multiple select, how it is scored."""
        if self.multiple:
            return f"Select all that apply: type the letters, e.g. A, C. {self.scoring_rule()}"
        return "Choose one: type its letter."

    def scoring_rule(self) -> str:
        """How a multiple-select response is scored, in one sentence ("" for a single choice).

        Said without the number of right options, which would give part of the answer away.
        """
        return SCORING_RULES[self.scoring] if self.multiple else ""

    def json_value(self) -> Any:
        """The answer's value in JSON: the correct letters."""
        return sorted(self.correct_letters)


SingleAnswer = (
    NumericAnswer
    | IntegerAnswer
    | VectorAnswer
    | MatrixAnswer
    | ShapeAnswer
    | ChoiceAnswer
    | ExpressionAnswer
)
"""The answer of one question, or of one part of a question in parts."""


@dataclass(frozen=True, slots=True)
class Mistake:
    """A wrong answer that a named misconception produces, and what to tell a student who gives it."""

    tag: str
    value: MistakeValue
    feedback: str
    score: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", normalise_value(self.value))

    def format(self, answer: Answer) -> str:
        """The mistaken value written the way the answer is written."""
        if isinstance(answer, ShapeAnswer) and isinstance(self.value, tuple):
            return "[" + ", ".join(str(d) for d in self.value) + "]"
        return format_value(self.value, answer.tolerance)

    def to_json(self) -> dict[str, Any]:
        """The mistake as the JSON outputs show it."""
        value: Any = self.value
        if isinstance(value, frozenset):
            value = sorted(value)
        elif isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        elif isinstance(value, Formula):
            value = value.text
        return {"tag": self.tag, "value": value, "feedback": self.feedback}


PartLabel = str
Recompute = Callable[..., Any]
"""How a part's answer follows from the values of the parts it uses (in the order of ``uses``): a
generator builds it from `attnquiz.engine.numerics`, so that a carried-forward value is computed by
the same reference numerics as the answer."""


@dataclass(frozen=True, slots=True)
class Part:
    """One part, (a), (b), ..., of a question in parts: its own prompt, answer, steps and mistakes.

    ``uses`` names earlier parts whose values this part's answer is computed from, and ``recompute``
    computes it from them (positional, in the order of ``uses``). A part that uses others is graded
    with error carried forward: against ``recompute`` of the student's own earlier values when one of
    them was readable but wrong (see `attnquiz.engine.grading.grade.grade_parts`).
    """

    label: PartLabel
    prompt: str
    answer: SingleAnswer
    solution: Sequence[str] = ()
    mistakes: Sequence[Mistake] = ()
    weight: float = 1.0
    uses: tuple[PartLabel, ...] = ()
    recompute: Recompute | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "solution", tuple(self.solution))
        object.__setattr__(self, "mistakes", tuple(self.mistakes))
        object.__setattr__(self, "uses", tuple(self.uses))
        if not (self.label.isascii() and self.label.isalnum() and self.label.islower()):
            raise ValueError(f"a part's label is a lower-case letter such as a, not {self.label!r}")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise ValueError(f"part ({self.label}): a weight is a positive number, not {self.weight!r}")
        if self.uses and self.recompute is None:
            raise ValueError(f"part ({self.label}) uses {', '.join(self.uses)} but has no recompute function")
        if self.uses and isinstance(self.answer, ChoiceAnswer | ExpressionAnswer):
            raise ValueError(f"part ({self.label}): a {self.answer.kind} answer cannot be recomputed")

    def answer_for(self, value: Any) -> SingleAnswer:
        """This part's answer with ``value`` in place of its own (a carried-forward target)."""
        return with_value(self.answer, value)

    def to_json(self) -> dict[str, Any]:
        """The part as ``quiz show --json`` shows it."""
        return {
            "label": self.label,
            "prompt": self.prompt,
            "instructions": self.answer.instructions(),
            "answer": answer_json(self.answer),
            "answer_text": self.answer.format(),
            "mistakes": [m.to_json() for m in self.mistakes],
            "solution": list(self.solution),
            "uses": list(self.uses),
            "weight": self.weight,
        }


def with_value(answer: SingleAnswer, value: Any) -> SingleAnswer:
    """``answer`` with another value of its kind (a number, a vector, a matrix or a shape)."""
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError("a recomputed answer must be finite")
        if isinstance(answer, IntegerAnswer):
            if not number.is_integer():
                raise ValueError(f"a recomputed count must be whole, not {number}")
            return replace(answer, value=int(number))
        return replace(answer, value=number)
    if isinstance(answer, VectorAnswer):
        recomputed: SingleAnswer = replace(answer, values=_as_vector(value))
    elif isinstance(answer, MatrixAnswer):
        recomputed = replace(answer, rows=_as_matrix(value))
    if isinstance(answer, VectorAnswer | MatrixAnswer):
        if not is_finite(recomputed):
            raise ValueError("a recomputed answer must be finite")
        return recomputed
    if isinstance(answer, ShapeAnswer):
        return replace(answer, dims=tuple(value))
    raise ValueError(f"a {answer.kind} answer cannot be recomputed")


_SHARES = {
    0.25: "a quarter of",
    1 / 3: "a third of",
    0.5: "half",
    2 / 3: "two thirds of",
    0.75: "three quarters of",
}


def carried_share(score: float) -> str:
    """A part's ``carried_score`` as a sheet says it, before "its marks": "half", "a quarter of",
    "40 % of" (a score of 0 or 1 is said by the caller: no marks, or the carry costs nothing)."""
    for share, words in _SHARES.items():
        if math.isclose(score, share, abs_tol=1e-9):
            return words
    return f"{score * 100:.3g} % of"


@dataclass(frozen=True, slots=True)
class PartsAnswer:
    """The answer of a question in parts (a), (b), (c)...: one answer per part.

    ``carried_score`` is what a part earns when it is right only given the student's own wrong
    earlier value (1, full marks, by default: the method was right). The stem is the variant's prompt;
    each part adds its own prompt.
    """

    kind: ClassVar[str] = "parts"
    parts: tuple[Part, ...]
    carried_score: float = 1.0
    tolerance: Tolerance = EXACT

    def __post_init__(self) -> None:
        parts = tuple(self.parts)
        object.__setattr__(self, "parts", parts)
        if not parts:
            raise ValueError("a question in parts needs at least one part")
        seen: list[str] = []
        for part in parts:
            if part.label in seen:
                raise ValueError(f"two parts are labelled ({part.label})")
            later = [u for u in part.uses if u not in seen]
            if later:
                raise ValueError(f"part ({part.label}) uses ({later[0]}), which is not an earlier part")
            seen.append(part.label)
        if not 0 <= self.carried_score <= 1:
            raise ValueError("carried_score is between 0 and 1")

    @property
    def labels(self) -> tuple[str, ...]:
        """The parts' labels in order: ("a", "b", "c")."""
        return tuple(p.label for p in self.parts)

    def part(self, label: str) -> Part:
        """The part with this label."""
        return next(p for p in self.parts if p.label == label)

    def matches(self, value: MistakeValue) -> bool:
        """A question in parts has no single value: nothing matches it as a whole."""
        return False

    def format(self) -> str:
        """Every part's answer, e.g. "(a) 1.93 | (b) 0.35 | (c) 1.36" (which the grader reads back)."""
        return " | ".join(f"({p.label}) {p.answer.format()}" for p in self.parts)

    def instructions(self) -> str:
        """How a question in parts is answered."""
        labels = ", ".join(f"({p.label})" for p in self.parts)
        carried = ""
        if any(p.uses for p in self.parts):
            carried = " A part that uses an earlier one is marked with your own earlier answer"
            carried += " (error carried forward)."
        return f"Answer each part, {labels}, in turn.{carried}"

    def key_note(self) -> str:
        """What an answer key says about marking a question in parts ("" when no part uses another)."""
        uses = [f"({p.label}) uses {', '.join(f'({u})' for u in p.uses)}" for p in self.parts if p.uses]
        if not uses:
            return ""
        earns = "full marks" if self.carried_score == 1 else f"{self.carried_score:g} of its marks"
        return (
            f"Marks carry forward: {'; '.join(uses)}. A later part that follows correctly from the student's "
            f"own earlier answer, as written or as they computed it before rounding, earns full marks when "
            f"that answer was right (rounded as asked), {earns} when it was wrong (quiz grade applies this)."
        )

    def json_value(self) -> Any:
        """Every part's value, in order."""
        return [p.answer.json_value() for p in self.parts]


@dataclass(frozen=True, slots=True)
class ExplainAnswer:
    """A concept question's answer: a model answer and its 2-6 key points (Markdown with TeX).

    It is never scored automatically: a response is kept as written, the student compares it with
    the model answer and rates themselves (`attnquiz.engine.grading.grade` gives it the status
    ``unscored``), and an instructor marks it by hand. It is not a part's answer: a question in
    parts has answers that are graded.
    """

    kind: ClassVar[str] = "explain"
    value: str
    points: tuple[str, ...] = ()
    tolerance: Tolerance = EXACT

    def __post_init__(self) -> None:
        points = tuple(str(p) for p in self.points)
        object.__setattr__(self, "points", points)
        if not str(self.value).strip():
            raise ValueError("a concept question needs a model answer")
        if not MIN_POINTS <= len(points) <= MAX_POINTS:
            raise ValueError(
                f"a concept question needs {MIN_POINTS} to {MAX_POINTS} key points, not {len(points)}"
            )
        if any(not p.strip() for p in points):
            raise ValueError("a key point cannot be empty")

    def matches(self, value: MistakeValue) -> bool:
        """A concept question is never scored: nothing matches it."""
        return False

    def format(self) -> str:
        """The model answer (Markdown with TeX)."""
        return self.value

    def instructions(self) -> str:
        """What the student does: write an answer (or think it through), then compare and rate."""
        return (
            "Type your answer (or press Enter to think it through), then compare it with the model "
            "answer and its key points and rate yourself. It is not scored."
        )

    def json_value(self) -> Any:
        """The answer's value in JSON: the model answer."""
        return self.value


MIN_POINTS = 2
MAX_POINTS = 6

CODE_TOLERANCE = Tolerance.relative(1e-4, 1e-6)
"""Outputs of code agree with the reference's at rtol 1e-4, atol 1e-6: right whether the student
computes in float32 or float64 (rtol 1e-5 refuses a few float32 attention outputs that are right)."""


@dataclass(frozen=True, slots=True)
class CodeAnswer:
    """A code question's answer: a function to write, graded by running it (`attnquiz.engine.code.grading`).

    ``task`` names the code task (`attnquiz.engine.code.tasks`): its reference and its mutants (the
    named mistakes) live there, as code, never as typed answers. ``draw`` seeds the test inputs (the
    example shown and the hidden ones), so the variant's seed rebuilds every test. ``reference`` is
    the reference's source, shown by the key; ``stub`` is what the student starts from. ``what`` and
    ``library`` say what is written: a NumPy function, or a PyTorch class.
    """

    kind: ClassVar[str] = "code"
    task: str
    function: str
    signature: str
    stub: str
    reference: str
    draw: int
    tolerance: Tolerance = CODE_TOLERANCE
    what: str = "function"
    library: str = "NumPy"

    @property
    def value(self) -> str:
        """The reference solution's source."""
        return self.reference

    def matches(self, value: MistakeValue) -> bool:
        """Code is graded by running it: no typed value matches it."""
        return False

    def format(self) -> str:
        """The answer as a key names it in a line: the function (its source is the worked solution,
        which the key prints as code)."""
        return f"a {self.what} {self.signature}: see the reference solution"

    def instructions(self) -> str:
        """What the student does."""
        return (
            f"Write {self.signature} in Python with {self.library}, starting from the stub. It runs in a "
            "sandbox on the example and on hidden tests; outputs count as equal within a relative 1e-4."
        )

    def json_value(self) -> Any:
        """The answer's value in JSON: the reference solution's source."""
        return self.reference


Answer = SingleAnswer | PartsAnswer | ExplainAnswer | CodeAnswer


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


def is_finite(answer: Answer) -> bool:
    """Whether every number of the answer is finite (a generator must never state inf or NaN)."""
    if isinstance(answer, NumericAnswer):
        return math.isfinite(answer.value)
    if isinstance(answer, VectorAnswer):
        return all(math.isfinite(v) for v in answer.values)
    if isinstance(answer, MatrixAnswer):
        return all(math.isfinite(v) for row in answer.rows for v in row)
    if isinstance(answer, PartsAnswer):
        return all(is_finite(p.answer) for p in answer.parts)
    return True


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


def answer_json(answer: Answer) -> dict[str, Any]:
    """The answer as the JSON outputs show it: kind, value, tolerance (and options for choice)."""
    data: dict[str, Any] = {
        "kind": answer.kind,
        "value": answer.json_value(),
        "tolerance": answer.tolerance.to_json(),
    }
    if isinstance(answer, ExpressionAnswer):
        data["symbols"] = list(answer.symbols)
    if isinstance(answer, ExplainAnswer):
        data["points"] = list(answer.points)
    if isinstance(answer, CodeAnswer):
        data.update(task=answer.task, function=answer.function, signature=answer.signature, stub=answer.stub)
    if isinstance(answer, PartsAnswer):
        data["carried_score"] = answer.carried_score
        data["labels"] = list(answer.labels)
    if isinstance(answer, ChoiceAnswer):
        data["multiple"] = answer.multiple
        data["scoring"] = answer.scoring
        data["options"] = [
            {"letter": letter, "text": o.text, "correct": o.correct, "why": o.why}
            for letter, o in zip(answer.letters, answer.options, strict=True)
        ]
    return data


__all__ = [
    "CODE_TOLERANCE",
    "DEFAULT_REAL_TOLERANCE",
    "EXACT",
    "LETTERS",
    "MAX_POINTS",
    "MIN_POINTS",
    "SCORING_SCHEMES",
    "Answer",
    "ChoiceAnswer",
    "CodeAnswer",
    "ExplainAnswer",
    "ExpressionAnswer",
    "Formula",
    "IntegerAnswer",
    "MatrixAnswer",
    "Mistake",
    "MistakeValue",
    "NumericAnswer",
    "Option",
    "Part",
    "PartsAnswer",
    "Recompute",
    "Scoring",
    "ShapeAnswer",
    "SingleAnswer",
    "Symbols",
    "Tolerance",
    "VectorAnswer",
    "answer_json",
    "carried_share",
    "format_number",
    "format_value",
    "is_finite",
    "normalise_value",
    "symbols",
    "values_close",
    "with_value",
]
