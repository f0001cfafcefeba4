"""Prompt text as a small renderer-neutral tree: Markdown blocks and inline spans, formulas kept whole.

`attnquiz.engine.markup.tex` splits text into plain runs and parsed formulas; this module reads the Markdown
around the formulas, so that the terminal, HTML, Typst, Markdown and the LMS formats render the same
structure. The supported subset:

- paragraphs (single newlines inside are spaces), ``-``/``*``/``+`` and ``1.``/``1)`` lists;
- ``**bold**``, ``*italic*``/``_italic_``, `` `code` ``, backslash escapes, ``$maths$``;
- pipe tables (a header row, a ``---``/``:--``/``:-:``/``--:`` row, then rows with as many cells;
  formulas, bold, italic and code in cells);
- fenced code blocks (three or more backticks or tildes, an optional language), kept verbatim:
  never read for maths or Markdown;
- images, ``![alt text](figures/file.png)``, on a line of their own (checked and embedded by
  `attnquiz.engine.markup.image_refs`, read by `attnquiz.engine.bank.images`).

Anything else that Markdown would turn into structure (headings, block quotes, links and autolinks,
raw HTML, horizontal rules, HTML entities) is refused with a `markup.MarkupError`, as TeX outside
the subset is, so that a bank never shows readers stray ``#``, ``>`` or ``[x](…)``. Formulas stay
`markup.Math` objects for each renderer to typeset.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Literal

from msgspec import Struct

from attnquiz.engine.markup import image_refs
from attnquiz.engine.markup import tex as markup

# Formulas are replaced by private-use placeholders while the Markdown around them is read, so
# that a formula can sit inside bold text or a list item without its TeX being read as Markdown.
_OPEN, _CLOSE = "\ue000", "\ue001"
_PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.*)$")
_ORDERED = re.compile(r"^\s{0,3}\d{1,3}[.)]\s+(.*)$")
_PUNCTUATION = set("\\`*_{}[]()#+-.!$|<>~\"'")


class Plain(Struct, frozen=True):
    """Literal text."""

    text: str


class Strong(Struct, frozen=True):
    """Bold text."""

    children: tuple[Inline, ...]


class Emph(Struct, frozen=True):
    """Italic text."""

    children: tuple[Inline, ...]


class Code(Struct, frozen=True):
    """Monospaced code."""

    text: str


class Formula(Struct, frozen=True):
    """A formula, parsed by `attnquiz.engine.markup.tex`."""

    math: markup.Math


Inline = Plain | Strong | Emph | Code | Formula


class Paragraph(Struct, frozen=True):
    """A paragraph of inline content (single newlines inside it are spaces)."""

    inlines: tuple[Inline, ...]


class ListBlock(Struct, frozen=True):
    """A bulleted or numbered list; each item is a run of inline content."""

    ordered: bool
    items: tuple[tuple[Inline, ...], ...]


class Table(Struct, frozen=True):
    """A pipe table: header cells, each column's alignment, and rows with as many cells as the header."""

    header: tuple[tuple[Inline, ...], ...]
    align: tuple[Align, ...]
    rows: tuple[tuple[tuple[Inline, ...], ...], ...]


class CodeBlock(Struct, frozen=True):
    """A fenced code block: its language (may be empty) and its text, verbatim, lines kept."""

    language: str
    text: str


class Image(Struct, frozen=True):
    """An image file next to the bank, on a line of its own: alternative text, relative path and
    the width it is shown at (``![alt](file.png){width=5cm}``; "" for the file's own size, within
    the page). A width is `IMAGE_WIDTH`: centimetres, millimetres, inches or a percentage of the
    text's width, which every renderer honours (the terminal shows no picture)."""

    alt: str
    src: str
    width: str = ""


Align = Literal["left", "center", "right", ""]
Block = Paragraph | ListBlock | Table | CodeBlock | Image

MAX_TABLE_COLUMNS = 24
"""The most columns a table may have (wider tables fit no page and no terminal)."""
MAX_TABLE_ROWS = 400
"""The most body rows a table may have."""

# A fence opens with 3+ backticks or tildes (up to three spaces in) and an optional language; it
# closes with a line of at least as many of the same character and nothing else.
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[ \t]*$")
_FENCE_MARK = "\ue002"
_FENCE_LINE = re.compile(f"^{_FENCE_MARK}(\\d+){_FENCE_MARK}$")
_IMAGE_LINE = re.compile(r"^[ \t]{0,3}!\[([^\[\]\n]*)\]\(([^()\s]*)\)(?:\{width=([^{}\s]*)\})?\s*$")
IMAGE_WIDTH = re.compile(r"^(?:(?:[1-9]\d?|100)%|(?:\d{1,2}(?:\.\d{1,2})?)(?:cm|mm|in))$")
"""A width an image may ask for: 1% to 100% of the text's width, or a length under 100 cm, mm or in."""
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")

# What Markdown would read as structure the renderers do not draw: refused, with a reason. Only a
# bank's check (strict reading) looks for them, so they are compiled when it first does: a question
# drawn from a checked bank never needs them.
_Refusals = tuple[tuple[re.Pattern[str], str], ...]


@cache
def _refusals() -> tuple[_Refusals, _Refusals, re.Pattern[str]]:
    """What is refused on a line of its own, what is refused within a line, and a code span."""
    refused_lines = (
        (re.compile(r"^ {0,3}#{1,6}(\s|$)"), "headings (#) are not supported: use **bold** text"),
        (re.compile(r"^ {0,3}>"), "block quotes (>) are not supported"),
        (
            re.compile(r"^ {0,3}([-*_])[ \t]*(\1[ \t]*){2,}$"),
            "horizontal rules (---) are not supported: leave a blank line between paragraphs",
        ),
        (re.compile(r"^ {0,3}=+\s*$"), "headings (a line of ===) are not supported: use **bold** text"),
        (re.compile(r"^ {0,3}\[[^\]]+\]:"), "link definitions ([x]: url) are not supported"),
    )
    refused_spans = (
        (re.compile(r"(?<!!)\[[^\[\]]*\]\([^)]*\)"), "links [text](url) are not supported"),
        (re.compile(r"(?<!!)\[[^\[\]]+\]\[[^\[\]]*\]"), "reference links [text][ref] are not supported"),
        (
            re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>|<[^\s<>@]+@[^\s<>@]+>"),
            "autolinks <url> are not supported: write the address as code, `https://…`",
        ),
        (
            re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(\s+[A-Za-z_:][^<>]*)?\s*/?>|<!--|<\?|<![A-Za-z]"),
            "raw HTML is not supported: write Markdown (a < that starts no tag is fine)",
        ),
        (
            re.compile(r"&(#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"),
            "HTML entities (&name;) are not supported: write the character itself",
        ),
        (
            re.compile(r"!\[[^\[\]\n]*\]\([^()]*\)"),
            "an image must stand on a line of its own: ![alt text](file.png)",
        ),
    )
    code_span = re.compile(r"(`+)(?:(?!\1).)+?\1")
    return refused_lines, refused_spans, code_span


@lru_cache(maxsize=8192)
def blocks(text: str) -> tuple[Block, ...]:
    """The Markdown blocks of ``text``; raises `markup.MarkupError` for TeX outside the subset.

    Markdown outside the subset is not refused here (`check` refuses it, at load): a renderer given
    text that never went through a bank's checks shows it as the plain text it is, escaped.
    """
    return _read(text, strict=False)


class MarkdownError(markup.MarkupError):
    """Markdown outside the subset, found on one line of the text: ``line`` is its number (1-based)
    in the text, so that a bank's problem is reported at that row of a literal block ``|``."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class _AtRow(Exception):
    """A problem of one line as the reader sees it (formulas masked); `_read` finds the line as
    written and raises a `MarkdownError` quoting it."""

    def __init__(self, message: str, row: str, quoted: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.quoted = row if quoted is None else quoted


def has_blocks(text: str) -> bool:
    """Whether ``text`` holds a table, a code block or an image: what a terminal cannot print as
    folded paragraphs (and the characters without which it holds none, checked first: cheaply)."""
    if "|" not in text and "```" not in text and "~~~" not in text and "![" not in text:
        return False
    return any(isinstance(b, Table | CodeBlock | Image) for b in blocks(text))


def check(text: str) -> None:
    """Raise `markup.MarkupError` if ``text`` uses TeX or Markdown outside the supported subset (a
    `MarkdownError`, with the line, for Markdown found on one line)."""
    _checked(text)


@lru_cache(maxsize=8192)
def _checked(text: str) -> None:
    """`check`, remembered for texts that pass (a raise is not cached): every renderer of a
    variant, and every check of `quiz check`, reads the same texts again."""
    _read(text, strict=True)


def _unmasked(masked: str, formulas: list[markup.Math]) -> str:
    """A line as written: each formula's placeholder replaced by the formula with its dollars."""

    def written(match: re.Match[str]) -> str:
        formula = formulas[int(match.group(1))]
        mark = "$$" if formula.display else "$"
        return mark + formula.source + mark

    return _PLACEHOLDER.sub(written, masked)


def _line_number(text: str, row: str) -> int:
    """The 1-based line of ``text`` on which ``row`` (a line of it, as written) starts."""
    at = text.find(row.strip())
    return 1 + text.count("\n", 0, at) if at >= 0 else 1


_TEX_ROW_LINES = 80
_TEX_ROW_CHARACTERS = 8000
"""The longest text in which a TeX problem's line is looked for (one reading per line: bounded
work, whatever the text); in a longer one the problem is reported at the text's first line."""


def _tex_row(text: str, message: str) -> int | None:
    """The first line at which the text read so far fails with ``message`` (the line of a TeX
    problem; None where no prefix fails the same way, e.g. an unmatched ``$``)."""
    lines = text.split("\n")
    if len(lines) > _TEX_ROW_LINES or len(text) > _TEX_ROW_CHARACTERS:
        return None
    for end in range(1, len(lines) + 1):
        try:
            markup.parse("\n".join(lines[:end]))
        except markup.MarkupError as exc:
            if str(exc) == message:
                return end
    return None


def _read(text: str, *, strict: bool) -> tuple[Block, ...]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lifted, fences = _lift_fences(text, strict=strict)
    formulas: list[markup.Math] = []
    pieces: list[str] = []
    try:
        segments = markup.parse(lifted)
    except markup.MarkupError as exc:
        row = _tex_row(text, str(exc)) if strict else None
        if row is None:
            raise
        raise MarkdownError(str(exc), row) from None
    for segment in segments:
        if isinstance(segment, markup.Text):
            pieces.append(segment.text.replace(_OPEN, "").replace(_CLOSE, ""))
        else:
            pieces.append(f"{_OPEN}{len(formulas)}{_CLOSE}")
            formulas.append(segment)
    source = "".join(pieces)
    out: list[Block] = []
    for chunk in re.split(r"\n[ \t]*\n", source.strip()):
        lines = [line for line in chunk.splitlines() if line.strip()]
        if not lines:
            continue
        try:
            out.extend(_chunk(lines, formulas, fences, strict=strict))
        except _AtRow as problem:
            written = _unmasked(problem.row, formulas)
            quoted = _unmasked(problem.quoted, formulas)
            message = f"{problem.message}: {_quote(quoted)}" if quoted else problem.message
            raise MarkdownError(message, _line_number(text, written)) from None
    return tuple(out)


def _lift_fences(text: str, *, strict: bool) -> tuple[str, list[CodeBlock]]:
    """The text with each fenced code block replaced by a marker line of its own (a paragraph
    apart), and the blocks: so that neither the formula split nor the Markdown reader sees code."""
    if "```" not in text and "~~~" not in text:
        return text.replace(_FENCE_MARK, ""), []
    lines = text.replace(_FENCE_MARK, "").split("\n")
    out: list[str] = []
    fences: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        opening = _FENCE_OPEN.match(lines[i])
        if opening is None:
            out.append(lines[i])
            i += 1
            continue
        mark, language = opening.group(1), opening.group(2)
        closing = re.compile(f"^ {{0,3}}{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$")
        end = next((j for j in range(i + 1, len(lines)) if closing.match(lines[j])), None)
        if end is None:
            if not strict:  # shown as the text it is
                out.append(lines[i])
                i += 1
                continue
            raise MarkdownError(
                f"a code block opened with {mark[:3]}{'…' if len(mark) > 3 else ''} is never closed "
                "(end it with a line of the same fence)",
                i + 1,
            )
        out += ["", f"{_FENCE_MARK}{len(fences)}{_FENCE_MARK}", ""]
        fences.append(CodeBlock(language, "\n".join(lines[i + 1 : end])))
        i = end + 1
    return "\n".join(out), fences


def _chunk(
    lines: list[str], formulas: list[markup.Math], fences: list[CodeBlock], *, strict: bool
) -> list[Block]:
    """The blocks of one run of lines between blank lines."""
    if len(lines) == 1 and (fence := _FENCE_LINE.match(lines[0].strip())):
        return [fences[int(fence.group(1))]]
    if strict:
        _refuse(lines)
    images = [_IMAGE_LINE.match(line) for line in lines]
    if all(images):
        found: list[Block] = [
            Image(_unescape(m.group(1)), m.group(2), _width(m.group(3) or "")) for m in images if m
        ]
        if strict:
            for line, match in zip(lines, images, strict=True):
                if match and match.group(3) is not None and not IMAGE_WIDTH.match(match.group(3)):
                    raise _AtRow(
                        "an image's width is a length such as {width=6cm}, {width=40mm}, {width=2.5in} or "
                        "{width=50%} (of the text's width)",
                        line,
                    )
            for line, image in zip(lines, found, strict=True):
                try:
                    image_refs.check_src(image.src if isinstance(image, Image) else "")
                except image_refs.ImageError as exc:
                    raise _AtRow(str(exc), line, "") from None
        return found
    if strict and any(images):
        row = next(line for line, image in zip(lines, images, strict=True) if image)
        raise _AtRow("an image must stand on a line of its own, with a blank line before and after it", row)
    if len(lines) >= 2 and "|" in lines[0] and _DELIMITER_ROW.match(lines[1]) and "-" in lines[1]:
        try:
            return [_table(lines, formulas)]
        except (_AtRow, markup.MarkupError):
            if strict:
                raise
    return [_block(lines, formulas)]


def _width(given: str) -> str:
    """An image's width as written, or "" (its own size) where it is not one `IMAGE_WIDTH` allows
    (refused by `check`; shown at its own size by a renderer given unchecked text)."""
    if IMAGE_WIDTH.match(given):
        return given
    return ""


def _refuse(lines: list[str]) -> None:
    refused_lines, refused_spans, code_span = _refusals()
    for line in lines:
        for pattern, message in refused_lines:
            if pattern.match(line):
                raise _AtRow(message, line)
        bare = code_span.sub("", re.sub(r"\\.", "", line))  # code spans and escapes are not refused
        if _IMAGE_LINE.match(bare):
            continue
        for pattern, message in refused_spans:
            found = pattern.search(bare)
            if found:
                raise _AtRow(message, line, found.group(0))


def _quote(text: str) -> str:
    text = text.strip().replace(_OPEN, "$").replace(_CLOSE, "$")
    return repr(text if len(text) <= 60 else text[:59] + "…")


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: m.group(1) if m.group(1) in _PUNCTUATION else m.group(0), text)


def _cells(line: str) -> list[str]:
    """The cells of a table row: split at each ``|`` that is not escaped (``\\|`` is a literal bar)."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            current.append(body[i : i + 2] if body[i + 1] != "|" else "|")
            i += 2
            continue
        if body[i] == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(body[i])
        i += 1
    cells.append("".join(current).strip())
    return cells


def _table(lines: list[str], formulas: list[markup.Math]) -> Table:
    header = _cells(lines[0])
    delimiters = _cells(lines[1])
    if len(header) > MAX_TABLE_COLUMNS:
        raise _AtRow(f"a table may have at most {MAX_TABLE_COLUMNS} columns, not {len(header)}", lines[0])
    if len(delimiters) != len(header):
        raise _AtRow(
            f"the table's header has {len(header)} cells but its --- row has {len(delimiters)}", lines[1]
        )
    align: list[Align] = []
    for cell in delimiters:
        left, right = cell.startswith(":"), cell.endswith(":")
        align.append("center" if left and right else "left" if left else "right" if right else "")
    if len(lines) - 2 > MAX_TABLE_ROWS:
        raise _AtRow(f"a table may have at most {MAX_TABLE_ROWS} rows, not {len(lines) - 2}", lines[0])
    rows: list[tuple[tuple[Inline, ...], ...]] = []
    for number, line in enumerate(lines[2:], 1):
        cells = _cells(line)
        if len(cells) != len(header):
            raise _AtRow(
                f"row {number} of the table has {len(cells)} cells, the header {len(header)}: "
                "every row needs as many cells (an empty cell is | |)",
                line,
            )
        rows.append(tuple(_inlines(cell, formulas) for cell in cells))
    return Table(tuple(_inlines(cell, formulas) for cell in header), tuple(align), tuple(rows))


def _block(lines: list[str], formulas: list[markup.Math]) -> Block:
    for pattern, ordered in ((_BULLET, False), (_ORDERED, True)):
        if pattern.match(lines[0]):
            items: list[list[str]] = []
            for line in lines:
                match = pattern.match(line)
                if match:
                    items.append([match.group(1)])
                else:  # a continuation line of the previous item
                    items[-1].append(line.strip())
            return ListBlock(ordered, tuple(_inlines(" ".join(i), formulas) for i in items))
    return Paragraph(_inlines(" ".join(line.strip() for line in lines), formulas))


_MAX_NESTING = 32
"""Bold and italic nest this deep at most; deeper marks are plain characters (bounded recursion)."""


def _inlines(source: str, formulas: list[markup.Math], depth: int = 0) -> tuple[Inline, ...]:
    out: list[Inline] = []
    buffer: list[str] = []

    def flush() -> None:
        if buffer:
            out.append(Plain("".join(buffer)))
            buffer.clear()

    i = 0
    n = len(source)
    while i < n:
        ch = source[i]
        if ch == "\\" and i + 1 < n and source[i + 1] in _PUNCTUATION:
            buffer.append(source[i + 1])
            i += 2
            continue
        if ch == _OPEN:
            end = source.index(_CLOSE, i)
            flush()
            out.append(Formula(formulas[int(source[i + 1 : end])]))
            i = end + 1
            continue
        if ch == "`":
            end = source.find("`", i + 1)
            if end > i + 1:
                flush()
                out.append(
                    Code(_PLACEHOLDER.sub(lambda m: formulas[int(m.group(1))].source, source[i + 1 : end]))
                )
                i = end + 1
                continue
        if depth < _MAX_NESTING and (source.startswith("**", i) or source.startswith("__", i)):
            mark = source[i : i + 2]
            end = source.find(mark, i + 2)
            if end > i + 2 and not source[i + 2].isspace() and not source[end - 1].isspace():
                flush()
                out.append(Strong(_inlines(source[i + 2 : end], formulas, depth + 1)))
                i = end + 2
                continue
        if (
            depth < _MAX_NESTING
            and ch in "*_"
            and i + 1 < n
            and not source[i + 1].isspace()
            and source[i + 1] != ch
        ):
            # `_` marks emphasis only at word edges, so snake_case and d_model stay as they are.
            word_inside = ch == "_" and i > 0 and source[i - 1].isalnum()
            close = _closing(source, i + 1, ch)
            if not word_inside and close is not None:
                flush()
                out.append(Emph(_inlines(source[i + 1 : close], formulas, depth + 1)))
                i = close + 1
                continue
        buffer.append(ch)
        i += 1
        # Ordinary characters up to the next one that may start a mark are copied at once.
        plain_run = _ORDINARY_RUN.match(source, i)
        if plain_run is not None:
            buffer.append(plain_run.group())
            i = plain_run.end()
    flush()
    return tuple(out)


_ORDINARY_RUN = re.compile(f"[^\\\\`*_{_OPEN}]+")
"""A run of characters none of which can start an escape, a formula, code or emphasis."""


def _closing(source: str, start: int, mark: str) -> int | None:
    """The index of the emphasis mark that closes one opened just before ``start``."""
    closers = _closers(source, mark)
    found = bisect.bisect_left(closers, start)
    return closers[found] if found < len(closers) else None


@lru_cache(maxsize=256)
def _closers(source: str, mark: str) -> tuple[int, ...]:
    """Every index where ``mark`` can close an emphasis, in order (computed once per text, so that a
    text of many unclosed marks is read in n log n, not n²)."""
    out: list[int] = []
    i = 0
    while (i := source.find(mark, i)) != -1:
        before_ok = i > 0 and not source[i - 1].isspace()
        after = source[i + 1] if i + 1 < len(source) else " "
        if before_ok and after != mark and (mark == "*" or not after.isalnum()):
            out.append(i)
        i += 1
    return tuple(out)


def plain_text(inlines: tuple[Inline, ...], formula: Callable[[markup.Math], str]) -> str:
    """Inline content flattened to text, formulas written by ``formula`` (for titles and CSV)."""
    out: list[str] = []
    for node in inlines:
        if isinstance(node, Plain | Code):
            out.append(node.text)
        elif isinstance(node, Strong | Emph):
            out.append(plain_text(node.children, formula))
        else:
            out.append(formula(node.math))
    return "".join(out)


__all__ = [
    "Align",
    "Block",
    "Code",
    "CodeBlock",
    "Emph",
    "Formula",
    "Image",
    "Inline",
    "ListBlock",
    "Paragraph",
    "Plain",
    "Strong",
    "Table",
    "blocks",
    "check",
    "has_blocks",
    "image_sources",
    "plain_text",
]


def image_sources(text: str) -> list[tuple[str, str]]:
    """The (alt, src) of every image of ``text``, in order."""
    return [(b.alt, b.src) for b in blocks(text) if isinstance(b, Image)]
