"""Class-scale PDFs: compiled in pieces, joined as a stream, the same bytes whatever the number of
jobs (worker processes: see test_pdf_workers); the marking grid holds every student's every answer,
read back from the PDF."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfReader
from pypdf.generic import DictionaryObject, StreamObject

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export import files
from attnquiz.engine.export.pdf import typst
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.export.pdf.join import PdfJoin
from attnquiz.engine.export.pdf.typst import GRID_COLUMNS
from attnquiz.engine.export.pdf.worksheets import compile_typst
from attnquiz.engine.plan.class_plan import ClassPlan, KeyStyle, plan_class
from attnquiz.engine.variant import Question

from .test_pdf_keys import _squeezed, typeset_text, visible_text


def _class(students: int, count: int | None = 6) -> ClassPlan:
    return plan_class(banks.load("week1"), students=students, master_seed=2026, count=count)


def test_the_joined_file_has_every_page_of_every_piece_in_order_and_shares_the_fonts() -> None:
    plan = _class(5, count=None)  # a whole bank: one student a piece
    sheets = pdf.documents(plan, "a4", None)[0]
    pieces = [compile_typst(sheets.source(plan, [sheet])) for sheet in plan.sheets]
    buffer = io.BytesIO()
    join = PdfJoin(buffer)
    for piece in pieces:
        join.add(piece)
    join.finish()
    joined = PdfReader(io.BytesIO(buffer.getvalue()), strict=True)
    expected = [page.extract_text() for piece in pieces for page in PdfReader(io.BytesIO(piece)).pages]
    assert [page.extract_text() for page in joined.pages] == expected
    assert joined.metadata is not None
    assert joined.metadata.title == f"{plan.title}: worksheets"
    # Objects that are byte for byte the same in several pieces (fonts, their descriptors and
    # encodings) are written once: fewer objects, and fewer bytes, than the pieces side by side.
    # (Structure elements, each with one place in the tree, are never shared: not counted.)
    objects = [_count_objects(PdfReader(io.BytesIO(piece))) for piece in pieces]
    assert _count_objects(joined) < 0.8 * sum(objects)
    # The fonts are shared; the tags (marked content, structure elements), about half of each
    # tagged piece, are every piece's own, packed into compressed object streams: the joined file
    # is under half the pieces side by side (0.44 when measured).
    assert len(buffer.getvalue()) < 0.6 * sum(len(p) for p in pieces)
    assert buffer.getvalue() == pdf.worksheets(plan, plan.sheets)  # what the export writes
    # Every object that is not a stream is in an object stream; the streams are at file offsets.
    packed = set(joined.xref_objStm)
    direct = set(joined.xref.get(0, {}))
    assert packed
    assert not packed & direct
    for number in direct:
        assert isinstance(joined.get_object(number), StreamObject), number
    for number in list(packed)[::50]:
        assert not isinstance(joined.get_object(number), StreamObject), number


def _count_objects(reader: PdfReader) -> int:
    """Objects other than structure elements (every one of those is a piece's own) and the object
    streams and cross-reference stream that only hold the others."""
    numbers = set(reader.xref.get(0, {})) | set(reader.xref_objStm)
    kinds = [reader.get_object(number) for number in numbers]
    containers = ("/StructElem", "/ObjStm", "/XRef")
    return sum(1 for o in kinds if not (isinstance(o, DictionaryObject) and o.get("/Type") in containers))


def test_links_between_pages_of_a_piece_survive_the_join() -> None:
    """A page that refers to another page (a link), and an annotation that refers back to its page,
    are copied once each, not duplicated or lost."""
    source = (
        '#set document(title: "t", date: none)\n#set text(font: "New Computer Modern")\n'
        "= Start <start>\nSee #link(<end>)[the end].\n#pagebreak()\n"
        "= End <end>\nBack to #link(<start>)[start].\n"
    )
    piece = compile_typst(source)
    buffer = io.BytesIO()
    join = PdfJoin(buffer)
    join.add(piece)
    join.add(piece)
    join.finish()
    reader = PdfReader(io.BytesIO(buffer.getvalue()), strict=True)
    assert len(reader.pages) == 4
    numbers = [page.indirect_reference.idnum for page in reader.pages if page.indirect_reference]
    assert len(set(numbers)) == 4
    for page in reader.pages:
        for annotation in page.get("/Annots", []):
            destination = annotation.get_object().get("/Dest") or annotation.get_object()["/A"].get("/D")
            if isinstance(destination, list):
                assert destination[0].idnum in numbers  # points at a page of the joined file


def _grid_rows(text: str) -> str:
    return _squeezed(text)


def _grid_answer(question: Question) -> str:
    """What the grid's cell shows: the answer, or where a concept question's key points are."""
    return typst.GRID_BY_HAND if isinstance(question.answer, ExplainAnswer) else typeset_text(question.answer)


def test_the_marking_grid_has_every_students_every_answer_in_order() -> None:
    """Read from the visible PDF text: each student's row, in each table of columns, is their number,
    their variant code and their answers to those questions, in order."""
    plan = plan_class(banks.load("week1"), students=45, master_seed=2026)  # two pieces, 7 tables each
    assert len(plan.items) > GRID_COLUMNS
    document = pdf.key(plan, plan.sheets, style="grid", jobs=2)
    text = _squeezed(visible_text(document))
    missing = []
    at = 0
    for first in range(0, len(plan.sheets), pdf.GRID_PIECE_STUDENTS):
        block = plan.sheets[first : first + pdf.GRID_PIECE_STUDENTS]
        for start in range(0, len(plan.items), GRID_COLUMNS):
            columns = range(start, min(start + GRID_COLUMNS, len(plan.items)))
            for sheet in block:
                answers = "".join(_squeezed(_grid_answer(sheet.questions[n])) for n in columns)
                row = f"{sheet.student}{sheet.code}{answers}"
                found = text.find(row, at)
                if found < 0:
                    missing.append(f"student {sheet.student}, questions {columns[0] + 1}-{columns[-1] + 1}")
                else:
                    at = found + len(row)
    assert missing == []


def test_the_grid_names_every_question_and_the_seed() -> None:
    plan = _class(3, count=10)
    text = _squeezed(visible_text(pdf.key(plan, plan.sheets, style="grid")))
    assert _squeezed("marking grid (master seed 2026)") in text
    for number, item in enumerate(plan.items, 1):
        assert re.search(rf"{number}{re.escape(item)}", text), item


@pytest.mark.parametrize("split", [False, True])
def test_no_key_and_split_exports_write_the_files_named(tmp_path: Path, split: bool) -> None:
    plan = _class(3)
    written = files.write(plan, "pdf", tmp_path, key=None, split=split, jobs=2)
    names = sorted(p.name for p in written.files)
    assert names == (
        ["worksheet-01.pdf", "worksheet-02.pdf", "worksheet-03.pdf"] if split else ["worksheets.pdf"]
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    for path in written.files:
        assert len(PdfReader(path).pages) >= 1


def _page_numbers(document: bytes) -> list[int]:
    """The number each page's footer prints ("page N", the last words of the page)."""
    numbers = []
    for page in PdfReader(io.BytesIO(document)).pages:
        found = re.findall(r"page\s*(\d+)", page.extract_text())
        numbers.append(int(found[-1]) if found else -1)
    return numbers


@pytest.mark.parametrize(("style", "students", "count"), [("grid", 41, 16), ("brief", 12, 60)])
def test_a_key_made_in_pieces_numbers_its_pages_through(style: KeyStyle, students: int, count: int) -> None:
    """The grid and the brief key are one table for the class: their pages are numbered 1, 2, 3, ...
    across the pieces they are compiled in (not 1, 2, 1 every 20 students), whatever the jobs."""
    plan = plan_class(banks.load("week1"), students=students, master_seed=2026, count=count)
    docs = pdf.documents(plan, "a4", style)
    assert docs[1].pieces(students) >= 3
    document = pdf.key(plan, plan.sheets, style=style, jobs=1)
    assert _page_numbers(document) == list(range(1, pdf.page_count(document) + 1))
    assert pdf.key(plan, plan.sheets, style=style, jobs=2, bank="week1") == document


def test_a_piece_that_guessed_its_first_page_wrong_is_remade() -> None:
    """Pieces after the first are numbered as if each had the first one's pages; a piece after one
    with more pages (a longer last answer) is made again with the right number."""
    plan = plan_class(banks.load("week1"), students=41, master_seed=2026, count=8)
    doc = pdf.documents(plan, "a4", "grid")[1]
    made: list[pdf.Piece] = []

    def make(piece: pdf.Piece) -> bytes:
        made.append(piece)
        return pdf.make_piece(plan, doc, plan.sheets, piece)

    order = list(pdf.pieces([doc], 41))
    guess, first = pdf._numbered(order, [doc], make, 41)
    assert [guess.numbered(p).first_page for p in order][:2] == [1, 1 + pdf.page_count(first[order[0]])]
    wrong = [pdf.Piece(0, p.start, p.stop, first_page=guess.numbered(p).first_page + 5) for p in order]

    class Into:
        def __init__(self) -> None:
            self.buffer = io.BytesIO()

        def __enter__(self) -> io.BytesIO:
            return self.buffer

        def __exit__(self, *args: object) -> None:
            return None

    into = Into()
    with pdf._Outputs([doc], lambda name: into, 41) as outputs:
        pdf._join(order, ((p, make(p)) for p in wrong), outputs, None, make, guess)
    numbers = _page_numbers(into.buffer.getvalue())
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(made) == 1 + 2 * len(
        wrong
    )  # the first to learn its pages; each wrong guess, then the right one


def test_a_grid_in_pieces_lists_the_key_points_once_at_its_end() -> None:
    """The concept questions' key points are the same for every student: after the last student,
    not after every 20 (100 students once printed them five times, a page each)."""
    plan = plan_class(banks.load("week1"), students=41, master_seed=2026, per_topic=1)
    assert any(isinstance(q.answer, ExplainAnswer) for q in plan.sheets[0].questions)
    document = pdf.key(plan, plan.sheets, style="grid", jobs=1)
    pages = [page.extract_text() for page in PdfReader(io.BytesIO(document)).pages]
    listed = [n for n, text in enumerate(pages) if "Concept questions: key points" in text]
    assert listed == [len(pages) - 1]


@pytest.mark.skipif(shutil.which("pdfinfo") is None, reason="poppler-utils is not installed")
def test_poppler_reads_the_joined_file_with_its_object_streams(tmp_path: Path) -> None:
    """Another PDF reader than the one that wrote it: poppler finds every page, the tags and the
    text through the cross-reference stream and the object streams, without a complaint."""
    source = '#set document(title: "Joined", date: none)\n#set text(font: "New Computer Modern")\n' + "".join(
        f"= Part {n}\nThe weights of row {n} sum to one.\n#pagebreak()\n" for n in range(3)
    )
    piece = compile_typst(source)
    out = tmp_path / "joined.pdf"
    with out.open("wb") as stream:
        join = PdfJoin(stream)
        for _ in range(3):
            join.add(piece)
        join.finish()
    info = subprocess.run(["pdfinfo", str(out)], capture_output=True, text=True, check=True, timeout=120)
    assert info.stderr == ""
    fields = dict(line.split(":", 1) for line in info.stdout.splitlines() if ":" in line)
    assert fields["Pages"].strip() == str(3 * len(PdfReader(io.BytesIO(piece)).pages))
    assert fields["Tagged"].strip() == "yes"
    assert fields["Title"].strip() == "Joined"
    text = subprocess.run(
        ["pdftotext", str(out), "-"], capture_output=True, text=True, check=True, timeout=120
    )
    assert text.stderr == ""
    assert text.stdout.count("The weights of row 2 sum to one.") == 3


def test_with_workers_this_process_compiles_no_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    """With workers, every piece is theirs to make: the first piece of the grid (to learn its pages)
    and any piece made again with another first page too. A compile leaves the process that ran it
    holding Typst's memory, which the main process, joining the whole class, must not."""
    plan = plan_class(banks.load("week1", plugins=True), students=41, master_seed=2026, count=16)
    document = pdf.key(plan, plan.sheets, style="grid", jobs=1)

    def refused(*args: object) -> bytes:
        raise AssertionError("a piece was compiled in the main process")

    monkeypatch.setattr(pdf, "make_piece", refused)
    monkeypatch.setattr(pdf, "MIN_PIECES_PER_WORKER", 1)  # two workers for the grid's three pieces
    assert pdf.key(plan, plan.sheets, style="grid", jobs=2, bank="week1") == document
