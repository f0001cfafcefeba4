"""Styled lines printed without rich's console, byte for byte as `attnquiz.display`'s console prints them.

`quiz list BANK`, `quiz show`, `quiz answer` and the first question of `quiz run` are typed often
and print a few dozen lines in a few styles; importing rich's console would cost them more than a
tenth of their start-up (a third of `quiz list`'s, issue 43). This writer folds, styles and cleans
text exactly as `attnquiz.folding.put` and `attnquiz.display.TerminalConsole` do, and it declines
wherever it cannot be sure of printing the same bytes: on Windows, in a notebook or IDLE, for a
style other than bold, dim, italic and the eight standard colours, for text holding a tab or other
non-printing character (rich expands or strips them; a newline starts a line, as in `fold`), for a
line wider than the terminal (rich would fold it again), and for bank Markdown holding a table, a
code block or an image, or a figure to draw. Then `text` gives None and the caller draws with rich.
Tests compare the two over widths, encodings and the variables that decide colour.
"""

from __future__ import annotations

import builtins
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from rich.cells import cell_len

from attnquiz.line_breaks import NBSP, line_spans
from attnquiz.terminal import can_encode, plain_mode, strip_control, to_ascii, unboxed

if TYPE_CHECKING:
    from attnquiz.engine.variant import Question

Run = tuple[str, str]
"""A piece of text and its style as rich names it (``"bold cyan"``; ``""`` for none)."""

# rich's SGR codes: attributes first, in rich's order, then the foreground colour. The eight
# standard colours have the same codes in every colour system rich uses outside Windows.
_ATTRIBUTES = {"bold": "1", "dim": "2", "italic": "3"}
_COLOURS = {
    name: str(30 + number)
    for number, name in enumerate(("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"))
}


def _codes(style: str, *, colour: bool) -> str | None:
    """The SGR parameters rich writes for ``style`` ("" for none), or None for a style it does not know."""
    words = style.split()
    colours = [word for word in words if word in _COLOURS]
    if len(colours) > 1 or any(word not in _ATTRIBUTES and word not in _COLOURS for word in words):
        return None
    codes = [code for name, code in _ATTRIBUTES.items() if name in words]
    if colour:
        codes += [_COLOURS[name] for name in colours]
    return ";".join(codes)


def _is_terminal(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """rich's `Console.is_terminal` for a console writing to ``stream`` (no notebook, no IDLE)."""
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    isatty: Callable[[], bool] | None = getattr(stream, "isatty", None)
    try:
        return False if isatty is None else isatty()
    except ValueError:  # a closed stream
        return False


def _width(environ: Mapping[str, str], dumb: bool) -> int:
    """rich's `Console.width` for a console made with these variables (POSIX, no notebook)."""
    columns, lines = environ.get("COLUMNS"), environ.get("LINES")
    given = int(columns) if columns is not None and columns.isdigit() else None
    if given is not None and lines is not None and lines.isdigit():
        return given
    if dumb:
        return 80
    width: int | None = None
    for descriptor in (0, 1, 2):
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    if given is not None:
        return given
    return width or 80


class LightLines:
    """Lines to print: folded and styled as rich would print them, or declined (`text` is None)."""

    def __init__(self, width: int, *, styled: bool, colour: bool, stream: TextIO | None) -> None:
        """``styled``: escape codes are written (a terminal, not ``--plain``); ``colour``: with
        colours (else bold and dim only, as rich does under ``NO_COLOR``)."""
        self.width = width
        self._styled = styled
        self._colour = colour
        self._plain = plain_mode()
        self._stream = stream
        self._lines: list[str] | None = []

    @classmethod
    def for_stdout(cls) -> LightLines | None:
        """A writer for standard output as `attnquiz.display.console` would write it, or None where
        rich decides things this writer does not (Windows, a notebook, IDLE)."""
        stream = sys.stdout
        if os.name == "nt" or hasattr(builtins, "get_ipython") or stream is None:
            return None
        if getattr(sys.stdin, "__module__", "").startswith("idlelib"):
            return None
        environ = os.environ
        terminal = _is_terminal(stream, environ)
        dumb = terminal and environ.get("TERM", "").lower() in ("dumb", "unknown")
        return cls(
            _width(environ, dumb),
            styled=terminal and not dumb and not plain_mode(),
            colour=environ.get("NO_COLOR", "") == "",
            stream=stream,
        )

    def blank(self) -> None:
        """An empty line."""
        if self._lines is not None:
            self._lines.append("")

    def line(self, runs: Sequence[Run]) -> None:
        """``runs`` on one line as they are (``console.print`` of the assembled text)."""
        self._add([_merged(runs)])

    def put(self, runs: Sequence[Run], *, hang: int = 0) -> None:
        """``runs`` folded to the width as `attnquiz.folding.put` folds them: each line of their text
        on its own, in ASCII where the stream cannot encode them (each run spelled on its own, as
        `folding.ascii_text` does)."""
        pieces = _merged(runs)
        if not can_encode(self._stream, "".join(text for text, _ in pieces)):
            pieces = [(to_ascii(text), style) for text, style in pieces]
        plain = "".join(text for text, _ in pieces)
        if not _printable(plain.replace("\n", "")):
            self._lines = None
            return
        folded: list[list[Run]] = []
        offset = 0
        for line in plain.split("\n"):
            line_runs = _sliced(pieces, offset, offset + len(line))
            offset += len(line) + 1
            indent = len(line) - len(line.lstrip(" "))
            for number, (start, end) in enumerate(line_spans(line, max(self.width, 20), indent + hang)):
                piece = _rstripped(_sliced(line_runs, start, end))
                if number:
                    piece = [(" " * (indent + hang), ""), *piece]
                folded.append([(text.replace(NBSP, " "), style) for text, style in piece])
        self._add(folded)

    def markdown(
        self, text: str, *, first: Sequence[Run] = (), hang: int = 0, indent: int = 0, folder: str = ""
    ) -> None:
        """Bank Markdown of paragraphs and lists, folded after ``first`` as
        `attnquiz.markdown_terminal.print_markdown` prints it; a table, a code block or an image
        is left to rich (declined). ``indent`` and ``folder`` only matter to those."""
        from attnquiz.engine.markup.markdown import has_blocks
        from attnquiz.engine.markup.plain import to_terminal

        if has_blocks(text):
            self._lines = None
            return
        self.put([*first, (to_terminal(text, spoken=self._plain), "")], hang=hang)

    def figures(self, question: Question, where: str, *, indent: int = 0) -> None:
        """A variant's figures are drawn by rich: declined where there is one to draw ``where``."""
        if any(figure.where == where for figure in question.variant.figures):
            self._lines = None

    def _add(self, lines: list[list[Run]]) -> None:
        if self._lines is None:
            return
        for runs in lines:
            plain = "".join(text for text, _ in runs)
            rendered = self._rendered(runs)
            if rendered is None or not _printable(plain.replace(NBSP, " ")) or cell_len(plain) > self.width:
                self._lines = None
                return
            self._lines.append(rendered)

    def _rendered(self, runs: list[Run]) -> str | None:
        out: list[str] = []
        for text, style in runs:
            codes = _codes(style, colour=self._colour)
            if codes is None:
                return None
            shown = strip_control(text)
            if self._plain:
                shown = unboxed(shown)
            out.append(f"\x1b[{codes}m{shown}\x1b[0m" if self._styled and codes and shown else shown)
        return "".join(out)

    def rule(self, title: str) -> None:
        """A section heading as `attnquiz.display.rule` draws it: the title alone under ``--plain``,
        folded and dim where a rule would cut it, else rich's left-aligned ``Rule``: the title, a
        space, then dim line characters to the width ("-" where the output is not Unicode)."""
        if self._plain:
            self.put([(title, "")])
        elif self.width < len(title) + 4:
            self.put([(title, "dim")], hang=2)
        else:
            encoding = (getattr(self._stream, "encoding", None) or "utf-8").lower()
            line = "─" if encoding.startswith("utf") else "-"
            self.line([(title + " ", ""), (line * (self.width - cell_len(title) - 1), "dim")])

    def text(self) -> str | None:
        """Everything to print, each line ended by a newline; None where rich must print it."""
        return None if self._lines is None else "".join(line + "\n" for line in self._lines)


def print_without_rich(draw: Callable[[LightLines], None]) -> bool:
    """Draw with a light writer and print it on standard output; False where it declined (nothing
    is printed then, and the caller draws with rich)."""
    light = LightLines.for_stdout()
    if light is None:
        return False
    draw(light)
    text = light.text()
    if text is None:
        return False
    sys.stdout.write(text)
    sys.stdout.flush()
    return True


def _printable(text: str) -> bool:
    """Whether every character of ``text`` prints as itself (a no-break space too)."""
    return text.isprintable() or all(ch.isprintable() or ch == NBSP for ch in text)


def _merged(runs: Sequence[Run]) -> list[Run]:
    """The runs as rich's text holds them: neighbouring unstyled runs are one (rich keeps spans
    only for styled text), each styled run a span of its own."""
    merged: list[Run] = []
    for text, style in runs:
        if not text:
            continue
        if not style and merged and not merged[-1][1]:
            merged[-1] = (merged[-1][0] + text, "")
        else:
            merged.append((text, style))
    return merged


def _sliced(runs: list[Run], start: int, end: int) -> list[Run]:
    """The runs' characters from ``start`` to ``end``, each keeping its style."""
    out: list[Run] = []
    offset = 0
    for text, style in runs:
        low, high = max(start, offset), min(end, offset + len(text))
        if low < high:
            out.append((text[low - offset : high - offset], style))
        offset += len(text)
    return out


def _rstripped(runs: list[Run]) -> list[Run]:
    """The runs without the whitespace that ends their joined text (rich's ``Text.rstrip``)."""
    keep = len("".join(text for text, _ in runs).rstrip())
    return _sliced(runs, 0, keep)


__all__ = ["LightLines", "Run", "print_without_rich"]
