"""Figures laid out as lines of text, for the terminal: heatmaps as tables, line plots in characters.

This is the terminal's drawing without the terminal (the engine imports no rich): a figure becomes
lines of runs, each run a piece of text and how it looks (`Look`: colours, bold, dim). The terminal
(`attnquiz.figure_terminal`) prints them with rich, which drops the colours under NO_COLOR or when
piped; `quiz check` lays every figure out at 40 and 80 columns.

A heatmap prints every value in its cell, on a background shaded by the value; a table wider than
the line is cut into column blocks that fit, each under its own labels, and labels too long for a
narrow line are shortened with an ellipsis. A line plot is drawn with one marker character per
series, with its ticks and a legend. ``spell`` turns text into what the output can encode (the
terminal passes its ASCII spelling when it cannot encode Unicode), and the layout is measured on
what is printed.
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from attnquiz.engine.figures import (
    MASKED_RGB,
    SERIES_RGB,
    Figure,
    Heatmap,
    LinePlot,
    axis,
    corner_text,
    dark_shade,
    hex_colour,
    plain,
    shade_rgb,
    tick_text,
    ticks,
)


@dataclass(frozen=True, slots=True)
class Look:
    """How a run of text looks: ``#rrggbb`` colours (None: the terminal's own), bold, dim."""

    fg: str | None = None
    bg: str | None = None
    bold: bool = False
    dim: bool = False


PLAIN = Look()
BOLD = Look(bold=True)
DIM = Look(dim=True)

Run = tuple[str, Look]
Line = list[Run]

UNICODE_SAMPLE = "−∞…•×∘▪◆─│┤└"
"""The characters a figure may draw: an output that cannot encode them gets ASCII spellings."""
BOX_ASCII = str.maketrans({"┤": "+", "└": "+", "─": "-", "│": "|"})
"""The axis characters of a line plot, in ASCII."""
_MARKS = "•×∘+▪◆#%"
_ASCII_MARKS = "*xo+#@%&"
_MIN_LABEL = 4
"""A label is never shortened below this many cells (plus its ellipsis)."""
PLOT_ROWS = 11
"""The height of a line plot, in lines."""


def cell_width(text: str) -> int:
    """How many terminal cells ``text`` takes (wide East Asian characters 2, combining marks 0)."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def _as_is(text: str) -> str:
    return text


def _wrapped(text: str, look: Look, width: int) -> list[Line]:
    """A title, axis label or caption as lines of at most ``width`` characters, broken at spaces."""
    return [[(piece, look)] for piece in textwrap.wrap(text, width, break_on_hyphens=False)]


@dataclass(frozen=True, slots=True)
class _Pen:
    spell: Callable[[str], str]
    cells: Callable[[str], int]

    def shorten(self, text: str, width: int) -> str:
        if self.cells(text) <= width:
            return text
        ellipsis = self.spell("…")
        keep = max(_MIN_LABEL, width - len(ellipsis))
        out = ""
        for ch in text:
            if self.cells(out + ch) > keep:
                break
            out += ch
        return out + ellipsis

    def rjust(self, text: str, width: int) -> str:
        return " " * max(0, width - self.cells(text)) + text

    def ljust(self, text: str, width: int) -> str:
        return text + " " * max(0, width - self.cells(text))


def heatmap_lines(
    figure: Heatmap,
    width: int,
    spell: Callable[[str], str] = _as_is,
    cells: Callable[[str], int] = cell_width,
) -> list[Line]:
    """A heatmap as a table: a row label, then each value right-aligned in its shaded cell."""
    spell = _with_maths(spell)
    pen = _Pen(spell, cells)
    width = max(width, 20)
    n_rows, n_cols = len(figure.values), len(figure.values[0])
    values = [[spell(figure.cell_text(i, j)) for j in range(n_cols)] for i in range(n_rows)]
    rows = [spell(r) for r in figure.rows]
    corner = spell(corner_text(figure))
    # Row labels take at most a third of the line.
    row_w = min(max([cells(r) for r in rows] + [cells(corner)]), max(_MIN_LABEL + 1, width // 3))
    rows = [pen.shorten(r, row_w) for r in rows]
    corner = pen.shorten(corner, row_w)
    # Each column as wide as its values, or its label shortened to 8 cells (or the values' width + 4).
    widths = [max(cells(values[i][j]) for i in range(n_rows)) for j in range(n_cols)]
    cols = [pen.shorten(spell(c), max(w + 4, 8)) for c, w in zip(figure.cols, widths, strict=True)]
    widths = [max(w, cells(c)) + 2 for c, w in zip(cols, widths, strict=True)]
    lines: list[Line] = []
    lines += _wrapped(spell(figure.title), BOLD, width)
    first = 0
    while first < n_cols:
        # As many columns as fit beside the row labels (always at least one).
        last, used = first + 1, row_w + 1 + widths[first]
        while last < n_cols and used + widths[last] <= width:
            used += widths[last]
            last += 1
        if first:
            lines.append([])
        head: Line = [(pen.ljust(corner, row_w + 1), DIM)]
        head += [(pen.rjust(cols[j], widths[j] - 1) + " ", BOLD) for j in range(first, last)]
        lines.append(head)
        for i in range(n_rows):
            line: Line = [(pen.rjust(rows[i], row_w) + " ", BOLD)]
            for j in range(first, last):
                line.append((" ", PLAIN))
                line.append((pen.rjust(values[i][j], widths[j] - 2) + " ", _cell_look(figure, i, j)))
            lines.append(line)
        first = last
    lines += _wrapped(spell(figure.caption), DIM, width)
    return lines


def _cell_look(figure: Heatmap, i: int, j: int) -> Look:
    if figure.is_masked(i, j):
        return Look(fg="#555555", bg=hex_colour(MASKED_RGB))
    shade = figure.shade(i, j)
    return Look(fg="#ffffff" if dark_shade(shade) else "#111111", bg=hex_colour(shade_rgb(shade)))


def line_plot_lines(
    figure: LinePlot,
    width: int,
    spell: Callable[[str], str] = _as_is,
    cells: Callable[[str], int] = cell_width,
) -> list[Line]:
    """A line plot drawn with characters: a marker per series in each column, ticks and a legend."""
    width = max(width, 20)
    spell = _with_maths(spell)
    marks = _MARKS if spell("•") == "•" else _ASCII_MARKS
    y_low, y_high, y_ticks = axis(*figure.y_bounds(), 3)
    tick_labels = {
        round((y_high - v) / (y_high - y_low) * (PLOT_ROWS - 1)): spell(tick_text(v, y_ticks))
        for v in y_ticks
    }
    label_w = max(cells(t) for t in tick_labels.values())
    plot_w = max(10, min(64, width - label_w - 2))
    x_low, x_high = figure.x[0], figure.x[-1]
    grid: list[list[int | None]] = [[None] * plot_w for _ in range(PLOT_ROWS)]
    for k, series in enumerate(figure.series):
        previous: int | None = None
        for column in range(plot_w):
            x = x_low + (x_high - x_low) * column / (plot_w - 1)
            y = _at(figure.x, series.values, x)
            row = min(PLOT_ROWS - 1, max(0, round((y_high - y) / (y_high - y_low) * (PLOT_ROWS - 1))))
            # Fill the rows between this column's point and the last one, so a steep curve stays joined.
            low, high = (row, row) if previous is None else (min(row, previous), max(row, previous))
            for r in range(low, high + 1):
                if r == row or grid[r][column] is None:
                    grid[r][column] = k
            previous = row
    looks = [Look(fg=hex_colour(SERIES_RGB[k])) for k in range(len(figure.series))]
    lines: list[Line] = []
    lines += _wrapped(spell(figure.title), BOLD, width)
    lines += _wrapped(spell(figure.y_label), DIM, width)
    for r in range(PLOT_ROWS):
        label = tick_labels.get(r, "")
        line: Line = [(" " * (label_w - cells(label)) + label + " " + spell("┤" if label else "│"), PLAIN)]
        for series_at in grid[r]:
            line.append((" ", PLAIN) if series_at is None else (marks[series_at], looks[series_at]))
        lines.append(line)
    lines.append([(" " * label_w + " " + spell("└" + "─" * plot_w), PLAIN)])
    x_ticks = ticks(x_low, x_high, max(2, min(6, plot_w // 10)))
    axis_line = [" "] * (plot_w + 8)
    for v in x_ticks:
        text = spell(tick_text(v, x_ticks))
        at = round((v - x_low) / (x_high - x_low) * (plot_w - 1)) - len(text) // 2 + 1
        at = max(0, min(at, plot_w + 8 - len(text)))
        if all(ch == " " for ch in axis_line[max(0, at - 1) : at + len(text) + 1]):
            axis_line[at : at + len(text)] = list(text)
    lines.append([(" " * (label_w + 1) + "".join(axis_line), PLAIN)])
    lines += [
        [(" " * (label_w + 2) + text, look) for text, look in line]
        for line in _wrapped(spell(figure.x_label), DIM, width - label_w - 2)
    ]
    legend: Line = []
    used = 0
    for k, series in enumerate(figure.series):
        label = " " + spell(series.label)
        size = 1 + cells(label)
        if legend and used + 3 + size > width:
            lines.append(legend)
            legend, used = [], 0
        elif legend:
            legend.append(("   ", PLAIN))
            used += 3
        legend += [(marks[k], looks[k]), (label, PLAIN)]
        used += size
    lines.append(legend)
    lines += _wrapped(spell(figure.caption), DIM, width)
    return lines


def _at(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """The curve through (xs, ys) at ``x``, by linear interpolation (xs increase)."""
    lo, hi = 0, len(xs) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if xs[mid] <= x:
            lo = mid
        else:
            hi = mid
    span = xs[hi] - xs[lo]
    t = 0.0 if span == 0 else min(1.0, max(0.0, (x - xs[lo]) / span))
    return ys[lo] + (ys[hi] - ys[lo]) * t


def _with_maths(spell: Callable[[str], str]) -> Callable[[str], str]:
    """``spell`` after the text's maths is written in Unicode (`figures.plain`: ``$d_k$`` is dₖ)."""
    return lambda text: spell(plain(text))


def figure_lines(
    figure: Figure, width: int, spell: Callable[[str], str] = _as_is, cells: Callable[[str], int] = cell_width
) -> list[Line]:
    """The figure as lines of runs, for a line ``width`` cells wide."""
    if isinstance(figure, Heatmap):
        return heatmap_lines(figure, width, spell, cells)
    return line_plot_lines(figure, width, spell, cells)


def plain_text(figure: Figure, width: int = 80, spell: Callable[[str], str] = _as_is) -> str:
    """The figure as plain text (what a piped terminal shows), one line per line, no trailing spaces."""
    return "\n".join(
        "".join(text for text, _ in line).rstrip() for line in figure_lines(figure, width, spell)
    )
