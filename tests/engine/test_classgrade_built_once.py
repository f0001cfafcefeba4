"""Issue 28: grading a class builds each student's variant of each item once, a question in parts
(a column per part) included, and never for a blank answer to a question with one answer."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Collection

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.classwork.grading import grade_text
from attnquiz.engine.classwork.marks_writer import marks_csv
from attnquiz.engine.plan.class_plan import plan_class, student_seed
from attnquiz.engine.plan.columns import template_csv
from tests.builds import counted_builds

STUDENTS = 12


def _filled(text: str, blank: Collection[str] = ()) -> str:
    """The template with an answer in every answer cell ("1"; a concept question's mark column
    stays empty), except the columns of ``blank``."""
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    for row in rows[1:]:
        for index, heading in enumerate(header):
            if index >= 3 and not heading.endswith(" mark") and heading.split(" ")[0] not in blank:
                row[index] = "1"
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue()


def test_grading_builds_each_students_variant_of_each_item_once(monkeypatch: pytest.MonkeyPatch) -> None:
    bank = banks.load("week1")
    plan = plan_class(bank, students=STUDENTS, master_seed=2026)  # the whole bank
    text = _filled(template_csv(plan))
    builds = counted_builds(monkeypatch)
    marks = grade_text(bank, text, master_seed=2026)
    assert not marks.problems
    assert len(marks.rows) == STUDENTS
    seeds = {student_seed(2026, student) for student in range(1, STUDENTS + 1)}  # plan.sheets would build
    # The header reads each concept question once at seed 0 (the same for every seed) for its key points,
    # and the rows build it once for the class (for the first row), not once a student.
    concepts = {item for item in plan.items if bank.get(item).explain is not None}
    assert concepts
    students = Counter({key: n for key, n in builds.items() if key[1] in seeds})
    assert len([key for key in students if key[0] not in concepts]) == STUDENTS * (
        len(plan.items) - len(concepts)
    )
    assert set(students.values()) == {1}, [key for key, n in students.items() if n > 1]
    assert Counter(item for item, _ in students if item in concepts) == dict.fromkeys(concepts, 1)


def test_a_blank_answer_is_graded_without_building_its_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blank cell of a question with one answer is "No answer." whatever the variant; a blank part
    of a question in parts and a concept question's blank answer still build (their cells need it)."""
    bank = banks.load("week1")
    plan = plan_class(bank, students=STUDENTS, master_seed=2026)
    one_answer = [
        item
        for item in plan.items
        if bank.get(item).explain is None and not bank.get(item).question(0).variant.parts
    ]
    left_blank = set(one_answer[::2])
    text = _filled(template_csv(plan), left_blank)
    unbuilt = grade_text(bank, text, master_seed=2026)
    builds = counted_builds(monkeypatch)
    again = grade_text(bank, text, master_seed=2026)
    seeds = {student_seed(2026, student) for student in range(1, STUDENTS + 1)}
    built_items = {item for item, seed in builds if seed in seeds}
    assert built_items == set(plan.items) - left_blank
    assert marks_csv(again) == marks_csv(unbuilt)
    cells = [cell for row in again.rows for cell in row.cells if cell.item in left_blank]
    assert len(cells) == STUDENTS * len(left_blank)
    assert {(cell.status, cell.score, cell.feedback) for cell in cells} == {("blank", 0.0, "No answer.")}


def test_rows_and_cells_come_back_from_a_worker_whole() -> None:
    # Workers send rows back pickled, each rebuilt by its constructor from every field in order.
    import dataclasses
    import pickle

    from attnquiz.engine.classwork.class_marks import Cell, Row

    cell = Cell("additive-score", "0.5", "wrong", 0.25, "forgot-tanh", "feedback", 0.25, 1, 2.0, "")
    row = Row(7, "s1", "Ann", "0000-007E", (cell, dataclasses.replace(cell, item="mha")), "")
    again = pickle.loads(pickle.dumps(row))
    assert again == row
    assert [dataclasses.asdict(c) for c in again.cells] == [dataclasses.asdict(c) for c in row.cells]
