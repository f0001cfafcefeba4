"""The scanner over a corpus of simulated filled sheets: every clear mark read right, every ambiguous
one flagged, no wrong answer recorded silently, and the identity read on every page.

The corpus is made here from the layout file: a class's answer sheets are exported, each page is
rendered at 150, 200 or 300 dpi, its bubbles filled by a simulated pen or pencil (full, partial,
light; faint or erased marks; a digit crossed out and the right one filled), and the page is
scanned crooked: rotated up to ±3°, scaled, skewed, in slight perspective, blurred, with noise and
JPEG compression (or upside down).
"""

from __future__ import annotations

from typing import Any

import pytest

cv2 = pytest.importorskip("cv2")
pytest.importorskip("pypdfium2")

import numpy as np  # noqa: E402

from attnquiz.engine.export.pdf.answer_sheet import NumberGrid  # noqa: E402
from attnquiz.engine.scan.class_answers import MAX_SCANS_SHOWN, assemble  # noqa: E402
from attnquiz.engine.scan.layout import layout_from_json  # noqa: E402
from attnquiz.engine.scan.page import read_image  # noqa: E402
from attnquiz.engine.scan.page_read import PageRead  # noqa: E402
from tests.engine import scan_pens as pens  # noqa: E402
from tests.engine.scan_class import Sheets  # noqa: E402

PAGES = int(__import__("os").environ.get("SCAN_PAGES", "300"))


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sheets, Sheets]:
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.export.files import write
    from attnquiz.engine.plan.class_plan import plan_class

    out = tmp_path_factory.mktemp("sheets")
    for bank, students in (("week1", 6), ("week2", 6)):
        plan = plan_class(banks.load(bank), students=students, master_seed=31, per_topic=1)
        write(plan, "pdf", out / bank, key=None, jobs=1, answer_sheet=True)
    return Sheets.load(out / "week1"), Sheets.load(out / "week2")


def _number_truth(grid: NumberGrid, rng: np.random.Generator) -> dict[str, str]:
    """Bubbles (position → value) of a random number that fits ``grid``, blank now and then."""
    if rng.random() < 0.08:
        return {}
    values: dict[str, str] = {}
    ints = int(rng.integers(1, grid.integers + 1))
    start = int(rng.integers(0, grid.integers - ints + 1))  # right-, left- or mid-aligned: no gaps
    for k in range(ints):
        values[f"i{start + k}"] = str(int(rng.integers(0, 10)))
    for k in range(int(rng.integers(0, grid.decimals + 1))):
        values[f"d{k}"] = str(int(rng.integers(0, 10)))
    if grid.sign and rng.random() < 0.25:
        values["sign"] = "-"
    if grid.exponent:
        values["e0"], values["e1"] = str(int(rng.integers(0, 10))), str(int(rng.integers(0, 10)))
        if rng.random() < 0.5:
            values["esign"] = "-"
    return values


def _cross(rng: np.random.Generator, bilevel: bool) -> str:
    """An X over a filled bubble: a broad pen's, or a fine liner's of 2 to 6 px strokes at 300 dpi (whose
    thinnest lines a black-and-white scan at 150 or 200 dpi whitens away: broad ones there)."""
    return "crossed" if bilevel or rng.random() < 0.4 else f"x{rng.integers(2, 7)}"


WRITES: dict[str, str] = {}
"""What a student wrote above a column other than the digit bubbled (field id.position → digit, "" for
nothing): filled by `_fill_field`, for the page being made."""


def _fill_field(
    field: dict[str, Any], rng: np.random.Generator, bilevel: bool = False
) -> tuple[dict[str, str], str | None, str]:
    """Marks (bubble id → kind) for one field, what it must read (None: must be flagged), and what.
    On a ``bilevel`` page a faint or erased mark is white (no scanner can tell it from the paper), so
    the doubtful marks there are light pencil, which a black-and-white scan breaks up."""
    fid = field["id"]
    marks: dict[str, str] = {}
    ambiguous = ("light",) if bilevel else pens.AMBIGUOUS

    def clear() -> str:
        return str(rng.choice(pens.CLEAR))

    kind = field["kind"]
    if kind in ("number", "student"):
        grid = NumberGrid.from_json(field["grid"])
        values = {} if kind == "student" and rng.random() < 0.3 else _number_truth(grid, rng)
        for position, value in values.items():
            marks[f"{fid}.{position}.{value}"] = clear()
        truth: str | None = grid.read(values)
        digits = [p for p in values if p[0] in "ide"]
        roll = rng.random()
        if digits and roll < 0.18:
            # crossed out and re-marked: a wrong digit in the same column, cancelled with an X (a broad
            # pen's, or a fine liner's of 2 to 6 px strokes at 300 dpi)
            position = str(rng.choice(digits))
            wrong = str((int(values[position]) + int(rng.integers(1, 10))) % 10)
            marks[f"{fid}.{position}.{wrong}"] = _cross(rng, bilevel)
            return marks, truth, "crossed"
        columns = [p for p in grid.positions() if p[0] in "ide"]
        if roll > 0.9 and len(columns) > len(digits):
            # a digit written in its box but not bubbled (the other bubbles may spell another number)
            position = str(rng.choice([p for p in columns if p not in values]))
            WRITES[f"{fid}.{position}"] = str(int(rng.integers(0, 10)))
            return marks, None, "unbubbled"
        if digits and roll > 0.84:
            # a bubble filled with nothing written above it
            WRITES[f"{fid}.{rng.choice(digits)}"] = ""
            return marks, None, "unwritten"
        if digits and roll < 0.30:
            position = str(rng.choice(digits))
            other = str((int(values[position]) + int(rng.integers(1, 10))) % 10)
            marks[f"{fid}.{position}.{other}"] = str(
                rng.choice([*ambiguous, "full"])
            )  # faint, erased or a second digit
            return marks, None, "ambiguous"
        if digits and roll < 0.36:
            position = str(rng.choice(digits))
            marks[f"{fid}.{position}.{values[position]}"] = "light" if bilevel else "faint"
            # light pencil on a black-and-white scan: read right or doubted, never misread
            return marks, truth if bilevel else None, "ambiguous"
        return marks, truth, "clear"
    if kind == "choice":
        letters = sorted({b.rsplit(".", 1)[1] for b in _ids(field)})
        count = int(rng.integers(1, len(letters) + 1)) if field["multiple"] else 1
        chosen = sorted(rng.choice(letters, size=count, replace=False).tolist())
        if rng.random() < 0.1:
            chosen = []
        for letter in chosen:
            marks[f"{fid}.letter.{letter}"] = clear()
        roll = rng.random()
        others = [x for x in letters if x not in chosen]
        if others and roll < 0.15:
            marks[f"{fid}.letter.{rng.choice(others)}"] = _cross(rng, bilevel)
            return marks, ", ".join(chosen), "crossed"
        if others and roll < 0.3 and not bilevel:  # light pencil on a bilevel page is a clear mark there
            marks[f"{fid}.letter.{rng.choice(others)}"] = str(rng.choice(ambiguous))
            return marks, None, "ambiguous"
        return marks, ", ".join(chosen), "clear"
    if kind == "concept":
        mark = int(rng.integers(-1, field["marks"] + 1))
        if mark >= 0:
            marks[f"{fid}.mark.{mark}"] = clear()
        return marks, "" if mark < 0 else str(mark), "clear"
    # a formula: marked right, or left (nothing written, nothing marked)
    if rng.random() < 0.6:
        marks[f"{fid}.mark.right"] = clear()
        return marks, field["answer"], "clear"
    return marks, "", "clear"


def _ids(field: dict[str, Any]) -> list[str]:
    return list(_FIELD_BUBBLES[field["id"]])


_FIELD_BUBBLES: dict[str, list[str]] = {}


def _read(page: PageRead, field: dict[str, Any]) -> str | None:
    if field["kind"] == "student":
        return page.student_number
    values = page.values.get(field["column"], {})
    return values.get(field.get("entry", 0), None)


SCANNERS = (
    lambda rng, dpi: pens.Scanner(
        dpi,
        angle=rng.uniform(-3, 3),
        scale=rng.uniform(0.96, 1.03),
        shear=rng.uniform(-0.012, 0.012),
        perspective=rng.uniform(0, 0.004),
        blur=rng.uniform(0, 1.3),
        noise=rng.uniform(0, 8),
        jpeg=int(rng.choice([0, 55, 75, 90])),
    ),
    lambda rng, dpi: pens.Scanner(dpi, angle=180 + rng.uniform(-2, 2), blur=0.6, noise=3, jpeg=80),
)


@pytest.mark.slow  # about a minute; the suite runs it (pyproject deselects nothing)
def test_corpus_of_filled_sheets(sheets: tuple[Sheets, Sheets]) -> None:
    rng = np.random.default_rng(2026)
    layouts = [layout_from_json(s.layout) for s in sheets]
    for s in sheets:
        for b in s.layout["bubbles"]:
            _FIELD_BUBBLES.setdefault(b["field"], []).append(b["id"])
    tally = {
        "clear": 0, "crossed": 0, "ambiguous": 0, "unbubbled": 0, "unwritten": 0, "pages": 0, "bilevel": 0,
        "doubted on bilevel pages": 0, "crossed, likely reading offered": 0,
    }  # fmt: skip
    wrong: list[str] = []
    reads: tuple[list[PageRead], list[PageRead]] = ([], [])
    copies: dict[tuple[int, int], int] = {}
    dpis = (150, 200, 300)
    for n in range(PAGES):
        which = n % 2
        s, layout = sheets[which], layouts[which]
        page_info = s.layout["pages"][int(rng.integers(len(s.layout["pages"])))]
        fields = [f for f in s.layout["fields"] if f["page"] == page_info["page"]]
        marks: dict[str, str] = {}
        truths: list[tuple[dict[str, Any], str | None, str]] = []
        WRITES.clear()
        bilevel = n % 10 == 3  # a black-and-white scan, its cut anywhere a scanner puts it
        for field in fields:
            made, truth, what = _fill_field(field, rng, bilevel)
            marks.update(made)
            truths.append((field, truth, what))
        dpi = dpis[n % 3]
        pen = pens.PEN if rng.random() < 0.5 else pens.PENCIL
        image = s.fill(page_info["page"], marks, dpi, rng, pen, written={**s.written(marks), **WRITES})
        scanner = SCANNERS[1 if n % 25 == 7 else 0](rng, dpi)
        data = pens.scan(image, scanner, rng)
        if bilevel:
            data = pens.bilevel(data, int(rng.integers(110, 170)))
            tally["bilevel"] += 1
        gray = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
        # every field's crop kept, as `quiz scan` keeps them, for the first scans of a page scanned again
        copies[which, page_info["page"]] = copies.get((which, page_info["page"]), 0) + 1
        keep = copies[which, page_info["page"]] <= MAX_SCANS_SHOWN
        read = read_image(gray, layout, f"scan {n}", 0, keep_crops=keep)
        reads[which].append(read)
        assert not read.problem, f"scan {n} ({scanner}): {read.problem}"
        assert bool(read.notes) == bilevel, f"scan {n}: {read.notes}"
        assert (read.student, read.sheet_page) == (page_info["student"], page_info["sheet_page"]), f"scan {n}"
        tally["pages"] += 1
        flagged = {f.field for f in read.flags}
        for field, truth, what in truths:
            tally[what] += 1
            got = None if field["id"] in flagged else _read(read, field)
            if truth is None and got is not None:
                made = {b: m for b, m in marks.items() if b.startswith(field["id"] + ".")}
                written = {c: w for c, w in WRITES.items() if c.startswith(field["id"] + ".")}
                wrong.append(
                    f"scan {n}: {field['id']} ({what}: {made} {written}) is ambiguous but read {got!r}"
                )
            elif what == "crossed" and any(f.field == field["id"] and f.likely == truth for f in read.flags):
                tally["crossed, likely reading offered"] += 1  # a faint fine X: settled with one key
            elif truth is not None and got is None and bilevel and field["id"] in flagged:
                tally["doubted on bilevel pages"] += 1  # light pencil broken up: doubted, never misread
            elif truth is not None and got != truth:
                reasons = [f.reason for f in read.flags if f.field == field["id"]]
                wrong.append(
                    f"scan {n} {scanner}: {field['id']} should read {truth!r}, read {got!r} {reasons}"
                )
    assert not wrong, "\n".join(wrong[:30]) + f"\n{len(wrong)} fields misread"
    # The class's review (pages scanned several times, each time filled anew, and pages never drawn):
    # every item open has its crop, or says why there is none.
    for layout, pages in zip(layouts, reads, strict=True):
        result = assemble(layout, pages)
        for item in result.open_items:
            if item.kind == "field":
                assert result.crops.get(item.crop, b"")[:4] == b"\x89PNG", item
            else:
                assert item.crop in result.crops or item.no_crop.startswith("no image: "), item
            tally["review items"] = tally.get("review items", 0) + 1
            tally["read differently"] = tally.get("read differently", 0) + ("read differently" in item.reason)
    assert tally["read differently"] > 20, tally
    assert tally["pages"] >= 300, tally
    assert tally["ambiguous"] > 100, tally
    assert tally["crossed"] > 100, tally
    assert tally["unbubbled"] > 30, tally
    assert tally["unwritten"] > 30, tally
    assert tally["bilevel"] >= 30, tally
