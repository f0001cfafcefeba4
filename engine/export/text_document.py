"""A text file (HTML, Markdown) made sheet by sheet, so that a class's files are written as they go.

A `TextDocument` says what comes before the sheets, what each sheet gives and what comes after,
as blocks joined by a separator. `chunks` gives one document's text in pieces; `write_together`
writes several documents of the same sheets (the worksheets and the key) in one pass over them,
so that each sheet (its variants) is built once and never kept: memory does not grow with the class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from attnquiz.engine.export.worksheet import Sheet


@dataclass(frozen=True)
class TextDocument:
    """``prefix``, then the blocks (``head``, each sheet's, ``tail``) joined by ``separator``, then
    ``suffix``: the text `"".join(chunks(document, sheets))`."""

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
    write: Callable[[str], object]
    started: bool = field(default=False)

    def blocks(self, blocks: Iterable[str]) -> None:
        for block in blocks:
            self.write(self.document.separator + block if self.started else block)
            self.started = True


def chunks(document: TextDocument, sheets: Iterable[Sheet]) -> Iterator[str]:
    """The document's text in pieces (a block at a time), each sheet read when its turn comes."""
    pieces: list[str] = []
    joiner = _Joiner(document, pieces.append)
    yield document.prefix
    joiner.blocks(document.head)
    yield from pieces
    for index, sheet in enumerate(sheets):
        pieces.clear()
        joiner.blocks(document.sheet(index, sheet))
        yield from pieces
    pieces.clear()
    joiner.blocks(document.tail)
    yield from pieces
    yield document.suffix


def write_together(
    documents: Sequence[TextDocument],
    outputs: Sequence[BinaryIO],
    sheets: Iterable[Sheet],
    on_sheet: Callable[[int], object] | None = None,
) -> None:
    """Write each document into its output (UTF-8), reading every sheet once for all of them;
    ``on_sheet`` is told the count of sheets done after each."""
    joiners = [_Joiner(document, _utf8(out)) for document, out in zip(documents, outputs, strict=True)]
    for joiner, out in zip(joiners, outputs, strict=True):
        out.write(joiner.document.prefix.encode("utf-8"))
        joiner.blocks(joiner.document.head)
    for index, sheet in enumerate(sheets):
        for joiner in joiners:
            joiner.blocks(joiner.document.sheet(index, sheet))
        if on_sheet is not None:
            on_sheet(index + 1)
    for joiner, out in zip(joiners, outputs, strict=True):
        joiner.blocks(joiner.document.tail)
        out.write(joiner.document.suffix.encode("utf-8"))


def _utf8(out: BinaryIO) -> Callable[[str], object]:
    """A function writing text into ``out`` as UTF-8."""

    def write(text: str) -> object:
        return out.write(text.encode("utf-8"))

    return write


__all__ = ["TextDocument", "chunks", "write_together"]
