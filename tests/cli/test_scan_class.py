"""A class of 30 on paper, end to end as the instructor runs it: `quiz export --answer-sheet`, the
sheets filled by simulated students and scanned (PNG pages and a scanned PDF), `quiz scan`, `quiz
scan --fix` from standard input, `quiz grade --report`.

Every answer bubbled right is marked right, every named mistake is named, and what the scan could
not decide goes to the review and nowhere else.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

cv2 = pytest.importorskip("cv2")
pdfium = pytest.importorskip("pypdfium2")

import numpy as np  # noqa: E402

from attnquiz.engine.bank import finding as banks  # noqa: E402
from attnquiz.engine.export.pdf.answer_sheet import NumberGrid  # noqa: E402
from attnquiz.engine.seeding import seed_from_code  # noqa: E402
from tests.engine import scan_pens as pens  # noqa: E402
from tests.engine.scan_class import Sheets  # noqa: E402

STUDENTS = 30
SEED = 7


def quiz(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attnquiz", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=900,
        check=False,
    )


def scanned_pdf(images: list[bytes]) -> bytes:
    """A PDF of JPEG pages, as a scanner's "scan to PDF" makes one."""
    document = pdfium.PdfDocument.new()
    for data in images:
        image = pdfium.PdfImage.new(document)
        image.load_jpeg(io.BytesIO(data), inline=True)
        width, height = image.get_px_size()
        page = document.new_page(width * 72 / 200, height * 72 / 200)
        image.set_matrix(pdfium.PdfMatrix().scale(width * 72 / 200, height * 72 / 200))
        page.insert_obj(image)
        page.gen_content()
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_class_on_paper(tmp_path: Path) -> None:
    done = quiz(
        "export",
        "week1",
        "--students",
        str(STUDENTS),
        "--seed",
        str(SEED),
        "--answer-sheet",
        "--key",
        "none",
        "-o",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "quiz scan" in done.stdout
    sheets = Sheets.load(tmp_path / "out")
    layout = sheets.layout
    bank = banks.load("week1")
    rng = np.random.default_rng(4)
    fields = {f["id"]: f for f in layout["fields"]}
    marks_by_page: dict[int, dict[str, str]] = {}
    expect: dict[tuple[int, str], str] = {}  # (student, column) → "correct" or the mistake's tag
    ambiguous: list[tuple[int, str]] = []

    def mark(ids: list[str], kind: str = "full") -> None:
        for bubble_id in ids:
            page = sheets.bubbles[bubble_id]["page"]
            marks_by_page.setdefault(page, {})[bubble_id] = kind

    ids_of_bank = {entry.id for entry in bank.items}
    first_code = next(p["code"] for p in layout["pages"] if p["student"] == 1)
    mistaken = next(
        column
        for column in layout["columns"]
        if column in ids_of_bank
        and type(bank.get(column).question(seed_from_code(first_code)).answer).__name__
        in ("NumericAnswer", "IntegerAnswer")
        and bank.get(column).question(seed_from_code(first_code)).variant.mistakes
    )
    for student in range(1, STUDENTS + 1):
        key = layout["key"][str(student)]
        code = next(p["code"] for p in layout["pages"] if p["student"] == student)
        for column, ids in key.items():
            roll = rng.random()
            item_fields = [f for f in fields.values() if f["student"] == student and f["column"] == column]
            if column == mistaken and roll < 0.35 and len(item_fields) == 1:
                # a named mistake, spelled from this student's own variant
                question = bank.get(column).question(seed_from_code(code))
                mistake = question.variant.mistakes[0]
                grid = NumberGrid.from_json(item_fields[0]["grid"])
                spelled = grid.spell(mistake.format(question.answer))
                if spelled is not None:
                    mark([f"{item_fields[0]['id']}.{p}.{v}" for p, v in spelled.items()])
                    expect[student, column] = mistake.tag
                    continue
            if student == 5 and not ambiguous:
                mark(ids[:1], "faint")
                mark(ids[1:])
                ambiguous.append((student, column))
                continue
            mark(ids, str(rng.choice(pens.CLEAR)))
            expect[student, column] = "correct"
        for f in fields.values():
            if f["student"] == student and f["kind"] == "concept":
                mark([f"{f['id']}.mark.{min(2, f['marks'])}"])
            if f["student"] == student and f["kind"] == "formula":
                mark([f"{f['id']}.mark.right"])
                expect[student, f["column"]] = "correct"
    scans = tmp_path / "scans"
    scans.mkdir()
    jpegs: list[bytes] = []
    for page in range(1, len(layout["pages"]) + 1):
        pen = pens.PEN if page % 2 else pens.PENCIL
        image = sheets.fill(page, marks_by_page.get(page, {}), 200, rng, pen)
        scanner = pens.Scanner(
            200,
            angle=rng.uniform(-2.5, 2.5),
            scale=rng.uniform(0.97, 1.02),
            blur=0.7,
            noise=4,
            jpeg=80 if page > 40 else 0,
        )
        data = pens.scan(image, scanner, rng)
        if page > 40:
            jpegs.append(data)
        else:
            (scans / f"page-{page:03d}.png").write_bytes(data)
    (scans / "rest.pdf").write_bytes(scanned_pdf(jpegs))
    pngs = sorted(str(p.relative_to(tmp_path)) for p in scans.glob("*.png"))
    done = quiz(
        "scan",
        *pngs,
        "scans/rest.pdf",
        "--sheets",
        "out/answer-sheets.json",
        "-o",
        "answers.csv",
        "-j",
        "2",
        cwd=tmp_path,
    )
    review = json.loads((tmp_path / "answers.review.json").read_text())
    assert done.returncode == 1, done.stdout + done.stderr  # the faint mark waits for review
    assert "1 thing(s) need a look" in done.stdout, review["items"]
    (item,) = [i for i in review["items"] if i["value"] is None]
    assert (item["student"], item["column"]) == ambiguous[0]
    assert (tmp_path / item["crop"]).stat().st_size > 1000  # the cropped image of the field
    rows = list(csv.DictReader(io.StringIO((tmp_path / "answers.csv").read_text())))
    assert len(rows) == STUDENTS
    assert rows[4][ambiguous[0][1]] == f"?review {item['n']}"
    # The instructor looks at the crop and types what the student meant: the right answer.
    question = bank.get(ambiguous[0][1]).question(seed_from_code(rows[4]["code"]))
    typed = question.answer.format() if not question.variant.parts else ""
    done = quiz("scan", "--fix", "-o", "answers.csv", cwd=tmp_path, stdin=typed + "\n")
    assert done.returncode == 0, done.stdout + done.stderr
    expect[ambiguous[0]] = "correct" if typed else "blank"
    done = quiz(
        "grade",
        "week1",
        "answers.csv",
        "--seed",
        str(SEED),
        "--students",
        str(STUDENTS),
        "--json",
        "--report",
        "report",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    graded = json.loads(done.stdout)
    assert len(graded["rows"]) == STUDENTS
    for row in graded["rows"]:
        for cell in row["cells"]:
            wanted = expect.get((int(row["student"]), cell["item"]))
            if wanted == "correct":
                assert cell["status"] == "correct", (row["student"], cell)
            elif wanted is not None:
                assert cell["mistake"] == wanted, (row["student"], cell)
    named = sum(1 for v in expect.values() if v not in ("correct", "blank"))
    assert named > 3
    index = (tmp_path / "report" / "index.html").read_text()
    assert "<script" not in index
    assert "http" not in index.replace("http://www.w3.org/2000/svg", "")
    assert "Score distribution" in index
    assert "<svg" in index
    assert f"of the class ({named} of {STUDENTS})" in index
    result_page = (tmp_path / "report" / "students" / "7.html").read_text()
    assert "Worked solution" in result_page
    assert "the right answer" in result_page
    mistakes = list(csv.DictReader(io.StringIO((tmp_path / "report" / "mistakes.csv").read_text())))
    assert any(int(m["count"]) == named for m in mistakes)
