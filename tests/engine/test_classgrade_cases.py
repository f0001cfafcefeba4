"""Class CSVs as instructors' spreadsheets write them: locales, byte-order marks, strangers, a student
graded twice, formula cells, huge cells; and marks written back the way the answers came."""

from __future__ import annotations

import codecs
import csv
import io
from pathlib import Path

import pytest

from attnquiz.engine.answers.kinds import NumericAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.classwork.class_marks import Cell, ClassMarks, Row
from attnquiz.engine.classwork.grading import MAX_CELL_CHARS, grade_file, grade_text
from attnquiz.engine.classwork.marks_writer import marks_csv, marks_file
from attnquiz.engine.plan.class_plan import plan_class

SEED = 2026


@pytest.fixture(scope="module")
def bank() -> Bank:
    return banks.load("week1")


@pytest.fixture(scope="module")
def numeric_item(bank: Bank) -> str:
    """An item whose week-1 answers (to 2 places) are not whole numbers, so a decimal mark matters."""
    for entry in bank.items:
        answers = [entry.question(plan_class(bank, students=3, master_seed=SEED, items=[entry.id])
                                  .sheets[i].seed or 0).answer for i in range(3)]  # fmt: skip
        if all(isinstance(a, NumericAnswer) and not float(a.value).is_integer() for a in answers):
            return entry.id
    raise AssertionError("week1 has no numeric item")


def _sheets(bank: Bank, item: str, students: int = 3) -> list[tuple[int, str, str]]:
    """(student, code, the key's answer) for a small class on one item."""
    plan = plan_class(bank, students=students, master_seed=SEED, items=[item])
    return [(s.student, s.code, s.questions[0].answer.format()) for s in plan.sheets]


def test_a_decimal_comma_in_a_semicolon_file_is_a_decimal_mark(bank: Bank, numeric_item: str) -> None:
    sheets = _sheets(bank, numeric_item)
    lines = [f"student;code;{numeric_item}"]
    lines += [f"{n};{code};{answer.replace('.', ',')}" for n, code, answer in sheets]
    marks = grade_text(bank, "\n".join(lines) + "\n", master_seed=SEED)
    assert not marks.problems
    assert [row.cells[0].status for row in marks.rows] == ["correct"] * len(sheets)
    # In a comma file the same text is still invalid (a comma there cannot be a decimal mark).
    comma = "\n".join(
        [f"student,code,{numeric_item}", *(f'{n},{c},"{a.replace(".", ",")}"' for n, c, a in sheets)]
    )
    assert {row.cells[0].status for row in grade_text(bank, comma, master_seed=SEED).rows} != {"correct"}


@pytest.mark.parametrize(
    ("rows", "problems", "graded"),
    [
        # No --students and no code: student 99 might not exist, so the row is reported, not graded.
        (["99,,{a1}"], {2: "without --students"}, []),
        # The same sheet once by number, once by its code: graded once, the second reported.
        (["1,,{a1}", ",{c1},{a1}"], {3: "already on line 2"}, [2]),
        (["1,{c1},{a1}", "1,,{a1}"], {3: "student 1 is already on line 2"}, [2]),
        (["2,{c2},{a2}", ",{c2},{a2}"], {3: "already on line 2"}, [2]),
        # Different students by number and by code: both graded.
        (["1,,{a1}", ",{c2},{a2}"], {}, [2, 3]),
    ],
)
def test_strangers_and_students_graded_twice_are_reported_not_counted(
    bank: Bank, numeric_item: str, rows: list[str], problems: dict[int, str], graded: list[int]
) -> None:
    sheets = _sheets(bank, numeric_item)
    fill = {f"c{n}": code for n, code, _ in sheets} | {f"a{n}": answer for n, _, answer in sheets}
    text = "\n".join([f"student,code,{numeric_item}", *(r.format(**fill) for r in rows)]) + "\n"
    students = None if "99" in rows[0] else 3
    marks = grade_text(bank, text, master_seed=SEED, students=students)
    assert {row.line: row.problem for row in marks.problems}.keys() == problems.keys()
    for line, message in problems.items():
        assert message in next(r.problem for r in marks.problems if r.line == line)
    assert [row.line for row in marks.rows if row.graded] == graded
    summary = marks.summary()
    assert summary.graded == len(graded)
    assert summary.mean_total == (1.0 if graded else 0.0)  # the reported rows do not pull the mean down


def test_without_students_a_row_by_number_is_graded_when_the_class_size_is_given(
    bank: Bank, numeric_item: str
) -> None:
    _, _, answer = _sheets(bank, numeric_item)[1]
    text = f"student,{numeric_item}\n2,{answer}\n"
    assert grade_text(bank, text, master_seed=SEED, students=3).rows[0].total == 1
    assert "without --students" in grade_text(bank, text, master_seed=SEED).rows[0].problem


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("+1+2", "'+1+2"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=cmd", "'=cmd"),  # cells are read stripped of white space, then neutralised
        ("\r@1", "'@1"),
        ("-3", "-3"),  # a real number is harmless and stays readable
        ("Ann-Marie", "Ann-Marie"),
    ],
)
def test_formula_cells_are_neutralised(bank: Bank, numeric_item: str, name: str, written: str) -> None:
    n, code, answer = _sheets(bank, numeric_item)[0]
    out = io.StringIO()
    csv.writer(out).writerows([["student", "name", "code", numeric_item], [n, name, code, answer]])
    marks = grade_text(bank, out.getvalue(), master_seed=SEED)
    row = next(csv.DictReader(io.StringIO(marks_csv(marks), newline="")))
    assert row["name"] == written


def test_a_problem_note_that_starts_like_a_formula_is_neutralised(bank: Bank, numeric_item: str) -> None:
    marks = grade_text(bank, f"student,code,{numeric_item}\n=1+1,,\n", master_seed=SEED, students=3)
    row = next(csv.DictReader(io.StringIO(marks_csv(marks))))
    assert row["student"] == "'=1+1"
    assert row["notes"].startswith("not graded: student '=1+1' is not a student number")


def test_a_cell_too_long_is_a_row_not_graded_and_the_others_are_graded(bank: Bank, numeric_item: str) -> None:
    sheets = _sheets(bank, numeric_item)
    huge = "9" * (MAX_CELL_CHARS + 1)
    lines = [f"student,code,{numeric_item}", f"1,{sheets[0][1]},{huge}", f"2,{sheets[1][1]},{sheets[1][2]}"]
    marks = grade_text(bank, "\n".join(lines) + "\n", master_seed=SEED)
    assert "cell too long" in marks.rows[0].problem
    assert marks.rows[1].total == 1
    assert csv.field_size_limit() == 131_072  # the reader's limit is put back after reading
    assert "not graded: cell too long" in marks_csv(marks)


@pytest.mark.parametrize(
    ("delimiter", "bom"),
    [(",", False), (";", True), (";", False), (",", True), ("\t", False)],
)
def test_marks_are_written_the_way_the_answers_came(
    bank: Bank, numeric_item: str, tmp_path: Path, delimiter: str, bom: bool
) -> None:
    sheets = _sheets(bank, numeric_item)
    decimal = "," if delimiter == ";" else "."
    rows = [["student", "code", numeric_item]]
    rows += [[str(n), code, answer.replace(".", decimal)] for n, code, answer in sheets]
    rows.append(["2", "", "not a number"])  # graded twice: a row that is reported
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    path = tmp_path / "answers.csv"
    path.write_bytes((codecs.BOM_UTF8 if bom else b"") + out.getvalue().encode("utf-8"))
    marks = grade_file(bank, path, master_seed=SEED)
    data = marks_file(marks)
    assert data.startswith(codecs.BOM_UTF8) == bom
    text = data.decode("utf-8-sig")
    table = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    assert table[0][:4] == ["line", "student", "name", "code"]
    assert all(len(r) == len(table[0]) for r in table)
    assert [r[4] for r in table[1:4]] == ["1"] * 3
    assert table[1][table[0].index("total")] == "1"
    assert marks.decimal_comma == (delimiter == ";")


@pytest.mark.parametrize(("delimiter", "half"), [(",", "0.5"), (";", "0,5"), ("\t", "0.5")])
def test_a_part_mark_uses_the_files_decimal_mark(delimiter: str, half: str) -> None:
    cell = Cell("x", "A", "partial", 0.5, None, "")
    marks = ClassMarks("b", "a.csv", ("x",), (Row(2, "1", "", "0000-0001", (cell,)),), delimiter=delimiter)
    table = list(csv.reader(io.StringIO(marks_csv(marks)), delimiter=delimiter))
    assert table[1][4] == half
    assert table[1][5] == half  # the total
