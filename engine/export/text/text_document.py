"""A text file (HTML, Markdown) made sheet by sheet, so that a class's files are written as they go.

A `TextDocument` says what comes before the sheets, what each sheet gives and what comes after,
as blocks joined by a separator. `write_together` writes several documents of the same sheets
(the worksheets and the key) in one pass over them, so that each sheet (its variants) is built
once and never kept: memory does not grow with the class. `as_text` is one document whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from attnquiz.engine.plan.class_plan import Sheet

Write = Callable[[str], object]


@dataclass(frozen=True)
class TextDocument:
    """``prefix``, then the blocks (``head``, each sheet's, ``tail``) joined by ``separator``, then
    ``suffix``."""

    prefix: str
    separator: str
    sheet: Callable[[int, Sheet], Iterable[str]]  # a sheet's blocks; the int is its position, from 0
    head: Sequence[str] = ()
    tail: Sequence[str] = ()
    suffix: str = ""


@dataclass
class _Joiner:
    """Joins one document's blocks as they come, writing each at once."""

    document: TextDocument
    write: Write
    started: bool = False

    def blocks(self, blocks: Iterable[str]) -> None:
        for block in blocks:
            self.write(self.document.separator + block if self.started else block)
            self.started = True


def write_together(
    documents: Sequence[TextDocument],
    writers: Sequence[Write],
    sheets: Iterable[Sheet],
    on_sheet: Callable[[int], object] | None = None,
) -> None:
    """Write each document with its writer, reading every sheet once for all of them; ``on_sheet``
    is told the count of sheets done after each."""
    joiners = [_Joiner(document, write) for document, write in zip(documents, writers, strict=True)]
    for joiner in joiners:
        joiner.write(joiner.document.prefix)
        joiner.blocks(joiner.document.head)
    for index, sheet in enumerate(sheets):
        for joiner in joiners:
            joiner.blocks(joiner.document.sheet(index, sheet))
        if on_sheet is not None:
            on_sheet(index + 1)
    for joiner in joiners:
        joiner.blocks(joiner.document.tail)
        joiner.write(joiner.document.suffix)


def as_text(document: TextDocument, sheets: Iterable[Sheet]) -> str:
    """The whole document of ``sheets`` as one string."""
    pieces: list[str] = []
    write_together([document], [pieces.append], sheets)
    return "".join(pieces)


def utf8(out: BinaryIO) -> Write:
    """A writer of text into ``out``, as UTF-8."""

    def write(text: str) -> object:
        return out.write(text.encode("utf-8"))

    return write


__all__ = ["TextDocument", "Write", "as_text", "utf8", "write_together"]
