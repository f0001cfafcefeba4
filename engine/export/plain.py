"""Markdown with TeX maths as plain Unicode text: the terminal's text, cloze feedback, plain labels.

Built on the Markdown reader (`attnquiz.engine.export.text`), which is built on the TeX reader
(`attnquiz.engine.markup`); formulas are written by `markup.to_unicode`, tables by
`markup.table_lines`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from attnquiz.engine import markup
from attnquiz.engine.export import text as md


def terminal_inlines(nodes: Iterable[Any]) -> str:
    """Inline content of the Markdown tree (`attnquiz.engine.export.text`) as plain Unicode text."""
    return _terminal_inlines(nodes)


def terminal_block(block: Any) -> str:
    """One block of the Markdown tree as `to_terminal` writes it."""
    return to_terminal_blocks((block,))


def _terminal_inlines(nodes: Iterable[Any]) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, md.Plain | md.Code):
            out.append(node.text)
        elif isinstance(node, md.Strong | md.Emph):
            out.append(_terminal_inlines(node.children))
        elif node.math.display:
            rendered = markup.to_unicode(node.math.tree, display=True).strip()
            out.append("\n" + "\n".join("    " + line for line in rendered.splitlines()) + "\n")
        else:
            out.append(markup.to_unicode(node.math.tree).strip())
    return "".join(out)


def to_terminal(text: str) -> str:
    """Markdown with TeX maths as plain Unicode text (display formulas on lines of their own,
    tables aligned, code blocks indented, images as their alt text and file)."""
    return to_terminal_blocks(md.blocks(text))


def to_terminal_blocks(blocks: Iterable[Any]) -> str:
    """Blocks of the Markdown tree as `to_terminal` writes them."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, md.Paragraph):
            out.append(_terminal_inlines(block.inlines).strip("\n"))
        elif isinstance(block, md.ListBlock):
            out.append(
                "\n".join(
                    (f"{n}. " if block.ordered else "- ") + _terminal_inlines(item).strip("\n")
                    for n, item in enumerate(block.items, 1)
                )
            )
        elif isinstance(block, md.Table):
            header = [_terminal_inlines(cell).replace("\n", " ") for cell in block.header]
            rows = [[_terminal_inlines(cell).replace("\n", " ") for cell in row] for row in block.rows]
            out.append("\n".join("  " + line for line in markup.table_lines(header, rows, block.align)))
        elif isinstance(block, md.CodeBlock):
            out.append("\n".join("    " + line for line in block.text.split("\n")))
        else:
            out.append(f"[image: {block.alt or 'no description'}] ({block.src})")
    joined = "\n\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", joined).strip("\n")


__all__ = ["terminal_block", "terminal_inlines", "to_terminal", "to_terminal_blocks"]
