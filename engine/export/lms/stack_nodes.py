"""The nodes of a STACK potential response tree (PRT): each answer kind's test, and the nodes of one input.

A node runs one answer test, ``test(sans, tans, options)``, and takes its true or its false branch:
set the score, say the feedback, write an answer note, go on or end. `check` is how one answer kind
is tested, as STACK's test and as the same decision in Maxima (for the feedback variables that carry
errors forward); the steps here are the nodes of one input before numbering: the right answer, each
named mistake (its answer note names it), each explained wrong option, the ticks of a multiple
choice. `attnquiz.engine.export.lms.stack_prt` puts them in a tree, with the nodes of error carried
forward.
"""

from __future__ import annotations

import re
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
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms import stack_maxima as mx
from attnquiz.engine.export.lms.stack_inputs import Names, Unit, fits, flat_value

# ---------------------------------------------------------------------------------------------
# A node as STACK stores it
# ---------------------------------------------------------------------------------------------


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
# The nodes of one input: answer notes, feedback, and the steps before numbering
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


def var(name: str, index: int) -> str:
    """A feedback variable's name: prefixed, so that it never meets a name a student may type."""
    return f"qz_{name}{index}"


def mistake_steps(unit: Unit, sans: str, names: Names | None) -> list[Step]:
    """A step per listed mistake, in the grader's order: its score, note and quiz's feedback."""
    answer = unit.answer
    steps = []
    for j, (mistake, answer_note) in enumerate(zip(listed_mistakes(unit), mistake_notes(unit), strict=True)):
        target = flat_value(answer, mistake.value, names)
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


def option_steps(unit: Unit) -> list[Step]:
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


def student_sans(unit: Unit, names: Names | None) -> str:
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
    """The item's scheme (`attnquiz.engine.grading.choices.choice_score`) as a Maxima expression of the
    ticks."""
    right = "{" + ",".join(sorted(answer.correct_letters)) + "}"
    hits, extra = f"length(intersection({sans},{right}))", f"length(setdifference({sans},{right}))"
    if not answer.multiple or answer.scoring == "all-or-nothing":
        return f"if {sans} = {right} then 1 else 0"
    if answer.scoring == "net":
        return f"max(0, ({hits}-{extra})/{len(answer.correct_letters)})"
    missed = f"length(setdifference({right},{sans}))"
    return f"1-({extra}+{missed})/{len(answer.options)}"


def ticks_steps(unit: Unit, own: Check, variables: list[str]) -> list[Step]:
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


__all__ = [
    "NEXT",
    "STACK_NUM_TOL",
    "Branch",
    "Check",
    "Node",
    "Outcome",
    "Step",
    "castext",
    "check",
    "choice_score_maxima",
    "decimal_exponent",
    "explained_options",
    "listed_mistakes",
    "mistake_notes",
    "mistake_steps",
    "note",
    "option_steps",
    "score_text",
    "student_sans",
    "ticks_steps",
    "var",
]
