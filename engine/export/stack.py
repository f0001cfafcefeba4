"""STACK questions in Moodle XML: quiz's marking (tolerances, formulas by equivalence, named mistakes,
error carried forward) decided by STACK's own Maxima answer tests inside Moodle.

Each variant is one fixed STACK question (no random variables: the numbers are quiz's, from the
reference numerics), in a category per item as the Moodle export makes. A question has one input
per answer (one per part of a question in parts) and one potential response tree (PRT) per input,
weighted as the part is, whose nodes are:

- the right answer, by the answer kind's test: numbers by ``NumAbsolute`` with the item's own
  half-width (`Tolerance.half_width`: ``decimals n`` is 0.51·10⁻ⁿ, ``sigfigs n`` the same at the
  n-th significant digit, ``rtol``/``atol`` worked out for the answer) or ``NumRelative`` for a
  relative tolerance. STACK's ``NumDecPlaces`` and ``NumSigFigs`` also check how many digits the
  student *wrote*, so they refuse 1.928 for "1.93 to 2 places", which quiz accepts: they are not
  used. Counts, shapes, choices and formulas by ``AlgEquiv`` (a formula in the item's symbols only:
  the input's validator refuses any other name, as quiz's reader does);
- each named mistake, in the grader's order, at the same tolerance: its score, quiz's feedback,
  and an answer note naming the mistake (``prt2-no-scaling``), so Moodle's response analysis
  counts each misconception across the class;
- for a part that uses earlier parts, error carried forward as `attnquiz.engine.grading` does it:
  the feedback variables recompute the part's target from the student's own earlier inputs
  (`attnquiz.engine.export.stack_carry`), and a consistent answer earns the item's
  ``carried_score``.

Every question carries STACK question tests (Moodle runs them): the right answer (and, for a
formula, a factored and a reordered form) scores 1, each mistake reaches its own branch, and for a
question in parts a wrong (a) with the consistent (b) earns (b)'s carried score.

Concept questions are essays, as in the Moodle export.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO
from xml.sax.saxutils import escape

from attnquiz.engine import images
from attnquiz.engine.answers import (
    Answer,
    ChoiceAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    Formula,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    Part,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    Tolerance,
    VectorAnswer,
)
from attnquiz.engine.export import lms
from attnquiz.engine.export import stack_maxima as mx
from attnquiz.engine.export.stack_carry import carry
from attnquiz.engine.export.worksheet import ClassPlan, ExportError, Progress, ruled_lines
from attnquiz.engine.variant import Question

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


@dataclass(frozen=True, slots=True)
class Prt:
    """A potential response tree: its weight (``value``), feedback variables and nodes (0 first)."""

    name: str
    value: float
    feedbackvariables: str
    nodes: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class QTest:
    """A STACK question test: the inputs typed, and each PRT's expected score and final answer note."""

    description: str
    inputs: tuple[tuple[str, str], ...]
    expected: tuple[tuple[str, float, str], ...]


@dataclass
class StackQuestion:
    """Everything one ``<question type="stack">`` holds."""

    name: str
    text: str
    general: str
    variables: str
    note: str
    inputs: list[Input] = field(default_factory=list)
    prts: list[Prt] = field(default_factory=list)
    tests: list[QTest] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Notes on what STACK does differently from quiz (said once per export)
# ---------------------------------------------------------------------------------------------

WAITS_FOR_EARLIER = (
    "STACK marks a part that uses earlier parts only once they are answered and valid (a potential "
    "response tree waits for every input it reads), where quiz marks it against its own answer"
)
NO_CARRY_FORM = (
    "STACK has no Maxima form of this chain's carry-forward step: the later part is marked against its "
    "own answer, so a student who slips earlier loses it (as in the Moodle export)"
)
SYNTAX = (
    "STACK reads answers in its own syntax: numbers without thousands separators or decimal commas "
    "(589824, not 589,824), one box per entry for vectors, matrices and shapes, and names as declared "
    "(d_k or dk); anything else is invalid, which costs nothing"
)
MARKED_BY_HAND = (
    "Moodle does not mark essay questions: a teacher marks each concept answer by hand (the model answer "
    "and key points are the grader information), and an attempt's grade stays incomplete until then"
)
NUMBER_SLIPS = (
    "STACK names only the listed mistakes: quiz's remarks on an answer rounded too coarsely or off by a "
    "power of ten are not given (the answer is wrong in both)"
)


# ---------------------------------------------------------------------------------------------
# Checks: how one answer kind is tested, in a node and as a Maxima truth value
# ---------------------------------------------------------------------------------------------

_MARGIN = 1 + 1e-9
"""STACK's NumAbsolute accepts |s - t| < tol, quiz |s - t| <= tol: the half-width is widened by a
hair, so that an answer quiz accepts at the edge is accepted too."""


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


def _number_check(answer: NumericAnswer, sans: str, target: float) -> Check:
    tolerance = answer.tolerance
    tans = mx.number(target)
    half = _half_width(tolerance, target)
    boolean = f"is(abs(float({sans})-{tans}) <= {mx.number(half)})"
    if tolerance.mode == "relative" and tolerance.rtol * abs(target) >= tolerance.atol:
        return Check("NumRelative", sans, tans, mx.number(tolerance.rtol * _MARGIN), boolean)
    return Check("NumAbsolute", sans, tans, mx.number(half), boolean)


def _runtime_half_width(tolerance: Tolerance, target: str) -> str:
    """The half-width of a target computed in Maxima (a carried-forward target)."""
    if tolerance.mode == "decimals":
        return mx.number(_half_width(tolerance, 1.0))
    if tolerance.mode == "sigfigs":
        return (
            f"(if {target} = 0 then {mx.number(_half_width(tolerance, 0.0))} else "
            f"0.51*10^(floor(log(abs({target}))/log(10))-{tolerance.places}+1)*{mx.number(_MARGIN)})"
        )
    if tolerance.mode == "relative":
        return f"max({mx.number(tolerance.rtol)}*abs({target}), {mx.number(tolerance.atol)})*{mx.number(_MARGIN)}"
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
    if isinstance(answer, IntegerAnswer):
        return Check("AlgEquiv", sans, target, "", f"is(equal({sans}, {target}))")
    if isinstance(answer, NumericAnswer):
        if isinstance(target_value, int | float):
            return _number_check(answer, sans, float(target_value))
        half = _runtime_half_width(answer.tolerance, f"({target})")
        return Check("NumAbsolute", sans, target, half, f"is(abs(float({sans})-({target})) <= {half})")
    if isinstance(answer, VectorAnswer | MatrixAnswer):
        tolerance = answer.tolerance
        if tolerance.mode == "exact":
            boolean = _entries_boolean(sans, target, "is(equal(s, t))")
            return Check("AlgEquiv", sans, target, "", boolean)
        if _uniform(tolerance):
            half = mx.number(_half_width(tolerance, 1.0))
            return Check("NumAbsolute", sans, target, half, _entries_boolean(sans, target, _within(half)))
        boolean = _entries_boolean(sans, target, _within(_runtime_half_width(tolerance, "t")))
        return Check("AlgEquiv", boolean, "true", "", boolean)
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
    for name in declared:
        canonical = mx.maxima_name(name)
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


def _validator(name: str, names: Names) -> str:
    """A question-variable function that makes an answer with an undeclared name invalid."""
    allowed = "{" + ",".join(names.allowed) + "}"
    listed = ", ".join(names.allowed)
    message = mx.string(f"Use only the names {listed}.")
    return f'{name}(ex):=if subsetp(setify(listofvars(ex)), {allowed}) then "" else {message}'


# ---------------------------------------------------------------------------------------------
# One answer: its input, its right value, its mistakes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """One input and its PRT: a part of a question in parts, or the question itself."""

    index: int
    label: str
    prompt: str
    answer: SingleAnswer
    mistakes: tuple[Mistake, ...]
    weight: float
    part: Part | None

    @property
    def input(self) -> str:
        """The input's name (``ans1``, ``ans2``, ...)."""
        return f"ans{self.index}"

    @property
    def prt(self) -> str:
        """The PRT's name (``prt1``, ...), also the start of every answer note it writes."""
        return f"prt{self.index}"


def units(question: Question) -> list[Unit]:
    """The inputs of a scored question: one per part, or one."""
    answer = question.answer
    if isinstance(answer, PartsAnswer):
        return [
            Unit(i, p.label, p.prompt, p.answer, tuple(p.mistakes), p.weight, p)
            for i, p in enumerate(answer.parts, 1)
        ]
    if isinstance(answer, ExplainAnswer):
        raise TypeError(f"{question.item_id} is a concept question: an essay, not a STACK question")
    return [Unit(1, "", "", answer, tuple(question.variant.mistakes), 1.0, None)]


def right_value(answer: SingleAnswer) -> object:
    """The answer's own value, in the form its mistakes' values take."""
    if isinstance(answer, IntegerAnswer | NumericAnswer):
        return answer.value
    if isinstance(answer, VectorAnswer):
        return answer.values
    if isinstance(answer, MatrixAnswer):
        return answer.rows
    if isinstance(answer, ShapeAnswer):
        return answer.dims
    if isinstance(answer, ExpressionAnswer):
        return answer.formula
    return answer.correct_letters


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
    if not answer.multiple:
        return next(iter(value))
    return "[" + ",".join(sorted(value)) + "]"


def _flat_value(answer: SingleAnswer, value: object, names: Names | None) -> str:
    """A value of the answer's kind in the form its tests compare (see `check`)."""
    if isinstance(answer, VectorAnswer):
        assert isinstance(value, tuple)
        return mx.vector(value)
    if isinstance(answer, MatrixAnswer):
        assert isinstance(value, tuple)
        return mx.vector([float(v) for row in value for v in row])
    if isinstance(answer, ShapeAnswer):
        assert isinstance(value, tuple) and names is not None
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
    right = right_value(answer)
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


def _input(unit: Unit, names: Names | None, validator: str) -> Input:
    answer = unit.answer
    tans = typed(answer, right_value(answer))
    options = f"validator:{validator}" if names is not None else ""
    allow = ",".join(s for s in names.allowed if len(s) > 1) if names is not None else ""
    if isinstance(answer, ChoiceAnswer):
        kind = "checkbox" if answer.multiple else "radio"
        listed = ",".join(
            f"[{letter},{'true' if o.correct else 'false'},{mx.string(letter)}]"
            for letter, o in zip(answer.letters, answer.options, strict=True)
        )
        return Input(unit.input, kind, f"[{listed}]")
    if isinstance(answer, VectorAnswer | MatrixAnswer | ShapeAnswer):
        return Input(unit.input, "matrix", tans, boxsize=8, allowwords=allow, options=options)
    if isinstance(answer, ExpressionAnswer):
        return Input(
            unit.input, "algebraic", tans, boxsize=30, insertstars=4, allowwords=allow, options=options
        )
    return Input(unit.input, "numerical", tans, boxsize=20)


def asked(answer: SingleAnswer) -> str:
    """What to enter, phrased for STACK's form."""
    if isinstance(answer, ChoiceAnswer):
        return lms.instructions(answer)
    if isinstance(answer, ExpressionAnswer):
        names = ", ".join(answer.symbols)
        return f"Give a formula in {names} (use * for products, ^ for powers); any equivalent form is right."
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return answer.instructions()
    if isinstance(answer, ShapeAnswer):
        names = " (a number or a name such as T)" if answer.symbolic else ""
        return f"Give each dimension in its box{names}."
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
    return typed(answer, right_value(answer))


def _comparable(unit: Unit, value: str) -> str:
    """A value in the unit's recompute form, as its check compares it."""
    if isinstance(unit.answer, MatrixAnswer):
        return f"flatten(args({value}))"
    return value


def var(name: str, index: int) -> str:
    """A feedback variable's name: prefixed, so that it never meets a name a student may type."""
    return f"qz_{name}{index}"


class Chain:
    """The feedback-variable lines that carry errors forward through a question's parts.

    For each part k: ``qz_r<k>`` the value read, ``qz_ok<k>`` right against its own answer,
    ``qz_cf<k>`` carried (a used value is the student's own, and the target moved), ``qz_t<k>`` the
    recomputed target, ``qz_ck<k>`` right against it, ``qz_pv<k>`` the value passed on (quiz's
    ``passed``) and ``qz_sh<k>`` whether it is the student's own (quiz's ``shown``).
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
        pending = list(unit.part.uses) if unit.part is not None else []
        while pending:
            label = pending.pop()
            if label not in wanted:
                wanted.add(label)
                earlier = self.by_label(label).part
                pending.extend(earlier.uses if earlier is not None else ())
        return [u for u in self.units if u.label in wanted]

    def define(self, unit: Unit) -> list[str]:
        """The lines that define ``unit``'s variables (once the lines of the units it needs ran)."""
        if unit.index in self._lines:
            return self._lines[unit.index]
        k = unit.index
        answer = unit.answer
        exact = _exact(unit)
        r, ok, cf, t, ck, pv, sh = (var(n, k) for n in ("r", "ok", "cf", "t", "ck", "pv", "sh"))
        own = check(answer, _comparable(unit, r), _comparable(unit, exact), right_value(answer))
        lines = [f"{r}:{_read(unit)}", f"{ok}:{own.boolean}"]
        step = None
        used: list[Unit] = []
        if unit.part is not None and unit.part.uses:
            used = [self.by_label(label) for label in unit.part.uses]
            step = carry(unit.part, [var("pv", u.index) for u in used])
        if step is not None:
            shown = " or ".join(var("sh", u.index) for u in used)
            against = check(answer, _comparable(unit, r), _comparable(unit, t))
            lines += [
                f"{cf}:is(({shown}) and {step.guard})",
                f"{t}:if {cf} then {step.expression} else {exact}",
                f"{cf}:is({cf} and not(is({t} = {exact})))",
                f"{ck}:is({cf} and {against.boolean})",
                f"{pv}:if {ck} then {t if self.carried_score >= 1 else r} else if {ok} then {exact} else {r}",
                f"{sh}:is({ck} or not({ok}))",
            ]
        else:
            lines += [f"{pv}:if {ok} then {exact} else {r}", f"{sh}:not({ok})"]
        self.carried[k] = step is not None
        self._lines[k] = lines
        return lines


# ---------------------------------------------------------------------------------------------
# The PRT of one unit
# ---------------------------------------------------------------------------------------------

_CAS_OPENERS = (("{@", "&#123;@"), ("{#", "&#123;#"), ("[[", "&#91;["))


def castext(html: str) -> str:
    """Bank HTML as STACK CAS text: the sequences that open CAS expressions and blocks (``{@``,
    ``{#``, ``[[``) written with a character reference, which shows the same and runs nothing."""
    for opener, written in _CAS_OPENERS:
        html = html.replace(opener, written)
    return html


def _feedback(text: str) -> str:
    return castext(lms.tex_html(text))


def score_text(value: float) -> str:
    """A score as STACK writes it (``1.0000000``)."""
    return f"{value:.7f}"


def note(unit: Unit, what: str) -> str:
    """An answer note: the PRT's name and what happened (``prt2-no-scaling``)."""
    return f"{unit.prt}-{what}"


def listed_mistakes(unit: Unit) -> list[Mistake]:
    """The unit's mistakes that its input can be given (a value of the answer's form)."""
    return [m for m in unit.mistakes if fits(unit.answer, m.value)]


def explained_options(answer: ChoiceAnswer) -> list[str]:
    """The letters of the wrong options that say why they are wrong, in order."""
    return [
        letter for letter, o in zip(answer.letters, answer.options, strict=True) if not o.correct and o.why
    ]


def _mistake_nodes(unit: Unit, sans: str, names: Names | None, first: int) -> list[Node]:
    """A node per listed mistake, in the grader's order; the last false branch ends wrong."""
    answer = unit.answer
    listed = listed_mistakes(unit)
    nodes: list[Node] = []
    for j, mistake in enumerate(listed):
        target = _flat_value(answer, mistake.value, names)
        known = mistake.value if isinstance(mistake.value, int | float) else None
        test = check(answer, sans, target, known)
        last = j == len(listed) - 1
        nodes.append(
            Node(
                first + j,
                test.test,
                test.sans,
                test.tans,
                test.options,
                Branch(score_text(mistake.score), note(unit, mistake.tag), _feedback(mistake.feedback)),
                Branch(score_text(0), note(unit, "wrong"), "", -1 if last else first + j + 1),
                description=f"mistake: {mistake.tag}",
            )
        )
    return nodes


def _option_nodes(unit: Unit, first: int, after: int) -> list[Node]:
    """For a single choice: a node per explained wrong option (picked: its why), then ``after``."""
    answer = unit.answer
    assert isinstance(answer, ChoiceAnswer)
    letters = explained_options(answer)
    nodes: list[Node] = []
    for j, letter in enumerate(letters):
        why = answer.options[answer.letters.index(letter)].why
        nxt = after if j == len(letters) - 1 else first + j + 1
        nodes.append(
            Node(
                first + j,
                "AlgEquiv",
                unit.input,
                letter,
                "",
                Branch(score_text(0), note(unit, f"chose-{letter}"), _feedback(why)),
                Branch(score_text(0), note(unit, "wrong"), "", nxt),
                description=f"option {letter} chosen",
            )
        )
    return nodes


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
    """The item's scheme (`attnquiz.engine.grading.choice_score`) as a Maxima expression of the ticks."""
    right = "{" + ",".join(sorted(answer.correct_letters)) + "}"
    hits, extra = f"length(intersection({sans},{right}))", f"length(setdifference({sans},{right}))"
    if not answer.multiple or answer.scoring == "all-or-nothing":
        return f"if {sans} = {right} then 1 else 0"
    if answer.scoring == "net":
        return f"max(0, ({hits}-{extra})/{len(answer.correct_letters)})"
    missed = f"length(setdifference({right},{sans}))"
    return f"1-({extra}+{missed})/{len(answer.options)}"


def _ticks_prt(unit: Unit, own: Check, variables: list[str]) -> Prt:
    """A multiple-select answer: the exact set scores 1; otherwise the scheme's score of the ticks,
    with the explanation of every wrongly ticked option (a node each, so every one is said)."""
    answer = unit.answer
    assert isinstance(answer, ChoiceAnswer)
    sc = var("sc", unit.index)
    variables.append(f"{sc}:{choice_score_maxima(answer, own.sans)}")
    letters = explained_options(answer)
    nodes = [
        Node(0, own.test, own.sans, own.tans, own.options, Branch(score_text(1), note(unit, "correct")),
             Branch(sc, note(unit, "ticks"), "", 1 if letters else -1), description="the right options")
    ]  # fmt: skip
    for j, letter in enumerate(letters):
        why = answer.options[answer.letters.index(letter)].why
        nxt = -1 if j == len(letters) - 1 else j + 2
        nodes.append(
            Node(
                j + 1,
                "AlgEquiv",
                f"elementp({letter},{own.sans})",
                "true",
                "",
                Branch(sc, note(unit, f"ticked-{letter}"), _feedback(why), nxt),
                Branch(sc, note(unit, "ticks"), "", nxt),
                description=f"option {letter} ticked",
            )
        )
    return Prt(unit.prt, unit.weight, ";\n".join(variables), tuple(nodes))


def _carried_nodes(unit: Unit, chain: Chain, sans: str, own: Check, names: Names | None) -> list[Node]:
    """A part graded with error carried forward, node for node as `attnquiz.engine.grading` does:
    when an earlier value was the student's own (and moved the target), right against the
    recomputed target earns ``carried_score``, else right against its own answer 1, else 0 (its
    mistakes describe slips from the right earlier values, so they are not compared); otherwise
    its own answer, then its mistakes."""
    assert unit.part is not None
    k = unit.index
    target = _comparable(unit, var("t", k))
    against = check(unit.answer, sans, target)
    uses = ", ".join(f"({label}) = {{@{var('r', chain.by_label(label).index)}@}}" for label in unit.part.uses)
    score = chain.carried_score
    earns = "" if score >= 1 else f" A part right only with an earlier error carried forward earns {score:g}."
    correct = Branch(score_text(1), note(unit, "correct"))
    wrong_given = (
        f"<p>Not correct, even with your {uses} carried forward: that gives {{@{var('t', k)}@}}.</p>"
    )
    rest = _mistake_nodes(unit, sans, names, 4)
    return [
        Node(0, "AlgEquiv", var("cf", k), "true", "", Branch(score_text(0), note(unit, "carried"), "", 1),
             Branch(score_text(0), note(unit, "own"), "", 3), description="an earlier error carried forward"),
        Node(1, against.test, against.sans, against.tans, against.options,
             Branch(score_text(score), note(unit, "carried-right"), f"<p>Correct, given your {uses}.{earns}</p>"),
             Branch(score_text(0), note(unit, "carried"), "", 2), description="right given the earlier answers"),
        Node(2, own.test, own.sans, own.tans, own.options, correct,
             Branch(score_text(0), note(unit, "carried-wrong"), wrong_given), description="its own answer"),
        Node(3, own.test, own.sans, own.tans, own.options, correct,
             Branch(score_text(0), note(unit, "wrong"), "", 4 if rest else -1), description="its own answer"),
        *rest,
    ]  # fmt: skip


def unit_prt(unit: Unit, chain: Chain, notes: lms.Notes, item_id: str) -> Prt:
    """The PRT that marks one input."""
    answer = unit.answer
    names = unit_names(answer)
    sans = _sans(unit, names)
    right = _flat_value(answer, right_value(answer), names)
    own = check(answer, sans, right, answer.value if isinstance(answer, NumericAnswer) else None)
    variables: list[str] = []
    for earlier in chain.needs(unit):
        variables += chain.define(earlier)
    if isinstance(answer, ChoiceAnswer) and answer.multiple:
        return _ticks_prt(unit, own, variables)
    if unit.part is not None and unit.part.uses:
        variables += chain.define(unit)
        if chain.carried[unit.index]:
            notes.append((WAITS_FOR_EARLIER, item_id))
            nodes = _carried_nodes(unit, chain, sans, own, names)
            return Prt(unit.prt, unit.weight, ";\n".join(variables), tuple(nodes))
        notes.append((NO_CARRY_FORM, item_id))
    first_after = 1
    options: list[Node] = []
    if isinstance(answer, ChoiceAnswer):
        count = len(explained_options(answer))
        options = _option_nodes(unit, 1, 1 + count)
        first_after = 1 + count
    rest = _mistake_nodes(unit, sans, names, first_after)
    if options and not rest:  # the last option node's false branch ends the tree
        last = options[-1]
        options[-1] = Node(last.name, last.test, last.sans, last.tans, last.options, last.true,
                           Branch(score_text(0), note(unit, "wrong")), last.description)  # fmt: skip
    after_right = 1 if options or rest else -1
    nodes = [
        Node(0, own.test, own.sans, own.tans, own.options, Branch(score_text(1), note(unit, "correct")),
             Branch(score_text(0), note(unit, "wrong"), "", after_right), description="the right answer"),
        *options,
        *rest,
    ]  # fmt: skip
    return Prt(unit.prt, unit.weight, ";\n".join(variables), tuple(nodes))


# ---------------------------------------------------------------------------------------------
# Question tests: responses, and what quiz's grader says of them
# ---------------------------------------------------------------------------------------------


def rounded(answer: SingleAnswer, value: object) -> object:
    """``value`` as a student who gives it at the precision asked types it (numbers as the key
    writes them; names, letters and formulas as they are)."""
    if isinstance(answer, NumericAnswer):
        assert isinstance(value, int | float)
        return float(answer.tolerance.format(float(value)))
    if isinstance(answer, VectorAnswer):
        assert isinstance(value, tuple)
        return tuple(float(answer.tolerance.format(float(v))) for v in value)
    if isinstance(answer, MatrixAnswer):
        assert isinstance(value, tuple)
        return tuple(tuple(float(answer.tolerance.format(float(v))) for v in row) for row in value)
    return value


def quiz_text(answer: SingleAnswer, value: object) -> str:
    """The same value as a student types it into quiz (numbers at the precision asked, with their
    trailing zeros: 2.00, not 2.0, which quiz would call coarser than asked)."""
    tolerance = answer.tolerance
    if isinstance(answer, IntegerAnswer):
        assert isinstance(value, int | float)
        return str(int(value))
    if isinstance(answer, NumericAnswer):
        assert isinstance(value, int | float)
        return _number_typed(tolerance, float(value))
    if isinstance(answer, VectorAnswer):
        assert isinstance(value, tuple)
        return "[" + ", ".join(_number_typed(tolerance, float(v)) for v in value) + "]"
    if isinstance(answer, ShapeAnswer):
        assert isinstance(value, tuple)
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(answer, MatrixAnswer):
        assert isinstance(value, tuple)
        rows = ("[" + ", ".join(_number_typed(tolerance, float(v)) for v in row) + "]" for row in value)
        return "[" + ", ".join(rows) + "]"
    if isinstance(answer, ExpressionAnswer):
        assert isinstance(value, Formula)
        return value.text
    assert isinstance(value, frozenset)
    return ", ".join(sorted(value))


def _number_typed(tolerance: Tolerance, value: float) -> str:
    """A number as typed: at the precision asked where it is written so (keeping its trailing
    zeros), else with every digit."""
    shown = tolerance.format(value)
    return shown if float(shown) == value else repr(value)


def formula_forms(answer: ExpressionAnswer) -> list[tuple[str, Formula]]:
    """The answer as quiz writes it, factored, and with its terms in the reverse order: three
    equivalent forms a STACK question test must mark right (each read by quiz's own reader)."""
    import sympy

    from attnquiz.engine import symbolic

    expr = symbolic.to_sympy(answer.formula.tree)
    expanded = sympy.expand(expr)
    terms = list(sympy.Add.make_args(expanded))
    forms: list[tuple[str, Formula]] = [("as written", answer.formula)]
    candidates = [("factored", str(sympy.factor(expr)))]
    if len(terms) > 1:
        candidates.append(("reordered", " + ".join(f"({t})" for t in reversed(terms))))
    else:
        candidates.append(
            ("reordered", str(sympy.Mul(*reversed(sympy.Mul.make_args(expanded)), evaluate=False)))
        )
    for label, text in candidates:
        try:
            forms.append((label, Formula.of(text, answer.symbols)))
        except ValueError:
            continue  # a form quiz's own reader refuses is not one to test
    return forms


@dataclass(frozen=True, slots=True)
class Attempt:
    """One response per unit (None: left as right), and what quiz's grader gives each unit."""

    description: str
    values: tuple[object, ...]


def _expected_note(
    unit: Unit, grade: object, carried_forward: bool, value: object, chain: Chain
) -> str | None:
    from attnquiz.engine.grading import Grade

    assert isinstance(grade, Grade)
    if grade.status == "invalid":
        return None
    answer = unit.answer
    if isinstance(answer, ChoiceAnswer):
        assert isinstance(value, frozenset)
        if value == answer.correct_letters:
            return note(unit, "correct")
        letters = explained_options(answer)
        if answer.multiple:
            return note(unit, f"ticked-{letters[-1]}" if letters and letters[-1] in value else "ticks")
        (chosen,) = value
        if chosen in letters:
            return note(unit, f"chose-{chosen}")
    if carried_forward and chain.carried.get(unit.index, False):
        return note(unit, "carried-right" if grade.score > 0 else "carried-wrong")
    if grade.status == "correct":
        return note(unit, "correct")
    tags = [m.tag for m in listed_mistakes(unit)]
    if grade.mistake is not None and grade.mistake.tag in tags:
        return note(unit, grade.mistake.tag)
    return note(unit, "wrong")


def graded(
    question: Question, all_units: list[Unit], chain: Chain, values: Sequence[object]
) -> list[tuple[float, str | None]]:
    """(score, final answer note) of each unit's PRT, as quiz's grader decides for ``values``."""
    from attnquiz.engine.grading import grade_answer, grade_parts

    texts = [quiz_text(u.answer, v) for u, v in zip(all_units, values, strict=True)]
    answer = question.answer
    if isinstance(answer, PartsAnswer):
        whole = grade_parts(answer, texts)
        out = []
        for unit, part_grade, value, text in zip(all_units, whole.parts, values, texts, strict=True):
            grade, carried = part_grade.grade, bool(part_grade.carried_forward)
            if unit.part is not None and unit.part.uses and not chain.carried.get(unit.index, False):
                grade, carried = (
                    grade_answer(unit.answer, text, unit.mistakes),
                    False,
                )  # STACK: its own answer
            out.append((grade.score, _expected_note(unit, grade, carried, value, chain)))
        return out
    unit = all_units[0]
    grade = grade_answer(unit.answer, texts[0], unit.mistakes)
    return [(grade.score, _expected_note(unit, grade, False, values[0], chain))]


def _consistent(all_units: list[Unit], first_wrong: int, wrong: object) -> list[object] | None:
    """Responses where unit ``first_wrong`` is ``wrong`` and every later part that uses it follows
    from the student's own values (each recomputed by quiz's reference numerics and rounded as asked)."""
    values: list[object] = []
    given: dict[str, object] = {}
    for unit in all_units:
        answer = unit.answer
        if unit.index < first_wrong:
            value = rounded(answer, right_value(answer))
        elif unit.index == first_wrong:
            value = wrong
        elif unit.part is not None and unit.part.uses and unit.part.recompute is not None:
            try:
                recomputed = unit.part.answer_for(
                    unit.part.recompute(*(given[label] for label in unit.part.uses))
                )
            except (ArithmeticError, ValueError, TypeError):
                return None
            value = rounded(answer, right_value(recomputed))
        else:
            value = rounded(answer, right_value(answer))
        values.append(value)
        given[unit.label] = value
    return values


def _wrong_value(unit: Unit) -> object | None:
    """A wrong value for a unit that is not one of its mistakes (for a carried-forward test)."""
    answer = unit.answer
    if isinstance(answer, IntegerAnswer):
        return answer.value + max(1, abs(answer.value) // 10)
    if isinstance(answer, NumericAnswer):
        step = max(abs(answer.value) * 0.1, answer.tolerance.half_width(answer.value) * 20, 0.05)
        return rounded(answer, answer.value + step)
    if isinstance(answer, VectorAnswer):
        return rounded(answer, tuple(v + max(abs(v) * 0.1, 0.05) for v in answer.values))
    if isinstance(answer, MatrixAnswer):
        return rounded(answer, tuple(tuple(v + max(abs(v) * 0.1, 0.05) for v in row) for row in answer.rows))
    return None


def attempts(question: Question, all_units: list[Unit]) -> list[Attempt]:
    """The responses every exported question is tested on: all right (and each right formula in
    its other forms), each listed mistake in its unit, and for each part that later parts use, a
    wrong value there with the later parts consistent with it."""
    right = [rounded(u.answer, right_value(u.answer)) for u in all_units]
    found = [Attempt("the right answer", tuple(right))]
    for unit in all_units:
        pos = unit.index - 1
        if isinstance(unit.answer, ExpressionAnswer):
            for label, form in formula_forms(unit.answer)[1:]:
                found.append(
                    Attempt(f"{_where(unit)}right, {label}", tuple(right[:pos] + [form] + right[pos + 1 :]))
                )
        for mistake in listed_mistakes(unit):
            value = rounded(unit.answer, mistake.value)
            if unit.answer.matches(value):  # type: ignore[arg-type]
                continue
            found.append(
                Attempt(
                    f"{_where(unit)}mistake {mistake.tag}", tuple(right[:pos] + [value] + right[pos + 1 :])
                )
            )
        if isinstance(unit.answer, ChoiceAnswer) and unit.answer.multiple:
            wrong_ticks = frozenset(explained_options(unit.answer)[:1]) | unit.answer.correct_letters
            if wrong_ticks != unit.answer.correct_letters:
                found.append(
                    Attempt(
                        f"{_where(unit)}a wrong option ticked",
                        tuple(right[:pos] + [wrong_ticks] + right[pos + 1 :]),
                    )
                )
    used = {label for u in all_units if u.part is not None for label in u.part.uses}
    for unit in all_units:
        if unit.label not in used:
            continue
        candidates = [rounded(unit.answer, m.value) for m in listed_mistakes(unit)][:1] + [_wrong_value(unit)]
        for wrong in candidates:
            if wrong is None or unit.answer.matches(wrong):  # type: ignore[arg-type]
                continue
            values = _consistent(all_units, unit.index, wrong)
            if values is not None:
                found.append(Attempt(f"({unit.label}) wrong, later parts consistent with it", tuple(values)))
                break
    return found


def _where(unit: Unit) -> str:
    return f"({unit.label}) " if unit.label else ""


def question_tests(question: Question, all_units: list[Unit], chain: Chain) -> list[QTest]:
    """STACK question tests whose expectations are quiz's grades of the same responses."""
    tests: list[QTest] = []
    for attempt in attempts(question, all_units):
        expected = graded(question, all_units, chain, attempt.values)
        if any(n is None for _, n in expected):
            continue  # quiz finds a response invalid: nothing STACK could be expected to mark
        tests.append(
            QTest(
                attempt.description,
                tuple((u.input, typed(u.answer, v)) for u, v in zip(all_units, attempt.values, strict=True)),
                tuple((u.prt, score, str(n)) for u, (score, n) in zip(all_units, expected, strict=True)),
            )
        )
    return tests


# ---------------------------------------------------------------------------------------------
# The question
# ---------------------------------------------------------------------------------------------


def _options_html(answer: ChoiceAnswer) -> str:
    return "".join(
        f"<p><strong>{letter}.</strong> {lms.tex_html_inline(o.text)}</p>"
        for letter, o in zip(answer.letters, answer.options, strict=True)
    )


def _unit_html(unit: Unit, with_feedback: bool) -> str:
    html = lms.tex_html(f"**({unit.label})** {unit.prompt}") if unit.label else ""
    if isinstance(unit.answer, ChoiceAnswer):
        html += _options_html(unit.answer)
    html += f"<p><em>{escape(asked(unit.answer))}</em></p>"
    html = castext(html)
    html += f"<p>[[input:{unit.input}]] [[validation:{unit.input}]]</p>"
    if with_feedback:
        html += f"<div>[[feedback:{unit.prt}]]</div>"
    return html


_SCORED = ""
"""The note "item" that says a scored question was written (`SYNTAX` is then said once)."""


def stack_question(question: Question, notes: lms.Notes) -> StackQuestion:
    """The STACK question of one scored variant."""
    notes.append(("", _SCORED))
    all_units = units(question)
    answer = question.answer
    carried_score = answer.carried_score if isinstance(answer, PartsAnswer) else 1.0
    chain = Chain(all_units, carried_score)
    variables: list[str] = []
    inputs: list[Input] = []
    prts: list[Prt] = []
    for unit in all_units:
        names = unit_names(unit.answer)
        validator = var("valid", unit.index)
        if names is not None:
            variables.append(_validator(validator, names))
        inputs.append(_input(unit, names, validator))
        prts.append(unit_prt(unit, chain, notes, question.item_id))
    if isinstance(answer, PartsAnswer):
        stem = castext(lms.tex_html(question.variant.stem) + lms.figures_html(question, "prompt"))
        text = stem + "".join(_unit_html(u, True) for u in all_units)
        if question.student_note:
            text += castext(f"<p><small>Note: {escape(question.student_note)}</small></p>")
    else:
        text = castext(lms.question_html(question, "")).replace("<p><em></em></p>", "")
        text += _unit_html(all_units[0], True)
    if any(isinstance(u.answer, NumericAnswer | IntegerAnswer) for u in all_units):
        notes.append((NUMBER_SLIPS, question.item_id))
    return StackQuestion(
        name=lms.question_name(question),
        text=text,
        general=castext(lms.solution_html(question)),
        variables=";\n".join(variables),
        note=f"{question.item_id} {question.code}",
        inputs=inputs,
        prts=prts,
        tests=question_tests(question, all_units, chain),
    )


# ---------------------------------------------------------------------------------------------
# XML
# ---------------------------------------------------------------------------------------------


def _cdata(text: str) -> str:
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _text(text: str, *, html: bool = True) -> str:
    if not text:
        return "<text></text>"
    return f"<text>{_cdata(text) if html else escape(text)}</text>"


def _element(tag: str, value: str | int | float) -> str:
    return f"<{tag}>{escape(str(value))}</{tag}>"


_PRT_MESSAGES = {
    "prtcorrect": "Correct answer, well done.",
    "prtpartiallycorrect": "Your answer is partially correct.",
    "prtincorrect": "Incorrect answer.",
}


def _branch_xml(side: str, branch: Branch) -> list[str]:
    return [
        f"        <{side}scoremode>=</{side}scoremode>",
        f"        {_element(side + 'score', branch.score)}",
        f"        <{side}penalty></{side}penalty>",
        f"        {_element(side + 'nextnode', branch.next_node)}",
        f"        {_element(side + 'answernote', branch.note)}",
        f'        <{side}feedback format="html">{_text(branch.feedback)}</{side}feedback>',
    ]


def _node_xml(node: Node) -> list[str]:
    return [
        "      <node>",
        f"        {_element('name', node.name)}",
        f"        {_element('description', node.description)}",
        f"        {_element('answertest', node.test)}",
        f"        {_element('sans', node.sans)}",
        f"        {_element('tans', node.tans)}",
        f"        {_element('testoptions', node.options)}",
        "        <quiet>0</quiet>",
        *_branch_xml("true", node.true),
        *_branch_xml("false", node.false),
        "      </node>",
    ]


def _input_xml(item: Input) -> list[str]:
    return [
        "    <input>",
        f"      {_element('name', item.name)}",
        f"      {_element('type', item.kind)}",
        f"      {_element('tans', item.tans)}",
        f"      {_element('boxsize', item.boxsize)}",
        "      <strictsyntax>1</strictsyntax>",
        f"      {_element('insertstars', item.insertstars)}",
        f"      {_element('syntaxhint', item.syntaxhint)}",
        "      <syntaxattribute>0</syntaxattribute>",
        "      <forbidwords></forbidwords>",
        f"      {_element('allowwords', item.allowwords)}",
        f"      {_element('forbidfloat', item.forbidfloat)}",
        "      <requirelowestterms>0</requirelowestterms>",
        "      <checkanswertype>0</checkanswertype>",
        "      <mustverify>0</mustverify>",
        "      <showvalidation>1</showvalidation>",
        f"      {_element('options', item.options)}",
        "    </input>",
    ]


def _prt_xml(prt: Prt) -> list[str]:
    return [
        "    <prt>",
        f"      {_element('name', prt.name)}",
        f"      {_element('value', f'{prt.value:.7f}')}",
        "      <autosimplify>1</autosimplify>",
        "      <feedbackstyle>1</feedbackstyle>",
        f"      <feedbackvariables>{_text(prt.feedbackvariables, html=False)}</feedbackvariables>",
        *(line for node in prt.nodes for line in _node_xml(node)),
        "    </prt>",
    ]


def _qtest_xml(number: int, test: QTest) -> list[str]:
    lines = [
        "    <qtest>",
        f"      {_element('testcase', number)}",
        f"      {_element('description', test.description)}",
    ]
    for name, value in test.inputs:
        lines += [
            "      <testinput>",
            f"        {_element('name', name)}",
            f"        {_element('value', value)}",
            "      </testinput>",
        ]
    for prt, score, answer_note in test.expected:
        lines += [
            "      <expected>",
            f"        {_element('name', prt)}",
            f"        {_element('expectedscore', score_text(score))}",
            f"        {_element('expectedpenalty', score_text(0))}",
            f"        {_element('expectedanswernote', answer_note)}",
            "      </expected>",
        ]
    return [*lines, "    </qtest>"]


def _files(html: str, figures: list[tuple[str, bytes]]) -> str:
    """The files a text shows, embedded after it as Moodle expects (``@@PLUGINFILE@@/name``)."""
    files = dict(figures)
    files.update(lms.image_files(html))
    return "".join(
        f'<file name="{escape(name)}" path="/" encoding="base64">{base64.b64encode(data).decode("ascii")}</file>'
        for name, data in files.items()
    )


def _with_files(
    tag: str, html: str, figures: list[tuple[str, bytes]], attributes: str = ' format="html"'
) -> str:
    return f"<{tag}{attributes}>{_text(html)}{_files(html, figures)}</{tag}>"


def stack_xml(question: Question, built: StackQuestion) -> list[str]:
    """The ``<question type="stack">`` element, as lines, in the order STACK itself exports."""
    lines = [
        '  <question type="stack">',
        f"    <name>{_text(built.name, html=False)}</name>",
        "    " + _with_files("questiontext", built.text, lms.figure_files(question, "prompt")),
        "    " + _with_files("generalfeedback", built.general, lms.figure_files(question, "solution")),
        "    <defaultgrade>1</defaultgrade>",
        "    <penalty>0</penalty>",
        "    <hidden>0</hidden>",
        "    <idnumber></idnumber>",
        "    <stackversion><text></text></stackversion>",
        f"    <questionvariables>{_text(built.variables, html=False)}</questionvariables>",
        '    <specificfeedback format="html"><text></text></specificfeedback>',
        f'    <questionnote format="moodle_auto_format">{_text(built.note, html=False)}</questionnote>',
        '    <questiondescription format="moodle_auto_format"><text></text></questiondescription>',
        "    <questionsimplify>1</questionsimplify>",
        "    <assumepositive>0</assumepositive>",
        "    <assumereal>0</assumereal>",
        "    <isbroken>0</isbroken>",
        *(f'    <{tag} format="html">{_text(message)}</{tag}>' for tag, message in _PRT_MESSAGES.items()),
        "    <decimals>.</decimals>",
        "    <scientificnotation>*10</scientificnotation>",
        "    <multiplicationsign>dot</multiplicationsign>",
        "    <sqrtsign>1</sqrtsign>",
        "    <complexno>i</complexno>",
        "    <inversetrig>cos-1</inversetrig>",
        "    <logicsymbol>lang</logicsymbol>",
        "    <matrixparens>[</matrixparens>",
        "    <variantsselectionseed></variantsselectionseed>",
    ]
    for item in built.inputs:
        lines += _input_xml(item)
    for prt in built.prts:
        lines += _prt_xml(prt)
    for number, test in enumerate(built.tests, 1):
        lines += _qtest_xml(number, test)
    lines += _tags(question)
    return lines


def _tags(question: Question) -> list[str]:
    tags = "".join(f"<tag>{_text(t, html=False)}</tag>" for t in (question.bank, question.topic))
    return [f"    <tags>{tags}</tags>", "  </question>"]


RESPONSE_LINES = (5, 10, 15, 20, 25, 30, 35, 40)
"""The heights Moodle's essay form offers for the response box, in lines."""


def essay_xml(question: Question, answer: ExplainAnswer, notes: lms.Notes) -> list[str]:
    """A concept question as a Moodle ``essay`` (marked by hand with the model answer and key points)."""
    notes.append((MARKED_BY_HAND, question.item_id))
    wanted = ruled_lines(answer) + 2
    height = next((n for n in RESPONSE_LINES if n >= wanted), RESPONSE_LINES[-1])
    grader = lms.key_points_html(answer)
    if question.instructor_note:
        grader += f"<p><small>Note for instructors: {escape(question.instructor_note)}</small></p>"
    text = lms.question_html(question)
    general = lms.solution_html(question)
    return [
        '  <question type="essay">',
        f"    <name>{_text(lms.question_name(question), html=False)}</name>",
        "    " + _with_files("questiontext", text, lms.figure_files(question, "prompt")),
        "    " + _with_files("generalfeedback", general, lms.figure_files(question, "solution")),
        "    <defaultgrade>1</defaultgrade>",
        "    <penalty>0</penalty>",
        "    <hidden>0</hidden>",
        "    <responseformat>editor</responseformat>",
        "    <responserequired>1</responserequired>",
        f"    <responsefieldlines>{height}</responsefieldlines>",
        "    <minwordlimit></minwordlimit>",
        "    <maxwordlimit></maxwordlimit>",
        "    <attachments>0</attachments>",
        "    <attachmentsrequired>0</attachmentsrequired>",
        "    <maxbytes>0</maxbytes>",
        "    <filetypeslist></filetypeslist>",
        "    " + _with_files("graderinfo", grader, []),
        '    <responsetemplate format="html"><text></text></responsetemplate>',
        *_tags(question),
    ]


@images.in_question_folder
def question_xml(question: Question, notes: lms.Notes) -> list[str]:
    """The element of one variant: a STACK question, or an essay for a concept question."""
    answer: Answer = question.answer
    if isinstance(answer, ExplainAnswer):
        return essay_xml(question, answer, notes)
    try:
        return stack_xml(question, stack_question(question, notes))
    except mx.MaximaError as exc:
        raise ExportError(f"item {question.item_id!r} (variant {question.code}): {exc}") from None


def lines(plan: ClassPlan, notes: lms.Notes, *, progress: Progress | None = None) -> Iterator[str]:
    """The file line by line: a category per item (``$course$/<bank>/<item>``), then its variants."""
    yield '<?xml version="1.0" encoding="UTF-8"?>'
    yield (
        f"<!-- quiz export of bank {plan.bank} for STACK: "
        + ("past-paper questions" if plan.original else f"master seed {plan.master_seed}")
        + f", {len(plan.sheets)} variant(s) per item -->"
    )
    yield "<quiz>"
    groups = plan.by_item()
    for done, (item_id, questions) in enumerate(groups, 1):
        source = questions[0].source if questions else ""
        yield '  <question type="category">'
        yield f"    <category>{_text(f'$course$/{plan.bank}/{item_id}', html=False)}</category>"
        yield f'    <info format="html">{_text(escape(source))}</info>'
        yield "  </question>"
        for question in questions:
            yield from question_xml(question, notes)
        if progress is not None:
            progress(done, len(groups))
    yield "</quiz>"


def write(plan: ClassPlan, out: BinaryIO, *, progress: Progress | None = None) -> list[str]:
    """Write the file to ``out`` as it is made (UTF-8, in batches of about 32 kB); the notes."""
    notes: lms.Notes = []
    batch: list[str] = []
    size = 0
    for line in lines(plan, notes, progress=progress):
        batch.append(line)
        size += len(line)
        if size >= 32 * 2**10:
            out.write(("\n".join(batch) + "\n").encode("utf-8"))
            batch, size = [], 0
    if batch:
        out.write(("\n".join(batch) + "\n").encode("utf-8"))
    return _said(notes)


def build(plan: ClassPlan, *, progress: Progress | None = None) -> tuple[str, list[str]]:
    """The whole file in memory, and its notes (an export streams it with `write` instead)."""
    notes: lms.Notes = []
    text = "\n".join(lines(plan, notes, progress=progress)) + "\n"
    return text, _said(notes)


def _said(notes: lms.Notes) -> list[str]:
    """The export's notes, one line each: how STACK reads answers (whenever some question is
    scored), then the notes gathered per item."""
    scored = any(item == _SCORED for _, item in notes)
    gathered = lms.gather([(m, i) for m, i in notes if i != _SCORED])
    return ([SYNTAX] if scored else []) + gathered


__all__ = [
    "Branch",
    "Chain",
    "Check",
    "Input",
    "Node",
    "Prt",
    "QTest",
    "StackQuestion",
    "Unit",
    "build",
    "check",
    "lines",
    "question_xml",
    "stack_question",
    "units",
    "write",
]
