"""PDF worksheets and keys: the Typst source of `attnquiz.engine.export.pdf.typst`, compiled by the `typst`
wheel.

Only the fonts inside the wheel are used (system fonts are ignored), so the bytes do not depend
on the machine, and the document sets no date, so they do not depend on the clock either: the
same seed gives the same PDF. Fonts are embedded (subset) by Typst.

A class is compiled in pieces of a few students, not as one document: Typst lays a whole document
out at once, so its memory (and its time, more than linearly) grows with the document; a piece's
does not grow with the class. The pieces are joined, in order, into the output file as they come
(`pdfjoin.PdfJoin`, which streams). The piece boundaries depend on the class alone and the join
takes the pieces in order, so the bytes are the same whatever ``jobs`` is.

The pieces are made by worker processes (`pdf_workers`): each is told only which bank, items, seed
and students a piece holds, and builds those students' variants, the Typst source and the PDF
itself, so every part of the work but the join runs on every CPU. (The `typst` wheel holds the GIL
while it compiles, so threads in one process take turns: measured, no faster than one.) With
``jobs`` 1 there is one worker: not for speed but for memory, since Typst keeps what it has laid
out for as long as its process lives (the wheel has no way to free it), and a worker is replaced
once its memory has grown, where this process, joining the whole class, would grow with it. An
export too small to be worth starting a process for, or one the workers could not rebuild (no
bank to load, sheets that are not the plan's), is made one piece after another in this process,
by the same function.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, BinaryIO

# Document, Piece, compile_typst, make_piece and default_jobs are re-exported: callers know them as this
# module's.
from attnquiz.engine.export.pdf.piece import Document as Document
from attnquiz.engine.export.pdf.piece import Piece as Piece
from attnquiz.engine.export.pdf.piece import RecentSheets
from attnquiz.engine.export.pdf.piece import compile_typst as compile_typst
from attnquiz.engine.export.pdf.piece import make_piece as make_piece
from attnquiz.engine.export.stopping import Terminated, terminated_as_exception
from attnquiz.engine.parallel import default_jobs as default_jobs
from attnquiz.engine.plan.class_plan import (
    ClassPlan,
    ExportError,
    KeyStyle,
    Paper,
    Progress,
    Sheet,
)

if TYPE_CHECKING:
    from attnquiz.engine.export.pdf.join import PdfJoin

PIECE_QUESTIONS = 24
"""Questions per piece of worksheets or full key: a whole bank is one student a piece, six
questions four students. Small pieces keep Typst's memory low and compile fastest; the join then
shares the fonts the pieces have in common."""
GRID_PIECE_STUDENTS = 20  # students per piece of a marking grid: a bounded table (its compile holds it whole)
BRIEF_PIECE_QUESTIONS = 240  # answers per piece of a brief key: a few pages of two columns
MIN_PIECES_PER_WORKER = 6
"""Worker processes are started only for exports of at least this many pieces per worker: starting
them (the fork server's interpreter with numpy, pydantic and Typst, then in each worker the bank
and Typst's first compile) costs about as much as compiling six pieces of six questions for four
students (measured on two CPUs: 30 students, ten pieces, took 1.0 s of CPU in this process alone
and 1.45 s with two workers, and no less time), so a small export is made faster in this process alone."""
LONE_WORKER_MIN_PIECES = 24
"""With one job, a worker of its own is started only for an export of at least this many pieces.
It is there for memory, not speed: Typst keeps what it has laid out (roughly 9 MB a piece) in the
process that compiled it, which is replaced as that grows; this process, joining the whole class,
would grow with it (426 MiB for the whole bank at 300 students, against a budget of 400). A shorter
export leaves this process little to keep and is made faster here, without a process to start."""


def piece_students(plan: ClassPlan, style: KeyStyle | None = None) -> int:
    """Students per piece: of the worksheets (``style`` None) or of a key in that style."""
    questions = max(1, len(plan.items))
    if style == "grid":
        return GRID_PIECE_STUDENTS
    if style == "brief":
        return max(1, BRIEF_PIECE_QUESTIONS // questions)
    return max(1, PIECE_QUESTIONS // questions)


def documents(plan: ClassPlan, paper: Paper, key: KeyStyle | None) -> list[Document]:
    """The worksheets and (unless ``key`` is None) the key, as documents compiled in pieces."""
    docs = [Document("worksheets.pdf", "worksheets", paper, piece_students(plan))]
    if key is not None:
        docs.append(Document("key.pdf", "key", paper, piece_students(plan, key), style=key))
    return docs


def pieces(docs: Sequence[Document], class_size: int) -> Iterator[Piece]:
    """Every piece of ``docs``, in the order they are made: as the class is read, each piece as soon
    as its last student is reached (a student's worksheet piece and key piece come together)."""
    ranges = [doc.positions(class_size) for doc in docs]
    starts = [r.start for r in ranges]
    for position in range(class_size):
        for index, doc in enumerate(docs):
            wanted = ranges[index]
            if position not in wanted:
                continue
            if position + 1 - starts[index] == doc.per_piece or position == wanted[-1]:
                yield Piece(index, starts[index], position + 1)
                starts[index] = position + 1


def page_count(pdf: bytes) -> int:
    """The number of pages of a PDF."""
    from pypdf import PdfReader

    return len(PdfReader(io.BytesIO(pdf)).pages)


class PageGuess:
    """The first page of each piece of a continuous document (`Document.continuous`), guessed as the
    piece is made and known as it is joined.

    A piece's page numbers are set when it is compiled, and where it starts is known only once the
    pieces before it are laid out. So the first piece of such a document is made first, to learn
    how many pages a piece has (``pages``: the usual case, the same number of students and of
    questions), and a piece is numbered as late as possible: from the first page of the next
    piece to join, counting that many pages for each piece between. A piece made when every
    earlier one of its document is joined is numbered right; `_join` remakes, with the right
    number, one that guessed wrong (made ahead by a worker while an earlier one had more pages).
    """

    def __init__(self, docs: Sequence[Document], class_size: int, pages: dict[int, int]) -> None:
        self.docs = docs
        self.class_size = class_size
        self.pages = pages  # document number → pages of its first piece (documents of many pieces)
        # document number → (its pieces joined, the first page of the next)
        self.next: dict[int, tuple[int, int]] = {}

    def index(self, piece: Piece) -> int:
        """The piece's place among its document's pieces."""
        doc = self.docs[piece.document]
        return (piece.start - doc.positions(self.class_size).start) // doc.per_piece

    def numbered(self, piece: Piece) -> Piece:
        """``piece`` with its first page as well as it is known now."""
        pages = self.pages.get(piece.document)
        if pages is None:
            return piece
        joined, start = self.next.get(piece.document, (0, 1))
        return replace(piece, first_page=start + (self.index(piece) - joined) * pages)

    def start(self, piece: Piece) -> int:
        """The first page ``piece``, the next of its document to join, must have."""
        return self.next.get(piece.document, (0, 1))[1]

    def joined(self, piece: Piece, pages: int) -> None:
        """``piece`` is joined, with ``pages`` pages from `start`."""
        self.next[piece.document] = (self.index(piece) + 1, self.start(piece) + pages)


def _numbered(
    order: list[Piece], docs: Sequence[Document], make: Callable[[Piece], bytes], class_size: int
) -> tuple[PageGuess, dict[Piece, bytes]]:
    """The page numbering of the continuous documents, and the pieces made already to learn it:
    the first piece of each continuous document of more than one piece (see `PageGuess`)."""
    made: dict[Piece, bytes] = {}
    pages: dict[int, int] = {}
    for index, doc in enumerate(docs):
        if doc.continuous and doc.pieces(class_size) > 1:
            first = next(piece for piece in order if piece.document == index)
            made[first] = make(first)
            pages[index] = page_count(made[first])
    return PageGuess(docs, class_size, pages), made


def write_documents(
    plan: ClassPlan,
    docs: Sequence[Document],
    open_file: Callable[[str], AbstractContextManager[BinaryIO]],
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    sheets: Sequence[Sheet] | None = None,
    bank: str | None = None,
) -> None:
    """Make each document in pieces and write it, joined in order, to ``open_file(name)``.

    ``jobs``: pieces made at once, by as many worker processes (default: every CPU, see
    `default_jobs`); with 1, by one worker, which is replaced as Typst's memory grows, so that this
    process never compiles and its memory stays flat. Workers rebuild the class from a description,
    so they need ``bank``, the reference the plan's bank was loaded by
    (`attnquiz.engine.bank.finding.load(bank, plugins=True)`), and the plan's own sheets
    (`ClassSheets`); without them, or for an export of fewer than `MIN_PIECES_PER_WORKER` pieces,
    the pieces are made in this process. A file is opened at its first piece and closed after its
    last (a split class of a thousand students never has two thousand files open). A document of
    one piece is written exactly as Typst made it (tagged PDF); a longer one is joined, its tags
    merged.
    ``sheets`` defaults to the plan's. SIGTERM while this runs (in the main thread) stops it as
    Ctrl-C does: workers stopped, no file left, `Terminated` raised.
    """
    given = plan.sheets if sheets is None else sheets
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ExportError(f"jobs must be at least 1, not {jobs}")
    # Made in this process, a student's worksheet piece and key piece read the same sheets: kept for
    # as long as the pieces that read them are being made, each sheet is built once (issue 28).
    chosen: Sequence[Sheet] = RecentSheets(given, sum(doc.per_piece for doc in docs))
    order = list(pieces(docs, len(chosen)))
    total = len(order)
    workers = min(jobs, total // MIN_PIECES_PER_WORKER)
    if workers == 1 and total < LONE_WORKER_MIN_PIECES:
        workers = 0  # a lone worker is for memory: a short export is made here, and faster
    if progress is not None:
        progress(0, total)
    with _Outputs(docs, open_file, len(chosen)) as outputs, terminated_as_exception():
        recipe = None
        # One worker too (jobs 1, a long export): Typst's memory then grows in a process that is
        # replaced, not here.
        if workers >= 1 and bank is not None and given is plan.sheets:
            from attnquiz.engine.export.pdf import (
                workers as pdf_workers,  # the process pool, only for an export worth a process
            )

            recipe = pdf_workers.recipe(plan, bank)

        def here(piece: Piece) -> bytes:
            return make_piece(plan, docs[piece.document], chosen, piece)

        if recipe is not None:
            # Every piece is made by a worker, the first ones and the remade ones too: a compile
            # leaves this process holding Typst's memory (about 100 MB for a piece of the grid).
            with pdf_workers.Workers(recipe, docs, workers) as pool:
                guess, made_first = _numbered(order, docs, pool.make, len(chosen))
                rest = [piece for piece in order if piece not in made_first]
                made = _merged(order, made_first, pool.made(rest, guess.numbered))
                _join(order, made, outputs, progress, pool.make, guess)
        else:
            guess, made_first = _numbered(order, docs, here, len(chosen))
            _join(order, _made_here(order, made_first, guess, here), outputs, progress, here, guess)


def _merged(
    order: Sequence[Piece], ready: dict[Piece, bytes], made: Iterator[tuple[Piece, bytes]]
) -> Iterator[tuple[Piece, bytes]]:
    """Each piece of ``order`` as made, with its PDF: made already (``ready``), or the next that
    ``made`` yields."""
    for piece in order:
        yield (piece, ready.pop(piece)) if piece in ready else next(made)


def _made_here(
    order: Sequence[Piece], ready: dict[Piece, bytes], guess: PageGuess, make: Callable[[Piece], bytes]
) -> Iterator[tuple[Piece, bytes]]:
    """Each piece of ``order`` made in this process when the join wants it (so numbered right)."""
    for piece in order:
        if piece in ready:
            yield piece, ready.pop(piece)
        else:
            numbered = guess.numbered(piece)
            yield numbered, make(numbered)


def _join(
    order: Sequence[Piece],
    made: Iterator[tuple[Piece, bytes]],
    outputs: _Outputs,
    progress: Progress | None,
    remake: Callable[[Piece], bytes],
    guess: PageGuess,
) -> None:
    """Join each piece of ``order`` (``made``: as it was made, and its PDF) into its output; a piece
    of a continuous document made with the wrong first page is made again (``remake``)."""
    for done, piece in enumerate(order, 1):
        made_as, pdf = next(made)
        doc = outputs.docs[piece.document]
        if doc.continuous:
            start = guess.start(piece)
            if made_as.first_page != start:  # an earlier piece had more or fewer pages than guessed
                pdf = remake(replace(piece, first_page=start))
            guess.joined(piece, page_count(pdf))
        outputs.add(piece.document, pdf)
        del pdf  # not held while the next piece is awaited
        if progress is not None:
            progress(done, len(order))


class _Outputs:
    """Each document's output file, opened at its first piece, joined in order, closed after its last."""

    def __init__(
        self,
        docs: Sequence[Document],
        open_file: Callable[[str], AbstractContextManager[BinaryIO]],
        students: int,
    ) -> None:
        self.docs = docs
        self.open_file = open_file
        self.left = [doc.pieces(students) for doc in docs]
        self.open: dict[int, tuple[AbstractContextManager[BinaryIO], BinaryIO, PdfJoin | None]] = {}

    def __enter__(self) -> _Outputs:
        return self

    def add(self, index: int, pdf: bytes) -> None:
        from attnquiz.engine.export.pdf.join import PdfJoin

        if index not in self.open:
            context = self.open_file(self.docs[index].name)
            handle = context.__enter__()
            self.open[index] = (context, handle, PdfJoin(handle) if self.left[index] > 1 else None)
        context, handle, join = self.open[index]
        if join is None:
            handle.write(pdf)
        else:
            join.add(pdf)
        self.left[index] -= 1
        if self.left[index] == 0:
            del self.open[index]
            try:
                if join is not None:
                    join.finish()
            except BaseException as exc:
                context.__exit__(type(exc), exc, exc.__traceback__)
                raise
            context.__exit__(None, None, None)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        # Only files left open by an error remain here: close them, passing the error on.
        for context, _, _ in reversed(list(self.open.values())):
            context.__exit__(kind, error, None)
        self.open.clear()


def _one(
    plan: ClassPlan, doc: Document, sheets: Sequence[Sheet], jobs: int | None, bank: str | None
) -> bytes:
    buffer = io.BytesIO()

    class _Keep(AbstractContextManager[BinaryIO]):
        def __enter__(self) -> BinaryIO:
            return buffer

        def __exit__(self, *args: object) -> None:
            return None

    write_documents(plan, [doc], lambda name: _Keep(), jobs=jobs, sheets=sheets, bank=bank)
    return buffer.getvalue()


def worksheets(
    plan: ClassPlan,
    sheets: Sequence[Sheet],
    paper: Paper = "a4",
    *,
    jobs: int | None = None,
    bank: str | None = None,
) -> bytes:
    """The worksheets of ``sheets`` as one PDF (made in pieces and joined, as an export is; see
    `write_documents` for ``jobs`` and ``bank``)."""
    return _one(plan, documents(plan, paper, None)[0], sheets, jobs, bank)


def key(
    plan: ClassPlan,
    sheets: Sequence[Sheet],
    paper: Paper = "a4",
    style: KeyStyle = "full",
    *,
    jobs: int | None = None,
    bank: str | None = None,
) -> bytes:
    """The answer key of ``sheets`` as one PDF (made in pieces and joined, as an export is; see
    `write_documents` for ``jobs`` and ``bank``)."""
    return _one(plan, documents(plan, paper, style)[1], sheets, jobs, bank)


__all__ = [
    "Document",
    "PageGuess",
    "Piece",
    "Terminated",
    "compile_typst",
    "default_jobs",
    "documents",
    "key",
    "make_piece",
    "page_count",
    "piece_students",
    "pieces",
    "terminated_as_exception",
    "worksheets",
    "write_documents",
]
