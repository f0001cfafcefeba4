"""quiz scan's bookkeeping and bad input: pages missing, scanned twice, unreadable or foreign; files
that are not scans; a layout file that is not one. Nothing is guessed and nothing raises a traceback."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

cv2 = pytest.importorskip("cv2")
pytest.importorskip("pypdfium2")

import numpy as np  # noqa: E402

from attnquiz.engine import scan  # noqa: E402
from tests.engine import scan_pens as pens  # noqa: E402
from tests.engine.scan_class import Sheets  # noqa: E402


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sheets, Path]:
    from attnquiz.engine import banks
    from attnquiz.engine.export.files import write
    from attnquiz.engine.export.worksheet import plan_class

    out = tmp_path_factory.mktemp("sheets") / "out"
    plan = plan_class(banks.load("week1"), students=2, master_seed=8, per_topic=1)
    write(plan, "pdf", out, key=None, jobs=1, answer_sheet=True)
    return Sheets.load(out), out


def _scan(sheets: Sheets, page: int, marks: dict[str, str], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    image = sheets.fill(page, marks, 200, rng, pens.PEN)
    data = pens.scan(image, pens.Scanner(200, angle=1.5, noise=3), rng)
    return np.asarray(cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE))


def test_missing_and_duplicate_pages_go_to_the_review(sheets: tuple[Sheets, Path]) -> None:
    made, _ = sheets
    layout = scan.layout_from_json(made.layout)
    key = made.layout["key"]["1"]
    column, ids = next(iter(key.items()))
    first = [b for b in ids if made.bubbles[b]["page"] == 1]
    page1 = scan.read_image(_scan(made, 1, dict.fromkeys(first, "full")), layout, "a.png", 0)
    again = scan.read_image(_scan(made, 1, dict.fromkeys(first, "full"), seed=1), layout, "b.png", 0)
    other = scan.read_image(_scan(made, 1, {}), layout, "c.png", 0)  # the same page, blank this time
    result = scan.assemble(layout, [page1, again])
    kinds = [(item.kind, item.value) for item in result.review]
    assert ("duplicate", "same") in kinds  # read the same twice: noted, settled
    assert any(kind == "missing" for kind, _ in kinds)  # page 2 of student 1 never came
    assert result.unscanned == [2]
    row = result.rows[1]
    assert row[column]
    assert not row[column].startswith(scan.REVIEW_PREFIX)
    page2_columns = {f.column for spec in [layout.pages[1, 2]] for f in spec.fields}
    assert all(row[c].startswith(scan.REVIEW_PREFIX) for c in page2_columns if c in row)
    differing = scan.assemble(layout, [page1, other])
    assert differing.rows[1][column].startswith(scan.REVIEW_PREFIX)  # two scans that disagree: not guessed


def test_an_unreadable_qr_code_is_asked_about(sheets: tuple[Sheets, Path]) -> None:
    made, _ = sheets
    layout = scan.layout_from_json(made.layout)
    page = made.page_image(1, 200).copy()
    qr = made.layout["pages"][0]["qr"]
    f = 200 / 72
    page[
        int(qr["y"] * f) : int((qr["y"] + qr["size"]) * f), int(qr["x"] * f) : int((qr["x"] + qr["size"]) * f)
    ] = 255
    read = scan.read_image(page, layout, "x.png", 0)
    assert "QR code could not be read" in read.problem
    assert read.image[:4] == b"\x89PNG"
    result = scan.assemble(layout, [read])
    assert result.review[0].kind == "page"
    assert result.crops


@pytest.mark.parametrize(
    "image",
    [
        np.full((20, 20), 255, np.uint8),
        np.zeros((600, 400), np.uint8),
        np.random.default_rng(1).integers(0, 256, (900, 640), dtype=np.uint8),
    ],
)
def test_a_page_that_is_not_an_answer_sheet(sheets: tuple[Sheets, Path], image: np.ndarray) -> None:
    layout = scan.layout_from_json(sheets[0].layout)
    read = scan.read_image(image, layout, "x.png", 0)
    assert read.problem
    assert read.student is None


def test_bad_files(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    _, out = sheets
    layout = scan.load_layout(out / "answer-sheets.json")
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(scan.ScanError, match="PDF, PNG or JPEG"):
        scan.pages_of([tmp_path / "x.txt"])
    (tmp_path / "x.pdf").write_bytes(b"%PDF-1.4 garbage")
    with pytest.raises(scan.ScanError, match="not a readable PDF"):
        scan.pages_of([tmp_path / "x.pdf"])
    (tmp_path / "x.png").write_bytes(b"not an image")
    assert "not a readable image" in scan.read_page(tmp_path / "x.png", 0, layout).problem
    (tmp_path / "layout.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(scan.ScanError, match=r"not an answer-sheets\.json"):
        scan.load_layout(tmp_path / "layout.json")
    (tmp_path / "broken.json").write_text('{"format": "quiz-answer-sheets"}')
    with pytest.raises(scan.ScanError, match="damaged"):
        scan.load_layout(tmp_path / "broken.json")


def test_a_page_of_another_export_is_refused(sheets: tuple[Sheets, Path]) -> None:
    made, _ = sheets
    foreign = dict(made.layout, export="0000000000")
    read = scan.read_image(_scan(made, 1, {}), scan.layout_from_json(foreign), "x.png", 0)
    assert "another export" in read.problem


def test_the_printed_pdf_itself_reads_blank(sheets: tuple[Sheets, Path]) -> None:
    _, out = sheets
    layout = scan.load_layout(out / "answer-sheets.json")
    pages = scan.read_scans([out / "answer-sheets.pdf"], layout, jobs=1)
    result = scan.assemble(layout, pages)
    assert not result.open_items
    assert sorted(result.rows) == [1, 2]
    assert all(
        cell == "" for row in result.rows.values() for c, cell in row.items() if c not in ("student", "code")
    )


def test_fix_names_a_page_whose_qr_code_was_unreadable(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    import subprocess
    import sys

    made, out = sheets
    key = made.layout["key"]["1"]
    marks = {b: "full" for ids in key.values() for b in ids}
    rng = np.random.default_rng(3)
    page = made.fill(1, marks, 200, rng, pens.PEN)
    qr = made.layout["pages"][0]["qr"]
    f = 200 / 72
    page[
        int(qr["y"] * f) : int((qr["y"] + qr["size"]) * f), int(qr["x"] * f) : int((qr["x"] + qr["size"]) * f)
    ] = 255
    (tmp_path / "p1.png").write_bytes(pens.scan(page, pens.Scanner(200, angle=181.0, noise=2), rng))
    (tmp_path / "p2.png").write_bytes(
        pens.scan(made.fill(2, marks, 200, rng, pens.PEN), pens.Scanner(200), rng)
    )

    def quiz(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "attnquiz", *args], cwd=tmp_path, capture_output=True, text=True,
            input=stdin, timeout=600, check=False,
        )  # fmt: skip

    sheets_file = str(out / "answer-sheets.json")
    done = quiz("scan", "p1.png", "p2.png", "--sheets", sheets_file, "-o", "answers.csv", "-j", "1")
    assert done.returncode == 1
    assert "QR code could not be read" in (tmp_path / "answers.review.json").read_text()
    done = quiz("scan", "--fix", "-o", "answers.csv", stdin="one\n1 1\n")
    assert "give the student number" in done.stdout  # a bad answer is asked again, not taken
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((tmp_path / "answers.csv").read_text()))}
    first_page = {made.bubbles[i]["page"] for ids in key.values() for i in ids}
    assert 1 in first_page
    columns = {f["column"] for f in made.layout["fields"] if f["page"] == 1 and f["kind"] == "number"}
    assert columns
    assert all(rows["1"][c] and not rows["1"][c].startswith("?review") for c in columns)
    # a new scan would lose what --fix settled: refused without --overwrite
    done = quiz("scan", "p2.png", "--sheets", sheets_file, "-o", "answers.csv", "-j", "1")
    assert done.returncode == 1
    assert "--overwrite" in done.stderr


def test_huge_pages_are_not_rendered_in_gigabytes(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument.new()
    document.new_page(14_400, 14_400)  # 200 inches square: 800 MB at 200 dpi
    document.save(str(tmp_path / "huge.pdf"))
    document.close()
    image = scan.load_page(tmp_path / "huge.pdf", 0)
    assert image.size <= scan.MAX_PIXELS
    read = scan.read_page(tmp_path / "huge.pdf", 0, scan.layout_from_json(sheets[0].layout))
    assert "corner squares" in read.problem


def _number_field(made: Sheets, columns: int = 2) -> dict[str, Any]:
    """A number field of student 1 with at least ``columns`` whole-part digit columns."""
    return next(
        f
        for f in made.layout["fields"]
        if f["kind"] == "number" and f["student"] == 1 and f["grid"]["integers"] >= columns
    )


def _read_number(
    made: Sheets, field: dict[str, Any], marks: dict[str, str], written: dict[str, str], **kw: Any
) -> scan.PageRead:
    rng = np.random.default_rng(kw.get("seed", 5))
    pen = kw.get("pen", pens.PEN)
    image = made.fill(field["page"], marks, kw.get("dpi", 200), rng, pen, written=written)
    data = pens.scan(image, pens.Scanner(kw.get("dpi", 200), angle=-1.2, noise=3, jpeg=80), rng)
    if kw.get("cut"):
        data = pens.bilevel(data, kw["cut"])
    gray = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
    return scan.read_image(gray, scan.layout_from_json(made.layout), "p.png", 0)


@pytest.mark.parametrize("seed", range(3))
def test_a_digit_written_but_not_bubbled_is_never_dropped(sheets: tuple[Sheets, Path], seed: int) -> None:
    made, _ = sheets
    field = _number_field(made)
    fid, last = field["id"], field["grid"]["integers"] - 1
    # "12" written, only the 2 bubbled: the bubbles alone spell 2, a valid number
    marks = {f"{fid}.i{last}.2": "full"}
    written = {f"{fid}.i{last - 1}": "1", f"{fid}.i{last}": "2"}
    read = _read_number(made, field, marks, written, seed=seed)
    (flag,) = [f for f in read.flags if f.field == fid]
    assert "written" in flag.reason, flag.reason
    assert "no bubble" in flag.reason, flag.reason
    assert flag.read == "2"  # what the bubbles spell, shown beside the crop
    assert flag.crop[:4] == b"\x89PNG"
    assert field["column"] not in read.values or field["entry"] not in read.values[field["column"]]
    # "12" bubbled with nothing written above the 1
    marks = {f"{fid}.i{last - 1}.1": "full", f"{fid}.i{last}.2": "full"}
    read = _read_number(made, field, marks, {f"{fid}.i{last}": "2"}, seed=seed)
    (flag,) = [f for f in read.flags if f.field == fid]
    assert "no digit written above it" in flag.reason, flag.reason
    # both written and bubbled: read
    read = _read_number(made, field, marks, {f"{fid}.i{last - 1}": "1", f"{fid}.i{last}": "2"}, seed=seed)
    assert not [f for f in read.flags if f.field == fid]
    assert read.values[field["column"]][field["entry"]] == "12"


def test_a_bilevel_page_is_said_and_its_broken_pencil_doubted(sheets: tuple[Sheets, Path]) -> None:
    made, _ = sheets
    field = _number_field(made)
    fid, last = field["id"], field["grid"]["integers"] - 1
    marks = {f"{fid}.i{last - 1}.2": "light", f"{fid}.i{last}.4": "full"}
    grey = _read_number(made, field, marks, made.written(marks), pen=pens.PENCIL)
    assert not grey.notes
    assert grey.values[field["column"]][field["entry"]] == "24"
    # a black-and-white scan whose cut breaks the light 2 up: never read as "4"
    for cut in (100, 110, 125):
        read = _read_number(made, field, marks, made.written(marks), pen=pens.PENCIL, cut=cut)
        assert read.notes
        assert "black-and-white" in read.notes[0]
        got = read.values.get(field["column"], {}).get(field["entry"])
        assert got in (None, "24"), (cut, got, [f.reason for f in read.flags])
        result = scan.assemble(scan.layout_from_json(made.layout), [read])
        assert [i.kind for i in result.review if i.kind == "note"] == ["note"]
        assert not [i for i in result.open_items if i.kind == "note"]
    # a scan so washed out that the ink is barely darker than the paper
    image = made.fill(
        field["page"], marks, 200, np.random.default_rng(1), pens.PEN, written=made.written(marks)
    )
    faint = (170 + image.astype(np.float32) * (85 / 255)).astype(np.uint8)
    read = scan.read_image(faint, scan.layout_from_json(made.layout), "p.png", 0)
    assert read.notes
    assert "low-contrast" in read.notes[0]


def test_a_concept_answer_cell_says_it_is_on_the_sheet(sheets: tuple[Sheets, Path]) -> None:
    made, _ = sheets
    concept = next(f for f in made.layout["fields"] if f["kind"] == "concept" and f["student"] == 1)
    rng = np.random.default_rng(2)
    image = made.fill(concept["page"], {f"{concept['id']}.mark.1": "full"}, 200, rng, pens.PEN)
    x, y, _w, h = (v * 200 / 72 for v in concept["write_box"])
    cv2.putText(
        image, "a causal mask hides", (int(x + 20), int(y + h / 2)), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (30,), 3
    )
    data = pens.scan(image, pens.Scanner(200, angle=0.8, noise=2), rng)
    gray = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
    layout = scan.layout_from_json(made.layout)
    result = scan.assemble(layout, [scan.read_image(gray, layout, "p.png", 0)])
    row = result.rows[1]
    mark_column = concept["column"]
    answer_column = mark_column.rsplit(" mark", 1)[0]
    assert row[mark_column] == "1"
    assert row[answer_column] == scan.WRITTEN_ON_SHEET
