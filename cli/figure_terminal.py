"""Figures in the terminal: the layout of `attnquiz.engine.export.figure_text`, printed with rich.

A heatmap's cells are shaded by value where the terminal shows colour; under NO_COLOR, or piped,
rich drops the colours and the same table is read by its values. Where the output cannot encode
Unicode, every label and mark is spelled in ASCII before the layout measures it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from attnquiz.engine.export.figure_text import BOX_ASCII, UNICODE_SAMPLE, Look, figure_lines
from attnquiz.terminal import can_encode, to_ascii

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


def print_figure(target: Console, figure: Figure, *, indent: int = 0) -> None:
    """One figure, drawn for ``target`` (its width, its colours, its encoding)."""
    margin = " " * indent
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
