"""Figures in the terminal: the layout of `attnquiz.engine.export.figures.text`, printed with rich.

A heatmap's cells are shaded by value where the terminal shows colour; under NO_COLOR, or piped,
rich drops the colours and the same table is read by its values. Where the output cannot encode
Unicode, every label and mark is spelled in ASCII before the layout measures it.

Under ``quiz --plain`` a figure is not drawn: it is its description and its values, one line a row
(a heatmap's row label, then each column's label and its cell as printed in the figure; a line
plot's x value, then each curve's value), the same values as the HTML table of
`attnquiz.engine.export.figures.table`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from attnquiz.engine.export.figures.text import BOX_ASCII, UNICODE_SAMPLE, Look, figure_lines
from attnquiz.folding import put
from attnquiz.terminal import can_encode, plain_mode, to_ascii

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rich.console import Console

    from attnquiz.engine.figures import Figure


def _spell(target: Console) -> Callable[[str], str]:
    """How text is spelled for ``target``: as it is, or in ASCII when the output cannot encode it."""
    if can_encode(target.file, UNICODE_SAMPLE):
        return lambda text: text
    return lambda text: to_ascii(text.translate(BOX_ASCII))


def _style(look: Look) -> Style:
    return Style(color=look.fg, bgcolor=look.bg, bold=look.bold or None, dim=look.dim or None)


def value_lines(figure: Figure) -> list[str]:
    """The figure for a listener: its name and description, then its values a row a line."""
    from attnquiz.engine.export.figures import table as figure_table
    from attnquiz.engine.figures import Heatmap, corner_text
    from attnquiz.engine.markup.plain import to_terminal

    def plain(text: str) -> str:  # a label's maths in words, as the rest of a plain session
        return " ".join(to_terminal(text, spoken=True).split())

    title = plain(figure.title)
    lines = [f"Figure{': ' + title if title else ''}. {figure_table.description(figure)}"]
    if isinstance(figure, Heatmap):
        row_title, col_title = plain(figure.row_title), plain(figure.col_title)
        lines.append(f"Values, a row a line ({plain(corner_text(figure)) or 'rows by columns'}):")
        for i, label in enumerate(figure.rows):
            said = [figure_table.spoken_cell(figure, i, j) for j in range(len(figure.cols))]
            cells = "; ".join(
                f"{' '.join(filter(None, (col_title, plain(col))))} is {said[j]}"
                for j, col in enumerate(figure.cols)
            )
            lines.append(f"{' '.join(filter(None, (row_title, plain(label))))}: {cells}.")
        return lines
    shown = figure_table.shown_points(figure)
    x_label = plain(figure.x_label) or "x"
    lines.append(f"Values, a point a line ({len(shown)} of {len(figure.x)} points):")
    for n in shown:
        values = "; ".join(f"{plain(s.label)}: {figure_table.y_text(s.values[n])}" for s in figure.series)
        lines.append(f"{x_label} {figure_table.x_text(figure.x[n])}: {values}.")
    return lines


def print_figure(target: Console, figure: Figure, *, indent: int = 0) -> None:
    """One figure, drawn for ``target`` (its width, its colours, its encoding); under ``--plain``
    its values."""
    margin = " " * indent
    if plain_mode():
        for said in value_lines(figure):
            put(target, margin + said, hang=indent + 2)
        return
    for runs in figure_lines(figure, target.width - indent, _spell(target), cell_len):
        line = Text(margin)
        for text, look in runs:
            line.append(text, style=_style(look))
        line.rstrip()
        target.print(line, soft_wrap=True)


def print_figures(target: Console, figures: Sequence[Figure], *, indent: int = 0) -> None:
    """Figures one after the other, a blank line before each."""
    for figure in figures:
        target.print()
        print_figure(target, figure, indent=indent)
