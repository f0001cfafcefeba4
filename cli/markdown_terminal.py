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

from attnquiz.engine.markup import plain
from attnquiz.folding import ascii_text, print_table, put
from attnquiz.terminal import can_encode, plain_mode, strip_control, to_ascii

if TYPE_CHECKING:
    from attnquiz.engine.markup import markdown as md

_JUSTIFY = {"left": "left", "center": "center", "right": "right", "": "left"}
MAX_CODE_LINES = 400
"""Lines of a code block shown in the terminal (a longer block says how many it left out)."""


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
    from attnquiz.engine.markup import markdown as md

    if not md.has_blocks(markdown):
        put(target, (first or Text()) + Text(plain.to_terminal(markdown, spoken=plain_mode())), hang=hang)
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
        text = plain.to_terminal_blocks(flow, spoken=plain_mode())
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
        if isinstance(block, md.Table) and plain_mode():
            # A screen reader: a row a line, each cell after its header, no box to read out.
            put(
                target,
                "\n".join(margin + line for line in plain.terminal_block(block, spoken=True).splitlines()),
            )
        elif isinstance(block, md.Table):
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
        text = Text(" ".join(plain.terminal_inlines(nodes, spoken=plain_mode()).split()))
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
    # Long lines are folded here, the same way with or without colour: between tokens, the broken
    # line ending in Python's own continuation mark and the rest indented under it, so that nothing
    # is lost, no number or name is cut in two, and a continuation never reads as a new statement.
    # The width is counted in terminal cells: a CJK character or an emoji takes two.
    room = max(20, target.width - len(margin) - 4)
    folded = [piece for line in lines for piece in fold_code_line(line, room)]
    colour = target.color_system is not None and not target.no_color
    if colour:
        from rich.syntax import Syntax

        # An unknown language is shown without colour (rich finds no lexer for it).
        lexer = block.language.lower() if block.language else "text"
        syntax = Syntax(
            "\n".join(folded), lexer, theme="ansi_dark", background_color="default", word_wrap=False
        )
        print_table(target, Padding(syntax, (0, 0, 0, len(margin) + 4)))
    else:
        for piece in folded:
            target.print(Text(margin + "    " + piece), soft_wrap=True)
    if cut > 0:
        put(target, f"{margin}    … {cut} more lines", style="dim")


CONTINUED = " \\"
"""The end of a code line folded to fit the terminal (Python's explicit line joining)."""
CONTINUATION_INDENT = 4
"""How much deeper than its line a folded code line's continuation starts."""


def _break_points(line: str) -> list[tuple[int, int]]:
    """Where a code line may be folded: (end of the first piece, start of the rest), between tokens.

    At a run of spaces, and after an opening bracket or a comma, outside string literals, so that
    ``hidden = 8, 4, 32`` never becomes ``3`` then ``2``.
    """
    points: list[tuple[int, int]] = []
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            # A comment: any space after its first word will do.
            first = line.find(" ", i + 2)
            points += [(j, j + 1) for j in range(first, len(line)) if first > 0 and line[j] == " "]
            break
        elif ch == " ":
            j = i
            while j < len(line) and line[j] == " ":
                j += 1
            points.append((i, j))
            i = j
            continue
        elif ch in "([{,":
            points.append((i + 1, i + 1))
        i += 1
    return points


def fold_code_line(line: str, room: int) -> list[str]:
    """A code line as pieces of at most ``room`` cells: every piece but the last ends in `CONTINUED`,
    and the continuations are indented `CONTINUATION_INDENT` deeper than the line itself.

    A break goes between tokens (see `_break_points`); only a token longer than a whole line is cut.
    """
    from rich.cells import cell_len, chop_cells

    if cell_len(line) <= room:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    hang = " " * min(indent + CONTINUATION_INDENT, max(0, room // 2))
    pieces: list[str] = []
    rest, lead = line, ""
    while cell_len(lead + rest) > room:
        budget = room - cell_len(lead) - len(CONTINUED)
        fits = [
            (end, start) for end, start in _break_points(rest) if end > 0 and cell_len(rest[:end]) <= budget
        ]
        if fits:
            end, start = fits[-1]
        else:
            # A single token wider than the line: cut it by cells, marked like any other fold.
            end = start = len(chop_cells(rest, max(1, budget))[0])
        pieces.append(lead + rest[:end].rstrip(" ") + CONTINUED)
        rest, lead = rest[start:].lstrip(" "), hang
        if not rest:
            break
    if rest:
        pieces.append(lead + rest)
    return pieces


def strip_control_lines(text: str) -> list[str]:
    """The lines of a code block with tabs as spaces and control characters removed."""
    return [strip_control(line.expandtabs(4)) for line in text.split("\n")]


__all__ = ["CONTINUED", "fold_code_line", "print_markdown"]
