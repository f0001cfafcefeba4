"""One piece of a PDF export: a description a worker process can be handed (`Document`, `Piece`) and
the function that makes it (`make_piece`: the students' sheets, their Typst source, the compile).

Below both `attnquiz.engine.export.pdf.worksheets`, which plans an export's pieces and joins them, and
`attnquiz.engine.export.pdf.workers`, whose processes make pieces in parallel: the same function
in either, so the same bytes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from attnquiz.engine.export.pdf import typst as typst_source
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, KeyStyle, Paper, Sheet

DocumentKind = Literal["worksheets", "key", "answer-sheets"]


def compile_typst(source: str, *, tagged: bool = True) -> bytes:
    """Compile Typst source to PDF bytes; a Typst error or warning is a bug here, so it raises.

    ``tagged``: with the tagged-PDF structure (for screen readers: headings, reading order, the
    alternative text of formulas and figures). Every piece of an export is tagged, and the join
    merges the pieces' structure trees (`pdfjoin`); untagged output is half the size."""
    import typst  # imported here: loading the compiler is not free, and most commands never need it

    files = typst_source.image_files(source)  # the images of the bank's texts that the source shows
    try:
        if files:
            pdf, warnings = _compile_with_images(typst, source, files, tagged)
        else:
            pdf, warnings = _compiler(typst).compile_with_warnings(source.encode("utf-8"), pdf_tags=tagged)
    except typst.TypstError as exc:
        raise ExportError(f"typst could not compile the document: {exc.message} {exc.diagnostic}") from exc
    if warnings:
        messages = "; ".join(w.message for w in warnings)
        raise ExportError(f"typst warned while compiling the document: {messages}")
    if not isinstance(pdf, bytes):
        raise ExportError("typst returned no PDF")
    return pdf


_COMPILERS: dict[str, Any] = {}
"""This process's Typst compiler, under "pdf" once made (see `_compiler`)."""


def _compiler(typst: Any) -> Any:
    """One Typst compiler for every piece this process compiles (the wheel's fonts only).

    The same PDF as a compiler made per piece (`typst.compile_with_warnings`), for less: its fonts
    are found once, and what it laid out before is there for the next piece, not rebuilt (about
    6 % of a piece's compile; a worker's memory grows no faster)."""
    found = _COMPILERS.get("pdf")
    if found is None:
        found = _COMPILERS["pdf"] = typst.Compiler(ignore_system_fonts=True)
    return found


def _compile_with_images(typst: Any, source: str, files: dict[str, bytes], tagged: bool) -> Any:
    """Compile with a root folder that holds only the images the source shows (Typst reads files
    from its root only), removed as soon as the PDF is made."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="quiz-typst-") as root:
        folder = Path(root) / typst_source.IMAGE_FOLDER
        folder.mkdir()
        for name, data in files.items():
            (folder / name).write_bytes(data)
        return typst.compile_with_warnings(
            source.encode("utf-8"), root=root, ignore_system_fonts=True, pdf_tags=tagged
        )


@dataclass(frozen=True)
class Document:
    """One PDF file of an export: its name, what it holds (the worksheets, or the key in ``style``),
    the paper, students per piece, and which students (``students``: positions in the class; all of
    them when None). A plain description, so that a worker process can be handed it."""

    name: str
    kind: DocumentKind
    paper: Paper
    per_piece: int
    students: range | None = None
    style: KeyStyle = "full"

    def positions(self, class_size: int) -> range:
        return range(class_size) if self.students is None else self.students

    def pieces(self, class_size: int) -> int:
        return -(-len(self.positions(class_size)) // self.per_piece)

    @property
    def continuous(self) -> bool:
        """Whether the pages are numbered through the whole file (the grid and the brief key: one
        table for the class), rather than from 1 on each student's sheet."""
        return self.kind == "key" and self.style in {"grid", "brief"}

    def source(self, plan: ClassPlan, sheets: Sequence[Sheet], first_page: int = 1, last: bool = True) -> str:
        """The Typst source of this document's part for ``sheets``, its first page numbered
        ``first_page``; ``last``: the part that ends the document."""
        if self.kind == "worksheets":
            return typst_source.worksheets(plan, sheets, self.paper)
        if self.kind == "answer-sheets":
            from attnquiz.engine.export.pdf import answer_sheet

            return answer_sheet.typst(plan, sheets, self.paper)
        return typst_source.key(plan, sheets, self.paper, self.style, first_page=first_page, last=last)


@dataclass(frozen=True)
class Piece:
    """Students ``start`` to ``stop`` (positions in the class) of document number ``document``;
    in a `Document.continuous` document, its first page is numbered ``first_page``."""

    document: int
    start: int
    stop: int
    first_page: int = 1


class RecentSheets(Sequence[Sheet]):
    """``sheets`` with the last ``keep`` sheets read kept: reading one again does not build it again.

    The pieces of the documents are made in class order (`worksheets.pieces`), so the key piece of a
    student comes at most one piece of each document after the worksheet piece that built the sheet:
    keeping a piece's worth of students per document builds each sheet once, and memory stays that
    of a few pieces whatever the size of the class. ``builds`` counts the sheets actually read from
    ``sheets``. Used by this process's pieces and by each worker's (`workers.serve`), which then
    builds again only the sheets another worker read.
    """

    def __init__(self, sheets: Sequence[Sheet], keep: int) -> None:
        self.sheets = sheets
        self.keep = max(1, keep)
        self.kept: OrderedDict[int, Sheet] = OrderedDict()
        self.builds = 0

    def __len__(self) -> int:
        return len(self.sheets)

    @overload
    def __getitem__(self, index: int) -> Sheet: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Sheet]: ...
    def __getitem__(self, index: int | slice) -> Sheet | Sequence[Sheet]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = index + len(self) if index < 0 else index
        sheet = self.kept.get(position)
        if sheet is not None:
            self.kept.move_to_end(position)
            return sheet
        sheet = self.sheets[position]
        self.builds += 1
        self.kept[position] = sheet
        if len(self.kept) > self.keep:
            self.kept.popitem(last=False)
        return sheet


def make_piece(plan: ClassPlan, doc: Document, sheets: Sequence[Sheet], piece: Piece) -> bytes:
    """One piece as PDF bytes: its students' sheets (built here when ``sheets`` builds them when
    read), their Typst source and the compile. What a worker process runs, and this process with
    one job: the same function, so the same bytes. Every piece is tagged: a document of one piece
    is written as Typst makes it; the pieces of a longer one are joined with their tags."""
    chosen = [sheets[position] for position in range(piece.start, piece.stop)]
    source = doc.source(plan, chosen, piece.first_page, last=piece.stop == doc.positions(len(sheets)).stop)
    return compile_typst(source)


__all__ = ["Document", "DocumentKind", "Piece", "RecentSheets", "compile_typst", "make_piece"]
