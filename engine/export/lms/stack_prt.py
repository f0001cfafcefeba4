"""The potential response tree (PRT) of each input of a STACK question, from its nodes and the earlier parts.

One PRT per input, whose nodes (`attnquiz.engine.export.lms.stack_nodes`) test, in order, the right
answer, then each named mistake (a node each, whose answer note names it), and for a part that uses
earlier parts, error carried forward: its feedback variables recompute the target from the student's
own earlier inputs (`attnquiz.engine.export.lms.stack_carry`) as `attnquiz.engine.grading.parts`
does. The tree's steps are numbered, their jumps resolved and long expressions moved into feedback
variables here. The inputs are `attnquiz.engine.export.lms.stack_inputs`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from attnquiz.engine.answers.kinds import ChoiceAnswer, MatrixAnswer, NumericAnswer, VectorAnswer
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.lms import stack_maxima as mx
from attnquiz.engine.export.lms.stack_carry import carry
from attnquiz.engine.export.lms.stack_inputs import Names, Unit, flat_value, typed, unit_names
from attnquiz.engine.export.lms.stack_nodes import (
    NEXT,
    Branch,
    Check,
    Node,
    Outcome,
    Step,
    check,
    mistake_steps,
    note,
    option_steps,
    score_text,
    student_sans,
    ticks_steps,
    var,
)
from attnquiz.engine.grading.single import answer_value

# ---------------------------------------------------------------------------------------------
# A tree as STACK stores it
# ---------------------------------------------------------------------------------------------


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


class Chain:
    """The feedback-variable lines that carry the student's own values through a question's parts,
    as `attnquiz.engine.grading.parts.grade_parts` does.

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


def _carried_steps(unit: Unit, chain: Chain, sans: str, own: Check, names: Names | None) -> list[Step]:
    """A part that uses earlier ones, step for step as `attnquiz.engine.grading.parts` grades it: right
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
        *mistake_steps(unit, sans, names),
    ]


def unit_prt(unit: Unit, chain: Chain, notes: lms.Notes, item_id: str) -> Prt:
    """The PRT that marks one input."""
    answer = unit.answer
    names = unit_names(answer)
    sans = student_sans(unit, names)
    right = flat_value(answer, answer_value(answer), names)
    own = check(answer, sans, right, answer.value if isinstance(answer, NumericAnswer) else None)
    variables: list[str] = []
    for earlier in chain.needs(unit):
        variables += chain.define(earlier)
    if isinstance(answer, ChoiceAnswer) and answer.multiple:
        return assemble(unit, ticks_steps(unit, own, variables), variables)
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
        *(option_steps(unit) if isinstance(answer, ChoiceAnswer) else []),
        *mistake_steps(unit, sans, names),
    ]
    return assemble(unit, _ending_wrong(unit, steps), variables)


__all__ = [
    "NO_CARRY_FORM",
    "WAITS_FOR_EARLIER",
    "Chain",
    "Prt",
    "unit_prt",
]
