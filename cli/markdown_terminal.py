"""Bank Markdown with tables, code blocks and images, drawn for the terminal with rich.

Paragraphs and lists go through `folding.put` as before (folded, maths in Unicode). A table is a
rich `Table` (box-drawn, or ASCII boxes where the output cannot encode Unicode), its columns aligned
as the Markdown says; a code block keeps its lines exactly, with syntax colour (rich's `Syntax`,
Pygments lexers) on a colour terminal and as plain indented lines under ``NO_COLOR`` or when output
is not a terminal; an image is its alt text and its file. Every piece of bank text goes through the
`TerminalConsole`, which strips control sequences, and through the ASCII fallback of `put`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from attnquiz.engine.export import plain
from attnquiz.folding import ascii_text, print_table, put
from attnquiz.terminal import can_encode, strip_control, to_ascii

if TYPE_CHECKING:
    from attnquiz.engine.export import text as md

_JUSTIFY = {"left": "left", "center": "center", "right": "right", "": "left"}
MAX_CODE_LINES = 400
"""Lines of a code block shown in the terminal (a longer block says how many it left out)."""


def has_blocks(markdown: str) -> bool:
    """Whether ``markdown`` holds a table, a code block or an image (else `put` prints it as before)."""
    if "|" not in markdown and "```" not in markdown and "~~~" not in markdown and "![" not in markdown:
        return False
    from attnquiz.engine.export import text as md

    return any(isinstance(b, md.Table | md.CodeBlock | md.Image) for b in md.blocks(markdown))


def print_markdown(
    target: Console,
    markdown: str,
    *,
    first: Text | None = None,
    hang: int = 0,
    indent: int = 0,
    folder: str = "",
) -> None:
    """Print ``markdown``: ``first`` (a label such as ``1. ``) before its first block, later blocks
    indented by ``indent`` + ``hang``; ``folder``: the bank's folder, where images are."""
    from attnquiz.engine.export import text as md

    if not has_blocks(markdown):
        put(target, (first or Text()) + Text(plain.to_terminal(markdown)), hang=hang)
        return
    margin = " " * (indent + hang)
    spaced = first is None  # a prompt: blocks apart, as its paragraphs; a labelled step stays compact
    lead: Text | None = first
    printed = False
    flow: list[md.Block] = []

    def gap() -> None:
        nonlocal printed
        if printed and spaced:
            target.print()
        printed = True

    def flush() -> None:
        nonlocal lead
        if not flow:
            return
        gap()
        text = plain.to_terminal_blocks(flow)
        if lead is not None:
            put(target, lead + Text(text), hang=hang)
            lead = None
        else:
            put(
                target,
                "\n".join(margin + line if line else "" for line in text.splitlines()),
                hang=indent + hang,
            )
        flow.clear()

    for block in md.blocks(markdown):
        if isinstance(block, md.Paragraph | md.ListBlock):
            flow.append(block)
            continue
        flush()
        gap()
        if lead is not None:
            label = lead.copy()
            label.rstrip()
            put(target, label, hang=hang)
            lead = None
        if isinstance(block, md.Table):
            print_table(target, Padding(_table(target, block), (0, 0, 0, len(margin) + 2)))
        elif isinstance(block, md.CodeBlock):
            _code(target, block, margin)
        else:
            shown = str(Path(folder) / block.src) if folder else block.src
            put(target, Text(f"{margin}[image: {block.alt or 'no description'}] ({shown})", style="dim"))
    flush()


def _table(target: Console, block: md.Table) -> Table:

    unicode = can_encode(target.file, "┌─┬┐│├┼┤└┴┘━")
    table = Table(
        box=box.SQUARE if unicode else box.ASCII,
        show_header=True,
        header_style="bold",
        pad_edge=True,
        padding=(0, 1),
        show_edge=True,
    )

    def cell(nodes: tuple[md.Inline, ...]) -> Text:
        text = Text(" ".join(plain.terminal_inlines(nodes).split()))
        return text if unicode or can_encode(target.file, text.plain) else ascii_text(text)

    for header, how in zip(block.header, block.align, strict=True):
        table.add_column(cell(header), justify=_JUSTIFY[how], overflow="fold")  # type: ignore[arg-type]
    for row in block.rows:
        table.add_row(*(cell(c) for c in row))
    return table


def _code(target: Console, block: md.CodeBlock, margin: str) -> None:
    lines = strip_control_lines(block.text)
    cut = len(lines) - MAX_CODE_LINES
    lines = lines[:MAX_CODE_LINES]
    if not can_encode(target.file, "\n".join(lines)):
        lines = [to_ascii(line) for line in lines]
    colour = target.color_system is not None and not target.no_color
    if colour:
        from rich.syntax import Syntax

        # An unknown language is shown without colour (rich finds no lexer for it).
        lexer = block.language.lower() if block.language else "text"
        syntax = Syntax(
            "\n".join(lines), lexer, theme="ansi_dark", background_color="default", word_wrap=True
        )
        print_table(target, Padding(syntax, (0, 0, 0, len(margin) + 4)))
    else:
        # Long lines are cut at the width, each piece on its own indented line: nothing is lost and
        # the terminal's own wrapping never breaks the indentation. The width is counted in
        # terminal cells: a CJK character or an emoji takes two.
        from rich.cells import chop_cells

        room = max(20, target.width - len(margin) - 4)
        for line in lines:
            pieces = chop_cells(line, room) or [""]
            for piece in pieces:
                target.print(Text(margin + "    " + piece), soft_wrap=True)
    if cut > 0:
        put(target, f"{margin}    … {cut} more lines", style="dim")


def strip_control_lines(text: str) -> list[str]:
    """The lines of a code block with tabs as spaces and control characters removed."""
    return [strip_control(line.expandtabs(4)) for line in text.split("\n")]


__all__ = ["has_blocks", "print_markdown"]
