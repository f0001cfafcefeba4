"""The marks of a class as data: each cell and row, the class's `ClassMarks`, its summary and JSON.

A `Cell` is one graded answer, a `Row` one student's (or a row that could not be graded, with the
reason). `ClassMarks` holds every row of a class; a class graded as a stream keeps none of them,
only its `Tally`, which gathers the same `Summary` a row at a time (its means summed by
`RunningSum`, which ends where ``sum()`` ends, bit for bit). How the rows are graded is
`attnquiz.engine.classwork.grading`; how they are written, `attnquiz.engine.classwork.marks_writer`.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from attnquiz.engine.classwork.answers_file import part_heading

CellStatus = Literal["correct", "partial", "wrong", "invalid", "blank", "unmarked", "review"]
"""``unmarked``: an answer to a concept question that awaits its mark by hand (scores 0 until then);
``review``: a cell `quiz scan` left for its review (``?review N``), not an answer yet (scores 0 until
the review settles it and the class is graded again)."""

AWAITS_REVIEW = "awaits the scan's review"
"""The one wording of a ``?review N`` cell, in the marks' notes, the summary, the JSON and each
student's page (a number, a part, a concept answer or its mark alike)."""


def review_summary(count: int, columns: Sequence[str]) -> str:
    """What the class summary and the report say of the cells left for the scan's review."""
    cells = "1 answer awaits" if count == 1 else f"{count} answers await"
    return (
        f"{cells} the scan's review ({', '.join(columns)}): they count 0 until then. Settle them with "
        "`quiz scan --fix` (or `quiz serve --scan`) and grade again."
    )


@dataclass(frozen=True, slots=True)
class Cell:
    """One graded answer: what was written, how it was graded, and the mistake it showed."""

    item: str
    response: str
    status: CellStatus
    score: float
    mistake: str | None
    feedback: str
    # A concept question's cell: the mark given by hand (None while unmarked), out of ``points``
    # (its key points, a mark each); ``score`` is then mark / points, so the question weighs 1.
    mark: float | None = None
    points: int = 0
    # The marks the column is worth: a part's weight (`attnquiz.engine.answers.kinds.Part.weight`), 1 for
    # any other question. ``score`` is 0..1; the cell earns ``score * worth`` (`marks`).
    worth: float = 1.0
    # Why the cell could not be graded (a hand mark that is not a mark): it earns nothing until the
    # sheet is fixed, the rest of its row is graded, and the marks and the summary say so.
    problem: str = ""
    # The scan's ``?review N`` of a cell left for its review (status "review"), "" for any other.
    review: str = ""

    @property
    def marks(self) -> float:
        """What the cell earns: its score times what it is worth."""
        return self.score * self.worth

    def __reduce__(self) -> tuple[Any, ...]:
        # A worker sends its rows back pickled: the fields in order, rebuilt by the constructor (a
        # frozen slots dataclass is otherwise restored one object.__setattr__ per field).
        return (Cell, tuple(getattr(self, name) for name in _CELL_FIELDS))


@dataclass(frozen=True, slots=True)
class Row:
    """One student's marks, or (with ``problem``) a row that could not be graded and why."""

    line: int
    student: str
    name: str
    code: str
    cells: tuple[Cell, ...] = ()
    problem: str = ""

    def __reduce__(self) -> tuple[Any, ...]:
        return (Row, tuple(getattr(self, name) for name in _ROW_FIELDS))

    @property
    def graded(self) -> bool:
        """Whether the row was graded (it has no problem)."""
        return not self.problem

    @property
    def total(self) -> float:
        """The sum of the row's marks (each cell's score times what it is worth)."""
        return sum(cell.marks for cell in self.cells)


_CELL_FIELDS = tuple(f.name for f in fields(Cell))
_ROW_FIELDS = tuple(f.name for f in fields(Row))


@dataclass(frozen=True, slots=True)
class ItemSummary:
    """How the class did on one question."""

    item: str
    mean: float
    counts: dict[str, int]
    worth: float = 1.0
    """The marks the question (or part) is worth; ``mean`` is in marks, out of it."""


@dataclass(frozen=True, slots=True)
class Summary:
    """The class at a glance: graded and bad rows, the mean total, each question, the common mistakes."""

    graded: int
    problems: int
    out_of: float
    mean_total: float
    items: tuple[ItemSummary, ...]
    mistakes: tuple[tuple[str, str, int], ...]  # (item, tag, how many), most common first
    unmarked: int = 0
    """Answers to concept questions that await a mark by hand (they count 0 in the totals until then)."""
    review: int = 0
    """Cells that await the scan's review (``?review N``; they count 0 in the totals until then)."""
    bad_cells: tuple[tuple[int, str], ...] = ()
    """Cells that could not be graded, as (line, "column: why"), in file order (they count 0)."""

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON."""
        return {
            "graded": self.graded,
            "problems": self.problems,
            "out_of": plain_number(self.out_of),
            "mean_total": self.mean_total,
            "unmarked": self.unmarked,
            "review": self.review,
            "bad_cells": [{"line": line, "problem": problem} for line, problem in self.bad_cells],
            "items": [
                {"item": i.item, "mean": i.mean, "worth": plain_number(i.worth), "counts": i.counts}
                for i in self.items
            ],
            "mistakes": [{"item": i, "tag": t, "count": n} for i, t, n in self.mistakes],
        }


@dataclass(frozen=True, slots=True)
class ClassMarks:
    """The marks of a class: the questions (item ids, in column order) and one row per data row."""

    bank: str
    file: str
    items: tuple[str, ...]
    rows: tuple[Row, ...]
    has_names: bool = False
    delimiter: str = ","
    bom: bool = False

    @property
    def decimal_comma(self) -> bool:
        """Whether the file is from a comma-decimal locale (``;`` between cells, ``2,75``)."""
        return self.delimiter == ";"

    @property
    def problems(self) -> list[Row]:
        """The rows that could not be graded."""
        return [row for row in self.rows if not row.graded]

    @property
    def worths(self) -> tuple[float, ...]:
        """What each column is worth, in marks: a part's weight, 1 for any other question (the same
        for every variant of an item; 1 for a column no row could grade)."""
        for row in self.rows:
            if row.graded and len(row.cells) == len(self.items):
                return tuple(cell.worth for cell in row.cells)
        return (1.0,) * len(self.items)

    @property
    def out_of(self) -> float:
        """The marks a student can earn: the sum of what the columns are worth."""
        return sum(self.worths)

    def counting(self) -> str:
        """How the parts count, as the summary says it ("" when no column is a part)."""
        return counting(self.items, self.worths)

    def summary(self, top: int = 10) -> Summary:
        """Mean per question, the mean total and the ``top`` most common named mistakes."""
        tally = Tally(self.items)
        for row in self.rows:
            tally.add(row)
        return tally.summary(top)

    def to_json(self) -> dict[str, Any]:
        """Every row and the summary, for scripts."""
        return {
            "bank": self.bank,
            "file": self.file,
            "items": list(self.items),
            "rows": [row_json(row) for row in self.rows],
            "summary": self.summary().to_json(),
        }


def row_json(row: Row) -> dict[str, Any]:
    """One row of the marks as JSON (`ClassMarks.to_json` writes one for each row)."""
    return {
        "line": row.line,
        "student": row.student,
        "name": row.name,
        "code": row.code,
        "problem": row.problem or None,
        "total": row.total if row.graded else None,
        "cells": [
            {
                "item": c.item,
                "response": c.response,
                "status": c.status,
                "score": c.score,
                # A part that weighs more than 1: what the cell earns, and out of what.
                **({"marks": c.marks, "worth": plain_number(c.worth)} if c.worth != 1 else {}),
                "mistake": c.mistake,
                **({"mark": c.mark, "points": c.points} if c.points else {}),
                **({"review": c.review} if c.review else {}),
            }
            for c in row.cells
        ],
    }


_STATUSES: tuple[CellStatus, ...] = ("correct", "partial", "wrong", "invalid", "blank", "unmarked", "review")
AWAITING: frozenset[CellStatus] = frozenset({"unmarked", "review"})
"""Statuses of a cell with no mark yet: its score cell in the marks is empty, not a 0 that looks like one."""


def counting(items: Sequence[str], worths: Sequence[float]) -> str:
    """How the parts count, as the summary says it ("" when no column is a part): ``items`` are the
    columns, ``worths`` what each is worth."""
    parts = [
        (item, worth) for item, worth in zip(items, worths, strict=True) if part_heading(item) is not None
    ]
    if not parts:
        return ""
    weighted = [f"{item} counts {plain_number(worth)}" for item, worth in parts if worth != 1]
    if not weighted:
        return "Each part of a question in parts counts 1 mark, as a question does."
    return (
        "A question counts 1 mark and a part its weight: "
        + "; ".join(weighted)
        + (", the other parts 1 each." if len(weighted) < len(parts) else ".")
    )


class RunningSum:
    """A sum kept a term at a time that ends, bit for bit, where ``sum()`` of the same terms in the
    same order ends: a summary gathered row by row says the same means as one of every row at once.

    ``sum()`` starts from the int 0 and adds ints exactly; from the first float on it adds floats,
    plainly before Python 3.12 and from 3.12 with Neumaier's compensation (ints then plainly)."""

    __slots__ = ("_compensation", "_exact", "_float")

    _COMPENSATED = sys.version_info >= (3, 12)

    def __init__(self) -> None:
        self._exact = 0
        self._float: float | None = None
        self._compensation = 0.0

    def add(self, term: float) -> None:
        """Add one term (a float, or an int)."""
        if self._float is None:
            if isinstance(term, int):
                self._exact += term
            else:
                self._float = self._exact + term
            return
        if not self._COMPENSATED or isinstance(term, int):
            self._float += term
            return
        total = self._float + term
        if abs(self._float) >= abs(term):
            self._compensation += (self._float - total) + term
        else:
            self._compensation += (term - total) + self._float
        self._float = total

    @property
    def value(self) -> float:
        """The sum so far, as ``sum()`` would give it."""
        if self._float is None:
            return self._exact
        if self._COMPENSATED and self._compensation and math.isfinite(self._compensation):
            return self._float + self._compensation
        return self._float


class Tally:
    """A class's `Summary` gathered a row at a time, in file order: sums and counts per question, the
    named mistakes' counts, the rows that could not be graded and the cells that could not; never
    the graded rows themselves (a class graded as a stream keeps this, not its rows)."""

    def __init__(self, items: tuple[str, ...]) -> None:
        self.items = items
        self.rows = 0
        self.graded = 0
        self.problems: list[Row] = []
        """The rows that could not be graded, in file order."""
        self._worths: tuple[float, ...] | None = None
        self._counts: list[Counter[CellStatus]] = [Counter() for _ in items]
        self._marks = [RunningSum() for _ in items]
        self._marked = [0 for _ in items]
        self._totals = RunningSum()
        self._mistakes: Counter[tuple[str, str]] = Counter()
        self._unmarked = 0
        self._review = 0
        self._bad_cells: list[tuple[int, str]] = []

    def add(self, row: Row) -> None:
        """Count one row (rows are added in file order)."""
        self.rows += 1
        if not row.graded:
            self.problems.append(row)
            return
        self.graded += 1
        if self._worths is None and len(row.cells) == len(self.items):
            self._worths = tuple(cell.worth for cell in row.cells)
        for index, cell in enumerate(row.cells):
            self._counts[index][cell.status] += 1
            self._unmarked += cell.status == "unmarked"
            self._review += cell.status == "review"
            if cell.problem:
                self._bad_cells.append((row.line, cell.problem))
            # Those marked: an answer awaiting its mark or the scan's review has no mark yet.
            if cell.status in AWAITING or cell.problem:
                continue
            self._marks[index].add(cell.marks)
            self._marked[index] += 1
            if cell.mistake:
                self._mistakes[self.items[index], cell.mistake] += 1
        self._totals.add(row.total)

    @property
    def worths(self) -> tuple[float, ...]:
        """What each column is worth, as `ClassMarks.worths` says it."""
        return self._worths if self._worths is not None else (1.0,) * len(self.items)

    @property
    def out_of(self) -> float:
        """The marks a student can earn: the sum of what the columns are worth."""
        return sum(self.worths)

    def counting(self) -> str:
        """How the parts count, as the summary says it ("" when no column is a part)."""
        return counting(self.items, self.worths)

    def summary(self, top: int = 10) -> Summary:
        """Mean per question, the mean total and the ``top`` most common named mistakes."""
        worths = self.worths
        items = tuple(
            ItemSummary(
                item,
                self._marks[index].value / self._marked[index] if self._marked[index] else 0.0,
                {s: self._counts[index].get(s, 0) for s in _STATUSES},
                worths[index],
            )
            for index, item in enumerate(self.items)
        )
        common = sorted(self._mistakes.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return Summary(
            graded=self.graded,
            problems=self.rows - self.graded,
            out_of=self.out_of,
            mean_total=self._totals.value / self.graded if self.graded else 0.0,
            items=items,
            mistakes=tuple((item, tag, n) for (item, tag), n in common),
            unmarked=self._unmarked,
            review=self._review,
            bad_cells=tuple(self._bad_cells),
        )


def plain_number(value: float) -> float | int:
    """A number of marks as JSON writes it: 2 rather than 2.0 when it is whole."""
    return int(value) if float(value).is_integer() else value


__all__ = [
    "AWAITING",
    "AWAITS_REVIEW",
    "Cell",
    "CellStatus",
    "ClassMarks",
    "ItemSummary",
    "Row",
    "RunningSum",
    "Summary",
    "Tally",
    "counting",
    "plain_number",
    "review_summary",
    "row_json",
]
