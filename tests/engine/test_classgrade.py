"""Grading a class from answers.csv: marks that agree with the grader, and bad rows reported by line."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from attnquiz.engine.answers.kinds import ChoiceAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.classwork.answers_file import AnswersFileError
from attnquiz.engine.classwork.grading import grade_file, grade_text
from attnquiz.engine.classwork.marks_writer import marks_csv
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.engine.plan.columns import template_csv


@pytest.fixture(scope="module")
def bank() -> Bank:
    return banks.load("week1")


def _items(bank: Bank, n: int = 4) -> list[str]:
    """A few items of different kinds: the first numeric ones and the first choice one."""
    numeric = [e.id for e in bank.items if not isinstance(e.question(0).answer, ChoiceAnswer)]
    choice = [e.id for e in bank.items if isinstance(e.question(0).answer, ChoiceAnswer)]
    return numeric[: n - 1] + choice[:1]


def _filled(bank: Bank, items: list[str], students: int, seed: int, answer: str = "key") -> str:
    """A template for the class, filled in with the key's answers (or left blank)."""
    plan = plan_class(bank, students=students, master_seed=seed, items=items)
    rows = list(csv.reader(io.StringIO(template_csv(plan))))
    for row, sheet in zip(rows[1:], plan.sheets, strict=True):
        row[1] = f"Student {sheet.student}"
        if answer == "key":
            row[3:] = [q.answer.format() for q in sheet.questions]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def test_the_key_answers_get_full_marks(bank: Bank) -> None:
    items = _items(bank)
    marks = grade_text(bank, _filled(bank, items, 5, 2026), master_seed=2026)
    assert not marks.problems
    assert [row.total for row in marks.rows] == [len(items)] * 5
    summary = marks.summary()
    assert summary.graded == 5
    assert all(entry.mean == 1.0 for entry in summary.items)
    assert summary.mean_total == len(items)


def test_rows_identified_by_code_alone_need_no_seed(bank: Bank) -> None:
    items = _items(bank)
    text = _filled(bank, items, 3, 77)
    without_student = "\n".join(",".join(line.split(",")[1:]) for line in text.splitlines()) + "\n"
    marks = grade_text(bank, without_student)
    assert not marks.problems
    assert all(row.total == len(items) for row in marks.rows)


def test_mistakes_blanks_and_unreadable_cells_are_marked_and_counted(bank: Bank) -> None:
    items = _items(bank)
    plan = plan_class(bank, students=2, master_seed=9, items=items)
    question = next(q for q in plan.sheets[0].questions if q.variant.mistakes)
    mistake = question.variant.mistakes[0]
    header = "student,code," + ",".join(items)
    cells = ["" for _ in items]
    cells[items.index(question.item_id)] = f'"{mistake.format(question.answer)}"'
    cells[0 if items.index(question.item_id) else 1] = "not a number"
    text = f"{header}\n1,{plan.sheets[0].code},{','.join(cells)}\n"
    marks = grade_text(bank, text, master_seed=9)
    (row,) = marks.rows
    by_item = {c.item: c for c in row.cells}
    assert by_item[question.item_id].mistake == mistake.tag
    assert by_item[question.item_id].score == 0
    assert sum(c.status == "invalid" for c in row.cells) == 1
    assert sum(c.status == "blank" for c in row.cells) == len(items) - 2
    assert marks.summary().mistakes[0] == (question.item_id, mistake.tag, 1)
    written = marks_csv(marks)
    assert f"{question.item_id}: {mistake.tag}" in written
    assert "could not be read" in written
    assert "no answer" in written


def test_bad_rows_are_reported_by_line_and_kept(bank: Bank) -> None:
    items = _items(bank, 2)
    plan = plan_class(bank, students=3, master_seed=4, items=items)
    codes = [s.code for s in plan.sheets]
    text = "\n".join(
        [
            "student,name,code," + ",".join(items),
            f"1,Ann,{codes[0]},,",  # line 2: fine (blank answers)
            "x,Bob,,,",  # line 3: not a student number
            f"2,Cy,{codes[2]},,",  # line 4: the code of student 3, not 2
            "9,Dee,,,",  # line 5: beyond the class
            f"3,Eve,{codes[2]}",  # line 6: cells missing
            ",Fay,ZZZZ-ZZZZ,,",  # line 7: not a valid code
            "",  # a blank line is not a student
            f"1,Ann again,{codes[0]},,",  # line 9: student 1 twice
            f'3,"Gil\nbert",{codes[2]},,',  # lines 10-11: a quoted name over two lines, fine
            "2,Hal,,,",  # line 12: rebuilt from the seed
        ]
    )
    marks = grade_text(bank, text, master_seed=4, students=3)
    problems = {row.line: row.problem for row in marks.problems}
    assert sorted(problems) == [3, 4, 5, 6, 7, 9]
    assert "not a student number" in problems[3]
    assert "check the code" in problems[4]
    assert "unknown student 9" in problems[5]
    assert "missing cells" in problems[6]
    assert "not a variant code" in problems[7] or "not a valid variant code" in problems[7]
    assert "already on line 2" in problems[9]
    graded = [row for row in marks.rows if row.graded]
    assert [(row.line, row.student) for row in graded] == [(2, "1"), (10, "3"), (12, "2")]
    assert graded[2].code == codes[1]
    written = list(csv.reader(io.StringIO(marks_csv(marks))))
    assert len(written) == 1 + len(marks.rows)  # no row dropped from the marks
    assert sum(r[-1].startswith("not graded:") for r in written[1:]) == 6


def test_students_by_number_need_the_seed(bank: Bank) -> None:
    item = _items(bank, 1)[0]
    marks = grade_text(bank, f"student,{item}\n1,\n")
    assert "no --seed" in marks.rows[0].problem


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b"\xff\xfe\x00s\x00t", "not a text file"),
        (b"student,code\n1,\xe9\n", r"answers.csv:2: not UTF-8"),
        (b"name,additive-score\nAnn,1\n", "must name the columns"),
        (b"student,additive-scor\n1,1\n", "did you mean additive-score"),
        (b"student,student\n", "appears twice"),
        (b"student,name\n1,Ann\n", "no column is headed by an item id"),
    ],
)
def test_files_that_cannot_be_read_are_errors(bank: Bank, tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "answers.csv"
    path.write_bytes(data)
    with pytest.raises(AnswersFileError, match=message):
        grade_file(bank, path, master_seed=1)


def test_a_missing_file_is_an_error(bank: Bank, tmp_path: Path) -> None:
    with pytest.raises(AnswersFileError, match="cannot read"):
        grade_file(bank, tmp_path / "nope.csv")


def test_semicolons_and_a_byte_order_mark_are_read(bank: Bank) -> None:
    items = _items(bank, 2)
    text = _filled(bank, items, 2, 3)
    semicolons = "\ufeff" + text.replace(",", ";")
    marks = grade_text(bank, semicolons.encode("utf-8").decode("utf-8-sig"), master_seed=3)
    assert not marks.problems
    assert all(row.total == 2 for row in marks.rows)


def test_original_code_grades_the_past_papers(bank: Bank) -> None:
    entry = next(e for e in bank.items if e.has_original)
    answer = entry.original().answer.format()
    marks = grade_text(bank, f'code,{entry.id}\noriginal,"{answer}"\n')
    assert marks.rows[0].total == 1


def test_template_lists_every_student_with_their_code(bank: Bank) -> None:
    items = _items(bank, 2)
    plan = plan_class(bank, students=3, master_seed=8, items=items)
    rows = list(csv.reader(io.StringIO(template_csv(plan))))
    assert rows[0] == ["student", "name", "code", *items]
    assert [r[2] for r in rows[1:]] == [s.code for s in plan.sheets]
