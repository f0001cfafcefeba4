"""Every form in which a worked solution prints an answer is one the grader accepts.

A student copies what the solution shows: ``n/(6d)``, ``≈ 0.20``, ``2.0 × 10⁻⁹``. Each maths span of
every solution of both banks is written as the terminal shows it, split at ``=`` (a ``≈`` stays on the
value it qualifies); then

- a formula answer: no printed side is refused as ambiguous, and the answer as printed (the key, and
  its TeX as the terminal writes it) grades correct;
- a number: every printed side that an independent reader (a decimal, ``≈`` and ``× 10^k`` only) finds
  to be the answer within its tolerance grades correct.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation

import pytest

from attnquiz.engine.answers import parse, read_formulas, read_matrices, read_numbers
from attnquiz.engine.answers.kinds import ExpressionAnswer, NumericAnswer, PartsAnswer, SingleAnswer
from attnquiz.engine.bank.finding import load
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.markup import tex as markup

SEEDS = range(8)
AMBIGUOUS = "can be read two ways"


def _solutions() -> Iterator[tuple[str, int, SingleAnswer, tuple[str, ...]]]:
    for name in ("week1", "week2"):
        for entry in load(name).items:
            for seed in SEEDS:
                question = entry.question(seed)
                answer = question.answer
                if isinstance(answer, PartsAnswer):
                    for part in answer.parts:
                        yield entry.id, seed, part.answer, tuple(part.solution)
                elif isinstance(answer, NumericAnswer | ExpressionAnswer):
                    yield entry.id, seed, answer, tuple(question.variant.solution)


CASES = [case for case in _solutions() if isinstance(case[2], NumericAnswer | ExpressionAnswer)]


def _sides(steps: tuple[str, ...]) -> list[str]:
    """Each side of each maths span of the steps, as the terminal writes it."""
    out: list[str] = []
    for step in steps:
        for segment in markup.parse(step):
            if isinstance(segment, markup.Math):
                text = markup.to_unicode(segment.tree)
                for side in text.split("="):
                    pieces = re.split(r"(?=≈)", side)
                    out += [p.strip() for p in pieces if p.strip()]
    return out


_PRINTED_NUMBER = re.compile(
    r"(?P<approx>≈\s*)?(?P<m>[-−]?\d+(?:\.\d+)?)(?:\s*[×x]\s*10(?P<e>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
)
_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


def _independent_value(side: str) -> Decimal | None:
    """A side that is one printed number (``≈ 0.20``, ``2.0 × 10⁻⁹``, ``-0.5``), read without quiz."""
    match = _PRINTED_NUMBER.fullmatch(side)
    if match is None:
        return None
    try:
        value = Decimal(match.group("m").replace("−", "-"))
    except InvalidOperation:
        return None
    if match.group("e"):
        value = value.scaleb(int(match.group("e").translate(_SUPER)))
    return value


def test_the_solutions_print_answers_in_the_forms_this_test_reads() -> None:
    """The test is not empty: solutions print numbers with ≈ and formulas in the answer's symbols."""
    printed = [side for _, _, answer, steps in CASES for side in _sides(steps)]
    assert any(side.startswith("≈") for side in printed)
    assert sum(isinstance(case[2], ExpressionAnswer) for case in CASES) >= 8


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_every_printed_form_of_the_answer_is_accepted(
    case: tuple[str, int, SingleAnswer, tuple[str, ...]],
) -> None:
    item, seed, answer, steps = case
    sides = _sides(steps)
    if isinstance(answer, ExpressionAnswer):
        key = markup.to_unicode(markup.parse_math(answer.tex()))
        for form in (answer.format(), key):
            assert grade_answer(answer, form).status == "correct", (item, seed, form)
        for side in sides:
            found = read_formulas.formula(side, answer.symbols)
            assert not (isinstance(found, parse.Invalid) and AMBIGUOUS in found.reason), (item, seed, side)
        return
    assert isinstance(answer, NumericAnswer)
    for side in sides:
        value = _independent_value(side)
        if value is None or not answer.tolerance.accepts(answer.value, float(value)):
            continue
        graded = grade_answer(answer, side)
        assert graded.status == "correct", (item, seed, side, graded.feedback)


@pytest.mark.parametrize(
    ("response", "value"),
    [
        ("2.0 x 10^-9", 2.0e-9),
        ("2.0 × 10^-9", 2.0e-9),
        ("2.0 X 10^(-9)", 2.0e-9),
        ("2.0 × 10⁻⁹", 2.0e-9),
        ("2.0·10^-9", 2.0e-9),
        ("≈1.93", 1.93),
        ("≈ 1.93", 1.93),
        ("≈ 2.0 × 10⁻⁹", 2.0e-9),
    ],
)
def test_a_careful_human_s_forms_are_read(response: str, value: float) -> None:
    answer = NumericAnswer(value)
    assert grade_answer(answer, response).status == "correct"


def test_a_power_of_ten_written_with_x_keeps_its_precision() -> None:
    from attnquiz.engine.answers.tolerance import Tolerance

    answer = NumericAnswer(2.0123e-9, Tolerance.sigfigs(3))
    graded = grade_answer(answer, "2.0 x 10^-9")  # two figures where three are asked
    assert graded.status == "wrong"
    assert graded.mistake is not None
    assert graded.mistake.tag == "precision-too-low"


@pytest.mark.parametrize(
    ("response", "value"),
    [
        ("2^3 × 10^2", 800.0),  # not 2^300
        ("1/2 × 10^3", 500.0),  # not 1/2000
        ("2 × 10^3/4", 500.0),
        ("1e-3 × 10^2", 0.1),
        ("2 × 10^3^2", 2e9),
        ("1 + 2 x 10^3", 2001.0),
    ],
)
def test_a_power_of_ten_read_as_one_literal_keeps_the_value(response: str, value: float) -> None:
    found = read_numbers.number(response)
    assert isinstance(found, parse.Number), found
    assert found.value == pytest.approx(value)


@pytest.mark.parametrize("response", ["≈", "≈≈1.93", "1.93≈", "x 10^3", "2 x 10^", "2 x 10^99999999"])
def test_malformed_approximations_and_powers_are_invalid_not_a_traceback(response: str) -> None:
    assert isinstance(read_numbers.number(response), parse.Invalid)


@pytest.mark.parametrize(
    ("response", "values"),
    [("1x10^2 3x10^2", (100.0, 300.0)), ("[1 × 10^-3 2 × 10^-3]", (1e-3, 2e-3)), ("[2.0 x 10^-9, ≈3]", None)],
)
def test_powers_of_ten_in_a_list(response: str, values: tuple[float, ...] | None) -> None:
    found = read_matrices.structure(response)
    if values is None:  # ≈ qualifies a whole response, not an entry
        assert isinstance(found, parse.Invalid)
        return
    assert isinstance(found, tuple)
    assert tuple(n.value for n in found if isinstance(n, parse.Number)) == pytest.approx(values)
