"""Figures as native Typst drawing, for the PDF worksheets and keys.

A heatmap is a ``table`` of filled cells with the values printed in them; a line plot is a fixed
size ``box`` of placed lines, tick labels and one ``curve`` per series. Every label's plain text
is escaped (a Typst string literal, or escaped markup around typeset maths), so bank text never
becomes markup.

For a screen reader (tagged PDF, issue 31) the drawing is a ``figure`` whose alternative text is
`figure_table.alt_text` (its name, what it shows, the range of its values), followed by the
figure's values as a real table (`figure_table.values`: a header row, a row header per row, a
caption), tagged but not printed: it is drawn in a box of no size that clips it, the PDF's
"visually hidden", so the page looks as it did. The title and caption stay visible text.
"""

from __future__ import annotations

from collections.abc import Callable

from attnquiz.engine.export.figures import table as figure_table
from attnquiz.engine.figures import (
    MASKED_RGB,
    SERIES_DASH,
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


def string(text: str) -> str:
    """Plain text as a Typst string literal (code mode): shows exactly that text."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


FigureText = Callable[[str], str]
"""How a figure's text (plain text with ``$TeX$``) becomes a Typst code-mode expression: the
worksheets pass one that typesets the maths (`attnquiz.engine.export.pdf.typst.figures`)."""


def unicode_text(text: str) -> str:
    """Figure text with its maths as Unicode (`figures.plain`), as a string literal: the fallback
    when no maths typesetter is given."""
    return string(plain(text))


def _rgb(rgb: tuple[int, int, int]) -> str:
    return f'rgb("{hex_colour(rgb)}")'


def _caption(figure: Figure, text: FigureText) -> str:
    if not figure.caption:
        return ""
    return f"  v(3pt)\n  text(size: 8.5pt, fill: luma(70), {text(figure.caption)})\n"


def _title(figure: Figure, text: FigureText) -> str:
    if not figure.title:
        return ""
    return f'  text(size: 9.5pt, weight: "bold", {text(figure.title)})\n  v(2pt)\n'


def heatmap(figure: Heatmap, text: FigureText = unicode_text) -> str:
    """A heatmap as a Typst table: a shaded cell per value, the value printed in it."""
    n_cols = len(figure.values[0])
    corner = corner_text(figure)
    head = [f"table.cell(stroke: none, text(size: 7.5pt, fill: luma(90), {text(corner)}))"]
    head += [f'text(weight: "bold", {text(c)})' for c in figure.cols]
    cells = [f"table.header({', '.join(head)})"]
    for i, row_label in enumerate(figure.rows):
        cells.append(f'table.cell(align: right + horizon, text(weight: "bold", {text(row_label)}))')
        for j in range(n_cols):
            if figure.is_masked(i, j):
                fill, ink = _rgb(MASKED_RGB), "luma(80)"
            else:
                shade = figure.shade(i, j)
                fill, ink = _rgb(shade_rgb(shade)), "white" if dark_shade(shade) else "black"
            cells.append(f"table.cell(fill: {fill}, text(fill: {ink}, {string(figure.cell_text(i, j))}))")
    body = ",\n    ".join(cells)
    return (
        "#block(breakable: false, above: 0.8em, below: 0.8em, {\n"
        "  set text(size: 8.5pt)\n" + _FIGURE_SHOW + _title(figure, text) + _figure_open(figure) + "table(\n"
        f"    columns: (auto,) + (auto,) * {n_cols},\n"
        "    align: center + horizon,\n"
        "    inset: (x: 5pt, y: 3.5pt),\n"
        "    stroke: 0.8pt + white,\n"
        f"    {body},\n"
        "  ))\n" + _hidden_table(figure) + _caption(figure, text) + "})\n"
    )


_W, _H = 300.0, 130.0
"""The plot area of a line plot, in points."""


def line_plot(figure: LinePlot, text: FigureText = unicode_text) -> str:
    """A line plot as placed Typst shapes: frame, grid, ticks, one curve per series, a legend."""
    x_low, x_high = figure.x[0], figure.x[-1]
    y_low, y_high, y_ticks = axis(*figure.y_bounds(), 5)
    x_ticks = ticks(x_low, x_high, 6)
    left = 34.0 + (12.0 if figure.y_label else 0.0)
    top = 4.0

    def px(v: float) -> float:
        return left + (v - x_low) / (x_high - x_low) * _W

    def py(v: float) -> float:
        return top + _H - (v - y_low) / (y_high - y_low) * _H

    def place(x: float, y: float, body: str) -> str:
        return f"  place(top + left, dx: {x:.2f}pt, dy: {y:.2f}pt, {body})\n"

    def label(x: float, y: float, tick: str, align: str) -> str:
        # A box of fixed width, aligned inside: the label is centred (or right-aligned) on x.
        width = 40.0
        dx = {"center": x - width / 2, "right": x - width, "left": x}[align]
        return place(dx, y - 4.5, f"box(width: {width}pt, align({align}, text(size: 7.5pt, {string(tick)})))")

    out = [
        f"  place(top + left, dx: {left:.2f}pt, dy: {top:.2f}pt, rect(width: {_W}pt, height: {_H}pt, "
        "stroke: 0.6pt + luma(60)))\n"
    ]
    for v in y_ticks:
        y = py(v)
        paint = "luma(150)" if v == 0 else "luma(225)"
        out.append(place(left, y, f"line(length: {_W}pt, stroke: 0.4pt + {paint})"))
        out.append(label(left - 3, y, tick_text(v, y_ticks), "right"))
    for v in x_ticks:
        x = px(v)
        out.append(place(x, top, f"line(angle: 90deg, length: {_H}pt, stroke: 0.4pt + luma(225))"))
        out.append(label(x, top + _H + 7, tick_text(v, x_ticks), "center"))
    for k, series in enumerate(figure.series):
        points = ", ".join(
            f"curve.{'move' if n == 0 else 'line'}(({px(x):.2f}pt, {py(y):.2f}pt))"
            for n, (x, y) in enumerate(zip(figure.x, series.values, strict=True))
        )
        out.append(place(0, 0, f"curve(stroke: {_stroke(k)}, {points})"))
    below = top + _H + 16
    if figure.x_label:
        out.append(
            place(left, below, f"box(width: {_W}pt, align(center, text(size: 8pt, {text(figure.x_label)})))")
        )
        below += 12
    if figure.y_label:
        out.append(
            place(
                0,
                top,
                f"box(height: {_H}pt, align(horizon, rotate(-90deg, reflow: true, "
                f"text(size: 8pt, {text(figure.y_label)}))))",
            )
        )
    legend = ", ".join(
        f"box(line(length: 16pt, stroke: {_stroke(k)}), baseline: -3pt) + h(3pt) + "
        f"text(size: 8pt, {text(s.label)})"
        for k, s in enumerate(figure.series)
    )
    out.append(
        place(
            left,
            below + 2,
            f"box(width: {_W}pt, grid(columns: 3, column-gutter: 10pt, row-gutter: 4pt, {legend}))",
        )
    )
    rows = -(-len(figure.series) // 3)
    height = below + 4 + 12 * rows
    return (
        "#block(breakable: false, above: 0.8em, below: 0.8em, {\n"
        "  set text(size: 8.5pt)\n"
        + _FIGURE_SHOW
        + _title(figure, text)
        + _figure_open(figure)
        + f"box(width: {left + _W + 12:.2f}pt, height: {height:.2f}pt, {{\n"
        + "".join("  " + piece for piece in out)
        + "  }))\n"
        + _hidden_table(figure)
        + _caption(figure, text)
        + "})\n"
    )


_FIGURE_SHOW = '  show figure.where(kind: "quiz-figure"): it => align(left, it.body)\n'
"""Inside a figure's block: the drawing as it is (a figure would centre it and number it)."""


def _figure_open(figure: Figure) -> str:
    """The start of the tagged figure around the drawing, with its alternative text."""
    alt = string(figure_table.alt_text(figure))
    return f'  figure(kind: "quiz-figure", supplement: none, numbering: none, outlined: false, alt: {alt}, '


def _hidden_table(figure: Figure) -> str:
    """The figure's values as a table for a screen reader, tagged but not printed (laid out at a
    page's width, clipped to a box of no size, out of the flow)."""
    caption, head, rows, note = figure_table.values(figure)
    header = ", ".join(f"[{_markup(cell)}]" for cell in head)
    body = ", ".join(f"[{_markup(cell)}]" for row in rows for cell in row)
    title = caption + (f" ({note})" if note else "")
    return (
        "  place(top + left, box(width: 0pt, height: 0pt, clip: true, block(width: 16cm, "
        "figure(kind: table, supplement: none, numbering: none, outlined: false, "
        f"caption: [{_markup(title)}], "
        f"table(columns: {len(head)}, table.header({header}), {body})))))\n"
    )


def _markup(text: str) -> str:
    """Plain text as Typst markup showing exactly that text."""
    return f"#{string(text)}"


def _stroke(k: int) -> str:
    dash = SERIES_DASH[k]
    pattern = f", dash: ({', '.join(f'{d}pt' for d in dash)},)" if dash else ""
    return f"(paint: {_rgb(SERIES_RGB[k])}, thickness: 1.2pt{pattern})"


def figure(figure: Figure, text: FigureText = unicode_text) -> str:
    """The figure as Typst markup (a block; starts with ``#``); ``text`` renders its titles, labels,
    legends and caption (by default with their maths as Unicode)."""
    return heatmap(figure, text) if isinstance(figure, Heatmap) else line_plot(figure, text)
