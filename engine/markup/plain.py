"""Markdown with TeX maths as plain Unicode text: the terminal's text, cloze feedback, plain labels.

Built on the Markdown reader (`attnquiz.engine.markup.markdown`), which is built on the TeX reader
(`attnquiz.engine.markup.tex`); formulas are written by `markup.to_unicode`, tables by
`markup.table_lines`.

``spoken=True`` is the terminal for screen readers (``quiz --plain``): formulas in words
(`attnquiz.engine.markup.speech`: ``\\sqrt{d_k}`` as "square root of d sub k"), and a table
as one line a row, each cell after its column's header, with no rule or alignment padding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import speech as math_speech
from attnquiz.engine.markup import tex as markup


def terminal_inlines(nodes: Iterable[Any], *, spoken: bool = False) -> str:
    """Inline content of the Markdown tree (`attnquiz.engine.markup.markdown`) as plain Unicode text."""
    return _terminal_inlines(nodes, spoken)


def terminal_block(block: Any, *, spoken: bool = False) -> str:
    """One block of the Markdown tree as `to_terminal` writes it."""
    return to_terminal_blocks((block,), spoken=spoken)


def _terminal_inlines(nodes: Iterable[Any], spoken: bool = False) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, md.Plain | md.Code):
            out.append(node.text)
        elif isinstance(node, md.Strong | md.Emph):
            out.append(_terminal_inlines(node.children, spoken))
        elif spoken:
            said = math_speech.speech(node.math)
            out.append(f"\n    {said}\n" if node.math.display else said)
        elif node.math.display:
            rendered = _unicode(node.math)
            out.append("\n" + "\n".join("    " + line for line in rendered.splitlines()) + "\n")
        else:
            out.append(_unicode(node.math))
    return "".join(out)


@markup.by_formula
def _unicode(math: markup.Math) -> str:
    return markup.to_unicode(math.tree, display=math.display).strip()


def to_terminal(text: str, *, spoken: bool = False) -> str:
    """Markdown with TeX maths as plain Unicode text (display formulas on lines of their own,
    tables aligned, code blocks indented, images as their alt text and file); ``spoken``: maths
    in words and tables a row a line, for a screen reader."""
    return to_terminal_blocks(md.blocks(text), spoken=spoken)


def spoken_rows(header: list[str], rows: list[list[str]]) -> list[str]:
    """A table for a listener: one line a row, each cell after its column's header (an empty
    header cell is left out, an empty cell said as "empty")."""
    lines = []
    for row in rows:
        cells = [
            f"{name}: {cell or 'empty'}" if name else (cell or "empty")
            for name, cell in zip(header, row, strict=True)
        ]
        lines.append("; ".join(cells) + ".")
    return lines


def to_terminal_blocks(blocks: Iterable[Any], *, spoken: bool = False) -> str:
    """Blocks of the Markdown tree as `to_terminal` writes them."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, md.Paragraph):
            out.append(_terminal_inlines(block.inlines, spoken).strip("\n"))
        elif isinstance(block, md.ListBlock):
            out.append(
                "\n".join(
                    (f"{n}. " if block.ordered else "- ") + _terminal_inlines(item, spoken).strip("\n")
                    for n, item in enumerate(block.items, 1)
                )
            )
        elif isinstance(block, md.Table):
            header = [" ".join(_terminal_inlines(cell, spoken).split()) for cell in block.header]
            rows = [[" ".join(_terminal_inlines(cell, spoken).split()) for cell in row] for row in block.rows]
            if spoken:
                out.append("\n".join(spoken_rows(header, rows)))
            else:
                header = [_terminal_inlines(cell).replace("\n", " ") for cell in block.header]
                rows = [[_terminal_inlines(cell).replace("\n", " ") for cell in row] for row in block.rows]
                out.append("\n".join("  " + line for line in markup.table_lines(header, rows, block.align)))
        elif isinstance(block, md.CodeBlock):
            out.append("\n".join("    " + line for line in block.text.split("\n")))
        else:
            out.append(f"[image: {block.alt or 'no description'}] ({block.src})")
    joined = "\n\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", joined).strip("\n")


__all__ = ["spoken_rows", "terminal_block", "terminal_inlines", "to_terminal", "to_terminal_blocks"]
