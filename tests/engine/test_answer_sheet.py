"""Answer sheets: the layout file is true of the PDF, and every key spells an answer graded right.

- The PDF is rendered and a printed circle is found at every bubble's centre and radius, on the page
  the JSON says; the corner squares are where it says.
- For every student of several classes (both banks, many seeds), the key's bubbles read back through
  the grid give a response that `quiz grade` marks right; a listed mistake spelled on its grid is
  named as that mistake.
- The JSON has the contract's keys; the key's columns are `quiz grade --template`'s.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from attnquiz.engine.answers.kinds import IntegerAnswer, NumericAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.classwork.grading import grade_text
from attnquiz.engine.export.pdf import answer_sheet
from attnquiz.engine.export.pdf.answer_sheet import NumberGrid, json_bytes, number_grid, scientific
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.engine.plan.columns import template_csv


def _plan(bank: str, seed: int, students: int = 4, every: bool = False):
    return plan_class(banks.load(bank), students=students, master_seed=seed, per_topic=None if every else 1)


def _responses(layout: dict[str, Any], student: int) -> dict[str, str]:
    """What the key's bubbles spell, column by column, read back as the scanner reads them."""
    fields = [f for f in layout["fields"] if f["student"] == student]
    chosen = {i for ids in layout["key"][str(student)].values() for i in ids}
    by_field: dict[str, dict[str, str]] = {}
    letters: dict[str, list[str]] = {}
    for b in layout["bubbles"]:
        if b["id"] in chosen:
            by_field.setdefault(b["field"], {})[b["position"]] = b["value"]
            letters.setdefault(b["field"], []).append(b["value"])
    out: dict[str, list[str]] = {}
    shapes: dict[str, tuple[int, ...]] = {}
    for f in fields:
        if f["kind"] == "number":
            text = NumberGrid.from_json(f["grid"]).read(by_field.get(f["id"], {}))
            out.setdefault(f["column"], []).append(text)
            if f["shape"]:
                shapes[f["column"]] = tuple(f["shape"])
        elif f["kind"] == "choice":
            out[f["column"]] = [", ".join(sorted(letters.get(f["id"], [])))]
        elif f["kind"] == "formula":
            out[f["column"]] = [f["answer"]]
    cells: dict[str, str] = {}
    for column, texts in out.items():
        shape = shapes.get(column)
        if shape is None:
            cells[column] = texts[0]
        elif len(shape) == 1:
            cells[column] = "[" + ", ".join(texts) + "]"
        else:
            rows = [texts[r * shape[1] : (r + 1) * shape[1]] for r in range(shape[0])]
            cells[column] = "[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]"
    return cells


@pytest.mark.parametrize(
    ("bank", "seed", "every"), [("week1", 1, True), ("week2", 2, True), ("week1", 99, False)]
)
def test_every_key_reads_back_as_a_right_answer(bank: str, seed: int, every: bool) -> None:
    plan = _plan(bank, seed, students=3, every=every)
    layout = json.loads(json_bytes(plan, "a4"))
    header = layout["columns"]
    assert header == template_csv(plan).splitlines()[0].split(",")
    rows = []
    for sheet in plan.sheets:
        cells = _responses(layout, sheet.student)
        assert set(layout["key"][str(sheet.student)]) <= set(header)
        rows.append([str(sheet.student), "", sheet.code, *(cells.get(c, "") for c in header[3:])])
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in [header, *rows]) + "\n"
    marks = grade_text(banks.load(bank), text, master_seed=seed, students=3)
    assert not marks.problems
    for row in marks.rows:
        for cell in row.cells:
            if cell.status in ("blank", "unmarked"):
                continue  # concept questions: marked by hand
            assert cell.status == "correct", (row.student, cell)


def test_listed_mistakes_fit_their_grid_and_are_named() -> None:
    bank = banks.load("week1")
    named = 0
    for entry in bank.items:
        for seed in range(3):
            question = entry.question(seed)
            answer = question.answer
            if not isinstance(answer, NumericAnswer | IntegerAnswer):
                continue
            grid = number_grid(answer, question.variant.mistakes)
            if grid is None:
                continue
            for mistake in question.variant.mistakes:
                text = mistake.format(answer).replace(",", "")
                spelled = grid.spell(scientific(text) if grid.exponent else text)
                if spelled is None:
                    continue
                from attnquiz.engine.grading.grade import grade

                result = grade(question, grid.read(spelled))
                assert result.mistake is not None, (entry.id, seed, mistake.tag, grid.read(spelled))
                named += 1
    assert named > 50


@pytest.mark.parametrize(
    ("grid", "values", "text"),
    [
        (NumberGrid(True, 3, 2), {"i2": "1", "d0": "9", "d1": "3"}, "1.93"),
        (NumberGrid(True, 3, 2), {"sign": "-", "i1": "1", "i2": "0"}, "-10"),
        (NumberGrid(False, 4, 0), {"i0": "1", "i1": "2"}, "12"),  # left-aligned: digits together
        (NumberGrid(True, 1, 2, True), {"i0": "1", "d0": "5", "esign": "-", "e0": "0", "e1": "3"}, "1.5e-03"),
        (NumberGrid(True, 2, 2), {"d0": "5"}, "0.5"),
        (NumberGrid(True, 2, 2), {}, ""),
    ],
)
def test_a_grid_reads_what_is_filled(grid: NumberGrid, values: dict[str, str], text: str) -> None:
    assert grid.read(values) == text


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ({"i0": "1", "i2": "3"}, "gap"),
        ({"i2": "1", "d1": "5"}, "gap"),
        ({"sign": "-"}, "without digits"),
    ],
)
def test_a_grid_with_a_gap_is_refused(values: dict[str, str], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        NumberGrid(True, 3, 2).read(values)


def test_the_layout_is_true_of_the_pdf() -> None:
    np = pytest.importorskip("numpy")
    pdfium = pytest.importorskip("pypdfium2")
    from attnquiz.engine.export.pdf.worksheets import compile_typst

    plan = _plan("week2", 5, students=2)
    layout = json.loads(json_bytes(plan, "a4"))
    pdf = compile_typst(answer_sheet.typst(plan, plan.sheets, "a4"))
    document = pdfium.PdfDocument(pdf)
    assert len(document) == len(layout["pages"])
    scale = 4.0  # 288 dpi
    for number, page in enumerate(document, start=1):
        width, height = page.get_size()
        assert [width, height] == pytest.approx(layout["page_size"], abs=0.01)
        bitmap = page.render(scale=scale, grayscale=True)
        image = np.array(bitmap.to_numpy(), dtype=np.uint8).reshape(bitmap.height, bitmap.width)
        for mark in layout["corner_marks"]:
            assert image[round(mark["y"] * scale), round(mark["x"] * scale)] < 60
        bubbles = [b for b in layout["bubbles"] if b["page"] == number]
        assert bubbles
        for b in bubbles:
            cx, cy, r = b["x"] * scale, b["y"] * scale, b["r"] * scale
            angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
            ring = image[
                np.rint(cy + r * np.sin(angles)).astype(int), np.rint(cx + r * np.cos(angles)).astype(int)
            ]
            inside = image[
                np.rint(cy + 0.6 * r * np.sin(angles)).astype(int),
                np.rint(cx + 0.6 * r * np.cos(angles)).astype(int),
            ]
            assert np.mean(ring < 128) > 0.8, b["id"]  # the printed circle is where the JSON says
            assert np.mean(inside > 150) > 0.8, b["id"]  # and its inside is empty paper
    document.close()


def test_the_contract_keys() -> None:
    layout = json.loads(json_bytes(_plan("week1", 3, students=2), "us-letter"))
    assert layout["page_size"] == [612.0, 792.0]
    for key in ("bubbles", "key", "fields", "pages", "corner_marks", "columns", "export"):
        assert key in layout
    bubble = layout["bubbles"][0]
    assert {"id", "page", "x", "y", "r", "means", "value", "field"} <= set(bubble)
    ids = [b["id"] for b in layout["bubbles"]]
    assert len(ids) == len(set(ids))
    known = set(ids)
    assert all(i in known for key in layout["key"].values() for ids_ in key.values() for i in ids_)
    for b in layout["bubbles"]:
        assert 36 < b["x"] < 612 - 36
        assert 36 < b["y"] < 792 - 36


@pytest.mark.parametrize(
    ("value", "tolerance"),
    [
        (0.000123456, "sigfigs"),
        (6.02e23, "sigfigs"),
        (-3.5e-7, "relative"),
        (0.881, "decimals"),
        (589824.0, "sigfigs"),
    ],
)
def test_a_number_grid_holds_its_answer_written_as_the_key_writes_it(value: float, tolerance: str) -> None:
    from attnquiz.engine.answers.tolerance import Tolerance
    from attnquiz.engine.grading.grade import grade_answer

    tol = {
        "sigfigs": Tolerance.sigfigs(3),
        "relative": Tolerance.relative(),
        "decimals": Tolerance.decimals(3),
    }
    answer = NumericAnswer(value, tol[tolerance])
    grid = number_grid(answer)
    assert grid is not None
    text = answer.format()
    spelled = grid.spell(scientific(text) if grid.exponent else text)
    assert spelled is not None, (grid, text)
    read = grid.read(spelled)
    assert grade_answer(answer, read).status == "correct", (grid, text, read)
    assert grid.exponent == ("e" in text.lower())
