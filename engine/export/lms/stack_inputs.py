"""The inputs of a STACK question: one per answer (a part, or the whole), its type, names and values typed.

Each group of the LMS model (`attnquiz.engine.export.lms.model`: each part, or the whole answer) is a
unit: one STACK input (numerical, a grid of boxes, algebraic, checkbox or radio), the names a shape or
formula may use (its validator refuses any other, as quiz's reader does), and the values as a student
types them or as the unit's tests compare them. The nodes that test an input are
`attnquiz.engine.export.lms.stack_nodes`'s, its tree `attnquiz.engine.export.lms.stack_prt`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms import stack_maxima as mx
from attnquiz.engine.export.lms.model import Group, LmsQuestion
from attnquiz.engine.grading.single import answer_value

# ---------------------------------------------------------------------------------------------
# An input as STACK stores it
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Input:
    """One STACK input: ``kind`` is STACK's input type; ``tans`` the teacher's answer (Maxima)."""

    name: str
    kind: str
    tans: str
    boxsize: int = 15
    insertstars: int = 0
    forbidfloat: int = 0
    allowwords: str = ""
    syntaxhint: str = ""
    options: str = ""


# ---------------------------------------------------------------------------------------------
# Names a student may use (shapes and formulas)
# ---------------------------------------------------------------------------------------------


def _spellings(name: str) -> list[str]:
    """The plain Maxima spellings of a declared name that quiz's reader also takes (d_k, dk)."""
    found = []
    for text in (name, *lms.dimension_spellings(name)):
        try:
            spelled = mx.maxima_name(text)
        except mx.MaximaError:
            continue
        if spelled not in found:
            found.append(spelled)
    return found


@dataclass(frozen=True, slots=True)
class Names:
    """The names a shape or formula input accepts: each spelling → its declared name, and what the
    declared names stand for (a number, a product of others), applied before comparing."""

    aliases: tuple[tuple[str, str], ...]
    values: tuple[tuple[str, str], ...]

    @property
    def allowed(self) -> list[str]:
        return [spelling for spelling, _ in self.aliases]

    def resolve(self, value: str) -> str:
        """``value`` with every spelling folded and every declared value put in (twice: a product's
        names may stand for numbers)."""
        out = value
        renames = [(s, n) for s, n in self.aliases if s != n]
        if renames:
            out = f"subst([{','.join(f'{s}={n}' for s, n in renames)}], {out})"
        if self.values:
            subs = ",".join(f"{n}={v}" for n, v in self.values)
            out = f"subst([{subs}], subst([{subs}], {out}))"
        return out


def _names(declared: Sequence[str], values: Sequence[tuple[str, str]] = ()) -> Names:
    aliases: list[tuple[str, str]] = []
    taken: set[str] = set()
    written: dict[str, str] = {}
    for name in declared:
        canonical = mx.maxima_name(name)
        if written.setdefault(canonical, name) != name:
            raise mx.MaximaError(f"the names {written[canonical]!r} and {name!r} are one name in STACK")
        for spelling in _spellings(name):
            if spelling not in taken:
                taken.add(spelling)
                aliases.append((spelling, canonical))
    return Names(tuple(aliases), tuple(values))


def _shape_names(answer: ShapeAnswer) -> Names:
    declared = [name for name, _ in answer.symbols]
    values = [(mx.maxima_name(n), mx.number(v)) for n, v in answer.symbols if v is not None]
    numbered = {n for n, v in answer.symbols if v is not None}
    for name, product in answer.products:
        if name in numbered:
            continue
        factors = [f.strip() for f in product.split("*")]
        values.append(
            (mx.maxima_name(name), "*".join(f if f.isdigit() else mx.maxima_name(f) for f in factors))
        )
    return _names(declared, values)


def validator_definition(name: str, names: Names) -> str:
    """A question-variable function that makes an answer with an undeclared name invalid.

    STACK calls a validator with ``simp:false`` (an input is validated unsimplified), where a set
    literal keeps the order it was written in and ``subsetp`` compares sets as if sorted: it then
    refuses declared names. Each name the answer uses is looked up with ``member`` in a list
    instead, which compares atoms one by one whatever the order and the simplification."""
    allowed = "[" + ",".join(names.allowed) + "]"
    listed = ", ".join(names.allowed)
    message = mx.string(f"Use only the names {listed}.")
    return (
        f"{name}(ex):=if every(lambda([qz_v], member(qz_v, {allowed})), listofvars(ex)) "
        f'then "" else {message}'
    )


# ---------------------------------------------------------------------------------------------
# One answer: its input, its right value, its mistakes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """One input and its PRT: a group of the LMS model (a part, or the whole answer), numbered."""

    index: int
    group: Group

    @property
    def label(self) -> str:
        """The part's label ("" for a question not in parts)."""
        return self.group.label

    @property
    def prompt(self) -> str:
        """The part's own prompt (Markdown with TeX; "" for a whole answer)."""
        return self.group.prompt

    @property
    def answer(self) -> SingleAnswer:
        """What the input is marked against."""
        return self.group.answer

    @property
    def mistakes(self) -> tuple[Mistake, ...]:
        """The part's named mistakes, as whole values, in the grader's order."""
        return self.group.mistakes

    @property
    def weight(self) -> float:
        """The part's weight (the PRT's value)."""
        return self.group.weight

    @property
    def uses(self) -> tuple[str, ...]:
        """The labels of the earlier parts its target is computed from."""
        return self.group.uses

    @property
    def input(self) -> str:
        """The input's name (``ans1``, ``ans2``, ...)."""
        return f"ans{self.index}"

    @property
    def prt(self) -> str:
        """The PRT's name (``prt1``, ...), also the start of every answer note it writes."""
        return f"prt{self.index}"


def units(model: LmsQuestion) -> list[Unit]:
    """The inputs of a scored question: one per group of the model (each part, or the answer)."""
    if model.form == "essay":
        raise TypeError(f"{model.question.item_id} is a concept question: an essay, not a STACK question")
    return [Unit(i, group) for i, group in enumerate(model.groups, 1)]


def typed(answer: SingleAnswer, value: object) -> str:
    """A value of the answer's kind as the student's input holds it (a STACK test input's value)."""
    if isinstance(answer, IntegerAnswer | NumericAnswer):
        assert isinstance(value, int | float)
        return mx.number(value)
    if isinstance(answer, VectorAnswer | ShapeAnswer):
        assert isinstance(value, tuple)
        return mx.row_matrix(value)
    if isinstance(answer, MatrixAnswer):
        assert isinstance(value, tuple)
        return mx.matrix(tuple(tuple(float(v) for v in row) for row in value))
    if isinstance(answer, ExpressionAnswer):
        assert isinstance(value, Formula)
        return mx.formula(value)
    assert isinstance(value, frozenset)
    letters = sorted(str(letter) for letter in value)
    return letters[0] if not answer.multiple else "[" + ",".join(letters) + "]"


def flat_value(answer: SingleAnswer, value: object, names: Names | None) -> str:
    """A value of the answer's kind in the form its tests compare (see
    `attnquiz.engine.export.lms.stack_nodes.check`)."""
    if isinstance(answer, VectorAnswer):
        assert isinstance(value, tuple)
        return mx.vector(value)
    if isinstance(answer, MatrixAnswer):
        assert isinstance(value, tuple)
        return mx.vector([float(v) for row in value for v in row])
    if isinstance(answer, ShapeAnswer):
        assert isinstance(value, tuple)
        assert names is not None
        return names.resolve(mx.shape(value))
    if isinstance(answer, ChoiceAnswer):
        assert isinstance(value, frozenset)
        return "{" + ",".join(sorted(value)) + "}"
    if isinstance(answer, ExpressionAnswer):
        assert names is not None
        return names.resolve(typed(answer, value))
    return typed(answer, value)


def fits(answer: SingleAnswer, value: object) -> bool:
    """Whether a mistake's value has the answer's form (a vector of the answer's length, ...)."""
    right = answer_value(answer)
    if isinstance(answer, IntegerAnswer | NumericAnswer):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(answer, VectorAnswer | ShapeAnswer):
        return isinstance(value, tuple) and isinstance(right, tuple) and len(value) == len(right)
    if isinstance(answer, MatrixAnswer):
        return (
            isinstance(value, tuple)
            and len(value) == len(answer.rows)
            and all(isinstance(row, tuple) and len(row) == len(answer.rows[0]) for row in value)
        )
    if isinstance(answer, ExpressionAnswer):
        return isinstance(value, Formula)
    return isinstance(value, frozenset) and (answer.multiple or len(value) == 1)


def unit_names(answer: SingleAnswer) -> Names | None:
    """The names a shape's or formula's input accepts (None for the other kinds)."""
    if isinstance(answer, ShapeAnswer):
        return _shape_names(answer)
    if isinstance(answer, ExpressionAnswer):
        return _names(answer.symbols)
    return None


STARS = 6
"""STACK's "insert stars for implied multiplication, spaces, and no user-functions": a formula is
read as quiz reads it, 12d^2 + 13d as 12*d^2+13*d, 3 d as 3*d, and d(12d+13) as d*(12*d+13),
never as a function d (which would mark that right answer wrong)."""


INERT_SCIENTIFIC = "displaysci"
"""The word a matrix input must allow for a small number to be typed in one of its boxes.

STACK shows what a student typed through an inert copy in which every number written with an
exponent (``5.12e-7``, ``5.12E-7``, or one PHP itself writes so: ``0.000000512``) becomes
``displaysci(5.12, 2, -7)``. A matrix input checks that copy against the student's own security
rules (``stack_matrix_input::validate_contents``; the other inputs add ``dispdp`` and
``displaysci`` to those rules first), where ``displaysci`` is an unknown function: the copy is
refused and the whole answer is invalid with an empty message, so only ``5.12*10^-7`` could be
typed. Allowing the word lets the copy through; a student who types ``displaysci(...)`` gets an
inert expression, which no test marks right."""


def input_for(unit: Unit, names: Names | None, validator: str) -> Input:
    """The STACK input of a unit: numerical for a number or count, a grid of boxes (matrix) for a
    vector, matrix or shape, algebraic for a formula, checkbox or radio for a choice."""
    answer = unit.answer
    # The input's teacher's answer is what STACK shows as "a correct answer": the value rounded as
    # the question asks (2.75, not 2.7517036633292); the PRTs test against the exact value.
    tans = typed(answer, shown_value(answer))
    options = f"validator:{validator}" if names is not None else ""
    allow = ",".join(s for s in names.allowed if len(s) > 1) if names is not None else ""
    if isinstance(answer, ChoiceAnswer):
        kind = "checkbox" if answer.multiple else "radio"
        listed = ",".join(
            f"[{letter},{'true' if o.correct else 'false'},{mx.string(letter)}]"
            for letter, o in zip(answer.letters, answer.options, strict=True)
        )
        return Input(unit.input, kind, f"[{listed}]")
    if isinstance(answer, ShapeAnswer):  # a box may hold a product: h*d_k, h d_k or 8d_k
        return Input(
            unit.input, "matrix", tans, boxsize=8, insertstars=STARS, allowwords=allow, options=options
        )
    if isinstance(answer, VectorAnswer | MatrixAnswer):
        return Input(unit.input, "matrix", tans, boxsize=8, allowwords=INERT_SCIENTIFIC)
    if isinstance(answer, ExpressionAnswer):
        return Input(
            unit.input, "algebraic", tans, boxsize=30, insertstars=STARS, allowwords=allow, options=options
        )
    return Input(unit.input, "numerical", tans, boxsize=20)


def declared_names(answer: SingleAnswer) -> list[str]:
    """The names a shape or formula declares, as the bank spells them."""
    if isinstance(answer, ShapeAnswer):
        return [name for name, _ in answer.symbols]
    if isinstance(answer, ExpressionAnswer):
        return list(answer.symbols)
    return []


def renamed(answer: SingleAnswer) -> list[tuple[str, str]]:
    """Each declared name STACK reads as its own, and how the question writes it (`maxima_name`)."""
    return [(n, mx.maxima_name(n)) for n in declared_names(answer) if mx.maxima_name(n) != n]


RENAMED = (
    "STACK reads some of the bank's names as its own (a constant or one of Maxima's settings, such as "
    f"e, pi, numer or simp): in STACK they are written with {mx.RENAMED_SUFFIX} after them "
    f"(numer{mx.RENAMED_SUFFIX}), and each such question's instructions say so"
)


def shown_value(answer: SingleAnswer) -> object:
    """The answer's value as the question asks for it: numbers rounded to its precision."""
    value = answer_value(answer)
    tolerance = answer.tolerance
    if isinstance(answer, NumericAnswer) and tolerance.mode != "exact":
        return float(tolerance.format(float(answer.value)))
    if isinstance(answer, VectorAnswer) and tolerance.mode != "exact":
        return tuple(float(tolerance.format(float(v))) for v in answer.values)
    if isinstance(answer, MatrixAnswer) and tolerance.mode != "exact":
        return tuple(tuple(float(tolerance.format(float(v))) for v in row) for row in answer.rows)
    return value


def asked(answer: SingleAnswer) -> str:
    """What to enter, phrased for STACK's form."""
    if isinstance(answer, ChoiceAnswer):
        return lms.instructions(answer)
    written = "".join(f" Write {name} as {as_written}." for name, as_written in renamed(answer))
    if isinstance(answer, ExpressionAnswer):
        names = ", ".join(mx.maxima_name(n) for n in answer.symbols)
        return (
            f"Give a formula in {names} (use * for products, ^ for powers); any equivalent form is right."
            + written
        )
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return answer.instructions()
    if isinstance(answer, ShapeAnswer):
        names = " (a number or a name such as T)" if answer.symbolic else ""
        return f"Give each dimension in its box{names}." + written
    return f"Give each entry in its box, {answer.tolerance.describe()}."


__all__ = [
    "INERT_SCIENTIFIC",
    "RENAMED",
    "Input",
    "Names",
    "Unit",
    "asked",
    "declared_names",
    "fits",
    "flat_value",
    "input_for",
    "renamed",
    "shown_value",
    "typed",
    "unit_names",
    "units",
    "validator_definition",
]
