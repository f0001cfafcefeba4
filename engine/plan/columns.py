"""The columns of a class's answers file (and of the marks written from it): their headings, and the
empty file a class fills in. The contract between the worksheets and answer sheets that print the
questions, the scanner that fills the file and the grader that reads it."""

from __future__ import annotations

import csv
import io

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.plan.class_plan import ClassPlan


def mark_column(item: str, points: int) -> str:
    """The heading of a concept question's mark column: ``why-scale mark (0-4)``, a mark a key point."""
    return f"{item} mark (0-{points})"


def part_column(item: str, label: str, number: int) -> str:
    """The heading of a part's column in answers and marks files: ``3a params-chain``, the question's
    number on the sheets and the part's label (as the sheet prints "Question 3 (a)"), then the item."""
    return f"{number}{label} {item}"


def template_csv(plan: ClassPlan) -> str:
    """An empty answers file for a class: one row per student with their variant code, a column per item
    (per part of a question in parts; a concept question's answer and its mark by hand)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns: list[str] = []
    for number, (item, questions) in enumerate(plan.by_item(), start=1):
        parts = questions[0].variant.parts if questions else ()
        answer = questions[0].answer if questions else None
        if isinstance(answer, ExplainAnswer):
            columns += [item, mark_column(item, len(answer.points))]
            continue
        columns += [part_column(item, p.label, number) for p in parts] if parts else [item]
    writer.writerow(["student", "name", "code", *columns])
    for sheet in plan.sheets:
        writer.writerow([sheet.student, "", sheet.code, *([""] * len(columns))])
    return buffer.getvalue()
