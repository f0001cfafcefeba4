"""Figures as SVG: inline in HTML (the export and `quiz serve`), and as files in Moodle and QTI.

The drawing is plain SVG 1.1 (rectangles, text, polylines): no script, no style sheet, no
external reference, so the same text is safe inline in a page with a strict Content-Security-Policy
and as an image file an LMS shows with ``<img>``. Every label is escaped for XML, its maths
written in Unicode (``$d_k$`` as dₖ).
"""

from __future__ import annotations

from html import escape

from attnquiz.engine.figures import (
    MASKED_RGB,
    SERIES_DASH,
    SERIES_RGB,
    Figure,
    Heatmap,
    LinePlot,
    axis,
    dark_shade,
    hex_colour,
    plain,
    shade_rgb,
    tick_text,
    ticks,
)

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
SIZE = 12
"""The font size of labels and values, in pixels."""
_CHAR = 7.0
"""The width of an average character at `SIZE` (an estimate: SVG cannot measure text)."""
_PAD = 8.0


def _width(text: str) -> float:
    return len(plain(text)) * _CHAR


def _text(x: float, y: float, text: str, *, anchor: str = "middle", extra: str = "") -> str:
    """A label: figure text with its maths written in Unicode (`figures.plain`: SVG text cannot
    hold MathML), escaped for XML."""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" dominant-baseline="central"{extra}>'
        f"{escape(plain(text))}</text>"
    )


def _open(width: float, height: float, label: str) -> list[str]:
    label = plain(label)
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" class="quiz-figure" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label="{escape(label)}" font-family="{FONT}" font-size="{SIZE}">',
        f"<title>{escape(label)}</title>",
        f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
    ]


def heatmap_svg(figure: Heatmap) -> str:
    """A heatmap: one shaded cell per value with the value printed in it, labels on two sides."""
    n_rows, n_cols = len(figure.values), len(figure.values[0])
    texts = [[figure.cell_text(i, j) for j in range(n_cols)] for i in range(n_rows)]
    cell_w = max(40.0, max(_width(t) for row in texts for t in row) + 14)
    cell_h = 26.0
    col_label_w = max(_width(c) for c in figure.cols)
    # Column labels wider than a cell are drawn slanted, so that neighbours never overlap.
    slanted = col_label_w > cell_w - 4
    col_head = col_label_w * 0.75 + 12 if slanted else 20.0
    row_label_w = max(_width(r) for r in figure.rows) + 10
    row_title_w = 20.0 if figure.row_title else 0.0
    top = _PAD + (22.0 if figure.title else 0.0) + (18.0 if figure.col_title else 0.0) + col_head
    left = _PAD + row_title_w + row_label_w
    grid_w, grid_h = cell_w * n_cols, cell_h * n_rows
    width = left + grid_w + _PAD + (col_label_w * 0.7 if slanted else 0.0)
    width = max(width, _PAD * 2 + _width(figure.title), _PAD * 2 + row_title_w + _width(figure.col_title))
    height = top + grid_h + _PAD
    out = _open(width, height, figure.title or "heatmap")
    y = _PAD
    if figure.title:
        out.append(_text(width / 2, y + 9, figure.title, extra=' font-weight="bold"'))
        y += 22
    if figure.col_title:
        out.append(_text(left + grid_w / 2, y + 8, figure.col_title, extra=' fill="#444444"'))
    if figure.row_title:
        cx, cy = _PAD + 8, top + grid_h / 2
        out.append(
            _text(
                cx, cy, figure.row_title, extra=f' fill="#444444" transform="rotate(-90 {cx:.1f} {cy:.1f})"'
            )
        )
    for j, label in enumerate(figure.cols):
        cx = left + cell_w * (j + 0.5)
        if slanted:
            cy = top - 6
            out.append(
                _text(cx, cy, label, anchor="start", extra=f' transform="rotate(-40 {cx:.1f} {cy:.1f})"')
            )
        else:
            out.append(_text(cx, top - 10, label))
    for i, label in enumerate(figure.rows):
        out.append(_text(left - 6, top + cell_h * (i + 0.5), label, anchor="end"))
    for i in range(n_rows):
        for j in range(n_cols):
            x, y = left + cell_w * j, top + cell_h * i
            if figure.is_masked(i, j):
                fill, ink = hex_colour(MASKED_RGB), "#555555"
            else:
                shade = figure.shade(i, j)
                fill, ink = hex_colour(shade_rgb(shade)), "#ffffff" if dark_shade(shade) else "#111111"
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell_w:.1f}" height="{cell_h:.1f}" fill="{fill}" '
                'stroke="#ffffff" stroke-width="1"/>'
            )
            out.append(_text(x + cell_w / 2, y + cell_h / 2, texts[i][j], extra=f' fill="{ink}"'))
    out.append("</svg>")
    return "\n".join(out)


def line_svg(figure: LinePlot) -> str:
    """A line plot: axes with round ticks and a light grid, a coloured, dashed curve per series, a legend."""
    x_low, x_high = figure.x[0], figure.x[-1]
    y_low, y_high, y_ticks = axis(*figure.y_bounds(), 5)
    x_ticks = ticks(x_low, x_high, 6)
    y_tick_w = max(_width(tick_text(v, y_ticks)) for v in y_ticks)
    plot_w, plot_h = 420.0, 200.0
    left = _PAD + (20.0 if figure.y_label else 0.0) + y_tick_w + 8
    top = _PAD + (22.0 if figure.title else 6.0)
    bottom = top + plot_h
    legend_w = max(_width(s.label) for s in figure.series) + 40
    legend_cols = max(1, int((plot_w + 40) // legend_w))
    legend_rows = -(-len(figure.series) // legend_cols)
    height = bottom + 22 + (18.0 if figure.x_label else 0.0) + 20.0 * legend_rows + _PAD
    width = max(left + plot_w + 2 * _PAD, _PAD * 2 + _width(figure.title))

    def px(v: float) -> float:
        return left + (v - x_low) / (x_high - x_low) * plot_w

    def py(v: float) -> float:
        return bottom - (v - y_low) / (y_high - y_low) * plot_h

    out = _open(width, height, figure.title or "line plot")
    if figure.title:
        out.append(_text(width / 2, _PAD + 9, figure.title, extra=' font-weight="bold"'))
    for v in y_ticks:
        y = py(v)
        colour = "#999999" if v == 0 else "#e3e3e3"
        out.append(
            f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{left + plot_w:.1f}" y2="{y:.1f}" stroke="{colour}"/>'
        )
        out.append(_text(left - 5, y, tick_text(v, y_ticks), anchor="end"))
    for v in x_ticks:
        x = px(v)
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="#e3e3e3"/>')
        out.append(_text(x, bottom + 11, tick_text(v, x_ticks)))
    out.append(
        f'<rect x="{left:.1f}" y="{top:.1f}" width="{plot_w:.1f}" height="{plot_h:.1f}" '
        'fill="none" stroke="#444444"/>'
    )
    for k, series in enumerate(figure.series):
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(figure.x, series.values, strict=True))
        out.append(
            f'<polyline points="{points}" fill="none" stroke="{hex_colour(SERIES_RGB[k])}" stroke-width="2"'
            f'{_dash(k)} stroke-linejoin="round"/>'
        )
    y = bottom + 22
    if figure.x_label:
        out.append(_text(left + plot_w / 2, y + 6, figure.x_label, extra=' fill="#444444"'))
        y += 18
    if figure.y_label:
        cx, cy = _PAD + 8, top + plot_h / 2
        out.append(
            _text(cx, cy, figure.y_label, extra=f' fill="#444444" transform="rotate(-90 {cx:.1f} {cy:.1f})"')
        )
    for k, series in enumerate(figure.series):
        x = left + legend_w * (k % legend_cols)
        ly = y + 10 + 20.0 * (k // legend_cols)
        out.append(
            f'<line x1="{x:.1f}" y1="{ly:.1f}" x2="{x + 26:.1f}" y2="{ly:.1f}" '
            f'stroke="{hex_colour(SERIES_RGB[k])}" stroke-width="2"{_dash(k)}/>'
        )
        out.append(_text(x + 32, ly, series.label, anchor="start"))
    out.append("</svg>")
    return "\n".join(out)


def _dash(k: int) -> str:
    dash = SERIES_DASH[k]
    return f' stroke-dasharray="{",".join(map(str, dash))}"' if dash else ""


def svg(figure: Figure) -> str:
    """The figure as an ``<svg>`` element (with its namespace: fit for inline HTML and for a file)."""
    return heatmap_svg(figure) if isinstance(figure, Heatmap) else line_svg(figure)


def svg_file(figure: Figure) -> bytes:
    """The figure as a standalone SVG file (what Moodle and QTI embed)."""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + svg(figure) + "\n").encode("utf-8")


def figure_name(figure: Figure, number: int) -> str:
    """A file name for the figure's SVG in an export (safe in any file system and URL)."""
    return f"figure-{number}-{figure.kind}.svg"


def html_figure(figure: Figure, caption_html: str | None = None) -> str:
    """The figure as an HTML ``<figure>``: the inline SVG, and its caption under it (``caption_html``:
    the caption already rendered, its maths as MathML; by default in Unicode) with the figure's
    description and its values as a table on request (`figure_table.details_html`)."""
    from attnquiz.engine.export.figures.table import details_html

    if caption_html is None:
        caption_html = escape(plain(figure.caption))
    caption = f"{caption_html} " if figure.caption else ""
    described = f"<figcaption>{caption}{details_html(figure)}</figcaption>"
    return f'<figure class="quiz-figure">\n{svg(figure)}\n{described}</figure>'
