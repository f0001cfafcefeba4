"""Tolerances: how close a number must be to be right, decided alike on every machine, and numbers written.

`Tolerance` decides near its edge in decimal arithmetic on a settled target (`SETTLED_DIGITS`), so
float noise never changes a grade; `format_number` and `Tolerance.format` write a number at the
precision asked for, rounding half up as a person does.
"""

from __future__ import annotations

import functools
import math
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal
from typing import Any, Literal

from msgspec import Struct

ToleranceMode = Literal["decimals", "sigfigs", "relative", "exact"]


class Tolerance(Struct, frozen=True):
    """How far a number may be from the target and still be right.

    - ``decimals n``: |x - t| <= 0.51 * 10**-n, i.e. the target rounded to n places, with a
      sliver of slack so that a correctly rounded answer is never refused by float noise.
    - ``sigfigs n``: the same, at the place of the n-th significant digit of the target.
    - ``relative``: |x - t| <= max(rtol * |t|, atol).
    - ``exact``: equal (integer counts).
    """

    mode: ToleranceMode = "relative"
    places: int = 0
    rtol: float = 1e-3
    atol: float = 1e-9

    @classmethod
    def decimals(cls, n: int) -> Tolerance:
        """Right when it rounds like the target does to ``n`` decimal places."""
        return cls(mode="decimals", places=n)

    @classmethod
    def sigfigs(cls, n: int) -> Tolerance:
        """Right when it agrees with the target to ``n`` significant figures."""
        return cls(mode="sigfigs", places=n)

    @classmethod
    def relative(cls, rtol: float = 1e-3, atol: float = 1e-9) -> Tolerance:
        """Right within a relative tolerance, with an absolute floor for targets near zero."""
        return cls(mode="relative", rtol=rtol, atol=atol)

    @classmethod
    def exact(cls) -> Tolerance:
        """Right only when equal (for integer counts)."""
        return cls(mode="exact")

    def half_width(self, target: float) -> float:
        """The largest accepted |x - target| (what an LMS export writes as its tolerance)."""
        if self.mode == "decimals":
            return 0.51 * 10.0 ** (-self.places)
        if self.mode == "sigfigs":
            if target == 0 or not math.isfinite(target):
                return 0.51 * 10.0 ** (-self.places)
            # The place of the settled target, not of the float: 0.0009999999999999 computed on one
            # machine and 0.001 on another are the same target, with the same tolerance.
            exponent = self._settled(target).adjusted() - self.places + 1
            return 0.51 * 10.0**exponent
        if self.mode == "relative":
            return max(self.rtol * abs(target), self.atol)
        return 0.0

    def accepts(self, target: float, value: float) -> bool:
        """Whether ``value`` is close enough to ``target``.

        Decided so that the same typed text gets the same grade on every machine: a reference value
        carries float noise that depends on the CPU, the BLAS kernel and the numpy build (1.58 is
        1.5800000000000001 on one and 1.5799999999999998 on another), and a value typed exactly at the
        edge of the tolerance (1.5749 for 1.58 to 2 places) would be right on one and wrong on the other.
        Near the edge the target is settled to `SETTLED_DIGITS` significant digits (far beyond any
        tolerance) and the comparison is done in decimal arithmetic, exactly.
        """
        if not (math.isfinite(target) and math.isfinite(value)):
            return False
        mode = self.mode
        if mode == "exact":
            return value == target
        if mode != "sigfigs":  # a width that does not jump with the target's place
            width = self.half_width(target)  # once: mistakes are compared with each other for every variant
            gap = abs(value - target) - width
            if abs(gap) > _EDGE * max(abs(target), abs(value), width):
                return gap < 0  # far from the edge: float noise cannot change the decision
        settled = self._settled(target)
        typed = Decimal(repr(float(value)))
        return _DECIMAL.abs(_DECIMAL.subtract(typed, settled)) <= self._exact_half_width(settled)

    def _settled(self, target: float) -> Decimal:
        """``target`` rounded to `SETTLED_DIGITS` significant digits (more where the tolerance is finer
        than that, up to the 17 a float holds), in decimal."""
        exact = Decimal(repr(float(target)))
        if target == 0:
            return exact
        place = exact.adjusted() - SETTLED_DIGITS + 1
        if self.mode == "decimals":
            place = min(place, -self.places - 4)
        elif self.mode == "sigfigs":
            place = min(place, exact.adjusted() - self.places - 3)
        elif self.mode == "relative":
            if self.rtol > 0:
                place = min(place, exact.adjusted() + math.floor(math.log10(self.rtol)) - 3)
            place = min(place, math.floor(math.log10(self.atol)) - 3) if self.atol > 0 else place
        place = max(place, exact.adjusted() - 16)  # never finer than the float itself
        return exact.quantize(Decimal(1).scaleb(place), rounding=ROUND_HALF_EVEN, context=_DECIMAL)

    def _exact_half_width(self, settled: Decimal) -> Decimal:
        """`half_width` in decimal, for a settled target (0.51 is exactly 0.51 here)."""
        if self.mode == "decimals" or (self.mode == "sigfigs" and settled == 0):
            return _HALF.scaleb(-self.places, context=_DECIMAL)
        if self.mode == "sigfigs":
            return _HALF.scaleb(settled.adjusted() - self.places + 1, context=_DECIMAL)
        relative = _DECIMAL.multiply(Decimal(repr(self.rtol)), abs(settled))
        return max(relative, Decimal(repr(self.atol)))

    def describe(self) -> str:
        """The precision asked for, as a prompt states it."""
        if self.mode == "decimals":
            if self.places == 0:  # "to 0 decimal places" is how no one says it
                return "to the nearest whole number"
            return f"to {self.places} decimal place{'s' if self.places != 1 else ''}"
        if self.mode == "sigfigs":
            return f"to {self.places} significant figure{'s' if self.places != 1 else ''}"
        if self.mode == "exact":
            return "exactly"
        return f"to within {_percent(self.rtol)} of the exact value"

    def format(self, value: float) -> str:
        """``value`` written at the precision asked for (how a key or a model answer shows it)."""
        if self.mode == "decimals":
            return _fixed(value, self.places)
        if self.mode == "sigfigs":
            return _format_sigfigs(value, self.places)
        if self.mode == "exact":
            return _format_exact(value)
        return _format_sigfigs(value, max(4, 1 - math.floor(math.log10(self.rtol))))

    def rounded(self, value: float) -> float:
        """``value`` as a student who rounds to the precision asked for would type it (fast; for checks)."""
        if self.mode == "decimals":
            return round(value, self.places)
        if self.mode == "sigfigs" and value != 0 and math.isfinite(value):
            return round(value, self.places - 1 - math.floor(math.log10(abs(value))))
        return value

    def to_json(self) -> dict[str, Any]:
        """The tolerance as it would be written in a bank."""
        if self.mode == "decimals":
            return {"decimals": self.places}
        if self.mode == "sigfigs":
            return {"sigfigs": self.places}
        if self.mode == "exact":
            return {"exact": True}
        return {"rtol": self.rtol, "atol": self.atol}


SETTLED_DIGITS = 12
"""Significant digits of a reference value that decide a grade at the edge of a tolerance: beyond the
float noise of any machine (about 1e-15 relative, a little more after a long sum) and far beyond any
tolerance an item states."""

_EDGE = 1e-9
"""How close (relative to the numbers' size) a difference may come to the half width before the
decimal comparison decides: far more than float noise, so that the float comparison is only used
where it cannot disagree with the decimal one."""

_HALF = Decimal("0.51")
_DECIMAL = Context(prec=80, Emin=-999_999, Emax=999_999)  # exact for any two floats of like size

DEFAULT_REAL_TOLERANCE = Tolerance.relative()
EXACT = Tolerance.exact()


def _percent(fraction: float) -> str:
    text = f"{fraction * 100:.6g}"
    return f"{text} %"


def _strip_negative_zero(text: str) -> str:
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _format_exact(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


_SCIENTIFIC = 1e15
"""From this size on, `_fixed` writes a number in scientific notation (as sigfigs does)."""


def _fixed(value: float, places: int) -> str:
    """``value`` rounded half up to ``places`` decimals (negative: to tens, hundreds, ...).

    Rounding goes by the number as written (its shortest repr), the way a person rounds it:
    0.125 → 0.13 and 2.675 → 2.68, where binary floats and Python's format would give 0.12 and 2.67.
    """
    if type(value) is float:
        return _fixed_float(value, places)
    return _fixed_number(value, places)


def _fixed_number(value: float, places: int) -> str:
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= _SCIENTIFIC:
        # Beyond a float's 16 digits the places asked for mean nothing (and quantizing them can
        # overflow the decimal context): the number as it is held, in scientific notation.
        return f"{Decimal(repr(float(value))).normalize():e}".replace("e+", "e")
    quantum = Decimal(1).scaleb(-places)
    rounded = Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP)
    text = f"{rounded:f}" if places > 0 else str(int(rounded))
    return _strip_negative_zero(text)


_fixed_float = functools.lru_cache(maxsize=8192)(_fixed_number)
"""`_fixed` of a float, remembered: a class's variants write the same few thousand numbers (the
given inputs, the weights at two places) over and over, nine times in ten one written before. Two
floats that are equal (0.0 and -0.0 among them) are written alike, so sharing their text is safe."""


def _format_sigfigs(value: float, n: int) -> str:
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if abs(float(_fixed(value, n - 1 - exponent))) >= 10.0 ** (exponent + 1):
        exponent += 1  # rounding carried into the next power of ten: 9.9996 → 10.0, not 10.00
    if -4 <= exponent < 15:
        return _fixed(value, n - 1 - exponent)
    return f"{value:.{n - 1}e}"


def format_number(value: float, tolerance: Tolerance = DEFAULT_REAL_TOLERANCE) -> str:
    """A number for prompts and solutions: integers plainly, others at the tolerance's precision."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return tolerance.format(value)


__all__ = [
    "DEFAULT_REAL_TOLERANCE",
    "EXACT",
    "SETTLED_DIGITS",
    "Tolerance",
    "ToleranceMode",
    "format_number",
]
