"""Machine-readable answer sheets: the layout (every bubble's place and meaning), its Typst drawing
and the ``answer-sheets.json`` contract that `attnquiz.engine.scan.layout` and other tools read.

The coordinates are computed here, in PDF points from the page's top-left corner, and the Typst
source places each mark at exactly those numbers (every element is ``place``d, the page has no
margin), so the JSON describes the PDF by construction. A student's answer sheet has:

- four solid corner squares, which the scanner finds to undo rotation, scale, skew and perspective;
- a QR code (segno) with the sheet's identity: the export's id, the student, the variant code and
  the page, also printed as text under it;
- on its first page, the student number as a digit grid (a check against the QR code);
- per question (per part of a question in parts): letter bubbles for a choice; a digit grid for a
  number or a count, sized from this variant's answer and its listed mistakes at the precision
  asked (a sign, integer digits, a fixed decimal point, decimals, and a signed power of ten where
  the answer is written with one); one grid per entry of a vector, a matrix or a numeric shape;
  and a box to write in for a formula, a symbolic shape or a concept question, with bubbles for
  the marker (right / wrong for a formula, 0 to the number of key points for a concept question).

A number grid's integer digits are filled from the right or left as the student likes, but a
number has no gaps: empty integer columns come first, empty decimal columns last (the scanner
refuses a gap as ambiguous rather than guessing).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal

from attnquiz.engine.answers.kinds import (
    LETTERS,
    Answer,
    ChoiceAnswer,
    CodeAnswer,
    ExplainAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.plan.class_plan import ClassPlan, Paper, Sheet

FORMAT = "quiz-answer-sheets"
VERSION = 1
QR_PREFIX = "QUIZSHEET1"

PAGE_SIZES: dict[str, tuple[float, float]] = {"a4": (595.28, 841.89), "us-letter": (612.0, 792.0)}
MARK_SIZE = 14.0  # side of a corner square
MARK_INSET = 22.0  # from the paper's edge to a corner square's outer edge (printers leave ~5 mm)
CONTENT_INSET = 46.0  # from the paper's edge to the content
BUBBLE_R = 5.0  # bubble radius: a 10 pt (3.5 mm) circle, what a pencil fills in one or two strokes
PITCH_X = 14.0  # bubble centres across
PITCH_Y = 13.0  # bubble centres down
HEAD = 12.0  # a block's heading line
CODE_BY_HAND = "code: marked by hand against the reference in the key"
WRITE_IN = 15.0  # the box above each grid column where the digit is written by hand
GAP = 12.0  # between blocks
QR_SIZE = 66.0
PIECE_STUDENTS = 10  # students per compiled piece of the answer-sheet PDF
MAX_COLUMNS = 13  # number-grid columns at most (beyond, the number is written with a power of ten)

Kind = Literal["number", "choice", "formula", "concept", "student"]


@dataclass(frozen=True, slots=True)
class NumberGrid:
    """How a number is bubbled: a sign, integer digits, decimals after a fixed point, and optionally
    a signed two-digit power of ten (``× 10^``)."""

    sign: bool
    integers: int
    decimals: int
    exponent: bool = False

    def positions(self) -> list[str]:
        """The grid's columns, left to right: ``sign``, ``i0``…, ``d0``…, ``esign``, ``e0``, ``e1``."""
        out = ["sign"] if self.sign else []
        out += [f"i{k}" for k in range(self.integers)] + [f"d{k}" for k in range(self.decimals)]
        return out + (["esign", "e0", "e1"] if self.exponent else [])

    def to_json(self) -> dict[str, Any]:
        return {
            "sign": self.sign,
            "integers": self.integers,
            "decimals": self.decimals,
            "exponent": self.exponent,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NumberGrid:
        return cls(bool(data["sign"]), int(data["integers"]), int(data["decimals"]), bool(data["exponent"]))

    def spell(self, text: str) -> dict[str, str] | None:
        """The bubbles (position → value) that write ``text`` (a number as the key writes it), or None
        when it does not fit this grid."""
        text = text.strip().replace(",", "")
        negative = text.startswith("-")
        text = text.lstrip("-+")
        mantissa, _, power = text.lower().partition("e")
        whole, _, fraction = mantissa.partition(".")
        if (negative and not self.sign) or (power and not self.exponent):
            return None
        whole = whole.lstrip("0") or "0"
        if len(whole) > self.integers or len(fraction) > self.decimals:
            return None
        out: dict[str, str] = {"sign": "-"} if negative else {}
        start = self.integers - len(whole)  # right-aligned, as the key shows it
        out.update({f"i{start + k}": digit for k, digit in enumerate(whole)})
        out.update({f"d{k}": digit for k, digit in enumerate(fraction)})
        if power:
            exponent = int(power)
            if abs(exponent) > 99:
                return None
            if exponent < 0:
                out["esign"] = "-"
            digits = f"{abs(exponent):02d}"
            out.update({"e0": digits[0], "e1": digits[1]})
        return out

    def read(self, values: dict[str, str]) -> str:
        """The number that the filled bubbles spell (``values``: position → value), as the grader
        reads it; "" when nothing is filled. Raises `ValueError` for a number with a gap in it."""
        digits = [values.get(f"i{k}", "") for k in range(self.integers)]
        fraction = [values.get(f"d{k}", "") for k in range(self.decimals)]
        power = [values.get(f"e{k}", "") for k in range(2)]
        if not any(digits + fraction + power) and not values.get("sign") and not values.get("esign"):
            return ""
        if not _together(digits):
            raise ValueError("a gap between the digits of the whole part")
        if not _together(fraction) or (any(fraction) and not fraction[0]):
            raise ValueError("a gap in the decimals (they start right after the point)")
        if not any(digits + fraction):
            raise ValueError("a sign or a power of ten without digits")
        whole = "".join(digits)
        decimals = "".join(fraction)
        text = ("-" if values.get("sign") else "") + (whole or "0") + (f".{decimals}" if decimals else "")
        if any(power) or values.get("esign"):
            if not all(power):
                raise ValueError("a power of ten needs both its digits")
            text += "e" + ("-" if values.get("esign") else "") + "".join(power)
        return text


def _together(columns: Sequence[str]) -> bool:
    """Whether the filled columns are next to one another (empty ones only before and after)."""
    filled = [k for k, c in enumerate(columns) if c]
    return not filled or filled[-1] - filled[0] + 1 == len(filled)


def _numbers(value: object) -> Iterator[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, tuple):
        for entry in value:
            yield from _numbers(entry)


def _shape_numbers(answer: ShapeAnswer, mistakes: Sequence[Mistake]) -> list[int]:
    values = [d for d in answer.dims if isinstance(d, int)]
    for mistake in mistakes:
        if isinstance(mistake.value, tuple):
            values += [d for d in mistake.value if isinstance(d, int) and not isinstance(d, bool)]
    return values


def number_grid(answer: SingleAnswer, mistakes: Sequence[Mistake] = ()) -> NumberGrid | None:
    """The grid that holds this answer, and the listed mistakes where they fit (so a named mistake can
    be written and recognised), at the precision asked; None for an answer bubbles cannot hold."""
    if isinstance(answer, IntegerAnswer):
        values = [answer.value] + [
            int(v) for m in mistakes for v in _numbers(m.value) if float(v).is_integer()
        ]
        return _integer_grid(values)
    if isinstance(answer, ShapeAnswer):
        if answer.symbolic:
            return None
        return _integer_grid(_shape_numbers(answer, mistakes))
    if isinstance(answer, NumericAnswer | VectorAnswer | MatrixAnswer):
        own = list(_numbers((answer.value,) if isinstance(answer, NumericAnswer) else _entries(answer)))
        others = [v for m in mistakes for v in _numbers(m.value)]
        return _real_grid(answer, own, others)
    return None


def _entries(answer: VectorAnswer | MatrixAnswer) -> tuple[float, ...]:
    if isinstance(answer, VectorAnswer):
        return answer.values
    return tuple(v for row in answer.rows for v in row)


def _integer_grid(values: Sequence[int]) -> NumberGrid:
    width = max(len(str(abs(int(v)))) for v in values)
    spare = 1 if width < MAX_COLUMNS - 1 else 0  # one column more than the answer needs: no give-away
    return NumberGrid(sign=any(v < 0 for v in values), integers=min(MAX_COLUMNS, width + spare), decimals=0)


def _written(text: str) -> tuple[int, int, bool]:
    """(integer digits, decimals, has a power of ten) of a number as the key writes it."""
    text = text.lstrip("-+").replace(",", "")
    mantissa, _, power = text.lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    return len(whole.lstrip("0") or "0"), len(fraction), bool(power)


def _real_grid(
    answer: NumericAnswer | VectorAnswer | MatrixAnswer, own: list[float], others: list[float]
) -> NumberGrid:
    tolerance = answer.tolerance
    shapes = [_written(tolerance.format(v)) for v in own]
    exponent = any(e for _, _, e in shapes)
    integers = max(i for i, _, _ in shapes)
    decimals = max(d for _, d, _ in shapes)
    if not exponent and integers + 1 + decimals + 1 <= MAX_COLUMNS:
        # Room for the listed mistakes as well, where they are written without a power of ten and fit.
        for value in others:
            i, d, e = _written(tolerance.format(value))
            if not e and max(integers, i) + 1 + max(decimals, d) + 1 <= MAX_COLUMNS:
                integers, decimals = max(integers, i), max(decimals, d)
        return NumberGrid(sign=True, integers=integers + 1, decimals=decimals)
    # Written with a power of ten: one digit before the point, as many after as the key writes.
    mantissa = max(
        max(len(tolerance.format(v).lower().partition("e")[0].lstrip("-").replace(".", "")) for v in own) - 1,
        1,
    )
    return NumberGrid(sign=True, integers=1, decimals=min(mantissa, MAX_COLUMNS - 5), exponent=True)


def scientific(text: str) -> str:
    """A number written with one digit before the point and a power of ten (``0.00123`` → ``1.23e-3``),
    the way an exponent grid holds it."""
    negative = text.startswith("-")
    mantissa, _, power = text.lstrip("-+").lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return "0"
    shift = len(whole) - (len(whole + fraction) - len(digits)) - 1 + (int(power) if power else 0)
    body = digits[0] + ("." + digits[1:].rstrip("0") if digits[1:].rstrip("0") else "")
    return ("-" if negative else "") + body + f"e{shift}"


# ---------------------------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bubble:
    """One bubble: where it is (PDF points from the page's top-left corner) and what it means."""

    id: str
    page: int
    x: float
    y: float
    r: float
    field: str
    position: str
    value: str
    means: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "page": self.page,
            "x": self.x,
            "y": self.y,
            "r": self.r,
            "field": self.field,
            "position": self.position,
            "value": self.value,
            "means": self.means,
        }


@dataclass(slots=True)
class Field:
    """A group of bubbles read together: one number (an entry of a vector), a choice, a box marked by
    hand, or the student number. ``column`` is the answers-file column it fills."""

    id: str
    page: int
    student: int
    kind: Kind
    column: str
    title: str
    box: tuple[float, float, float, float]  # x, y, width, height
    grid: NumberGrid | None = None
    entry: int = 0
    entries: int = 1
    shape: tuple[int, ...] = ()
    multiple: bool = False
    marks: int = 0  # a concept question's key points (its marker bubbles are 0..marks)
    write_box: tuple[float, float, float, float] | None = None
    answer: str = ""  # a formula's right answer as the grader reads it (what "marked right" records)
    bubbles: list[Bubble] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "page": self.page,
            "student": self.student,
            "kind": self.kind,
            "column": self.column,
            "title": self.title,
            "box": list(self.box),
        }
        if self.grid is not None:
            out["grid"] = self.grid.to_json()
        if self.kind == "number":
            out.update(entry=self.entry, entries=self.entries, shape=list(self.shape))
        if self.kind == "choice":
            out["multiple"] = self.multiple
        if self.kind == "concept":
            out["marks"] = self.marks
        if self.write_box is not None:
            out["write_box"] = list(self.write_box)
        if self.kind == "formula":
            out["answer"] = self.answer
        return out


@dataclass(slots=True)
class PageLayout:
    """One printed page: its number in the answer-sheet PDF (1-based), whose it is, and its fields."""

    page: int
    student: int
    code: str
    sheet_page: int
    sheet_pages: int
    identity: str
    qr: tuple[float, float, float]
    fields: list[Field] = field(default_factory=list)
    texts: list[tuple[float, float, float, str, bool]] = field(default_factory=list)  # x, y, size, text, bold
    boxes: list[tuple[float, float, float, float, bool]] = field(default_factory=list)  # x, y, w, h, grey

    def to_json(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "student": self.student,
            "code": self.code,
            "sheet_page": self.sheet_page,
            "sheet_pages": self.sheet_pages,
            "identity": self.identity,
            "qr": {"x": self.qr[0], "y": self.qr[1], "size": self.qr[2]},
        }


@dataclass(frozen=True, slots=True)
class _Block:
    """A piece of a sheet placed as a whole: a number grid, a row of letters, or a box to write in."""

    kind: Kind
    column: str
    title: str
    width: float
    height: float
    answer: SingleAnswer | ExplainAnswer | None
    grid: NumberGrid | None = None
    entry: int = 0
    entries: int = 1
    shape: tuple[int, ...] = ()
    key: str = ""  # the right answer's text, as the bubbles spell it ("" when not bubbled)
    tag: str = ""  # the field's id within the sheet: q3b, q3b.e1


def _grid_width(grid: NumberGrid) -> float:
    width = len(grid.positions()) * PITCH_X
    return width + (16.0 if grid.exponent else 0.0) + 6.0


def _grid_height() -> float:
    return HEAD + WRITE_IN + 3.0 + 10 * PITCH_Y


def _fmt(value: float) -> float:
    return round(value, 2)


def export_id(plan: ClassPlan, paper: Paper) -> str:
    """A short id of the export (bank, seed, items, class size, paper): printed in every QR code, so a
    page scanned against the wrong ``answer-sheets.json`` is refused, not misread."""
    text = json.dumps([plan.bank, plan.master_seed, list(plan.items), len(plan.sheets), paper])
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def columns(plan: ClassPlan) -> list[str]:
    """The answers-file columns of this class, as `quiz grade --template` writes them."""
    from attnquiz.engine.plan.columns import template_csv

    sample = ClassPlan(plan.bank, plan.title, plan.master_seed, plan.items, plan.sheets[:1], plan.skipped)
    return template_csv(sample).splitlines()[0].split(",") if len(plan.items) else []


def _blocks(
    number: int, item: str, answer: Answer, mistakes: Sequence[Mistake], label: str = ""
) -> list[_Block]:
    from attnquiz.engine.plan.columns import mark_column, part_column

    column = part_column(item, label, number) if label else item
    title = f"{number}{f' ({label})' if label else ''}"
    tag = f"q{number}{label}"
    if isinstance(answer, PartsAnswer):  # a question in parts is laid out part by part (`sheet_blocks`)
        raise ValueError(f"{item}: a question in parts has a block per part")
    if isinstance(answer, ExplainAnswer):
        height = 150.0
        return [_Block("concept", mark_column(item, len(answer.points)), title, 0.0, height, answer, tag=tag)]
    if isinstance(answer, CodeAnswer):  # code is written in the box and marked by hand, as a formula is
        return [_Block("formula", column, title, 0.0, 150.0, None, key=CODE_BY_HAND, tag=tag)]
    if isinstance(answer, ChoiceAnswer):
        width = max(len(answer.options) * PITCH_X + 8.0, 70.0)
        key = ", ".join(sorted(answer.correct_letters))
        return [_Block("choice", column, title, width, HEAD + 2 * BUBBLE_R + 12.0, answer, key=key, tag=tag)]
    if not isinstance(answer, NumericAnswer | IntegerAnswer | VectorAnswer | MatrixAnswer | ShapeAnswer):
        return [_Block("formula", column, title, 0.0, 64.0, answer, key=answer.format(), tag=tag)]
    grid = number_grid(answer, mistakes)
    if grid is None:  # a symbolic shape: written by hand
        return [_Block("formula", column, title, 0.0, 64.0, answer, key=answer.format(), tag=tag)]
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        text = (
            answer.tolerance.format(answer.value) if isinstance(answer, NumericAnswer) else str(answer.value)
        )
        key = scientific(text) if grid.exponent else text
        return [
            _Block("number", column, title, _grid_width(grid), _grid_height(), answer, grid, key=key, tag=tag)
        ]
    if isinstance(answer, ShapeAnswer):
        values = [str(d) for d in answer.dims]
        shape: tuple[int, ...] = (len(values),)
    elif isinstance(answer, VectorAnswer):
        values = [answer.tolerance.format(v) for v in answer.values]
        shape = (len(values),)
    else:
        values = [answer.tolerance.format(v) for row in answer.rows for v in row]
        shape = answer.shape
    out = []
    for index, text in enumerate(values):
        where = f"[{index + 1}]" if len(shape) == 1 else f"[{index // shape[1] + 1},{index % shape[1] + 1}]"
        out.append(
            _Block(
                "number",
                column,
                f"{title} {where}",
                _grid_width(grid),
                _grid_height(),
                answer,
                grid,
                entry=index,
                entries=len(values),
                shape=shape,
                key=scientific(text) if grid.exponent else text,
                tag=f"{tag}.e{index}",
            )
        )
    return out


def sheet_blocks(sheet: Sheet) -> list[_Block]:
    """Every block of one student's sheet, in question order (a part's blocks after its question's)."""
    out: list[_Block] = []
    for number, question in enumerate(sheet.questions, start=1):
        parts = question.variant.parts
        if parts:
            for part in parts:
                out += _blocks(number, question.item_id, part.answer, part.mistakes, part.label)
        else:
            out += _blocks(number, question.item_id, question.answer, question.variant.mistakes)
    return out


@dataclass(slots=True)
class SheetLayout:
    """One student's answer sheet: its pages, and the right answer's bubbles per answers-file column."""

    student: int
    code: str
    pages: list[PageLayout]
    key: dict[str, list[str]]


class _Pager:
    """Places blocks on shelves, left to right and top to bottom, starting pages as they fill."""

    def __init__(self, paper: Paper, first_page: int, sheet: Sheet, ident: str, class_size: int) -> None:
        self.width, self.height = PAGE_SIZES[paper]
        self.first_page = first_page
        self.sheet = sheet
        self.ident = ident
        self.class_size = class_size
        self.pages: list[PageLayout] = []
        self.x = self.y = self.shelf = 0.0

    @property
    def left(self) -> float:
        return CONTENT_INSET

    @property
    def right(self) -> float:
        return self.width - CONTENT_INSET

    @property
    def bottom(self) -> float:
        return self.height - CONTENT_INSET - 10.0

    def new_page(self) -> PageLayout:
        number = len(self.pages) + 1
        page = PageLayout(
            self.first_page + len(self.pages),
            self.sheet.student,
            self.sheet.code,
            number,
            0,
            "",
            (_fmt(self.right - QR_SIZE), _fmt(CONTENT_INSET - 8.0), QR_SIZE),
        )
        self.pages.append(page)
        self.y = self.header(page)
        self.x, self.shelf = self.left, 0.0
        return page

    def header(self, page: PageLayout) -> float:
        top = CONTENT_INSET - 6.0
        page.texts.append((self.left, top, 13.0, "Answer sheet", True))
        page.texts.append(
            (self.left, top + 18.0, 9.0, f"Student {self.sheet.student} · variant {self.sheet.code}", False)
        )
        if page.sheet_page > 1:
            return top + QR_SIZE + 14.0
        lines = [
            "Fill each bubble completely with a dark pen or pencil: ●, not ✓ or ✗.",
            "Numbers: write each digit in its box, then fill its bubble below, one per column.",
            "The decimal point is printed: a number has no gaps (leave columns empty at the",
            "left of the whole part and at the right of the decimals); − is the sign.",
            "A count goes right-aligned or left-aligned, as long as its digits are together.",
            "To change a mark: erase it fully, or cross the bubble out with an X that reaches",
            "beyond its circle (a crossed-out bubble stays cancelled), then fill the right one.",
            "Formulas and explanations: write them in the box; the marker fills the bubbles",
            "at its right. Do not write near the black corner squares or the QR code.",
        ]
        for k, line in enumerate(lines):
            page.texts.append((self.left, top + 36.0 + 10.5 * k, 7.6, line, False))
        return top + 36.0 + 10.5 * len(lines) + 12.0

    def place(self, block: _Block) -> tuple[PageLayout, float, float, float]:
        """Where ``block`` goes: its page, x, y and width (a box to write in takes the whole width)."""
        width = block.width or (self.right - self.left)
        if not self.pages:
            self.new_page()
        if self.x + width > self.right + 0.01:
            self.y += self.shelf + GAP
            self.x, self.shelf = self.left, 0.0
        if self.y + block.height > self.bottom:
            self.new_page()
        page = self.pages[-1]
        x, y = self.x, self.y
        self.x += width + GAP
        self.shelf = max(self.shelf, block.height)
        return page, x, y, width


def layout_sheet(plan: ClassPlan, sheet: Sheet, paper: Paper, first_page: int) -> SheetLayout:
    """The answer sheet of ``sheet``, its first page numbered ``first_page`` in the whole PDF."""
    ident = export_id(plan, paper)
    pager = _Pager(paper, first_page, sheet, ident, len(plan.sheets))
    pager.new_page()
    key: dict[str, list[str]] = {}
    _student_grid(pager, len(plan.sheets))
    for block in sheet_blocks(sheet):
        page, x, y, width = pager.place(block)
        fid = f"s{sheet.student}.{block.tag}"
        made = _field(block, fid, page, sheet.student, x, y, width)
        page.fields.append(made)
        if block.key and made.grid is not None:
            spelled = made.grid.spell(block.key)
            if spelled is None:  # the grid is sized from this answer: a bug, never a sheet without its key
                raise AssertionError(f"{fid}: the answer {block.key} does not fit its grid")
            chosen = [b.id for b in made.bubbles if spelled.get(b.position) == b.value]
            key.setdefault(made.column, []).extend(chosen)
        elif block.kind == "choice":
            letters = set(block.key.split(", "))
            key.setdefault(made.column, []).extend(b.id for b in made.bubbles if b.value in letters)
    pages = pager.pages
    for page in pages:
        page.sheet_pages = len(pages)
        page.identity = "|".join(
            [QR_PREFIX, ident, str(sheet.student), sheet.code, str(page.sheet_page), str(len(pages))]
        )
    return SheetLayout(sheet.student, sheet.code, pages, key)


def _student_grid(pager: _Pager, class_size: int) -> None:
    digits = len(str(class_size))
    grid = NumberGrid(sign=False, integers=digits, decimals=0)
    page = pager.pages[-1]
    width = _grid_width(grid) + 10.0
    x = pager.right - QR_SIZE - 30.0 - max(width, 40.0)
    y = CONTENT_INSET - 6.0
    made = _field(
        _Block("student", "student", "Student number", width, _grid_height(), None, grid, tag="id"),
        f"s{pager.sheet.student}.id",
        page,
        pager.sheet.student,
        x,
        y,
        width,
    )
    page.fields.append(made)
    pager.y = max(pager.y, y + _grid_height() + GAP)


def _field(
    block: _Block, fid: str, page: PageLayout, student: int, x: float, y: float, width: float
) -> Field:
    made = Field(
        fid,
        page.page,
        student,
        block.kind,
        block.column,
        block.title,
        (_fmt(x), _fmt(y), _fmt(width), _fmt(block.height)),
        block.grid,
        block.entry,
        block.entries,
        block.shape,
    )
    title = "Student no." if block.kind == "student" else f"Q{block.title}"
    page.texts.append((x, y, 8.0, title, True))
    if block.kind in ("number", "student"):
        assert block.grid is not None
        _number_bubbles(made, page, block.grid, x, y + HEAD)
    elif block.kind == "choice":
        assert isinstance(block.answer, ChoiceAnswer)
        made.multiple = block.answer.multiple
        note = "all that apply" if made.multiple else "one"
        page.texts.append((x + 5.0 * len(title) + 8.0, y + 1.0, 6.5, f"(fill {note})", False))
        for k, letter in enumerate(LETTERS[: len(block.answer.options)]):
            cx, cy = x + BUBBLE_R + 2.0 + k * PITCH_X, y + HEAD + 4.0 + BUBBLE_R
            made.bubbles.append(_bubble(made, page, cx, cy, "letter", letter, f"option {letter}"))
    else:
        marker = (
            56.0
            if block.kind == "formula"
            else 20.0
            + PITCH_X * (len(block.answer.points) + 1 if isinstance(block.answer, ExplainAnswer) else 2)
        )
        write = (x, y + HEAD, width - marker - 8.0, block.height - HEAD)
        made.write_box = (_fmt(write[0]), _fmt(write[1]), _fmt(write[2]), _fmt(write[3]))
        page.boxes.append((*made.write_box, False))
        mx = x + width - marker
        page.texts.append((mx, y + HEAD + 2.0, 6.5, "Marker only:", False))
        if block.kind == "formula":
            made.answer = block.key
            for k, value in enumerate(("right", "wrong")):
                cx, cy = mx + 8.0 + BUBBLE_R + k * 22.0, y + HEAD + 22.0
                made.bubbles.append(_bubble(made, page, cx, cy, "mark", value, f"marked {value}"))
                page.texts.append((cx - 8.0, cy + BUBBLE_R + 2.0, 6.5, value, False))
        else:
            assert isinstance(block.answer, ExplainAnswer)
            made.marks = len(block.answer.points)
            page.texts.append((mx, y + HEAD + 10.0, 6.5, f"key points (0-{made.marks})", False))
            for k in range(made.marks + 1):
                cx, cy = mx + 4.0 + BUBBLE_R + k * PITCH_X, y + HEAD + 30.0
                made.bubbles.append(_bubble(made, page, cx, cy, "mark", str(k), f"mark {k}"))
    return made


def _number_bubbles(made: Field, page: PageLayout, grid: NumberGrid, x: float, y: float) -> None:
    cx = x + BUBBLE_R + 2.0
    for position in grid.positions():
        if position == "esign":
            page.texts.append((cx - 4.0, y + 2.0, 8.0, "×10", False))
            cx += 16.0
        top = y + WRITE_IN + 3.0 + BUBBLE_R
        if position in ("sign", "esign"):
            page.texts.append((cx - 5.0, y + 5.0, 5.5, "sign", False))
            made.bubbles.append(_bubble(made, page, cx, top, position, "-", "minus sign"))
        else:
            page.boxes.append((_fmt(cx - PITCH_X / 2 + 1.0), _fmt(y), PITCH_X - 2.0, WRITE_IN, True))
            for digit in range(10):
                means = f"{_position_name(position)}: {digit}"
                made.bubbles.append(
                    _bubble(made, page, cx, top + digit * PITCH_Y, position, str(digit), means)
                )
        if position == f"i{grid.integers - 1}" and grid.decimals:
            page.texts.append((cx + PITCH_X / 2 - 2.4, y + WRITE_IN - 13.0, 17.0, ".", True))
        cx += PITCH_X


def _position_name(position: str) -> str:
    kind, index = position[0], int(position[1:])
    return {"i": "whole-part digit", "d": "decimal", "e": "power-of-ten digit"}[kind] + f" {index + 1}"


def _bubble(
    made: Field, page: PageLayout, x: float, y: float, position: str, value: str, means: str
) -> Bubble:
    what = "student number" if made.kind == "student" else f"question {made.title}"
    return Bubble(
        f"{made.id}.{position}.{value}",
        page.page,
        _fmt(x),
        _fmt(y),
        BUBBLE_R,
        made.id,
        position,
        value,
        f"{what}: {means}",
    )


def _bubble_label(bubble: Bubble) -> str:
    if bubble.value == "-":
        return "−"
    return {"right": "✓", "wrong": "✗"}.get(bubble.value, bubble.value)


def layouts(plan: ClassPlan, paper: Paper, sheets: Iterable[Sheet] | None = None) -> Iterator[SheetLayout]:
    """Every student's answer sheet in class order, pages numbered through the whole PDF."""
    page = 1
    for sheet in plan.sheets if sheets is None else sheets:
        made = layout_sheet(plan, sheet, paper, page)
        page += len(made.pages)
        yield made


def first_pages(plan: ClassPlan, paper: Paper, sheets: Sequence[Sheet]) -> int:
    """The page number in the whole answer-sheet PDF of the first of ``sheets`` (counted from the plan)."""
    page = 1
    first = sheets[0].student if sheets else 1
    for sheet in plan.sheets:
        if sheet.student == first:
            return page
        page += len(layout_sheet(plan, sheet, paper, page).pages)
    return page


# ---------------------------------------------------------------------------------------------
# Typst
# ---------------------------------------------------------------------------------------------

_PREAMBLE = """\
#set document(title: TITLE)
#set text(font: "New Computer Modern", size: 9pt, lang: "en", hyphenate: false)
#let R = RADIUSpt
#let bub(x, y, t) = place(top + left, dx: x * 1pt - R, dy: y * 1pt - R,
  circle(radius: R, stroke: 0.6pt + black, inset: 0pt,
    align(center + horizon, text(font: "DejaVu Sans Mono", size: 5.4pt, fill: luma(175), t))))
#let mark(x, y) = place(top + left, dx: x * 1pt, dy: y * 1pt,
  rect(width: MARKpt, height: MARKpt, fill: black))
#let txt(x, y, s, b, t) = place(top + left, dx: x * 1pt, dy: y * 1pt,
  text(size: s * 1pt, weight: if b { "bold" } else { "regular" }, t))
#let bx(x, y, w, h, g) = place(top + left, dx: x * 1pt, dy: y * 1pt,
  rect(width: w * 1pt, height: h * 1pt, stroke: if g { 0.5pt + luma(140) } else { 0.7pt + black }))
#let qr(x, y, m, runs) = for (r, c, n) in runs {
  place(top + left, dx: (x + c * m) * 1pt, dy: (y + r * m) * 1pt,
    rect(width: n * m * 1pt + 0.05pt, height: m * 1pt + 0.05pt, fill: black, stroke: none))
}
"""


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _qr_runs(identity: str) -> tuple[int, list[tuple[int, int, int]]]:
    import segno

    code = segno.make(identity, error="m", micro=False)
    rows = [list(row) for row in code.matrix]
    runs: list[tuple[int, int, int]] = []
    for r, row in enumerate(rows):
        c = 0
        while c < len(row):
            if row[c]:
                start = c
                while c < len(row) and row[c]:
                    c += 1
                runs.append((r, start, c - start))
            else:
                c += 1
    return len(rows), runs


def page_typst(page: PageLayout, paper: Paper) -> str:
    """One page's Typst: every element placed at the layout's coordinates."""
    width, height = PAGE_SIZES[paper]
    out = [f"#page(width: {width}pt, height: {height}pt, margin: 0pt)["]
    far_x, far_y = width - MARK_INSET - MARK_SIZE, height - MARK_INSET - MARK_SIZE
    for x, y in ((MARK_INSET, MARK_INSET), (far_x, MARK_INSET), (MARK_INSET, far_y), (far_x, far_y)):
        out.append(f"#mark({_fmt(x)}, {_fmt(y)})")
    size, runs = _qr_runs(page.identity)
    qx, qy, qs = page.qr
    module = qs / size
    out.append(f"#qr({qx}, {qy}, {module!r}, ({', '.join(f'({r}, {c}, {n})' for r, c, n in runs)},))")
    shown = page.identity.split("|")
    caption = f"student {page.student} · page {page.sheet_page}/{page.sheet_pages}"
    out.append(f"#txt({_fmt(qx)}, {_fmt(qy + qs + 2)}, 6, false, {_string(page.code + ' · ' + shown[1])})")
    out.append(f"#txt({_fmt(qx)}, {_fmt(qy + qs + 9)}, 6, false, {_string(caption)})")
    for x, y, w, h, grey in page.boxes:
        out.append(f"#bx({_fmt(x)}, {_fmt(y)}, {_fmt(w)}, {_fmt(h)}, {'true' if grey else 'false'})")
    for x, y, size_, text, bold in page.texts:
        out.append(f"#txt({_fmt(x)}, {_fmt(y)}, {size_}, {'true' if bold else 'false'}, {_string(text)})")
    for made in page.fields:
        for bubble in made.bubbles:
            out.append(f"#bub({bubble.x}, {bubble.y}, {_string(_bubble_label(bubble))})")
    out.append("]")
    return "\n".join(out)


def typst(plan: ClassPlan, sheets: Sequence[Sheet], paper: Paper) -> str:
    """The Typst source of the answer sheets of ``sheets``."""
    head = (
        _PREAMBLE.replace("TITLE", _string(f"{plan.title}: answer sheets"))
        .replace("RADIUS", str(BUBBLE_R))
        .replace("MARK", str(MARK_SIZE))
    )
    out = [head]
    for made in layouts(plan, paper, sheets):
        out.extend(page_typst(page, paper) for page in made.pages)
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# The JSON contract
# ---------------------------------------------------------------------------------------------


def write_json(plan: ClassPlan, paper: Paper, out: BinaryIO) -> None:
    """``answer-sheets.json``, written a student at a time (a class of a thousand is about 100 MB).

    Keys: ``format``, ``version``, ``export`` (the id in every QR code), ``bank``, ``title``,
    ``master_seed``, ``students``, ``paper``, ``page_size`` ([width, height] in points),
    ``corner_marks`` (centres and side), ``columns`` (the answers-file header), ``pages``,
    ``fields``, ``bubbles`` and ``key`` (see the module docstring and docs/paper.md).
    """
    width, height = PAGE_SIZES[paper]
    half = MARK_SIZE / 2
    near, far_x, far_y = MARK_INSET + half, width - MARK_INSET - half, height - MARK_INSET - half
    head = {
        "format": FORMAT,
        "version": VERSION,
        "export": export_id(plan, paper),
        "bank": plan.bank,
        "title": plan.title,
        "master_seed": plan.master_seed,
        "students": len(plan.sheets),
        "paper": paper,
        "page_size": [width, height],
        "corner_marks": [
            {"x": _fmt(x), "y": _fmt(y), "size": MARK_SIZE}
            for x, y in ((near, near), (far_x, near), (near, far_y), (far_x, far_y))
        ],
        "columns": columns(plan),
    }
    text = json.dumps(head, ensure_ascii=False)
    out.write(text[:-1].encode())
    # The sheets are built once, a student at a time; each section goes to a temporary file as it comes
    # and the sections are copied out in order at the end, so memory does not grow with the class.
    import shutil
    import tempfile

    names = ("pages", "fields", "bubbles", "key")
    first = dict.fromkeys(names, True)
    with (
        tempfile.TemporaryFile() as pages,
        tempfile.TemporaryFile() as fields,
        tempfile.TemporaryFile() as bubbles,
        tempfile.TemporaryFile() as keys,
    ):
        spools = dict(zip(names, (pages, fields, bubbles, keys), strict=True))

        def put(name: str, data: bytes) -> None:
            spools[name].write(data if first[name] else b",\n" + data)
            first[name] = False

        for made in layouts(plan, paper):
            for page in made.pages:
                put("pages", json.dumps(page.to_json(), ensure_ascii=False).encode())
                for item in page.fields:
                    put("fields", json.dumps(item.to_json(), ensure_ascii=False).encode())
                    for bubble in item.bubbles:
                        put("bubbles", json.dumps(bubble.to_json(), ensure_ascii=False).encode())
            key = json.dumps(made.key, ensure_ascii=False).encode()
            put("key", json.dumps(str(made.student)).encode() + b": " + key)
        for name in names:
            opening, closing = (b"{\n", b"\n}") if name == "key" else (b"[\n", b"\n]")
            out.write(f', "{name}": '.encode() + opening)
            spools[name].seek(0)
            shutil.copyfileobj(spools[name], out)
            out.write(closing)
        out.write(b"}\n")


def json_bytes(plan: ClassPlan, paper: Paper) -> bytes:
    import io

    buffer = io.BytesIO()
    write_json(plan, paper, buffer)
    return buffer.getvalue()


__all__ = [
    "FORMAT",
    "PAGE_SIZES",
    "PIECE_STUDENTS",
    "QR_PREFIX",
    "Bubble",
    "Field",
    "NumberGrid",
    "PageLayout",
    "SheetLayout",
    "columns",
    "export_id",
    "json_bytes",
    "layout_sheet",
    "layouts",
    "number_grid",
    "page_typst",
    "scientific",
    "typst",
    "write_json",
]
