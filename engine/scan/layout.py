"""The answer-sheet layout (``answer-sheets.json``) as the scanner needs it: read, checked, indexed.

Also `ScanError`, which every step raises for a scan that cannot be read at all, and `PX_PER_PT`, the
scale of a page resampled onto its layout."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnquiz.engine.capped import TooLarge, read_capped
from attnquiz.engine.errors import QuizError

PX_PER_PT = 2.5  # the resampled page: 180 dpi, a bubble 25 px across
MAX_JSON_BYTES = 64 << 20  # an answer-sheet layout or review file (a class of 10,000 writes a few MB)


class ScanError(QuizError):
    """A scan that cannot be read at all (a missing layout file, a file that is no image or PDF)."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    id: str
    kind: str
    column: str
    title: str
    box: tuple[float, float, float, float]
    bubbles: tuple[tuple[str, str, float, float], ...]  # position, value, x, y
    grid: dict[str, Any] | None = None
    entry: int = 0
    entries: int = 1
    shape: tuple[int, ...] = ()
    multiple: bool = False
    marks: int = 0
    write_box: tuple[float, float, float, float] | None = None
    answer: str = ""  # a formula's right answer (recorded when the marker fills "right")


@dataclass(frozen=True, slots=True)
class PageSpec:
    page: int
    student: int
    code: str
    sheet_page: int
    sheet_pages: int
    qr: tuple[float, float, float]
    fields: tuple[FieldSpec, ...]


@dataclass(frozen=True, slots=True)
class Layout:
    """What ``answer-sheets.json`` says, indexed for reading: pages by (student, page of the sheet)."""

    export: str
    bank: str
    master_seed: int | None
    students: int
    page_size: tuple[float, float]
    marks: tuple[tuple[float, float], ...]
    mark_size: float
    radius: float
    columns: tuple[str, ...]
    pages: dict[tuple[int, int], PageSpec]
    codes: dict[int, str]

    @property
    def sheet_pages(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for (student, _), spec in self.pages.items():
            out[student] = spec.sheet_pages
        return out


_DAMAGE = (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, ZeroDivisionError)
"""What reading a damaged layout raises (a value missing, of the wrong type, out of range)."""


def load_layout(path: Path) -> Layout:
    """Read ``answer-sheets.json`` (a clear error for a file that is not one, or a damaged one)."""
    try:
        data = json.loads(read_capped(path, MAX_JSON_BYTES))
    except TooLarge as exc:
        raise ScanError(f"{path}: {exc.said('an answer-sheet layout')}") from None
    except OSError as exc:
        raise ScanError(f"{path}: cannot read the answer-sheet layout ({exc.strerror or exc})") from exc
    except (ValueError, RecursionError) as exc:
        raise ScanError(f"{path}: not a JSON file ({str(exc)[:160]})") from exc
    if not isinstance(data, dict) or data.get("format") != "quiz-answer-sheets":
        raise ScanError(f"{path}: not an answer-sheets.json written by `quiz export --answer-sheet`")
    try:
        return check_layout(layout_from_json(data))
    except _DAMAGE as exc:
        said = " ".join(str(exc).split())[:160]
        raise ScanError(f"{path}: a damaged answer-sheets.json ({type(exc).__name__}: {said})") from exc


MAX_ENTRIES = 10_000  # entries of one vector or matrix answer (a sheet prints a few dozen at most)


def check_layout(layout: Layout) -> Layout:
    """``layout`` if every number the scanner computes with is sane (finite, positive where it must be,
    on the page, a grid that fits), else a `ValueError` that says which: a damaged file must not
    crash OpenCV, allocate gigabytes or loop for hours page after page."""
    import math

    from attnquiz.engine.export.pdf.answer_sheet import MAX_COLUMNS

    width, height = layout.page_size
    if not (50 <= width <= 5000 and 50 <= height <= 5000):
        raise ValueError(f"a page size of {width} x {height} points")
    if len(layout.marks) != 4 or not 2 <= layout.mark_size <= 100:
        raise ValueError("the four corner marks")
    if not 1 <= layout.radius <= 50:
        raise ValueError(f"a bubble radius of {layout.radius} points")

    def on_page(x: float, y: float, what: str) -> None:
        if not (math.isfinite(x) and math.isfinite(y) and -1 <= x <= width + 1 and -1 <= y <= height + 1):
            raise ValueError(f"{what} off the page ({x}, {y})")

    for x, y in layout.marks:
        on_page(x, y, "a corner mark")
    if len({(round(x), round(y)) for x, y in layout.marks}) != 4:
        raise ValueError("two corner marks in one place")
    if not layout.pages:
        raise ValueError("no pages")
    for spec in layout.pages.values():
        x, y, size = spec.qr
        on_page(x, y, "a QR code")
        on_page(x + size, y + size, "a QR code")
        if not 0 < spec.sheet_page <= spec.sheet_pages <= 1000:
            raise ValueError(f"page {spec.sheet_page} of {spec.sheet_pages}")
        for f in spec.fields:
            bx, by, bw, bh = (float(v) for v in f.box)
            on_page(bx, by, f"the box of field {f.id!r}")
            on_page(bx + bw, by + bh, f"the box of field {f.id!r}")
            if f.write_box is not None:
                wx, wy, ww, wh = (float(v) for v in f.write_box)
                on_page(wx, wy, f"the writing box of field {f.id!r}")
                on_page(wx + ww, wy + wh, f"the writing box of field {f.id!r}")
            for _, _, bubble_x, bubble_y in f.bubbles:
                on_page(bubble_x, bubble_y, f"a bubble of field {f.id!r}")
            if not 0 <= f.entry < f.entries <= MAX_ENTRIES or not all(0 < n <= MAX_ENTRIES for n in f.shape):
                raise ValueError(f"field {f.id!r}: entry {f.entry} of {f.entries}")
            if f.kind in ("number", "student"):
                from attnquiz.engine.export.pdf.answer_sheet import NumberGrid

                if not isinstance(f.grid, dict):
                    raise ValueError(f"field {f.id!r} has no grid")
                grid = NumberGrid.from_json(f.grid)
                if not (0 <= grid.integers <= MAX_COLUMNS and 0 <= grid.decimals <= MAX_COLUMNS):
                    raise ValueError(f"field {f.id!r}: a grid of {grid.integers} + {grid.decimals} columns")
                positions = set(grid.positions())
                if any(position not in positions for position, *_ in f.bubbles):
                    raise ValueError(f"field {f.id!r}: a bubble in a column its grid does not have")
            elif f.kind not in ("choice", "concept", "formula"):
                raise ValueError(f"field {f.id!r} of an unknown kind {f.kind!r}")
    return layout


def _box(value: Any) -> tuple[float, float, float, float]:
    """A box (x, y, width, height) from the layout file (a `ValueError` if it is not four numbers)."""
    x, y, w, h = (float(v) for v in value)
    return x, y, w, h


def layout_from_json(data: dict[str, Any]) -> Layout:
    """The layout from the parsed ``answer-sheets.json`` (a `KeyError` or `TypeError` if it is damaged)."""
    bubbles: dict[str, list[tuple[str, str, float, float]]] = {}
    radius = 5.0
    for b in data["bubbles"]:
        bubbles.setdefault(str(b["field"]), []).append(
            (str(b["position"]), str(b["value"]), float(b["x"]), float(b["y"]))
        )
        radius = float(b["r"])
    fields: dict[int, list[FieldSpec]] = {}
    for f in data["fields"]:
        spec = FieldSpec(
            id=str(f["id"]),
            kind=str(f["kind"]),
            column=str(f["column"]),
            title=str(f["title"]),
            box=_box(f["box"]),
            bubbles=tuple(bubbles.get(str(f["id"]), [])),
            grid=f.get("grid"),
            entry=int(f.get("entry", 0)),
            entries=int(f.get("entries", 1)),
            shape=tuple(int(n) for n in f.get("shape", ())),
            multiple=bool(f.get("multiple")),
            marks=int(f.get("marks", 0)),
            write_box=_box(f["write_box"]) if f.get("write_box") else None,
            answer=str(f.get("answer", "")),
        )
        fields.setdefault(int(f["page"]), []).append(spec)
    pages: dict[tuple[int, int], PageSpec] = {}
    codes: dict[int, str] = {}
    for p in data["pages"]:
        qr = p["qr"]
        spec_page = PageSpec(
            int(p["page"]),
            int(p["student"]),
            str(p["code"]),
            int(p["sheet_page"]),
            int(p["sheet_pages"]),
            (float(qr["x"]), float(qr["y"]), float(qr["size"])),
            tuple(fields.get(int(p["page"]), [])),
        )
        pages[spec_page.student, spec_page.sheet_page] = spec_page
        codes[spec_page.student] = spec_page.code
    marks = tuple((float(m["x"]), float(m["y"])) for m in data["corner_marks"])
    width, height = data["page_size"]
    return Layout(
        str(data["export"]),
        str(data["bank"]),
        data.get("master_seed"),
        int(data["students"]),
        (float(width), float(height)),
        marks,
        float(data["corner_marks"][0]["size"]),
        radius,
        tuple(str(c) for c in data["columns"]),
        pages,
        codes,
    )
