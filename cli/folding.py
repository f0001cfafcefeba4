"""Text folded for the terminal: lines broken where a reader expects, the same way by every command.

Never inside a short bracketed group (a vector, a shape, a function's arguments), never just before
an operator, continuation lines hanging under their first word, and no trailing spaces. `put`
prints folded text to a console (in ASCII where the output cannot encode it); `print_table` prints
a rich renderable without rich's padding. Below `attnquiz.display` and
`attnquiz.markdown_terminal`, which both print through it.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from rich.text import Text

from attnquiz.line_breaks import NBSP, line_spans
from attnquiz.terminal import can_encode, to_ascii

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


def fold(text: Text | str, width: int, *, hang: int = 0) -> Text:
    """``text`` broken into lines of at most ``width`` cells, styles kept.

    Args:
        text: The text; its own newlines are kept.
        width: The width of the terminal.
        hang: How far continuation lines are indented beyond the indentation of their line: the
            width of a label such as "1. ", so that the text hangs under its first word.
    """
    text = Text(text) if isinstance(text, str) else text
    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        plain = line.plain
        indent = len(plain) - len(plain.lstrip(" "))
        pieces = line_spans(plain, max(width, 20), indent + hang)
        for number, (start, end) in enumerate(pieces):
            piece = line[start:end]
            piece.rstrip()
            if number:
                piece = Text(" " * (indent + hang)) + piece
            out.append(piece)
    folded = Text("\n").join(out)
    if NBSP in folded.plain:
        # Only a layout hint: a copied command or answer must not carry it (same length: spans stay).
        folded.plain = folded.plain.replace(NBSP, " ")
    return folded


def put(target: Console, text: Text | str, *, hang: int = 0, style: str = "") -> None:
    """Print ``text`` folded to ``target``'s width (``style`` styles a plain string).

    Where the output cannot encode the text, it is spelled in ASCII before it is folded, so that
    lines are broken at the width of what is printed (``sqrt(d_k)`` is longer than ``√dₖ``).
    """
    text = Text(text, style=style) if isinstance(text, str) else text
    if not can_encode(target.file, text.plain):
        text = ascii_text(text)
    target.print(fold(text, target.width, hang=hang))


def ascii_text(text: Text) -> Text:
    """``text`` spelled in ASCII (`attnquiz.terminal.to_ascii`), each styled run keeping its style."""
    cuts = sorted({0, len(text.plain), *(x for span in text.spans for x in (span.start, span.end))})
    out = Text(style=text.style, end=text.end)
    for start, end in itertools.pairwise(cuts):
        piece = text[start:end]
        styles = [span.style for span in piece.spans if span.start == 0 and span.end == len(piece.plain)]
        out.append(to_ascii(piece.plain), style=" ".join(str(x) for x in styles) or None)
    return out


def print_table(target: Console, table: RenderableType) -> None:
    """A table (or any renderable) without the spaces rich pads lines with (piped transcripts stay clean)."""
    for line in target.render_lines(table, target.options, pad=False, new_lines=False):
        text = Text()
        for segment in line:
            if not segment.control:
                text.append(segment.text, segment.style)
        text.rstrip()
        target.print(text, soft_wrap=True)


__all__ = ["ascii_text", "fold", "print_table", "put"]
