"""Numbers and counts: a response is compared with the answer at its tolerance, and a wrong one is
checked for too few digits and for the generic slips of a number (a sign, a power of ten, a percentage).

The comparisons here (`near`, `exactly`, `too_coarse`, `resolved`) serve the entries of vectors and
matrices too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from attnquiz.engine.answers import parse, read_numbers
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake, NumericAnswer
from attnquiz.engine.answers.rounding import ROUNDED_EARLY
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.grading.outcome import (
    PERCENT,
    PLAIN_WRONG,
    POWER_OF_TEN,
    PRECISION,
    SIGN,
    Grade,
    correct,
    invalid,
    named,
    slip,
    wrong,
)

_MAX_POWER = 12  # off by up to 10^12: beyond that a match is more likely chance than a slip


def near(tolerance: Tolerance, target: float | int, value: parse.Number) -> bool:
    """Whether a read number equals ``target`` at ``tolerance`` (exactly, where both are exact)."""
    if tolerance.mode == "exact":
        if value.exact is not None:
            return value.exact == (target if isinstance(target, int) else Fraction(target)) or (
                float(value.exact) == target
            )
        # A float result (from sqrt, say) may carry rounding noise that is not the student's doing.
        return abs(value.value - target) <= 1e-12 * max(1.0, abs(target))
    return tolerance.accepts(float(target), value.value)


def exactly(mistake: Mistake, tolerance: Tolerance, read: Sequence[parse.Number]) -> bool:
    """Whether the response is exactly a mistake's value (then it is that mistake, not a precision slip:
    ``[[2, 3], [2, 3]]`` for a mistake of whole numbers carries no trailing zeros to show its precision).

    Not for an early-rounding slip written with fewer digits than asked (``2`` for 1.928 whose tanh
    values rounded to one place give 2.0): rounding the final answer explains that better.
    """
    if mistake.tag == ROUNDED_EARLY and any(_coarser_than_asked(tolerance, n) for n in read):
        return False
    values = [n.value for n in read]
    flat: list[float] = []
    stack: list[Any] = [mistake.value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(reversed(item))
        elif isinstance(item, int | float) and not isinstance(item, bool):
            flat.append(float(item))
        else:
            return False
    return len(flat) == len(values) and all(
        abs(m - v) <= 1e-9 * max(1.0, abs(m)) for m, v in zip(flat, values, strict=True)
    )


def _coarser_than_asked(tolerance: Tolerance, value: parse.Number, target: float | None = None) -> bool:
    """Whether a number is written with fewer digits than the tolerance asks for (near ``target``)."""
    if value.last_place is None or value.value == 0:
        return False
    unit = 10.0 ** (value.last_place - (2 if value.percent else 0))
    return 0.5 * unit > tolerance.half_width(value.value if target is None else target)


def too_coarse(tolerance: Tolerance, target: float, value: parse.Number) -> bool:
    """A number written with fewer digits than asked whose digits agree with the target's rounding."""
    if value.last_place is None or not _coarser_than_asked(tolerance, value, target):
        return False
    unit = 10.0 ** (value.last_place - (2 if value.percent else 0))
    # Half a unit of its last place (and float noise): the answer rounded at the response's precision.
    return abs(value.value - target) <= 0.5 * unit * (1 + 1e-9)


def _scaled(tolerance: Tolerance, target: float, value: parse.Number, power: int) -> bool:
    """Whether ``value`` is ``target`` times 10**power (compared after undoing the scale)."""
    descaled = parse.Number(value.value * 10.0**-power, None, value.text)
    return near(tolerance, target, descaled)


def resolved(tolerance: Tolerance, target: float) -> bool:
    """Whether the tolerance tells ``target`` apart from zero (so that -t or 10t is a real difference)."""
    return target != 0 and abs(target) > 2 * tolerance.half_width(target)


def _number_slip(answer: NumericAnswer | IntegerAnswer, value: parse.Number) -> Grade | None:
    """A generic slip that explains a wrong number, if one does."""
    target, tolerance, read = answer.value, answer.tolerance, value.echo()
    if not resolved(tolerance, target):
        return None
    negated = parse.Number(-value.value, -value.exact if value.exact is not None else None, value.text)
    if near(tolerance, target, negated):
        return slip(
            SIGN, value.value, "The size is right but the sign is wrong: check the sign of each step.", read
        )
    if value.value == 0:
        return None
    # Only the power of ten nearest the ratio can match, so one comparison decides. A difference
    # of logarithms, not the log of a ratio: 5e-324/16 underflows to 0 and 1e300/1e-9 overflows.
    power = round(math.log10(abs(value.value)) - math.log10(abs(target)))
    if power == 0 or abs(power) > _MAX_POWER or not _scaled(tolerance, target, value, power):
        return None
    if power == 2 and abs(target) <= 1:
        allow_percent = isinstance(answer, NumericAnswer) and answer.allow_percent
        # The student's own number, rescaled: the feedback must not reveal more digits than given.
        fraction = _plain(value.value / 100)
        how = f"{fraction} or {_plain(value.value)}%" if allow_percent else fraction
        feedback = (
            f"That looks like a percentage without its sign: write {how}."
            if allow_percent
            else f"That looks like a percentage: the answer is a fraction, so write it as {how}."
        )
        return slip(PERCENT, value.value, feedback, read)
    return slip(POWER_OF_TEN, value.value, _power_feedback(answer, value, power), read)


def _power_feedback(answer: NumericAnswer | IntegerAnswer, value: parse.Number, power: int) -> str:
    size = abs(power)
    if isinstance(answer, IntegerAnswer) and power < 0 and size % 3 == 0 and "." in value.text:
        return (
            "A point is a decimal point: group the thousands of a count with commas or spaces "
            "(589,824 or 589 824), not with points."
        )
    times = {1: "10", 2: "100", 3: "1000"}.get(size, f"$10^{{{size}}}$")
    direction = "large" if power > 0 else "small"
    return (
        f"The digits are right but the size is not: your answer is {times} times too {direction}. "
        "Check the units and where the decimal point goes."
    )


def _plain(value: float) -> str:
    return parse.format_plain(value)


def grade_number(answer: NumericAnswer | IntegerAnswer, response: str, mistakes: Sequence[Mistake]) -> Grade:
    """Grade a number or a count: right at the answer's tolerance, else a listed mistake, too few
    digits, a generic slip (a sign, a power of ten, a percentage) or plainly wrong; a count that is not
    a whole number is invalid."""
    allow_percent = isinstance(answer, NumericAnswer) and answer.allow_percent
    value = read_numbers.number(response, allow_percent=allow_percent)
    if isinstance(value, parse.Invalid):
        return invalid(answer, value.reason, value.read_as)
    read = value.echo()
    tolerance, target = answer.tolerance, answer.value
    if near(tolerance, target, value):
        if value.is_literal or isinstance(answer, IntegerAnswer):
            return correct(read)
        return correct(read, f"Correct: that is {answer.format()} {_precision_words(tolerance)}.")
    listed = next(
        (m for m in mistakes if isinstance(m.value, int | float) and near(tolerance, m.value, value)), None
    )

    # A count's trailing zeros may be real digits (589,820), so there a listed mistake comes first.
    if listed is not None and (tolerance.mode == "exact" or exactly(listed, tolerance, [value])):
        return named(listed, read)
    if too_coarse(tolerance, target, value) and _rounded_count(tolerance, value):
        feedback = (
            f"Your digits agree with the answer, but the precision is too low: give the answer "
            f"{_precision_words(tolerance)}."
        )
        return slip(PRECISION, value.value, feedback, read)
    if listed is not None:
        return named(listed, read)
    generic = _number_slip(answer, value)
    if generic is not None:
        return generic
    if isinstance(answer, IntegerAnswer) and not float(value.value).is_integer():
        # A count cannot be 3.5: the wrong kind of answer, like a scalar for a vector (a listed
        # misconception or a recognised slip that gives exactly this number was named above).
        return invalid(answer, f"This answer is a count, so it is a whole number; {read} is not.", read)
    return wrong(PLAIN_WRONG, read)


def _rounded_count(tolerance: Tolerance, value: parse.Number) -> bool:
    """Whether a number can be the answer rounded, as far as an exact count goes: it keeps at least
    two significant digits (590,000 for 589,824). A count of one digit and zeros (60 for 64) is
    not a rounding: its one digit hardly agrees with anything, and the slip is elsewhere."""
    if tolerance.mode != "exact" or not float(value.value).is_integer():
        return True
    return len(str(abs(int(value.value))).rstrip("0")) >= 2


def _precision_words(tolerance: Tolerance) -> str:
    return "as a whole number, exactly" if tolerance.mode == "exact" else tolerance.describe()


__all__ = ["exactly", "grade_number", "near", "resolved", "too_coarse"]
