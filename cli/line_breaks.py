"""Where a line of terminal text may be broken, and where it is: the rules every command folds by.

Never inside a short bracketed group (a vector, a shape, a function's arguments), never just before
an operator, continuation lines hanging under their first word. Both writers use it: rich's
(`attnquiz.folding`) and the one that prints a bank's listing without rich (`attnquiz.light_lines`).
Widths are terminal cells as rich counts them (`rich.cells`, a table, not rich's console).
"""

from __future__ import annotations

import re

from rich.cells import cell_len

NBSP = "\u00a0"
"""A space that `fold` never breaks at (printed as an ordinary space)."""
# A bracketed group up to this many cells stays on one line: [0.881, 0.119], [T, 512], (Q, K, V, O).
_KEEP_TOGETHER = 28
_OPENING = {")": "(", "]": "[", "}": "{", "⟩": "⟨"}
# A break goes after these (as TeX breaks inline maths), so a line never starts with one.
_OPERATORS = frozenset("=≈≤≥≠→←↦∈⇒⇔+−×±∝≡<>·—")


def _break_runs(line: str) -> list[tuple[int, int]]:
    """The runs of spaces (start, end) where ``line`` may be broken."""
    protected = [False] * len(line)
    stack: list[tuple[str, int]] = []
    for i, ch in enumerate(line):
        if ch in "([{⟨":
            stack.append((ch, i))
        elif ch in _OPENING and stack:
            opener, start = stack.pop()
            if opener == _OPENING[ch] and cell_len(line[start : i + 1]) <= _KEEP_TOGETHER:
                protected[start : i + 1] = [True] * (i + 1 - start)
    runs = []
    indent = len(line) - len(line.lstrip(" "))
    for m in re.finditer(" +", line):
        start, end = m.span()
        if start < indent or protected[start]:
            continue
        follows = line[end : end + 2]
        if len(follows) == 2 and follows[0] in _OPERATORS and follows[1] == " ":
            continue
        runs.append((start, end))
    return runs


def line_spans(line: str, width: int, hang: int) -> list[tuple[int, int]]:
    """Where to cut one line (no newline in it) to fit ``width`` cells, continuation lines ``hang``
    cells in: (start, end) of each output line, greedily."""
    spans: list[tuple[int, int]] = []
    start, room = 0, width
    fits: tuple[int, int] | None = None
    for run in [*_break_runs(line), (len(line), len(line))]:
        if cell_len(line[start : run[0]]) <= room:
            fits = run
            continue
        if fits is not None:
            spans.append((start, fits[0]))
            start, room = fits[1], width - hang
        fits = None
        if cell_len(line[start : run[0]]) <= room:
            fits = run
        else:
            # One word wider than the line: it gets a line of its own (rich folds it).
            spans.append((start, run[0]))
            start, room = run[1], width - hang
    if start < len(line):
        spans.append((start, len(line)))
    return spans or [(0, 0)]


__all__ = ["NBSP", "line_spans"]
