"""Early rounding: the generic slip of an answer computed from intermediate values rounded too soon.

A worked answer is often a sum or a product of intermediate values (``2 × tanh(2)``, a dot product of
tanh entries with v_a, a weighted sum of value vectors). A student who rounds those intermediates
to the precision asked for the answer (0.96 for tanh(2)) and then combines them gets a final value
off by more than the tolerance (1.92 for 1.93): their method is right, and the feedback should say
that the rounding, not the method, is wrong.

A generator declares its intermediates and how the answer follows from them (``combine``, with the
reference numerics); `rounded_early` recomputes the answer from the intermediates rounded the way
a student rounds them (to the precision asked for, and to one digit fewer) and returns the values
that differ from the answer as mistakes tagged ``ROUNDED_EARLY``. They are graded like the listed
mistakes and counted like the generic slips (`attnquiz.engine.grading.outcome.GENERIC_TAGS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from attnquiz.engine.answers.kinds import Mistake
from attnquiz.engine.answers.tolerance import Tolerance

ROUNDED_EARLY = "rounded-early"

Combine = Callable[[tuple[float, ...]], Any]
"""Computes the answer (a number, a vector or a matrix; numpy is fine) from a tuple of intermediates."""


def _precisions(tolerance: Tolerance) -> list[Tolerance]:
    """How a student rounds intermediates: at the precision asked for, and at one digit fewer."""
    if tolerance.mode == "decimals":
        return [Tolerance.decimals(n) for n in (tolerance.places, tolerance.places - 1) if n >= 0]
    if tolerance.mode == "sigfigs":
        return [Tolerance.sigfigs(n) for n in (tolerance.places, tolerance.places - 1) if n >= 1]
    if tolerance.mode == "relative":
        # "To within 0.1 %" asks for about three significant figures.
        figures = max(1, round(-math.log10(tolerance.rtol)))
        return [Tolerance.sigfigs(n) for n in (figures, figures - 1) if n >= 1]
    return []  # exact answers have no rounding to get wrong


def _rounded(value: float, precision: Tolerance) -> float:
    # As written by a person (half up, by the decimal digits), not Python's round on binary floats.
    return float(precision.format(value))


def rounded_early(
    tolerance: Tolerance,
    intermediates: Iterable[float],
    combine: Combine,
    what: str,
) -> list[Mistake]:
    """Mistakes for the answer recomputed from ``intermediates`` rounded too soon.

    ``combine`` computes the answer from a tuple of intermediates with the reference numerics;
    ``what`` names the intermediates in the feedback, e.g. ``"the $\\tanh$ values"``. A variant drops
    a mistake that grades as its answer, so only a rounding that changes the answer is named.
    """
    exact = tuple(float(x) for x in intermediates)
    mistakes: list[Mistake] = []
    for precision in _precisions(tolerance):
        rounded = tuple(_rounded(x, precision) for x in exact)
        if rounded == exact:
            continue
        feedback = (
            f"Your method is right, but {what} were rounded ({precision.describe()}) before they were "
            "combined, and the rounding errors add up. Keep two or three more digits in intermediate "
            "values than the answer asks for, and round only the final result."
        )
        mistakes.append(Mistake(ROUNDED_EARLY, combine(rounded), feedback))
    return mistakes


__all__ = ["ROUNDED_EARLY", "Combine", "rounded_early"]
