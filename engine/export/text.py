"""Prompt text as a small renderer-neutral tree: Markdown blocks and inline spans, formulas kept whole.

`attnquiz.engine.markup` splits text into plain runs and parsed formulas; this module reads the Markdown
that generators write around the formulas (paragraphs, ``-``/``1.`` lists, ``**bold**``,
``*italic*``, `` `code` ``, backslash escapes), so that HTML, Typst and the LMS formats render
the same structure. Formulas stay `markup.Math` objects for each renderer to typeset.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from attnquiz.engine import markup

# Formulas are replaced by private-use placeholders while the Markdown around them is read, so
# that a formula can sit inside bold text or a list item without its TeX being read as Markdown.
_OPEN, _CLOSE = "\ue000", "\ue001"
_PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.*)$")
_ORDERED = re.compile(r"^\s{0,3}\d{1,3}[.)]\s+(.*)$")
_PUNCTUATION = set("\\`*_{}[]()#+-.!$|<>~\"'")


@dataclass(frozen=True, slots=True)
class Plain:
    """Literal text."""

    text: str


@dataclass(frozen=True, slots=True)
class Strong:
    """Bold text."""

    children: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Emph:
    """Italic text."""

    children: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Code:
    """Monospaced code."""

    text: str


@dataclass(frozen=True, slots=True)
class Formula:
    """A formula, parsed by `attnquiz.engine.markup`."""

    math: markup.Math


Inline = Plain | Strong | Emph | Code | Formula


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A paragraph of inline content (single newlines inside it are spaces)."""

    inlines: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class ListBlock:
    """A bulleted or numbered list; each item is a run of inline content."""

    ordered: bool
    items: tuple[tuple[Inline, ...], ...]


Block = Paragraph | ListBlock


@lru_cache(maxsize=8192)
def blocks(text: str) -> tuple[Block, ...]:
    """The Markdown blocks of ``text``; raises `markup.MarkupError` for TeX outside the subset."""
    formulas: list[markup.Math] = []
    pieces: list[str] = []
    for segment in markup.parse(text):
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
        out.append(_block(lines, formulas))
    return tuple(out)


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


def _inlines(source: str, formulas: list[markup.Math]) -> tuple[Inline, ...]:
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
        if source.startswith("**", i) or source.startswith("__", i):
            mark = source[i : i + 2]
            end = source.find(mark, i + 2)
            if end > i + 2 and not source[i + 2].isspace() and not source[end - 1].isspace():
                flush()
                out.append(Strong(_inlines(source[i + 2 : end], formulas)))
                i = end + 2
                continue
        if ch in "*_" and i + 1 < n and not source[i + 1].isspace() and source[i + 1] != ch:
            # `_` marks emphasis only at word edges, so snake_case and d_model stay as they are.
            word_inside = ch == "_" and i > 0 and source[i - 1].isalnum()
            close = _closing(source, i + 1, ch)
            if not word_inside and close is not None:
                flush()
                out.append(Emph(_inlines(source[i + 1 : close], formulas)))
                i = close + 1
                continue
        buffer.append(ch)
        i += 1
    flush()
    return tuple(out)


def _closing(source: str, start: int, mark: str) -> int | None:
    """The index of the emphasis mark that closes one opened just before ``start``."""
    i = start
    while (i := source.find(mark, i)) != -1:
        before_ok = not source[i - 1].isspace()
        after = source[i + 1] if i + 1 < len(source) else " "
        if before_ok and after != mark and (mark == "*" or not after.isalnum()):
            return i
        i += 1
    return None


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
    "Block",
    "Code",
    "Emph",
    "Formula",
    "Inline",
    "ListBlock",
    "Paragraph",
    "Plain",
    "Strong",
    "blocks",
    "plain_text",
]
