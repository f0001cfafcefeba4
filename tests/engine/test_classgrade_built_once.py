"""Issue 28: grading a class builds each student's variant of each item once, a question in parts
(a column per part) included."""

from __future__ import annotations

from collections import Counter

import pytest

from attnquiz.engine import banks
from attnquiz.engine.classgrade import grade_text, template_csv
from attnquiz.engine.export.worksheet import plan_class, student_seed
from tests.builds import counted_builds


def test_grading_builds_each_students_variant_of_each_item_once(monkeypatch: pytest.MonkeyPatch) -> None:
    bank = banks.load("week1")
    plan = plan_class(bank, students=12, master_seed=2026)  # the whole bank
    text = template_csv(plan)
    builds = counted_builds(monkeypatch)
    marks = grade_text(bank, text, master_seed=2026)
    assert not marks.problems
    assert len(marks.rows) == 12
    seeds = {student_seed(2026, student) for student in range(1, 13)}  # reading plan.sheets would build
    # The header reads each concept question once at seed 0 (the same for every seed) for its key points.
    students = Counter({key: n for key, n in builds.items() if key[1] in seeds})
    assert len(students) == 12 * len(plan.items)
    assert set(students.values()) == {1}, [key for key, n in students.items() if n > 1]
