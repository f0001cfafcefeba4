"""The class report: its numbers (facility, discrimination, each named mistake's frequency, option
shares by text), a page per student with their own variant's solution, and everything escaped."""

from __future__ import annotations

import csv
import io
import re

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.classwork.grading import grade_text
from attnquiz.engine.classwork.report import item_stats, pearson, report_files
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.engine.plan.columns import template_csv
from attnquiz.engine.seeding import seed_from_code

HOSTILE = '<script>alert("x")</script>'


def _class(students: int = 12) -> tuple[object, object, list[str]]:
    bank = banks.load("week1")
    plan = plan_class(
        bank, students=students, master_seed=77, items=["weighted-sum-first-element", "long-sentence-models"]
    )
    rows = list(csv.reader(io.StringIO(template_csv(plan))))
    header = rows[0]
    tags: list[str] = []
    for k, row in enumerate(rows[1:]):
        seed = seed_from_code(row[2])
        number = bank.get("weighted-sum-first-element").question(seed)
        choice = bank.get("long-sentence-models").question(seed)
        if k % 3 == 0:
            mistake = number.variant.mistakes[0]
            row[header.index("weighted-sum-first-element")] = mistake.format(number.answer)
            tags.append(mistake.tag)
        elif k % 3 == 1:
            row[header.index("weighted-sum-first-element")] = number.answer.format()
        else:
            row[header.index("weighted-sum-first-element")] = HOSTILE
        row[header.index("long-sentence-models")] = choice.answer.format() if k % 2 else "A"
    rows[1][1] = HOSTILE
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return bank, grade_text(bank, buffer.getvalue(), master_seed=77, students=students), tags


def test_the_numbers() -> None:
    bank, marks, tags = _class()
    stats = {s.column: s for s in item_stats(bank, marks)}  # type: ignore[arg-type]
    numeric = stats["weighted-sum-first-element"]
    assert numeric.n == 12
    assert numeric.facility == pytest.approx(4 / 12)
    (tag, count, feedback), *_ = numeric.mistakes
    assert (tag, count) == (tags[0], 4)
    assert feedback
    choice = stats["long-sentence-models"]
    assert sum(correct for _, correct, _ in choice.options) >= 1
    assert {text for text, _, _ in choice.options}  # shares by the option's text
    assert choice.point_biserial is None or -1 <= choice.point_biserial <= 1
    assert pearson([0, 1, 0, 1], [1, 2, 1, 2]) == pytest.approx(1.0)
    assert pearson([1, 1, 1], [1, 2, 3]) is None


def test_the_files_are_escaped_and_self_contained() -> None:
    bank, marks, _ = _class()
    files = report_files(bank, marks)  # type: ignore[arg-type]
    assert {"index.html", "items.csv", "mistakes.csv", "options.csv", "topics.csv", "students.csv"} <= set(
        files
    )
    pages = [name for name in files if name.startswith("students/")]
    assert len(pages) == 12
    for name, data in files.items():
        text = data.decode()
        if name.endswith(".html"):
            assert "<script" not in text, name
            assert not re.search(r"(src|href)=\"https?:", text), name
    index = files["index.html"].decode()
    assert "33 %</strong> of the class (4 of 12)" in index
    assert "&lt;script&gt;" in index  # the hostile name, shown as text
    page = files["students/3.html"].decode()
    assert "Worked solution" in page
    assert "&lt;script&gt;" in page  # the hostile answer, shown as text
    students = list(csv.reader(io.StringIO(files["students.csv"].decode())))
    assert students[1][1].startswith("<script")  # not a formula: kept as it is


def test_a_cell_left_for_the_scan_review_is_not_graded_as_an_answer() -> None:
    """`?review N` (a mark `quiz scan` could not decide) awaits its review: never graded "invalid"."""
    bank = banks.load("week1")
    plan = plan_class(bank, students=2, master_seed=77, items=["weighted-sum-first-element"])
    rows = list(csv.reader(io.StringIO(template_csv(plan))))
    column = rows[0].index("weighted-sum-first-element")
    rows[1][column] = "?review 1"
    rows[2][column] = "?review"  # not how the scan writes one: an answer like any other
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    marks = grade_text(bank, buffer.getvalue(), master_seed=77, students=2)
    first, second = (row.cells[0] for row in marks.rows)
    assert first.status == "review"
    assert "quiz scan --fix" in first.feedback
    assert second.status == "invalid"
