"""The STACK export marked by STACK's own Maxima library, against quiz's grader on the same responses.

Every exported question of both banks, over several variants of every item, is run in ONE Maxima
process (`stack_harness`): its own question tests, and responses built here: the exact answer,
a nudge beyond the tolerance, every listed mistake at full precision, a changed formula and an
undeclared name, every selection of a choice, and for questions in parts a wrong earlier part
with later parts consistent with it (at the item's carried score and at 0.5). Each PRT's score
must equal what quiz's grader gives the same response, and each named mistake must end in its
own branch. Skipped cleanly without maxima or without the reference copy of STACK.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache

import pytest
from msgspec.structs import replace
from typer.testing import CliRunner

from attnquiz.engine.answers.carry import rounded_chain
from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.export.lms import stack, stack_inputs, stack_nodes
from attnquiz.engine.export.lms import stack_maxima as mx
from attnquiz.engine.export.lms.stack_inputs import Unit, typed
from attnquiz.engine.export.lms.stack_nodes import listed_mistakes
from attnquiz.engine.export.lms.stack_tests import quiz_text, rounded
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.grading.parts import grade_parts
from attnquiz.engine.grading.single import answer_value
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.engine.variant import Question, Variant
from attnquiz.main import app

from . import stack_harness as harness

pytestmark = pytest.mark.skipif(harness.missing() is not None, reason=str(harness.missing()))

VARIANTS = 3
SEED = 2026


@dataclass(frozen=True)
class Expect:
    """What a case must give: each PRT's score (quiz's) and, where it names one, its final note."""

    scores: dict[str, float]
    notes: dict[str, str]
    invalid: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Built:
    """An exported question, as the harness reads it back, with the engine's question."""

    question: Question
    parsed: harness.Question
    units: list[Unit]


def _questions() -> list[Question]:
    found: list[Question] = []
    for name in ("week1", "week2"):
        bank = banks.load(name)
        plan = plan_class(bank, students=VARIANTS, master_seed=SEED, items=[i.id for i in bank.items])
        for _, questions in plan.by_item():
            found += [q for q in questions if not isinstance(q.answer, ExplainAnswer)]
    return found


def _half_carried(question: Question) -> Question | None:
    """The same question in parts with carried_score 0.5 (as an item's params can ask)."""
    answer = question.answer
    if not isinstance(answer, PartsAnswer) or not any(p.uses for p in answer.parts):
        return None
    variant = replace(question.variant, answer=replace(answer, carried_score=0.5))
    return replace(question, variant=variant, code=question.code + "-half")


def _build(question: Question) -> Built:
    lines = stack.question_xml(question, [])
    (parsed,) = harness.parse("<quiz>\n" + "\n".join(lines) + "\n</quiz>")
    return Built(question, parsed, stack_inputs.units(lms_model.build(question)))


def _texts(units: list[Unit], values: list[object]) -> list[str]:
    return [quiz_text(u.answer, v) for u, v in zip(units, values, strict=True)]


def _quiz_scores(built: Built, values: list[object]) -> dict[str, float] | None:
    """quiz's score of each part (or of the question) for these values; None if quiz finds one invalid."""
    texts = _texts(built.units, values)
    answer = built.question.answer
    if isinstance(answer, PartsAnswer):
        grade = grade_parts(answer, texts)
        if any(p.grade.status == "invalid" for p in grade.parts):
            return None
        return {u.prt: p.grade.score for u, p in zip(built.units, grade.parts, strict=True)}
    (unit,) = built.units
    single = grade_answer(unit.answer, texts[0], unit.mistakes)
    return None if single.status == "invalid" else {unit.prt: single.score}


def _inputs(built: Built, values: list[object]) -> dict[str, str]:
    return {u.input: typed(u.answer, v) for u, v in zip(built.units, values, strict=True)}


def _right(units: list[Unit]) -> list[object]:
    return [rounded(u.answer, answer_value(u.answer)) for u in units]


def _nudged(answer: SingleAnswer) -> object | None:
    """A value just beyond the tolerance (three half-widths away): wrong in quiz."""
    if isinstance(answer, NumericAnswer):
        return answer.value + 3 * answer.tolerance.half_width(answer.value) + 1e-9
    if isinstance(answer, IntegerAnswer):
        return answer.value + 1
    if isinstance(answer, VectorAnswer):
        first = answer.values[0]
        return (first + 3 * answer.tolerance.half_width(first) + 1e-9, *answer.values[1:])
    if isinstance(answer, MatrixAnswer):
        first = answer.rows[0][0]
        row = (first + 3 * answer.tolerance.half_width(first) + 1e-9, *answer.rows[0][1:])
        return (row, *answer.rows[1:])
    return None


def _changed(answer: ExpressionAnswer) -> list[Formula]:
    """The answer with one more of its first symbol, and doubled: formulas that must not score."""
    symbol = answer.symbols[0]
    return [
        Formula.of(f"({answer.value}) + {symbol}", answer.symbols),
        Formula.of(f"2*({answer.value})", answer.symbols),
    ]


def _consistent(units: list[Unit], wrong_at: int, wrong: object) -> list[object] | None:
    """Responses with a wrong value at unit ``wrong_at`` and later parts computed from the student's own."""
    values: list[object] = []
    given: dict[str, object] = {}
    for unit in units:
        if unit.index == wrong_at:
            value = wrong
        elif unit.index > wrong_at and unit.uses:
            try:
                recomputed = unit.group.target_for([given[label] for label in unit.uses])
            except (ArithmeticError, ValueError, TypeError):
                return None
            value = rounded(unit.answer, answer_value(recomputed))
        else:
            value = rounded(unit.answer, answer_value(unit.answer))
        values.append(value)
        given[unit.label] = value
    return values


def _cli_scores(built: Built, values: list[object]) -> dict[str, float]:
    """Each part's score as ``quiz answer BANK ITEM --seed N --json R1 R2 ...`` gives it."""
    question = built.question
    texts = _texts(built.units, values)
    args = ["answer", question.bank, question.item_id, "--seed", str(question.seed), "--json", "--", *texts]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    parts = json.loads(result.stdout)["parts"]
    return {u.prt: float(p["score"]) for u, p in zip(built.units, parts, strict=True)}


def _off(answer: SingleAnswer, factor: float) -> object | None:
    if isinstance(answer, IntegerAnswer):
        return answer.value + max(1, round(abs(answer.value) * (factor - 1)))
    if isinstance(answer, NumericAnswer):
        return rounded(answer, answer.value * factor + answer.tolerance.half_width(answer.value) * 30)
    if isinstance(answer, VectorAnswer):
        return rounded(answer, tuple(v * factor + 0.1 for v in answer.values))
    if isinstance(answer, MatrixAnswer):
        return rounded(answer, tuple(tuple(v * factor + 0.1 for v in row) for row in answer.rows))
    return None


@dataclass
class Suite:
    """Every case of this module, run once."""

    cases: list[harness.Case]
    expect: dict[str, Expect]
    built: dict[str, Built]
    kinds: dict[str, str]
    outcomes: dict[str, harness.Outcome]


def _add(suite_cases: list[tuple[str, Built, dict[str, str], Expect, str]], key: str, built: Built,
         values: list[object], kind: str, notes: dict[str, str] | None = None) -> None:  # fmt: skip
    scores = _quiz_scores(built, values)
    if scores is None:
        return
    suite_cases.append((key, built, _inputs(built, values), Expect(scores, notes or {}), kind))


@cache
def suite() -> Suite:
    """Build every case, then run them all in one Maxima process."""
    collected: list[tuple[str, Built, dict[str, str], Expect, str]] = []
    questions = _questions()
    questions += [h for q in questions if (h := _half_carried(q)) is not None]
    first_seen: set[tuple[str, str]] = set()
    for n, question in enumerate(questions):
        built = _build(question)
        units = built.units
        key = f"q{n}"
        for test in built.parsed.tests:  # the question tests Moodle runs on import, every variant
            scores = {prt: score for prt, (score, _) in test.expected.items()}
            notes = {prt: answer_note for prt, (_, answer_note) in test.expected.items()}
            collected.append((f"{key}t{test.number}", built, test.inputs, Expect(scores, notes), "qtest"))
        right = _right(units)
        # The responses below: on each item's first variant (the question tests cover every variant,
        # and a Maxima run of all of them on every variant costs a minute of CPU), carry-forward on all.
        first = (question.bank, question.item_id) not in first_seen
        first_seen.add((question.bank, question.item_id))
        for unit in units if first else []:
            pos = unit.index - 1
            answer = unit.answer

            def at(value: object, pos: int = pos, right: list[object] = right) -> list[object]:
                return [*right[:pos], value, *right[pos + 1 :]]

            exact = answer_value(answer)
            _add(collected, f"{key}u{unit.index}exact", built, at(exact), "exact")
            nudged = _nudged(answer)
            if nudged is not None:
                _add(collected, f"{key}u{unit.index}nudged", built, at(nudged), "nudged")
            mistakes = zip(listed_mistakes(unit), stack_nodes.mistake_notes(unit), strict=True)
            for m, (mistake, mistake_note) in enumerate(mistakes):
                texts = _texts(units, at(mistake.value))
                if grade_answer(answer, texts[pos], unit.mistakes).mistake == mistake:  # quiz names it
                    expect = {unit.prt: mistake_note}
                    _add(collected, f"{key}u{unit.index}m{m}", built, at(mistake.value), "mistake", expect)
            if isinstance(answer, ExpressionAnswer):
                for c, changed in enumerate(_changed(answer)):
                    _add(collected, f"{key}u{unit.index}changed{c}", built, at(changed), "changed")
                stranger = typed(answer, answer.formula).replace("(", "(zz*", 1) if "(" in typed(
                    answer, answer.formula) else "zz"  # fmt: skip
                inputs = _inputs(built, right)
                inputs[unit.input] = stranger
                collected.append((f"{key}u{unit.index}undeclared", built, inputs,
                                  Expect({}, {}, frozenset({unit.input})), "undeclared"))  # fmt: skip
            if isinstance(answer, ChoiceAnswer):
                letters = answer.letters
                right_set = answer.correct_letters
                picks = [frozenset({letter}) for letter in letters]
                if answer.multiple:  # the right set with one letter more or one less, and all of them
                    picks += [right_set ^ {letter} for letter in letters if right_set ^ {letter}]
                    picks.append(frozenset(letters))
                for s, pick in enumerate(dict.fromkeys(picks)):
                    _add(collected, f"{key}u{unit.index}pick{s}", built, at(pick), "choice")
        if first and isinstance(question.answer, PartsAnswer):  # later parts from the rounded earlier ones
            links = rounded_chain(question.answer)
            chained = [
                rounded(u.answer, answer_value(link.target)) for u, link in zip(units, links, strict=True)
            ]
            _add(collected, f"{key}rounded", built, chained, "rounded")
        used = {label for u in units for label in u.uses}
        for unit in units:
            if unit.label not in used:
                continue
            for f, factor in enumerate((1.1, 0.7)):
                wrong = _off(unit.answer, factor)
                if wrong is None:
                    continue
                values = _consistent(units, unit.index, wrong)
                if values is None:
                    continue
                _add(collected, f"{key}u{unit.index}carry{f}", built, values, "carried")
                if first and not question.code.endswith("-half"):  # and as `quiz answer` grades it
                    cli = _cli_scores(built, values)
                    collected.append(
                        (f"{key}u{unit.index}cli{f}", built, _inputs(built, values), Expect(cli, {}), "cli")
                    )
                # The later parts' own right answers with the wrong earlier one: quiz gives them 1
                # where the carried target is still within tolerance, else 0; STACK must agree.
                own = [*values[: unit.index], *right[unit.index :]]
                _add(collected, f"{key}u{unit.index}own{f}", built, own, "carried-own")
    cases = [harness.Case(key, built.parsed, inputs) for key, built, inputs, _, _ in collected]
    outcomes = harness.run(cases)
    return Suite(
        cases,
        {key: expect for key, _, _, expect, _ in collected},
        {key: built for key, built, _, _, _ in collected},
        {key: kind for key, _, _, _, kind in collected},
        outcomes,
    )


def _failures(kind: str) -> list[str]:
    s = suite()
    bad: list[str] = []
    for case in s.cases:
        if s.kinds[case.key] != kind:
            continue
        expect, outcome = s.expect[case.key], s.outcomes[case.key]
        where = f"{case.key} {case.question.name} {dict(case.inputs)}"
        if outcome.errors:
            bad.append(f"{where}: Maxima errors {outcome.errors}")
            continue
        if expect.invalid:
            if set(outcome.invalid) != set(expect.invalid):
                bad.append(f"{where}: invalid {sorted(outcome.invalid)}, expected {sorted(expect.invalid)}")
            continue
        if outcome.invalid:
            bad.append(f"{where}: STACK finds {sorted(outcome.invalid)} invalid")
            continue
        for prt, score in expect.scores.items():
            got = outcome.prts.get(prt)
            if got is None:
                bad.append(f"{where}: {prt} did not run")
            elif abs(got[0] - score) > 1e-6:
                bad.append(f"{where}: {prt} scores {got[0]}, quiz {score}")
            elif prt in expect.notes and got[1] != expect.notes[prt]:
                bad.append(f"{where}: {prt} ends at {got[1]}, expected {expect.notes[prt]}")
    return bad


def _count(kind: str) -> int:
    s = suite()
    return sum(1 for case in s.cases if s.kinds[case.key] == kind)


@pytest.mark.parametrize(
    "kind",
    [
        "qtest",
        "exact",
        "nudged",
        "mistake",
        "changed",
        "undeclared",
        "choice",
        "carried",
        "carried-own",
        "rounded",
        "cli",
    ],
)
def test_stack_marks_as_quiz_does(kind: str) -> None:
    """Each kind of case: STACK's Maxima gives quiz's score (and the named branch) on every one."""
    assert _count(kind) > 0, f"no {kind} cases were built"
    bad = _failures(kind)
    assert not bad, f"{len(bad)} of {_count(kind)} {kind} cases differ:\n" + "\n".join(bad[:30])


def test_every_scored_item_of_both_banks_is_run_over_several_variants() -> None:
    s = suite()
    seen: dict[tuple[str, str], set[str]] = {}
    for case in s.cases:
        question = s.built[case.key].question
        seen.setdefault((question.bank, question.item_id), set()).add(question.code)
    scored = {(q.bank, q.item_id) for q in _questions()}
    assert len(scored) > 100
    for key in scored:
        assert len(seen.get(key, set())) >= VARIANTS, key


def test_every_mistake_and_every_carried_part_has_its_question_test() -> None:
    """The question tests Moodle runs reach each named mistake's branch and each carried score."""
    s = suite()
    reached: set[tuple[str, str]] = set()
    for case in s.cases:
        if s.kinds[case.key] == "qtest":
            for _prt, (_, note) in s.outcomes[case.key].prts.items():
                reached.add((case.question.name, note))
    for key, built in s.built.items():
        if s.kinds[key] != "mistake":
            continue
        for _prt, note in s.expect[key].notes.items():
            assert (built.parsed.name, note) in reached, (
                f"{built.parsed.name}: no question test ends at {note}"
            )
    carried = [
        (built.parsed.name, f"{u.prt}-carried-right")
        for built in s.built.values()
        for u in built.units
        if u.uses
    ]
    assert carried
    for name, note in carried:
        assert (name, note) in reached, f"{name}: no question test earns the carried score at {note}"


# ---------------------------------------------------------------------------------------------
# A tolerance's edge, at every magnitude
# ---------------------------------------------------------------------------------------------

EDGE_ITEMS = [
    ("week1", "rnn-gradient-decay", 13),  # 9.5e-07 to 2 significant figures: half-width 5.1e-9
    ("week1", "rnn-gradient-decay", 26),  # 2.2e-07
    ("week2", "deep-skip-slopes", 0),  # [1.00e-10, 2.59]: a power of ten
    ("week2", "deep-skip-slopes", 1),  # [3.13e-07, 1.28]
    ("week2", "skip-slopes", 0),  # [0.100, 1.10]
    ("week2", "deep-skip-slopes", 4),  # [1.53e-05, 5.96]
]


def _edge_values(answer: SingleAnswer, factor: float) -> object | None:
    """Every number of the answer moved by ``factor`` times its own half-width (away from zero)."""

    def moved(value: float) -> float:
        return value + factor * answer.tolerance.half_width(value) * (1 if value >= 0 else -1)

    if isinstance(answer, NumericAnswer) and answer.tolerance.mode != "exact":
        return moved(answer.value)
    if isinstance(answer, VectorAnswer):
        return tuple(moved(v) for v in answer.values)
    if isinstance(answer, MatrixAnswer):
        return tuple(tuple(moved(v) for v in row) for row in answer.rows)
    return None


def test_a_tolerance_is_kept_exactly_at_every_magnitude() -> None:
    """Just inside the item's half-width is right and just beyond it wrong, in STACK as in quiz:
    NumAbsolute's own slack of 1e-9 (a fifth of 9.5e-7's half-width at 2 significant figures) and
    Maxima's exponent of a power of ten (log(1e-10)/log(10) < -10) change nothing."""
    cases: list[harness.Case] = []
    expected: dict[str, dict[str, float]] = {}
    for bank_name, item_id, seed in EDGE_ITEMS:
        entry = next(i for i in banks.load(bank_name).items if i.id == item_id)
        built = _build(entry.question(seed))
        for factor in (0.98, -0.98, 1.05, -1.05, 1.5):
            values = [_edge_values(u.answer, factor) for u in built.units]
            if any(v is None for v in values):
                continue
            scores = _quiz_scores(built, values)
            assert scores is not None
            key = f"edge-{item_id}-{seed}-{factor}"
            expected[key] = scores
            cases.append(harness.Case(key, built.parsed, _inputs(built, values)))
    assert {round(s) for e in expected.values() for s in e.values()} == {0, 1}  # both sides are tried
    outcomes = harness.run(cases)
    for case in cases:
        outcome = outcomes[case.key]
        assert not outcome.errors, (case.key, outcome)
        assert not outcome.invalid, (case.key, outcome)
        got = {prt: score for prt, (score, _) in outcome.prts.items()}
        assert got == expected[case.key], (case.key, dict(case.inputs))


def test_maximas_decimal_exponent_is_quizs_at_and_near_powers_of_ten() -> None:
    """The exponent a significant-figure half-width is computed from (for a target known only in
    Maxima, a carried-forward one) is quiz's: at powers of ten, their float neighbours above, and
    numbers near them."""
    values = [10.0**k for k in range(-15, 16)] + [0.1**k for k in range(1, 16)]
    values += [math.nextafter(v, math.inf) for v in values]
    values += [v * f for v in values[:31] for f in (0.999, 1.001, 3.7, 9.99)]
    values += [1.7e308, 1e-300]  # at a double's ends (10.0^309 overflows in Maxima)
    lines = [f'print("QZX", {stack_nodes.decimal_exponent(mx.number(v))})$' for v in values]
    got = [int(g.replace(" ", "")) for g in harness.printed("\n".join(lines) + "\n", "QZX")]
    quizs = [round(math.log10(Tolerance.sigfigs(1).half_width(v) / 0.51)) for v in values]
    assert got == quizs


def test_names_maxima_reads_as_its_own_are_typed_renamed_and_mark_as_quiz_does() -> None:
    """A formula in ``numer``, ``simp`` and ``fpprec`` and a shape in ``batch``: in STACK each is
    written with ``_v``; the right answer so typed scores 1 (nothing switches Maxima's floating point
    or simplification), a changed one 0, and the bank's own spelling is not right."""
    formula = ExpressionAnswer("numer*d + simp^2 + fpprec", ("numer", "simp", "fpprec", "d"))
    shape = ShapeAnswer(("batch", 64), symbols=(("batch", None),))
    cases, expected = [], {}
    for n, (answer, right, changed, own) in enumerate(
        [
            (formula, "numer_v*d+simp_v^2+fpprec_v", "numer_v*d+simp_v^2", "numer*d+simp^2+fpprec"),
            (shape, "matrix([batch_v,64])", "matrix([batch_v,65])", "matrix([batch,64])"),
        ]
    ):
        variant = Variant(prompt="?", answer=answer, solution=["Because."])  # type: ignore[arg-type]
        built = _build(Question("bank", f"item{n}", "source", "topic", 5, "0000-0005", variant))
        for key, typed_in, want in [("right", right, 1.0), ("changed", changed, 0.0), ("own", own, None)]:
            cases.append(harness.Case(f"{n}{key}", built.parsed, {"ans1": typed_in}))
            expected[f"{n}{key}"] = want
    outcomes = harness.run(cases)
    for case in cases:
        outcome, want = outcomes[case.key], expected[case.key]
        assert not outcome.errors, case.key
        if want is None:  # STACK's own security refuses simp and fpprec typed; here: never right
            assert outcome.invalid or outcome.prts["prt1"][0] == 0, case.key
        else:
            assert outcome.prts["prt1"][0] == want, case.key


# ---------------------------------------------------------------------------------------------
# After a slip: the student who keeps the unrounded values
# ---------------------------------------------------------------------------------------------


def _unrounded(units: list[Unit], wrong_at: int, wrong: object) -> list[object] | None:
    """Responses with a wrong value at unit ``wrong_at``, each later part typed rounded as asked but
    computed from the student's own unrounded earlier values (not from the rounded ones typed)."""
    values: list[object] = []
    kept: dict[str, object] = {}
    for unit in units:
        if unit.index > wrong_at and unit.uses:
            try:
                recomputed = unit.group.target_for([kept[label] for label in unit.uses])
            except (ArithmeticError, ValueError, TypeError):
                return None
            kept[unit.label] = answer_value(recomputed)
            values.append(rounded(unit.answer, kept[unit.label]))
            continue
        value = wrong if unit.index == wrong_at else rounded(unit.answer, answer_value(unit.answer))
        values.append(value)
        kept[unit.label] = value
    return values


def test_after_a_slip_a_later_part_from_the_unrounded_earlier_values_is_right_in_stack() -> None:
    """With (a) wrong, the student who types (b) rounded as asked and works (c) from their unrounded
    (b) earns what the student who works (c) from the (b) they typed earns: additive-chain's
    3.283680687, 0.77, 1.47 and 3.283680687, 0.77, 1.46 alike, and the same over every chain."""
    entry = next(i for i in banks.load("week1").items if i.id == "additive-chain")
    built = _build(entry.question(0))
    carried = built.question.answer.carried_score  # type: ignore[union-attr]
    cases = [
        harness.Case(f"issue-{last}", built.parsed, {"ans1": "3.283680687", "ans2": "0.77", "ans3": last})
        for last in ("1.47", "1.46")
    ]
    expected = {case.key: {"prt1": 0.0, "prt2": carried, "prt3": carried} for case in cases}
    for n, question in enumerate(q for q in _questions() if isinstance(q.answer, PartsAnswer)):
        chain = _build(question)
        used = {label for u in chain.units for label in u.uses}
        for unit in (u for u in chain.units if u.label in used):
            for f, factor in enumerate((1.1, 0.7)):
                wrong = _off(unit.answer, factor)
                typed_values = _consistent(chain.units, unit.index, wrong) if wrong is not None else None
                kept_values = _unrounded(chain.units, unit.index, wrong) if wrong is not None else None
                if typed_values is None or kept_values is None or typed_values == kept_values:
                    continue
                scores = _quiz_scores(chain, typed_values)  # the student who carries the typed values
                if scores is None:
                    continue
                key = f"q{n}u{unit.index}f{f}"
                cases.append(harness.Case(key, chain.parsed, _inputs(chain, kept_values)))
                expected[key] = scores
    assert len(cases) > 4  # the chains where the two students type something different
    outcomes = harness.run(cases)
    bad = []
    for case in cases:
        outcome = outcomes[case.key]
        got = {prt: score for prt, (score, _) in outcome.prts.items()}
        if outcome.errors or outcome.invalid or got != pytest.approx(expected[case.key]):
            bad.append(f"{case.key} {case.question.name} {dict(case.inputs)}: {got} {outcome}")
    assert not bad, "\n".join(bad[:20])
