"""Small helpers the week-2 generators share: plain answer values from arrays, and short numbers for prose."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

NEG_INF = r"-\infty"


def short(value: float, sig: int = 4) -> str:
    """A number with at most ``sig`` significant figures and no trailing zeros (0.76, 21.54, 100)."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = np.format_float_positional(float(value), precision=sig, unique=True, fractional=False, trim="-")
    return "0" if float(text) == 0 else text


def tex_row(values: ArrayLike, places: int | None = 3, masked: ArrayLike | None = None) -> str:
    """A row vector in TeX at ``places`` decimals (None: `short`); entries where ``masked`` is True are −∞."""
    arr = np.ravel(np.asarray(values, dtype=np.float64))
    hide = np.zeros(arr.shape, dtype=bool) if masked is None else np.ravel(np.asarray(masked, dtype=bool))
    cells = [
        NEG_INF if h else short(v) if places is None else fixed(v, places)
        for v, h in zip(arr, hide, strict=True)
    ]
    return "[" + ", ".join(cells) + "]"


def tex_grid(rows: ArrayLike, places: int = 3, masked: ArrayLike | None = None) -> str:
    """A matrix as a TeX bmatrix at ``places`` decimals; entries where ``masked`` is True are written −∞."""
    arr = np.asarray(rows, dtype=np.float64)
    hide = np.zeros(arr.shape, dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    body = r" \\ ".join(
        " & ".join(NEG_INF if h else fixed(v, places) for v, h in zip(row, hide_row, strict=True))
        for row, hide_row in zip(arr, hide, strict=True)
    )
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def equals(value: float, sig: int = 4) -> str:
    """``= x`` when `short` writes ``value`` exactly, else ``\\approx x`` (for TeX)."""
    text = short(value, sig)
    return f"= {text}" if abs(float(text) - value) <= 1e-12 * max(1.0, abs(value)) else rf"\approx {text}"


def sci(value: float, sig: int = 3) -> str:
    """A number for TeX, as ``2.56 \\times 10^{-6}`` when it is very small or very large, else `short`."""
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return short(value, sig)
    exponent = int(np.floor(np.log10(abs(value))))
    mantissa = value / 10.0**exponent
    return rf"{short(mantissa, sig)} \times 10^{{{exponent}}}"


def signed_sum(a: float, b: float) -> str:
    """``a + b`` or ``a - |b|`` for TeX, each written with `short`."""
    return f"{short(a)} + {short(b)}" if b >= 0 else f"{short(a)} - {short(-b)}"


def fixed(value: float, places: int) -> str:
    """A number at ``places`` decimals, integers plainly, without a negative zero."""
    if float(value).is_integer():
        return str(int(value))
    text = f"{value:.{places}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text
