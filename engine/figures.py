"""Figures drawn from a variant's own numbers: data that every renderer draws in its own way.

A generator returns figures with its variant (``Variant(figures=[...])``): a `Heatmap` (a weight
or score matrix with its values printed in the cells, a mask matrix when some cells are masked)
or a `LinePlot` (curves such as the positional-encoding sines). The terminal draws shaded cells,
HTML inline SVG, the PDF Typst boxes and paths, Moodle and QTI an embedded SVG file; ``quiz show
--json`` lists them as data (`figure_json`) so that a script can draw them too.

This module is pure Python (no numpy): a figure holds plain floats, strings and booleans, and is
checked when it is built. Its text (titles, axis labels, legends, row and column labels,
captions) is plain text with TeX maths in ``$...$`` (the subset prompts use, `attnquiz.engine.markup.tex`;
``\\$`` is a dollar): each renderer typesets the maths and escapes the rest for its own format
(Typst maths in the PDF, Unicode in SVG and the terminal, see `plain`), so a figure's ``$d_k$``
reads as the prompt's.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from msgspec import Struct
from msgspec.structs import force_setattr

from attnquiz.engine.markup.tex import MarkupError, Math, to_unicode
from attnquiz.engine.markup.tex import Text as MarkupText
from attnquiz.engine.markup.tex import parse as parse_markup

Where = Literal["prompt", "solution"]
"""Where a figure belongs: with the question (a figure question) or with the worked solution."""

MAX_ROWS = 16
"""A heatmap has at most this many rows and columns (a matrix a reader can still read cell by cell)."""
MAX_POINTS = 400
"""A line plot has at most this many x values."""
MAX_SERIES = 8
"""A line plot has at most this many curves (more cannot be told apart)."""
MAX_DECIMALS = 4
"""Heatmap values are printed with at most this many decimals (a cell must stay narrow)."""
MAX_LABEL = 40
"""Row, column and series labels are at most this many characters (of source: ``$1/\\sqrt{d_k}$``
shows as 5)."""
MAX_TEXT = 200
"""Titles, axis labels and captions are at most this many characters."""
MAX_MAGNITUDE = 1e12
"""Values beyond this size are refused (a figure of them says nothing a reader can use)."""


class FigureError(ValueError):
    """A figure that cannot be drawn (wrong sizes, a value that is not a finite number, ...).

    A generator that builds one has a bug; the message says which figure and what is wrong.
    """


class Heatmap(Struct, frozen=True):
    """A matrix drawn as shaded cells, each with its value printed at ``decimals`` decimals.

    ``rows`` and ``cols`` label the rows and columns (e.g. the query and key tokens);
    ``row_title``/``col_title`` say what they are ("query", "key"). ``mask`` (same shape as
    ``values``, True = masked) marks cells shown as masked (−∞ in a score matrix, blank in a weight
    matrix); a masked cell shows ``masked_text`` instead of its value, which may be −∞. The
    shading runs from ``low`` to ``high`` (default: the smallest and largest unmasked values).
    """

    values: Sequence[Sequence[float]]
    rows: Sequence[str]
    cols: Sequence[str]
    title: str = ""
    caption: str = ""
    row_title: str = ""
    col_title: str = ""
    decimals: int = 2
    mask: Sequence[Sequence[bool]] | None = None
    low: float | None = None
    high: float | None = None
    masked_text: str = "−∞"
    where: Where = "solution"
    kind: ClassVar[Literal["heatmap"]] = "heatmap"
    # `bounds`, worked out once by `__post_init__` (whatever is given): `shade` needs them for every cell.
    _ends: tuple[float, float] = (0.0, 1.0)

    def __post_init__(self) -> None:
        what = f"heatmap {self.title!r}" if self.title else "heatmap"
        values = tuple(
            tuple(_number(v, what, masked=True) for v in _seq(row, what)) for row in _seq(self.values, what)
        )
        if not values or not values[0]:
            raise FigureError(f"{what}: no values (a heatmap needs at least one row and one column)")
        n_rows, n_cols = len(values), len(values[0])
        if n_rows > MAX_ROWS or n_cols > MAX_ROWS:
            raise FigureError(
                f"{what}: {n_rows}×{n_cols} values is too big to read (at most {MAX_ROWS}×{MAX_ROWS})"
            )
        if any(len(row) != n_cols for row in values):
            raise FigureError(f"{what}: rows of different lengths ({sorted({len(r) for r in values})})")
        rows = _labels(self.rows, n_rows, "row", what)
        cols = _labels(self.cols, n_cols, "column", what)
        mask: tuple[tuple[bool, ...], ...] | None = None
        if self.mask is not None:
            mask = tuple(tuple(bool(m) for m in _seq(row, what)) for row in _seq(self.mask, what))
            if len(mask) != n_rows or any(len(row) != n_cols for row in mask):
                raise FigureError(f"{what}: the mask must have the shape of the values ({n_rows}×{n_cols})")
        for i, row in enumerate(values):
            for j, v in enumerate(row):
                masked = mask is not None and mask[i][j]
                if not masked and not math.isfinite(v):
                    raise FigureError(
                        f"{what}: value at row {i + 1}, column {j + 1} is {v} (only a masked cell may be ±∞)"
                    )
                if math.isnan(v):
                    raise FigureError(f"{what}: value at row {i + 1}, column {j + 1} is not a number")
        decimals: object = self.decimals  # as a generator passed it, whatever its annotation says
        if not isinstance(decimals, int) or isinstance(decimals, bool) or not 0 <= decimals <= MAX_DECIMALS:
            raise FigureError(
                f"{what}: decimals must be an integer from 0 to {MAX_DECIMALS}, not {self.decimals!r}"
            )
        for name in ("low", "high"):
            bound = getattr(self, name)
            if bound is not None:
                force_setattr(self, name, _number(bound, f"{what}: {name}", masked=False))
        if self.low is not None and self.high is not None and not self.low < self.high:
            raise FigureError(f"{what}: low ({self.low}) must be below high ({self.high})")
        _where(self.where, what)
        force_setattr(self, "values", values)
        force_setattr(self, "rows", rows)
        force_setattr(self, "cols", cols)
        force_setattr(self, "mask", mask)
        for name in ("title", "caption", "row_title", "col_title"):
            force_setattr(self, name, _text(getattr(self, name), name, what, MAX_TEXT))
        force_setattr(self, "masked_text", _text(self.masked_text, "masked_text", what, 8))
        force_setattr(self, "_ends", self._bounds())

    def is_masked(self, i: int, j: int) -> bool:
        """Whether the cell at row ``i``, column ``j`` is masked."""
        return self.mask is not None and self.mask[i][j]

    def bounds(self) -> tuple[float, float]:
        """The values at the two ends of the shading: ``low``/``high`` or the unmasked extremes."""
        return self._ends

    def _bounds(self) -> tuple[float, float]:
        seen = [v for i, row in enumerate(self.values) for j, v in enumerate(row) if not self.is_masked(i, j)]
        low = self.low if self.low is not None else min(seen, default=0.0)
        high = self.high if self.high is not None else max(seen, default=1.0)
        return low, high

    def shade(self, i: int, j: int) -> float:
        """How strong the cell's shade is, from 0 (``low`` or below) to 1 (``high`` or above)."""
        low, high = self.bounds()
        if high <= low:
            return 0.5
        return min(1.0, max(0.0, (self.values[i][j] - low) / (high - low)))

    def cell_text(self, i: int, j: int) -> str:
        """The cell's value as printed (``masked_text`` for a masked cell)."""
        if self.is_masked(i, j):
            return self.masked_text
        return format_value(self.values[i][j], self.decimals)


class Series(Struct, frozen=True):
    """One labelled curve of a `LinePlot`: a y value per x value."""

    label: str
    values: Sequence[float]

    def __post_init__(self) -> None:
        what = f"series {self.label!r}"
        force_setattr(self, "label", _text(self.label, "label", what, MAX_LABEL))
        force_setattr(self, "values", tuple(_number(v, what, masked=False) for v in _seq(self.values, what)))


class LinePlot(Struct, frozen=True):
    """One or more labelled curves over shared x values, with axis labels and a title."""

    x: Sequence[float]
    series: Sequence[Series]
    title: str = ""
    caption: str = ""
    x_label: str = ""
    y_label: str = ""
    where: Where = "solution"
    kind: ClassVar[Literal["line"]] = "line"

    def __post_init__(self) -> None:
        what = f"line plot {self.title!r}" if self.title else "line plot"
        x = tuple(_number(v, what + ": x", masked=False) for v in _seq(self.x, what))
        if len(x) < 2:
            raise FigureError(f"{what}: needs at least 2 x values, not {len(x)}")
        if len(x) > MAX_POINTS:
            raise FigureError(f"{what}: {len(x)} x values is too many (at most {MAX_POINTS})")
        if any(b <= a for a, b in itertools.pairwise(x)):
            raise FigureError(f"{what}: the x values must increase")
        series = tuple(_seq(self.series, what))
        if not series:
            raise FigureError(f"{what}: no series (a line plot needs at least one curve)")
        if len(series) > MAX_SERIES:
            raise FigureError(f"{what}: {len(series)} series is too many (at most {MAX_SERIES})")
        for s in series:
            if not isinstance(s, Series):
                raise FigureError(f"{what}: a series must be a Series, not {type(s).__name__}")
            if len(s.values) != len(x):
                raise FigureError(
                    f"{what}: series {s.label!r} has {len(s.values)} values for {len(x)} x values"
                )
        _where(self.where, what)
        force_setattr(self, "x", x)
        force_setattr(self, "series", series)
        for name in ("title", "caption", "x_label", "y_label"):
            force_setattr(self, name, _text(getattr(self, name), name, what, MAX_TEXT))

    def y_bounds(self) -> tuple[float, float]:
        """The smallest and largest y values of every series (widened when they are equal)."""
        ys = [v for s in self.series for v in s.values]
        low, high = min(ys), max(ys)
        if high <= low:
            return low - 1.0, high + 1.0
        return low, high


Figure = Heatmap | LinePlot
"""Every figure a generator can return."""


# Colours shared by every renderer, so that a figure looks the same in each format.
_SHADES = ((247, 251, 255), (198, 219, 239), (107, 174, 214), (33, 113, 181), (8, 48, 107))
"""A sequential blue scale (ColorBrewer's Blues), light for low values and dark for high ones."""
MASKED_RGB = (217, 217, 217)
"""The fill of a masked cell: a neutral grey, outside the blue scale."""
SERIES_RGB = (
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (148, 103, 189),
    (255, 127, 14),
    (140, 86, 75),
    (23, 190, 207),
    (127, 127, 127),
)
"""One colour per series of a line plot, in order."""
SERIES_DASH = ((), (6, 3), (2, 2), (8, 3, 2, 3), (), (6, 3), (2, 2), (8, 3, 2, 3))
"""One dash pattern per series (lengths of dashes and gaps; () solid), so that curves differ in grey too."""


def shade_rgb(shade: float) -> tuple[int, int, int]:
    """The fill for a shade from 0 to 1 (`Heatmap.shade`), interpolated along the blue scale."""
    t = min(1.0, max(0.0, shade)) * (len(_SHADES) - 1)
    k = min(int(t), len(_SHADES) - 2)
    f = t - k
    a, b = _SHADES[k], _SHADES[k + 1]
    r, g, bl = (round(a[c] + (b[c] - a[c]) * f) for c in range(3))
    return r, g, bl


def dark_shade(shade: float) -> bool:
    """Whether a cell of this shade is dark enough to need light text."""
    return shade > 0.55


def hex_colour(rgb: tuple[int, int, int]) -> str:
    """``#rrggbb``."""
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round values (1, 2 or 5 times a power of ten apart) from ``low`` to ``high``."""
    if not high > low:
        return [low]
    raw = (high - low) / max(1, count - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 5, 10)), key=lambda s: abs(math.log(s / raw)))
    first = math.ceil(low / step - 1e-9) * step
    out: list[float] = []
    value = first
    while value <= high + step * 1e-9:
        out.append(0.0 if abs(value) < step * 1e-9 else round(value, 12))
        value = first + step * len(out)
    return out


def axis(low: float, high: float, count: int = 5) -> tuple[float, float, list[float]]:
    """An axis from ``low`` to ``high`` widened to the round ticks around them: (low, high, ticks)."""
    inner = ticks(low, high, count)
    if len(inner) < 2:
        return low, high, inner
    step = inner[1] - inner[0]
    # A value a hair beyond the last tick (1.0000001, −0.00002) is drawn at the tick, not given a step.
    slack = (high - low) * 0.02
    if inner[0] > low + slack:
        inner.insert(0, round(inner[0] - step, 12))
    if inner[-1] < high - slack:
        inner.append(round(inner[-1] + step, 12))
    return min(inner[0], low), max(inner[-1], high), inner


def tick_text(value: float, values: Sequence[float]) -> str:
    """A tick's label, with as many decimals as the tick spacing needs (and a true minus sign)."""
    step = min((b - a for a, b in itertools.pairwise(values)), default=1.0)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    return format_value(value, min(decimals, 6))


def corner_text(figure: Heatmap) -> str:
    """What the top-left corner of a heatmap says: what the rows and the columns are (``query \\ key``)."""
    return " \\ ".join(t for t in (figure.row_title, figure.col_title) if t)


def format_value(value: float, decimals: int) -> str:
    """A value as a heatmap cell prints it: fixed decimals, a true minus sign, never ``-0.00``."""
    text = f"{value:.{decimals}f}"
    if text.lstrip("-").strip("0.") == "":
        text = text.lstrip("-")
    return text.replace("-", "−")


def figure_json(figure: Figure) -> dict[str, Any]:
    """A figure as ``quiz show --json`` lists it: its kind and all its data, strict JSON (a masked
    cell's value is ``null`` when it is ±∞, as in a masked score matrix)."""
    if isinstance(figure, Heatmap):
        values = [[v if math.isfinite(v) else None for v in row] for row in figure.values]
        low, high = figure.bounds()
        return {
            "kind": "heatmap",
            "where": figure.where,
            "title": figure.title,
            "caption": figure.caption,
            "rows": list(figure.rows),
            "cols": list(figure.cols),
            "row_title": figure.row_title,
            "col_title": figure.col_title,
            "values": values,
            "mask": [list(r) for r in figure.mask] if figure.mask is not None else None,
            "decimals": figure.decimals,
            "masked_text": figure.masked_text,
            "low": low,
            "high": high,
        }
    return {
        "kind": "line",
        "where": figure.where,
        "title": figure.title,
        "caption": figure.caption,
        "x_label": figure.x_label,
        "y_label": figure.y_label,
        "x": list(figure.x),
        "series": [{"label": s.label, "values": list(s.values)} for s in figure.series],
    }


def check_figures(figures: Sequence[Any]) -> tuple[Figure, ...]:
    """The variant's figures as a tuple, each a `Heatmap` or `LinePlot` (else `FigureError`)."""
    kept = tuple(figures)
    for figure in kept:
        if not isinstance(figure, Heatmap | LinePlot):
            raise FigureError(f"a figure must be a Heatmap or a LinePlot, not {type(figure).__name__}")
    return kept


def _seq(value: Any, what: str) -> Sequence[Any]:
    if isinstance(value, str | bytes) or not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
        if hasattr(value, "tolist"):  # a numpy array
            listed = value.tolist()
            if isinstance(listed, list):
                return listed
        raise FigureError(f"{what}: expected a list, not {type(value).__name__}")
    return list(value)


def _number(value: Any, what: str, *, masked: bool) -> float:
    if isinstance(value, bool) or (not isinstance(value, int | float) and not hasattr(value, "__float__")):
        raise FigureError(f"{what}: {value!r} is not a number")
    number = float(value)
    if math.isnan(number):
        raise FigureError(f"{what}: a value is not a number (NaN)")
    if math.isinf(number):
        if masked:
            return number  # allowed only in a masked cell: the caller checks
        raise FigureError(f"{what}: a value is infinite")
    if abs(number) > MAX_MAGNITUDE:
        raise FigureError(f"{what}: {number:g} is too large to draw (at most {MAX_MAGNITUDE:g} in size)")
    return number


def _labels(labels: Any, count: int, name: str, what: str) -> tuple[str, ...]:
    kept = tuple(_text(label, f"{name} label", what, MAX_LABEL) for label in _seq(labels, what))
    if len(kept) != count:
        raise FigureError(f"{what}: {len(kept)} {name} labels for {count} {name}s")
    return kept


def _text(value: Any, name: str, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise FigureError(f"{what}: {name} must be text, not {type(value).__name__}")
    if len(value) > limit:  # before the remembered check: a text kept there is at most ``limit`` long
        raise FigureError(f"{what}: {name} is {len(value)} characters long (at most {limit})")
    problem = _text_problem(value)
    if problem:
        raise FigureError(f"{what}: {name} {problem}")
    return value


@functools.lru_cache(maxsize=2048)
def _text_problem(value: str) -> str:
    """Why ``value`` cannot be a figure's text ("" when it can). Checked once per text: generators
    give every variant the same titles and labels, and a class's grading builds thousands."""
    if any(not c.isprintable() for c in value):
        return f"{value!r} holds a control character"
    try:
        segments(value)
    except MarkupError as exc:
        return f"{value!r}: {exc}"
    return ""


def segments(text: str) -> tuple[str | Math, ...]:
    """Figure text split into plain text (``\\$`` read as a dollar) and formulas, in order
    (`attnquiz.engine.markup.tex.MarkupError` for TeX outside the subset or an unmatched ``$``)."""
    if "$" not in text:
        return (text,) if text else ()
    out: list[str | Math] = []
    for segment in parse_markup(text):
        out.append(segment.text.replace("\\$", "$") if isinstance(segment, MarkupText) else segment)
    return tuple(out)


def plain(text: str) -> str:
    """Figure text as Unicode, its maths as the terminal writes it (``$d_k$`` is dₖ, ``$\\sqrt{d_k}$``
    √dₖ): what SVG and the terminal draw, and what a figure's accessible name says."""
    if "$" not in text:
        return text
    return "".join(s if isinstance(s, str) else to_unicode(s.tree).strip() for s in segments(text))


def _where(value: Any, what: str) -> None:
    if value not in ("prompt", "solution"):
        raise FigureError(f"{what}: where must be 'prompt' or 'solution', not {value!r}")
