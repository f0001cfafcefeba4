"""Figures in the terminal: heatmaps as tables of shaded cells, line plots as character plots.

A heatmap prints every value in its cell, on a background shaded by the value where the terminal
shows colour; under NO_COLOR, or piped, the same table without colour is still read by its values.
A table wider than the terminal is cut into column blocks that fit, each under its own labels,
and labels too long for a narrow terminal are shortened with an ellipsis. A line plot is drawn
with one marker character per series (and a colour where there is colour), with its ticks and a
legend. Where the output cannot encode Unicode, every label and mark is spelled in ASCII first, so
the layout is measured on what is printed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

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
    shade_rgb,
    tick_text,
    ticks,
)
from attnquiz.terminal import can_encode, to_ascii

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

_MARKS = "•×∘+▪◆#%"
_ASCII_MARKS = "*xo+#@%&"
_MIN_LABEL = 4
"""A label is never shortened below this many cells (plus its ellipsis)."""


_BOX = str.maketrans({"┤": "+", "└": "+", "─": "-", "│": "|"})


def _spell(target: Console) -> Callable[[str], str]:
    """How text is spelled for ``target``: as it is, or in ASCII when the output cannot encode it."""
    if can_encode(target.file, "−∞…•×∘▪◆─│┤└"):
        return lambda text: text
    return lambda text: to_ascii(text.translate(_BOX))


def _shorten(text: str, width: int, spell: Callable[[str], str]) -> str:
    if cell_len(text) <= width:
        return text
    ellipsis = spell("…")
    keep = max(_MIN_LABEL, width - len(ellipsis))
    out = ""
    for ch in text:
        if cell_len(out + ch) > keep:
            break
        out += ch
    return out + ellipsis


def _emit(target: Console, line: Text) -> None:
    line.rstrip()
    target.print(line, soft_wrap=True)


def print_heatmap(target: Console, figure: Heatmap, *, indent: int = 0) -> None:
    """A heatmap as a table: a row label, then each value right-aligned in its (shaded) cell."""
    spell = _spell(target)
    n_rows, n_cols = len(figure.values), len(figure.values[0])
    values = [[spell(figure.cell_text(i, j)) for j in range(n_cols)] for i in range(n_rows)]
    width = max(target.width - indent, 20)
    rows = [spell(r) for r in figure.rows]
    corner = spell(corner_text(figure))
    # Row labels take at most a third of the line; column labels at most the value's width + 4.
    row_w = min(max([cell_len(r) for r in rows] + [cell_len(corner)]), max(_MIN_LABEL + 1, width // 3))
    rows = [_shorten(r, row_w, spell) for r in rows]
    corner = _shorten(corner, row_w, spell)
    # Each column as wide as its values, or its label shortened to 8 cells (or the values' width + 4).
    widths = [max(cell_len(values[i][j]) for i in range(n_rows)) for j in range(n_cols)]
    cols = [_shorten(spell(c), max(w + 4, 8), spell) for c, w in zip(figure.cols, widths, strict=True)]
    widths = [max(w, cell_len(c)) + 2 for c, w in zip(cols, widths, strict=True)]
    margin = " " * indent
    if figure.title:
        _emit(target, Text(margin + spell(figure.title), style="bold"))
    first = 0
    while first < n_cols:
        # As many columns as fit beside the row labels (always at least one).
        last, used = first + 1, row_w + 1 + widths[first]
        while last < n_cols and used + widths[last] <= width:
            used += widths[last]
            last += 1
        if first:
            target.print()
        head = Text(margin + corner.ljust(row_w + 1), style="dim")
        for j in range(first, last):
            head.append(cols[j].rjust(widths[j] - 1) + " ", style="bold")
        _emit(target, head)
        for i in range(n_rows):
            line = Text(margin)
            line.append(rows[i].rjust(row_w) + " ", style="bold")
            for j in range(first, last):
                line.append(" ")
                line.append(values[i][j].rjust(widths[j] - 2) + " ", style=_cell_style(figure, i, j))
            _emit(target, line)
        first = last
    if figure.caption:
        _emit(target, Text(margin + spell(figure.caption), style="dim"))


def _cell_style(figure: Heatmap, i: int, j: int) -> Style:
    if figure.is_masked(i, j):
        return Style(color="#555555", bgcolor=hex_colour(MASKED_RGB))
    shade = figure.shade(i, j)
    ink = "#ffffff" if dark_shade(shade) else "#111111"
    return Style(color=ink, bgcolor=hex_colour(shade_rgb(shade)))


_PLOT_ROWS = 11


def print_line_plot(target: Console, figure: LinePlot, *, indent: int = 0) -> None:
    """A line plot drawn with characters: a marker per series in each column, ticks and a legend."""
    spell = _spell(target)
    marks = _MARKS if spell("•") == "•" else _ASCII_MARKS
    y_low, y_high, y_ticks = axis(*figure.y_bounds(), 3)
    tick_labels = {
        round((y_high - v) / (y_high - y_low) * (_PLOT_ROWS - 1)): spell(tick_text(v, y_ticks))
        for v in y_ticks
    }
    label_w = max(cell_len(t) for t in tick_labels.values())
    width = max(target.width - indent, 20)
    plot_w = max(10, min(64, width - label_w - 2))
    x_low, x_high = figure.x[0], figure.x[-1]
    grid: list[list[int | None]] = [[None] * plot_w for _ in range(_PLOT_ROWS)]
    for k, series in enumerate(figure.series):
        previous: int | None = None
        for column in range(plot_w):
            x = x_low + (x_high - x_low) * column / (plot_w - 1)
            row = round((y_high - _at(figure.x, series.values, x)) / (y_high - y_low) * (_PLOT_ROWS - 1))
            # Fill the rows between this column's point and the last one, so a steep curve stays joined.
            low, high = (row, row) if previous is None else (min(row, previous), max(row, previous))
            for r in range(low, high + 1):
                if r == row or grid[r][column] is None:
                    grid[r][column] = k
            previous = row
    margin = " " * indent
    if figure.title:
        _emit(target, Text(margin + spell(figure.title), style="bold"))
    if figure.y_label:
        _emit(target, Text(margin + spell(figure.y_label), style="dim"))
    for r in range(_PLOT_ROWS):
        line = Text(
            margin + tick_labels.get(r, "").rjust(label_w) + " " + spell("│" if r not in tick_labels else "┤")
        )
        for k in grid[r]:
            if k is None:
                line.append(" ")
            else:
                line.append(marks[k], style=Style(color=hex_colour(SERIES_RGB[k])))
        _emit(target, line)
    _emit(target, Text(margin + " " * label_w + " " + spell("└" + "─" * plot_w)))
    x_ticks = ticks(x_low, x_high, max(2, min(6, plot_w // 10)))
    axis_line = [" "] * (plot_w + 8)
    for v in x_ticks:
        text = spell(tick_text(v, x_ticks))
        at = round((v - x_low) / (x_high - x_low) * (plot_w - 1)) - len(text) // 2 + 1
        at = max(0, min(at, plot_w + 8 - len(text)))
        if all(ch == " " for ch in axis_line[max(0, at - 1) : at + len(text) + 1]):
            axis_line[at : at + len(text)] = list(text)
    _emit(target, Text(margin + " " * (label_w + 1) + "".join(axis_line)))
    if figure.x_label:
        _emit(target, Text(margin + " " * (label_w + 2) + spell(figure.x_label), style="dim"))
    legend = Text(margin)
    for k, series in enumerate(figure.series):
        entry = Text.assemble((marks[k], Style(color=hex_colour(SERIES_RGB[k]))), " " + spell(series.label))
        if legend.plain.strip() and cell_len(legend.plain) + 3 + cell_len(entry.plain) > width + indent:
            _emit(target, legend)
            legend = Text(margin)
        elif legend.plain.strip():
            legend.append("   ")
        legend.append_text(entry)
    _emit(target, legend)
    if figure.caption:
        _emit(target, Text(margin + spell(figure.caption), style="dim"))


def _at(xs: tuple[float, ...] | list[float], ys: tuple[float, ...] | list[float], x: float) -> float:
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


def print_figure(target: Console, figure: Figure, *, indent: int = 0) -> None:
    """One figure, drawn for ``target`` (its width, its colours, its encoding)."""
    if isinstance(figure, Heatmap):
        print_heatmap(target, figure, indent=indent)
    else:
        print_line_plot(target, figure, indent=indent)


def print_figures(target: Console, figures: tuple[Figure, ...] | list[Figure], *, indent: int = 0) -> None:
    """Figures one after the other, a blank line before each."""
    for figure in figures:
        target.print()
        print_figure(target, figure, indent=indent)
