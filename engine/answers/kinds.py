"""Answer kinds: what a correct answer is, how close is close enough, and the recognisable wrong answers.

Every kind is a frozen struct (msgspec's: made at import without compiling code, issue 43) holding
plain Python values (no numpy), so that variants compare, hash and serialise the same way
everywhere. Parsing a student's text is the job of `attnquiz.engine.answers.parse` and its readers,
and scoring it is `attnquiz.engine.grading`'s; this module only says what the target is. How close
is close enough is `attnquiz.engine.answers.tolerance`'s, and the plain values the kinds and their
mistakes hold are `attnquiz.engine.answers.values`'.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

from msgspec import Struct
from msgspec.structs import force_setattr, replace

from attnquiz.engine.answers.tolerance import DEFAULT_REAL_TOLERANCE, EXACT, Tolerance
from attnquiz.engine.answers.values import (
    Formula,
    Matrix,
    MistakeValue,
    ShapeValue,
    Vector,
    as_matrix,
    as_vector,
    format_value,
    normalise_value,
    values_close,
)

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
# Answer kinds
# ---------------------------------------------------------------------------------------------


class NumericAnswer(Struct, frozen=True):
    """A real number, graded within a tolerance."""

    kind: ClassVar[str] = "numeric"
    value: float
    tolerance: Tolerance = DEFAULT_REAL_TOLERANCE
    allow_percent: bool = False

    def __post_init__(self) -> None:
        force_setattr(self, "value", float(self.value))

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


class IntegerAnswer(Struct, frozen=True):
    """A count, graded exactly (parameters, entries, volumes)."""

    kind: ClassVar[str] = "integer"
    value: int
    tolerance: Tolerance = EXACT

    def __post_init__(self) -> None:
        given: Any = self.value
        if isinstance(given, float) and not given.is_integer():
            raise ValueError(f"an integer answer cannot be {given!r}")
        force_setattr(self, "value", int(given))

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


class VectorAnswer(Struct, frozen=True):
    """A vector, graded entry by entry within a tolerance."""

    kind: ClassVar[str] = "vector"
    values: Vector
    tolerance: Tolerance = DEFAULT_REAL_TOLERANCE

    def __post_init__(self) -> None:
        force_setattr(self, "values", as_vector(self.values))

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


class MatrixAnswer(Struct, frozen=True):
    """A matrix, graded entry by entry within a tolerance."""

    kind: ClassVar[str] = "matrix"
    rows: Matrix
    tolerance: Tolerance = DEFAULT_REAL_TOLERANCE

    def __post_init__(self) -> None:
        rows = as_matrix(self.rows)
        if not rows or len({len(r) for r in rows}) != 1:
            raise ValueError("a matrix answer needs rows of one length")
        force_setattr(self, "rows", rows)

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


class ShapeAnswer(Struct, frozen=True):
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
    # How responses may name dimensions, not part of the answer's value: not compared (`__eq__`).
    symbols: Symbols = ()
    # Names the prompt states as products of others, e.g. (("d_model", "h*d_k"),) for d_model = h·d_k:
    # a response's [B, T, h*d_k] is then [B, T, d_model]. Not compared either.
    products: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        dims = tuple(d if isinstance(d, str) else int(d) for d in self.dims)
        force_setattr(self, "dims", dims)
        declared = {name for name, _ in self.symbols}
        implicit = tuple(
            (d, None) for d in dict.fromkeys(d for d in dims if isinstance(d, str)) if d not in declared
        )
        force_setattr(self, "symbols", tuple((str(n), v) for n, v in self.symbols) + implicit)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (other.dims, other.tolerance) == (self.dims, self.tolerance)

    def __hash__(self) -> int:
        return hash((self.dims, self.tolerance))

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


_UNREAD = Formula("", ())
"""An expression answer's formula before `ExpressionAnswer.__post_init__` reads its value."""


class ExpressionAnswer(Struct, frozen=True):
    """A formula in symbols the item declares (``12*d^2 + 13*d`` in ``d``), equal when algebraically equal.

    ``value`` is the formula as the reader writes it back; ``symbols`` are the names a response may
    use (each in any spelling `attnquiz.engine.answers.symbol_names.canonical_symbol` folds). A response
    is graded by `attnquiz.engine.answers.symbolic.equivalent` (exact values at random points, no sympy);
    a listed mistake is a `Formula` too.
    """

    kind: ClassVar[str] = "expression"
    value: str
    symbols: tuple[str, ...]
    tolerance: Tolerance = EXACT
    # Always the reading of ``value`` (made by `__post_init__`, whatever is given): equal when the
    # value is, so comparing it compares nothing more.
    formula: Formula = _UNREAD

    def __post_init__(self) -> None:
        symbols_ = tuple(str(s) for s in self.symbols)
        if not symbols_:
            raise ValueError("an expression answer declares the symbols it uses")
        force_setattr(self, "symbols", symbols_)
        formula = Formula.of(self.value, symbols_)
        force_setattr(self, "formula", formula)
        force_setattr(self, "value", formula.text)

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
        from attnquiz.engine.answers import read_formulas

        return read_formulas.formula_instructions(self.symbols)

    def json_value(self) -> Any:
        """The answer's value in JSON: the formula as the reader accepts it."""
        return self.value


class Option(Struct, frozen=True):
    """One option of a choice item; ``why`` explains a false option (shown when it is ticked)."""

    text: str
    correct: bool
    why: str = ""


class ChoiceAnswer(Struct, frozen=True):
    """Single choice (exactly one option is right) or multiple select (any number, at least one)."""

    kind: ClassVar[str] = "choice"
    options: tuple[Option, ...]
    multiple: bool = True
    scoring: Scoring = "net"
    tolerance: Tolerance = EXACT

    def __post_init__(self) -> None:
        force_setattr(self, "options", tuple(self.options))
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


class Mistake(Struct, frozen=True):
    """A wrong answer that a named misconception produces, and what to tell a student who gives it."""

    tag: str
    value: MistakeValue
    feedback: str
    score: float = 0.0

    def __post_init__(self) -> None:
        force_setattr(self, "value", normalise_value(self.value))

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


class Part(Struct, frozen=True):
    """One part, (a), (b), ..., of a question in parts: its own prompt, answer, steps and mistakes.

    ``uses`` names earlier parts whose values this part's answer is computed from, and ``recompute``
    computes it from them (positional, in the order of ``uses``). A part that uses others is graded
    with error carried forward: against ``recompute`` of the student's own earlier values when one of
    them was readable but wrong (see `attnquiz.engine.grading.parts.grade_parts`).
    """

    label: PartLabel
    prompt: str
    answer: SingleAnswer
    solution: Sequence[str] = ()
    mistakes: Sequence[Mistake] = ()
    weight: float = 1.0
    uses: tuple[PartLabel, ...] = ()
    recompute: Recompute | None = None  # a function: not compared (`__eq__`)

    def __post_init__(self) -> None:
        force_setattr(self, "solution", tuple(self.solution))
        force_setattr(self, "mistakes", tuple(self.mistakes))
        force_setattr(self, "uses", tuple(self.uses))
        if not (self.label.isascii() and self.label.isalnum() and self.label.islower()):
            raise ValueError(f"a part's label is a lower-case letter such as a, not {self.label!r}")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise ValueError(f"part ({self.label}): a weight is a positive number, not {self.weight!r}")
        if self.uses and self.recompute is None:
            raise ValueError(f"part ({self.label}) uses {', '.join(self.uses)} but has no recompute function")
        if self.uses and isinstance(self.answer, ChoiceAnswer | ExpressionAnswer):
            raise ValueError(f"part ({self.label}): a {self.answer.kind} answer cannot be recomputed")

    def _compared(self) -> tuple[Any, ...]:
        return (self.label, self.prompt, self.answer, self.solution, self.mistakes, self.weight, self.uses)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._compared() == self._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

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
        recomputed: SingleAnswer = replace(answer, values=as_vector(value))
    elif isinstance(answer, MatrixAnswer):
        recomputed = replace(answer, rows=as_matrix(value))
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


class PartsAnswer(Struct, frozen=True):
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
        force_setattr(self, "parts", parts)
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


class ExplainAnswer(Struct, frozen=True):
    """A concept question's answer: a model answer and its 2-6 key points (Markdown with TeX).

    It is never scored automatically: a response is kept as written, the student compares it with
    the model answer and rates themselves (`attnquiz.engine.grading.concepts` gives it the status
    ``unscored``), and an instructor marks it by hand. It is not a part's answer: a question in
    parts has answers that are graded.
    """

    kind: ClassVar[str] = "explain"
    value: str
    points: tuple[str, ...] = ()
    tolerance: Tolerance = EXACT

    def __post_init__(self) -> None:
        points = tuple(str(p) for p in self.points)
        force_setattr(self, "points", points)
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


class CodeAnswer(Struct, frozen=True):
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
    "LETTERS",
    "MAX_POINTS",
    "MIN_POINTS",
    "SCORING_SCHEMES",
    "Answer",
    "ChoiceAnswer",
    "CodeAnswer",
    "ExplainAnswer",
    "ExpressionAnswer",
    "IntegerAnswer",
    "MatrixAnswer",
    "Mistake",
    "NumericAnswer",
    "Option",
    "Part",
    "PartsAnswer",
    "Recompute",
    "Scoring",
    "ShapeAnswer",
    "SingleAnswer",
    "Symbols",
    "VectorAnswer",
    "answer_json",
    "carried_share",
    "is_finite",
    "symbols",
    "with_value",
]
