"""The inputs and potential response trees (PRTs) of a STACK question, from the LMS model's parts.

One input per part (or one for the question) and one PRT per input, whose nodes test, in order, the
right answer, then each named mistake (a node each, whose answer note names it), and for a part
that uses earlier parts, error carried forward: its feedback variables recompute the target from
the student's own earlier inputs (`attnquiz.engine.export.lms.stack_carry`) as
`attnquiz.engine.grading.grade` does. How a kind is tested: `check`.
"""

from __future__ import annotations

import re
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
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms import stack_maxima as mx
from attnquiz.engine.export.lms.model import Group, LmsQuestion
from attnquiz.engine.export.lms.stack_carry import carry
from attnquiz.engine.grading.grade import answer_value

# ---------------------------------------------------------------------------------------------
# The question as STACK stores it
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


@dataclass(frozen=True, slots=True)
class Branch:
    """What a node does on one outcome: set the score, say the feedback (HTML with CAS text), note it."""

    score: str
    note: str
    feedback: str = ""
    next_node: int = -1


@dataclass(frozen=True, slots=True)
class Node:
    """One PRT node: ``test(sans, tans, options)``, then the true or the false branch."""

    name: int
    test: str
    sans: str
    tans: str
    options: str
    true: Branch
    false: Branch
    description: str = ""
    quiet: bool = False


@dataclass(frozen=True, slots=True)
class Prt:
    """A potential response tree: its weight (``value``), feedback variables and nodes (0 first)."""

    name: str
    value: float
    feedbackvariables: str
    nodes: tuple[Node, ...]


WAITS_FOR_EARLIER = (
    "STACK marks a part that uses earlier parts only once they are answered and valid (a potential "
    "response tree waits for every input it reads), where quiz marks it against its own answer"
)
NO_CARRY_FORM = (
    "STACK has no Maxima form of this chain's carry-forward step: the later part is marked against its "
    "own answer, so a student who slips earlier loses it (as in the Moodle export)"
)

# ---------------------------------------------------------------------------------------------
# Checks: how one answer kind is tested, in a node and as a Maxima truth value
# ---------------------------------------------------------------------------------------------

_MARGIN = 1 + 1e-9
"""STACK's NumAbsolute accepts |s - t| < tol, quiz |s - t| <= tol: the half-width is widened by a
hair, so that an answer quiz accepts at the edge is accepted too."""

STACK_NUM_TOL = 1e-9
"""The slack STACK's NumAbsolute adds to every tolerance (``STACK_NUM_TOL:10E-10`` in its
``numericaltest.mac``: |s - t| < |tol| + 1e-9). At 9.54e-7 to 2 significant figures the half-width
is 5.1e-9, and the slack would be a fifth of it: a NumAbsolute tolerance is written less the slack,
and one that cannot be (a half-width under 2e-9) is tested relatively or exactly instead."""


@dataclass(frozen=True, slots=True)
class Check:
    """An answer test of a student value ``sans`` against a target: STACK's test and options, and the
    same decision as a Maxima boolean (for the feedback variables that carry errors forward)."""

    test: str
    sans: str
    tans: str
    options: str
    boolean: str


def _half_width(tolerance: Tolerance, target: float) -> float:
    return tolerance.half_width(target) * _MARGIN


def _absolute(half: float) -> str | None:
    """NumAbsolute's option for a half-width, STACK's slack taken off (None where it cannot be)."""
    if half <= 2 * STACK_NUM_TOL:
        return None
    return mx.number(half - STACK_NUM_TOL)


def _exactly(boolean: str) -> Check:
    """A decision written as a Maxima truth value, tested as such (no slack of STACK's)."""
    return Check("AlgEquiv", boolean, "true", "", boolean)


def _number_check(answer: NumericAnswer, sans: str, target: float) -> Check:
    tolerance = answer.tolerance
    tans = mx.number(target)
    half = _half_width(tolerance, target)
    boolean = f"is(abs(float({sans})-{tans}) <= {mx.number(half)})"
    if tolerance.mode == "relative" and tolerance.rtol * abs(target) >= tolerance.atol:
        # NumRelative's slack is a factor 1 + 1e-9 of the tolerance: no more than quiz's margin.
        return Check("NumRelative", sans, tans, mx.number(tolerance.rtol * _MARGIN), boolean)
    option = _absolute(half)
    if option is not None:
        return Check("NumAbsolute", sans, tans, option, boolean)
    if target != 0:
        return Check("NumRelative", sans, tans, mx.number(half / abs(target)), boolean)
    return _exactly(boolean)


def decimal_exponent(x: str) -> str:
    """The exponent of a positive number in Maxima, as quiz's ``floor(log10(x))`` gives it.

    ``floor(log(x)/log(10))`` alone is one less at a power of ten (log(1e-5)/log(10) is
    -5.000000000000001), where quiz's log10 is exact; a number within 1e-12 (relative) below a
    power of ten is taken at that power, as quiz's rounded log10 takes it."""
    # Beyond a double's range (10.0^309) the power overflows: the plain floor stands there.
    return (
        f"block([qz_x: {x}, qz_g, qz_c], qz_g: floor(log(qz_x)/log(10)), "
        f"qz_c: errcatch(if qz_x >= 10.0^(qz_g+1)*(1-1.0e-12) then qz_g+1 "
        f"else if qz_x < 10.0^qz_g*(1-1.0e-12) then qz_g-1 else qz_g), "
        f"if qz_c = [] then qz_g else first(qz_c))"
    )


def _runtime_half_width(tolerance: Tolerance, target: str) -> str:
    """The half-width of a target computed in Maxima (a carried-forward target)."""
    if tolerance.mode == "decimals":
        return mx.number(_half_width(tolerance, 1.0))
    if tolerance.mode == "sigfigs":
        exponent = decimal_exponent(f"abs({target})")
        return (
            f"(if {target} = 0 then {mx.number(_half_width(tolerance, 0.0))} else "
            f"0.51*10.0^({exponent}-{tolerance.places}+1)*{mx.number(_MARGIN)})"
        )
    if tolerance.mode == "relative":
        rtol, atol = mx.number(tolerance.rtol), mx.number(tolerance.atol)
        return f"max({rtol}*abs({target}), {atol})*{mx.number(_MARGIN)}"
    return "0"


def _entries_boolean(sans: str, tans: str, test: str) -> str:
    """Whether two lists have one length and every pair of entries passes ``test`` (in s and t)."""
    return f"is(length({sans}) = length({tans}) and every(lambda([s,t], {test}), {sans}, {tans}))"


def _uniform(tolerance: Tolerance) -> bool:
    return tolerance.mode == "decimals"


def check(answer: SingleAnswer, sans: str, target: str, target_value: object = None) -> Check:
    """How ``sans`` (a student's value) is tested against ``target`` (Maxima), both in the form the
    kind compares: a number, a flat list of entries (vectors, matrices, shapes), a formula, a set
    of letters. ``target_value`` is the Python value where it is known (the half-width of a
    relative or significant-figure tolerance depends on it)."""
    if isinstance(answer, IntegerAnswer) or (
        answer.tolerance.mode == "exact" and isinstance(answer, NumericAnswer)
    ):
        return Check("AlgEquiv", sans, target, "", f"is(equal({sans}, {target}))")
    if isinstance(answer, NumericAnswer):
        if isinstance(target_value, int | float):
            return _number_check(answer, sans, float(target_value))
        # A target computed in Maxima: its half-width too, so no option can take STACK's slack off.
        half = _runtime_half_width(answer.tolerance, f"({target})")
        return _exactly(f"is(abs(float({sans})-({target})) <= {half})")
    if isinstance(answer, VectorAnswer | MatrixAnswer):
        tolerance = answer.tolerance
        if tolerance.mode == "exact":
            boolean = _entries_boolean(sans, target, "is(equal(s, t))")
            return Check("AlgEquiv", sans, target, "", boolean)
        if _uniform(tolerance):
            width = _half_width(tolerance, 1.0)
            boolean = _entries_boolean(sans, target, _within(mx.number(width)))
            option = _absolute(width)
            return Check("NumAbsolute", sans, target, option, boolean) if option else _exactly(boolean)
        return _exactly(_entries_boolean(sans, target, _within(_runtime_half_width(tolerance, "t"))))
    if isinstance(answer, ShapeAnswer):
        return Check("AlgEquiv", sans, target, "", _entries_boolean(sans, target, "is(ratsimp(s-t) = 0)"))
    if isinstance(answer, ExpressionAnswer):
        return Check("AlgEquiv", sans, target, "", f"is(ratsimp(({sans})-({target})) = 0)")
    return Check("AlgEquiv", sans, target, "", f"is({sans} = {target})")


def _within(half: str) -> str:
    return f"is(abs(float(s)-t) <= {half})"


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


def _flat_value(answer: SingleAnswer, value: object, names: Names | None) -> str:
    """A value of the answer's kind in the form its tests compare (see `check`)."""
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


# ---------------------------------------------------------------------------------------------
# Error carried forward, in the feedback variables
# ---------------------------------------------------------------------------------------------


def _read(unit: Unit) -> str:
    """The student's value in the form the unit's recompute takes (a number, a list, a matrix)."""
    if isinstance(unit.answer, VectorAnswer):
        return f"flatten(args({unit.input}))"
    if isinstance(unit.answer, NumericAnswer):
        return f"float({unit.input})"
    return unit.input


def _exact(unit: Unit) -> str:
    """The unit's own value in its recompute form."""
    answer = unit.answer
    if isinstance(answer, VectorAnswer):
        return mx.vector(answer.values)
    return typed(answer, answer_value(answer))


def _comparable(unit: Unit, value: str) -> str:
    """A value in the unit's recompute form, as its check compares it."""
    if isinstance(unit.answer, MatrixAnswer):
        return f"flatten(args({value}))"
    return value


def var(name: str, index: int) -> str:
    """A feedback variable's name: prefixed, so that it never meets a name a student may type."""
    return f"qz_{name}{index}"


class Chain:
    """The feedback-variable lines that carry the student's own values through a question's parts,
    as `attnquiz.engine.grading.grade.grade_parts` does.

    For each part k: ``qz_r<k>`` the value read and ``qz_ok<k>`` right against its own answer, and
    ``qz_u<k>`` its unrounded value (for a part that uses others, its target recomputed from their
    unrounded values; else as typed); for a part that uses others, ``qz_t<k>`` its target
    recomputed from the values the student typed for them (right or wrong), ``qz_m<k>`` whichever of
    ``qz_t<k>`` and ``qz_u<k>`` the answer matches (``qz_un<k>``: the unrounded one; ``qz_g<k>_<j>``
    the earlier values it came from), ``qz_mv<k>`` whether either moved the target, ``qz_ck<k>``
    right against it, ``qz_fe<k>`` whether a used value carries an error; and ``qz_sl<k>`` whether
    part k itself carries one on (wrong, or right only given an earlier error: quiz's ``slipped``).
    """

    def __init__(self, all_units: list[Unit], carried_score: float) -> None:
        self.units = all_units
        self.carried_score = carried_score
        self._lines: dict[int, list[str]] = {}
        self.carried: dict[int, bool] = {}

    def by_label(self, label: str) -> Unit:
        """The unit of the part labelled ``label``."""
        return next(u for u in self.units if u.label == label)

    def needs(self, unit: Unit) -> list[Unit]:
        """Every earlier unit whose value ``unit``'s target depends on, in order."""
        wanted: set[str] = set()
        pending = list(unit.uses)
        while pending:
            label = pending.pop()
            if label not in wanted:
                wanted.add(label)
                pending.extend(self.by_label(label).uses)
        return [u for u in self.units if u.label in wanted]

    def define(self, unit: Unit) -> list[str]:
        """The lines that define ``unit``'s variables (once the lines of the units it needs ran)."""
        if unit.index in self._lines:
            return self._lines[unit.index]
        k = unit.index
        answer = unit.answer
        exact = _exact(unit)
        r, ok, fe, t, u, m, mv, ck, cw, sl = (
            var(n, k) for n in ("r", "ok", "fe", "t", "u", "m", "mv", "ck", "cw", "sl")
        )
        own = check(answer, _comparable(unit, r), _comparable(unit, exact), answer_value(answer))
        lines = [f"{r}:{_read(unit)}", f"{ok}:{own.boolean}"]
        step = unrounded = None
        used: list[Unit] = []
        part = unit.group.part
        if part is not None and unit.uses:
            used = [self.by_label(label) for label in unit.uses]
            step = carry(part, [var("r", j.index) for j in used])
            unrounded = carry(part, [var("u", j.index) for j in used])
        if step is not None and unrounded is not None:
            # Two careful students after a slip: one works from the earlier parts as typed (qz_t),
            # one from their unrounded values (qz_u: each earlier part recomputed from the values
            # before it, the first ones as typed); either target within tolerance is right, and
            # qz_m is the one that matched (the feedback shows the values it came from).
            by_typed = check(answer, _comparable(unit, r), _comparable(unit, t))
            by_unrounded = check(answer, _comparable(unit, r), _comparable(unit, u))
            against = check(answer, _comparable(unit, r), _comparable(unit, m))
            lines += [
                f"{fe}:is({' or '.join(var('sl', j.index) for j in used)})",
                f"{t}:if {step.guard} then {step.expression} else {exact}",
                f"{u}:if {unrounded.guard} then {unrounded.expression} else {exact}",
                f"{var('un', k)}:is(not({by_typed.boolean}) and {by_unrounded.boolean})",
                f"{m}:if {var('un', k)} then {u} else {t}",
                *(
                    f"{var('g', k)}_{j.index}:"
                    f"if {var('un', k)} then {var('u', j.index)} else {var('r', j.index)}"
                    for j in used
                ),
                f"{mv}:is(({step.guard} and not(is({t} = {exact}))) or "
                f"({unrounded.guard} and not(is({u} = {exact}))))",
                f"{ck}:is({mv} and {against.boolean})",
                f"{cw}:is({mv} and {fe})",
                f"{sl}:if not({mv}) then not({ok}) else if {ok} then false else if {ck} then {fe} else true",
            ]
        else:
            step = None
            # An earlier part's unrounded value, for the parts after it: as typed (its own slip kept).
            lines += [f"{u}:{r}", f"{sl}:not({ok})"]
        self.carried[k] = step is not None
        self._lines[k] = lines
        return lines


# ---------------------------------------------------------------------------------------------
# The PRT of one unit
# ---------------------------------------------------------------------------------------------

_CAS_BRACKETS = str.maketrans({"[": "&#91;", "{": "&#123;"})
"""Every sequence that opens STACK CAS text (``[[`` blocks, inputs and feedback tags; ``{@`` and
``{#`` expressions) begins with ``[`` or ``{``. Writing each of these characters as a reference, and
not each opener as a pair, leaves no opener whatever the text: a pairwise replace turns ``[[[`` into
``&#91;[[``, which still opens a block."""


def castext(html: str) -> str:
    """Bank HTML as STACK CAS text: every ``[`` and ``{`` written with a character reference, which
    the browser shows the same (MathJax reads the decoded text) and STACK's parser never sees as
    the start of a block, input, feedback tag or CAS expression."""
    return html.translate(_CAS_BRACKETS)


def _feedback(text: str) -> str:
    return castext(lms.tex_html(text))


def score_text(value: float) -> str:
    """A score as STACK writes it (``1.0000000``)."""
    return f"{value:.7f}"


_NOTE_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_OWN_NOTES = frozenset({"correct", "wrong", "carried-right", "rounded-right", "carried-wrong", "ticks"})


def note(unit: Unit, what: str) -> str:
    """An answer note: the PRT's name and what happened (``prt2-no-scaling``). STACK refuses a note
    with ``|``, ``;`` or ``:``, so anything but letters, digits, ``_``, ``.`` and ``-`` becomes ``-``."""
    return f"{unit.prt}-{_NOTE_UNSAFE.sub('-', what)}"


def listed_mistakes(unit: Unit) -> list[Mistake]:
    """The unit's mistakes that its input can be given (a value of the answer's form)."""
    return [m for m in unit.mistakes if fits(unit.answer, m.value)]


def mistake_notes(unit: Unit) -> list[str]:
    """The answer note of each listed mistake, in order: its tag, made unique within the PRT (STACK
    wants every note of a tree distinct; a tag met twice, such as two early roundings, is numbered)."""
    notes: list[str] = []
    for mistake in listed_mistakes(unit):
        base = note(unit, mistake.tag if mistake.tag not in _OWN_NOTES else f"mistake-{mistake.tag}")
        candidate, n = base, 1
        while candidate in notes:
            n += 1
            candidate = f"{base}-{n}"
        notes.append(candidate)
    return notes


def explained_options(answer: ChoiceAnswer) -> list[str]:
    """The letters of the wrong options that say why they are wrong, in order."""
    return [
        letter for letter, o in zip(answer.letters, answer.options, strict=True) if not o.correct and o.why
    ]


@dataclass(frozen=True, slots=True)
class Outcome:
    """Where a step leads: set ``score``; then end (``goto`` None) or go on to the step ``goto``
    ("next": the following one). ``note`` "" is a pass-through note of its own (``prt1-0-F``)."""

    score: str
    note: str = ""
    feedback: str = ""
    goto: str | None = None


NEXT = "next"


@dataclass(frozen=True, slots=True)
class Step:
    """A node before numbering: its test, what it is, and its two outcomes."""

    key: str
    check: Check
    description: str
    true: Outcome
    false: Outcome
    quiet: bool = False  # the answer test's own feedback (its wrong entries in red) is not shown


LONG = 200
"""A node's SAns or TAns longer than this goes into a feedback variable (STACK refuses more than
255 characters in either field)."""


def assemble(unit: Unit, steps: Sequence[Step], variables: list[str]) -> Prt:
    """The PRT: steps numbered in order, jumps resolved, pass-through notes made unique, long
    expressions moved into feedback variables."""
    numbers = {step.key: n for n, step in enumerate(steps)}
    nodes: list[Node] = []
    hoisted: list[str] = []
    for n, step in enumerate(steps):
        branches = []
        for side, outcome in (("T", step.true), ("F", step.false)):
            target = -1
            if outcome.goto is not None:
                target = n + 1 if outcome.goto == NEXT else numbers[outcome.goto]
            answer_note = outcome.note or f"{unit.prt}-{n}-{side}"
            branches.append(Branch(outcome.score, answer_note, outcome.feedback, target))
        sans, tans = step.check.sans, step.check.tans
        if len(sans) > LONG:
            hoisted.append(f"{var('sans', unit.index)}_{n}:{sans}")
            sans = f"{var('sans', unit.index)}_{n}"
        if len(tans) > LONG:
            hoisted.append(f"{var('tans', unit.index)}_{n}:{tans}")
            tans = f"{var('tans', unit.index)}_{n}"
        test = step.check
        nodes.append(
            Node(
                n, test.test, sans, tans, test.options, branches[0], branches[1], step.description, step.quiet
            )
        )
    return Prt(unit.prt, unit.weight, ";\n".join([*variables, *hoisted]), tuple(nodes))


def _ending_wrong(unit: Unit, steps: list[Step]) -> list[Step]:
    """The steps with the last one's going-on false outcome ending the tree: wrong."""
    last = steps[-1]
    if last.false.goto != NEXT:
        return steps
    ending = Outcome(last.false.score, note(unit, "wrong"))
    return [*steps[:-1], Step(last.key, last.check, last.description, last.true, ending)]


def _mistake_steps(unit: Unit, sans: str, names: Names | None) -> list[Step]:
    """A step per listed mistake, in the grader's order: its score, note and quiz's feedback."""
    answer = unit.answer
    steps = []
    for j, (mistake, answer_note) in enumerate(zip(listed_mistakes(unit), mistake_notes(unit), strict=True)):
        target = _flat_value(answer, mistake.value, names)
        known = mistake.value if isinstance(mistake.value, int | float) else None
        steps.append(
            Step(
                f"mistake{j}",
                check(answer, sans, target, known),
                f"mistake: {mistake.tag}",
                Outcome(score_text(mistake.score), answer_note, _feedback(mistake.feedback)),
                Outcome(score_text(0), goto=NEXT),
            )
        )
    return steps


def _option_steps(unit: Unit) -> list[Step]:
    """For a single choice: a step per explained wrong option (chosen: its why)."""
    answer = unit.answer
    assert isinstance(answer, ChoiceAnswer)
    steps = []
    for letter in explained_options(answer):
        why = answer.options[answer.letters.index(letter)].why
        steps.append(
            Step(
                f"option{letter}",
                Check("AlgEquiv", unit.input, letter, "", f"is({unit.input} = {letter})"),
                f"option {letter} chosen",
                Outcome(score_text(0), note(unit, f"chose-{letter}"), _feedback(why)),
                Outcome(score_text(0), goto=NEXT),
            )
        )
    return steps


def _sans(unit: Unit, names: Names | None) -> str:
    """The student's answer as the unit's tests compare it."""
    answer = unit.answer
    if isinstance(answer, ChoiceAnswer):
        return f"setify({unit.input})" if answer.multiple else f"{{{unit.input}}}"
    if isinstance(answer, ShapeAnswer):
        assert names is not None
        return names.resolve(f"flatten(args({unit.input}))")
    if isinstance(answer, ExpressionAnswer):
        assert names is not None
        return names.resolve(unit.input)
    if isinstance(answer, VectorAnswer | MatrixAnswer):
        return f"flatten(args({unit.input}))"
    return unit.input


def choice_score_maxima(answer: ChoiceAnswer, sans: str) -> str:
    """The item's scheme (`attnquiz.engine.grading.grade.choice_score`) as a Maxima expression of the
    ticks."""
    right = "{" + ",".join(sorted(answer.correct_letters)) + "}"
    hits, extra = f"length(intersection({sans},{right}))", f"length(setdifference({sans},{right}))"
    if not answer.multiple or answer.scoring == "all-or-nothing":
        return f"if {sans} = {right} then 1 else 0"
    if answer.scoring == "net":
        return f"max(0, ({hits}-{extra})/{len(answer.correct_letters)})"
    missed = f"length(setdifference({right},{sans}))"
    return f"1-({extra}+{missed})/{len(answer.options)}"


def _ticks_steps(unit: Unit, own: Check, variables: list[str]) -> list[Step]:
    """A multiple-select answer: the exact set scores 1; otherwise the scheme's score of the ticks,
    with the explanation of every wrongly ticked option (a step each, so every one is said)."""
    answer = unit.answer
    assert isinstance(answer, ChoiceAnswer)
    sc = var("sc", unit.index)
    variables.append(f"{sc}:{choice_score_maxima(answer, own.sans)}")
    letters = explained_options(answer)
    ticks = note(unit, "ticks")
    steps = [
        Step(
            "right",
            own,
            "the right options",
            Outcome(score_text(1), note(unit, "correct")),
            Outcome(sc, "" if letters else ticks, goto=NEXT if letters else None),
        )
    ]
    for j, letter in enumerate(letters):
        why = answer.options[answer.letters.index(letter)].why
        last = j == len(letters) - 1
        ticked = Check("AlgEquiv", f"elementp({letter},{own.sans})", "true", "", "")
        steps.append(
            Step(
                f"ticked{letter}",
                ticked,
                f"option {letter} ticked",
                Outcome(sc, note(unit, f"ticked-{letter}"), _feedback(why), None if last else NEXT),
                Outcome(sc, ticks if last else "", goto=None if last else NEXT),
            )
        )
    return steps


def _carried_steps(unit: Unit, chain: Chain, sans: str, own: Check, names: Names | None) -> list[Step]:
    """A part that uses earlier ones, step for step as `attnquiz.engine.grading.grade` grades it: right
    against its own answer scores 1; else, where the student's earlier values moved the target,
    right against the recomputed target scores 1 if those values were right (rounded as asked:
    "Correct, from your (b) = ...") and ``carried_score`` if one carried an error ("Correct, given
    your (a) = ..."), and wrong against it scores 0 after an error (its mistakes describe slips
    from the right earlier values); otherwise its own mistakes decide."""
    k = unit.index
    against = check(unit.answer, sans, _comparable(unit, var("m", k)))
    # The earlier values of the target that matched: as typed, or unrounded (qz_g<k>_<j>).
    uses = ", ".join(f"({label}) = {{@{var('g', k)}_{chain.by_label(label).index}@}}" for label in unit.uses)
    typed_uses = ", ".join(
        f"({label}) = {{@{var('r', chain.by_label(label).index)}@}}" for label in unit.uses
    )
    score = chain.carried_score
    earns = "" if score >= 1 else f" A part right only with an earlier error carried forward earns {score:g}."
    # STACK's conditional block names the target that matched: from the values kept unrounded.
    them = "them" if len(unit.uses) > 1 else "it"
    kept = f'[[if test="{var("un", k)}"]] (as you kept {them} unrounded)[[/if]]'
    given = f"<p>Correct, given your {uses}{kept}.{earns}</p>"
    rounded = f"<p>Correct, from your {uses}{kept}.</p>"
    wrong_given = (
        f"<p>Not correct, even with your {typed_uses} carried forward: that gives {{@{var('t', k)}@}}.</p>"
    )
    zero, one = score_text(0), score_text(1)

    def flag(name: str) -> Check:
        return Check("AlgEquiv", var(name, k), "true", "", var(name, k))

    return [
        # Quiet: a list test's feedback would mark in red the entries that differ from the part's own
        # answer, though they may follow from the student's earlier values (the steps after decide).
        Step(
            "own",
            own,
            "its own answer",
            Outcome(one, note(unit, "correct")),
            Outcome(zero, goto="moved"),
            quiet=True,
        ),
        Step(
            "moved",
            flag("mv"),
            "the earlier answers move its target",
            Outcome(zero, goto="given"),
            Outcome(zero, goto="slipped"),
        ),
        Step(
            "given",
            against,
            "right given the earlier answers",
            Outcome(zero, goto="error"),
            Outcome(zero, goto="slipped"),
        ),
        Step(
            "error",
            flag("fe"),
            "an earlier answer carries an error",
            Outcome(score_text(score), note(unit, "carried-right"), given),
            Outcome(one, note(unit, "rounded-right"), rounded),
        ),
        Step(
            "slipped",
            flag("cw"),
            "wrong even given an earlier error",
            Outcome(zero, note(unit, "carried-wrong"), wrong_given),
            Outcome(zero, goto=NEXT),
        ),
        *_mistake_steps(unit, sans, names),
    ]


def unit_prt(unit: Unit, chain: Chain, notes: lms.Notes, item_id: str) -> Prt:
    """The PRT that marks one input."""
    answer = unit.answer
    names = unit_names(answer)
    sans = _sans(unit, names)
    right = _flat_value(answer, answer_value(answer), names)
    own = check(answer, sans, right, answer.value if isinstance(answer, NumericAnswer) else None)
    variables: list[str] = []
    for earlier in chain.needs(unit):
        variables += chain.define(earlier)
    if isinstance(answer, ChoiceAnswer) and answer.multiple:
        return assemble(unit, _ticks_steps(unit, own, variables), variables)
    if unit.uses:
        variables += chain.define(unit)
        if chain.carried[unit.index]:
            notes.append((WAITS_FOR_EARLIER, item_id))
            return assemble(
                unit, _ending_wrong(unit, _carried_steps(unit, chain, sans, own, names)), variables
            )
        notes.append((NO_CARRY_FORM, item_id))
    steps = [
        Step(
            "right",
            own,
            "the right answer",
            Outcome(score_text(1), note(unit, "correct")),
            Outcome(score_text(0), goto=NEXT),
        ),
        *(_option_steps(unit) if isinstance(answer, ChoiceAnswer) else []),
        *_mistake_steps(unit, sans, names),
    ]
    return assemble(unit, _ending_wrong(unit, steps), variables)


__all__ = [
    "INERT_SCIENTIFIC",
    "NO_CARRY_FORM",
    "RENAMED",
    "STACK_NUM_TOL",
    "WAITS_FOR_EARLIER",
    "Branch",
    "Chain",
    "Check",
    "Input",
    "Names",
    "Node",
    "Prt",
    "Unit",
    "asked",
    "castext",
    "check",
    "choice_score_maxima",
    "decimal_exponent",
    "declared_names",
    "explained_options",
    "fits",
    "input_for",
    "listed_mistakes",
    "mistake_notes",
    "note",
    "renamed",
    "score_text",
    "shown_value",
    "typed",
    "unit_names",
    "unit_prt",
    "units",
    "validator_definition",
    "var",
]
