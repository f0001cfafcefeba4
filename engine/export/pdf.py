"""PDF worksheets and keys: the Typst source of `attnquiz.engine.export.typst`, compiled by the `typst` wheel.

Only the fonts inside the wheel are used (system fonts are ignored), so the bytes do not depend
on the machine, and the document sets no date, so they do not depend on the clock either: the
same seed gives the same PDF. Fonts are embedded (subset) by Typst.

A class is compiled in pieces of a few students, not as one document: Typst lays a whole document
out at once, so its memory (and its time, more than linearly) grows with the document; a piece's
does not grow with the class. The pieces are handed to ``jobs`` compiler threads while this thread
builds the next pieces' sources and joins the finished ones, in order, into the output file
(`pdfjoin.PdfJoin`, which streams). Only a bounded number of pieces is ever in flight. The piece
boundaries depend on the class alone and the join takes the pieces in order, so the bytes are the
same whatever ``jobs`` is.

Measured (typst 0.15.2): the `typst` wheel holds the GIL while it compiles, so the threads take
turns (CPU time equals wall time with one thread or two). Worker processes (spawned, each importing
only Typst) were tried: on 2 busy CPUs the whole bank × 30 students took 11.2 s against 6.9 s and
443 MiB for the process tree against 240, since more than half the work (the variants, the Typst
source, the join) stays in this process and each worker is a Typst of about 100 MB. Threads stay.
"""

from __future__ import annotations

import io
import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from attnquiz.engine.export import typst as typst_source
from attnquiz.engine.export.worksheet import ClassPlan, ExportError, KeyStyle, Paper, Progress, Sheet

if TYPE_CHECKING:
    from attnquiz.engine.export.pdfjoin import PdfJoin

PIECE_QUESTIONS = 24
"""Questions per piece of worksheets or full key: a whole bank is one student a piece, six
questions four students. Small pieces keep Typst's memory low and compile fastest; the join then
shares the fonts the pieces have in common."""
GRID_PIECE_STUDENTS = 20  # students per piece of a marking grid: a bounded table (its compile holds it whole)
BRIEF_PIECE_QUESTIONS = 240  # answers per piece of a brief key: a few pages of two columns


def compile_typst(source: str) -> bytes:
    """Compile Typst source to PDF bytes; a Typst error or warning is a bug here, so it raises."""
    import typst  # imported here: loading the compiler is not free, and most commands never need it

    try:
        pdf, warnings = typst.compile_with_warnings(source.encode("utf-8"), ignore_system_fonts=True)
    except typst.TypstError as exc:
        raise ExportError(f"typst could not compile the document: {exc.message} {exc.diagnostic}") from exc
    if warnings:
        messages = "; ".join(w.message for w in warnings)
        raise ExportError(f"typst warned while compiling the document: {messages}")
    if not isinstance(pdf, bytes):
        raise ExportError("typst returned no PDF")
    return pdf


def default_jobs() -> int:
    """Compiles at once when not told: every CPU this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no affinity
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Document:
    """One PDF file of an export: its name, the source of some of its sheets, students per piece,
    and which students it holds (``students``: positions in the class; all of them when None)."""

    name: str
    source: Callable[[Sequence[Sheet]], str]
    per_piece: int
    students: range | None = None

    def positions(self, class_size: int) -> range:
        return range(class_size) if self.students is None else self.students

    def pieces(self, class_size: int) -> int:
        return -(-len(self.positions(class_size)) // self.per_piece)


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
    docs = [
        Document(
            "worksheets.pdf",
            lambda sheets: typst_source.worksheets(plan, sheets, paper),
            piece_students(plan),
        )
    ]
    if key is not None:
        style: KeyStyle = key
        docs.append(
            Document(
                "key.pdf",
                lambda sheets: typst_source.key(plan, sheets, paper, style),
                piece_students(plan, style),
            )
        )
    return docs


def write_documents(
    plan: ClassPlan,
    docs: Sequence[Document],
    open_file: Callable[[str], AbstractContextManager[BinaryIO]],
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    sheets: Sequence[Sheet] | None = None,
) -> None:
    """Compile each document in pieces on ``jobs`` threads and write it, joined, to ``open_file(name)``.

    Every sheet is built once, in order, and handed to the piece of each document it belongs to.
    A file is opened at its first piece and closed after its last (a split class of a thousand
    students never has two thousand files open). A document of one piece is written exactly as
    Typst made it (tagged PDF); a longer one is joined. ``sheets`` defaults to the plan's.
    """
    chosen = plan.sheets if sheets is None else sheets
    jobs = max(1, jobs or default_jobs())
    students = len(chosen)
    total = sum(doc.pieces(students) for doc in docs)
    done = 0
    if progress is not None:
        progress(0, total)
    with _Outputs(docs, open_file, students) as outputs, ThreadPoolExecutor(max_workers=jobs) as pool:
        in_flight: deque[tuple[int, Future[bytes]]] = deque()
        pending: list[list[Sheet]] = [[] for _ in docs]

        def settle(limit: int) -> None:
            nonlocal done
            while len(in_flight) > limit:
                index, future = in_flight.popleft()
                outputs.add(index, future.result())
                done += 1
                if progress is not None:
                    progress(done, total)

        ranges = [doc.positions(students) for doc in docs]
        for position in range(students):
            sheet = chosen[position]
            for index, doc in enumerate(docs):
                wanted = ranges[index]
                if position not in wanted:
                    continue
                pending[index].append(sheet)
                if len(pending[index]) == doc.per_piece or position == wanted[-1]:
                    source = doc.source(pending[index])
                    pending[index] = []
                    in_flight.append((index, pool.submit(compile_typst, source)))
                    # A few pieces queued beyond the running ones keep every thread busy; more would
                    # only hold their PDFs in memory.
                    settle(2 * jobs)
        settle(0)


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
        from attnquiz.engine.export.pdfjoin import PdfJoin

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


def _one(plan: ClassPlan, doc: Document, sheets: Sequence[Sheet], jobs: int | None) -> bytes:
    buffer = io.BytesIO()

    class _Keep(AbstractContextManager[BinaryIO]):
        def __enter__(self) -> BinaryIO:
            return buffer

        def __exit__(self, *args: object) -> None:
            return None

    write_documents(plan, [doc], lambda name: _Keep(), jobs=jobs, sheets=sheets)
    return buffer.getvalue()


def worksheets(
    plan: ClassPlan, sheets: Sequence[Sheet], paper: Paper = "a4", *, jobs: int | None = None
) -> bytes:
    """The worksheets of ``sheets`` as one PDF (compiled in pieces and joined, as an export is)."""
    return _one(plan, documents(plan, paper, None)[0], sheets, jobs)


def key(
    plan: ClassPlan,
    sheets: Sequence[Sheet],
    paper: Paper = "a4",
    style: KeyStyle = "full",
    *,
    jobs: int | None = None,
) -> bytes:
    """The answer key of ``sheets`` as one PDF (compiled in pieces and joined, as an export is)."""
    return _one(plan, documents(plan, paper, style)[1], sheets, jobs)


__all__ = [
    "Document",
    "compile_typst",
    "default_jobs",
    "documents",
    "key",
    "piece_students",
    "worksheets",
    "write_documents",
]
