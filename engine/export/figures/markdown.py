"""Figures in the Markdown export: a table of the figure's values (GitHub and Pandoc pipe tables).

A Markdown worksheet is one text file, so a figure becomes what a reader of that file can use: a
heatmap its matrix of values (a masked cell shows its mask text), a line plot a table with one row
per x value (at most `MAX_ROWS` rows, evenly spaced, first and last kept, and it says so). Every
label is escaped (`attnquiz.engine.markup.tex.escape_markdown`, as in the rest of the Markdown export),
pipes included; its maths is kept as TeX.
"""

from __future__ import annotations

from attnquiz.engine.figures import Figure, Heatmap, LinePlot, corner_text, format_value, segments
from attnquiz.engine.markup.tex import escape_markdown

MAX_ROWS = 12
"""A line plot's table has at most this many rows."""


def _escape(text: str) -> str:
    """Figure text as Markdown: plain runs escaped, maths kept as ``$TeX$`` (a Markdown reader
    typesets it as it does the prompt's)."""
    return "".join(
        escape_markdown(s) if isinstance(s, str) else _formula(s.source, s.display) for s in segments(text)
    )


def _formula(source: str, display: bool) -> str:
    # A bar in the maths would end a table's cell (GFM splits a row at every |): write it \mid.
    mark = "$$" if display else "$"
    return mark + source.replace("|", r"\mid ") + mark


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def heatmap(figure: Heatmap) -> list[str]:
    """A heatmap as a pipe table: a bold row label, then the values as printed in the cells."""
    n_cols = len(figure.values[0])
    lines = [_row([_escape(corner_text(figure))] + [f"**{_escape(c)}**" for c in figure.cols])]
    lines.append("|" + "---:|" * (n_cols + 1))
    for i, label in enumerate(figure.rows):
        lines.append(
            _row([f"**{_escape(label)}**"] + [_escape(figure.cell_text(i, j)) for j in range(n_cols)])
        )
    return lines


def sampled(count: int, limit: int = MAX_ROWS) -> list[int]:
    """At most ``limit`` indices of ``count`` evenly spaced, the first and the last kept."""
    if count <= limit:
        return list(range(count))
    return sorted({round(k * (count - 1) / (limit - 1)) for k in range(limit)})


def line_plot(figure: LinePlot) -> list[str]:
    """A line plot as a pipe table: one row per x value shown, one column per series."""
    lines = [_row([_escape(figure.x_label or "x")] + [_escape(s.label) for s in figure.series])]
    lines.append("|" + "---:|" * (len(figure.series) + 1))
    shown = sampled(len(figure.x))
    # Whole x values (positions) as integers; every y value with three decimals.
    whole = all(float(figure.x[n]).is_integer() for n in shown)
    for n in shown:
        x = format_value(figure.x[n], 0 if whole else 3)
        lines.append(_row([x] + [format_value(s.values[n], 3) for s in figure.series]))
    if len(shown) < len(figure.x):
        lines += ["", f"*{len(shown)} of {len(figure.x)} points shown.*"]
    return lines


def figure(figure: Figure, indent: str = "") -> str:
    """The figure as Markdown: its title in bold, its table, its caption in italics."""
    lines: list[str] = []
    if figure.title:
        lines += [f"**{_escape(figure.title)}**", ""]
    lines += heatmap(figure) if isinstance(figure, Heatmap) else line_plot(figure)
    if figure.caption:
        lines += ["", f"*{_escape(figure.caption)}*"]
    return "\n".join(indent + line if line else "" for line in lines)
