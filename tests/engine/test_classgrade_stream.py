"""A class graded as a stream (`quiz grade` of a large class): the same marks, summary and JSON as
the class graded whole, and the answers file's errors with the same words and lines."""

from __future__ import annotations

import codecs
import csv
import io
import json
import random
import sys
from pathlib import Path

import pytest

from attnquiz.engine.answers.kinds import ChoiceAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.classwork import answers_file
from attnquiz.engine.classwork.answers_file import AnswersFileError, decode
from attnquiz.engine.classwork.class_marks import RunningSum
from attnquiz.engine.classwork.class_stream import RowSpool, grade_stream, json_chunks, table_row
from attnquiz.engine.classwork.grading import grade_file
from attnquiz.engine.classwork.marks_writer import marks_file
from attnquiz.engine.classwork.report import report_files, report_pages
from attnquiz.engine.plan.class_plan import plan_class
from bench.run import class_cells


@pytest.fixture(scope="module")
def bank() -> Bank:
    return banks.load("week1")


def _answers(bank: Bank, students: int, *, delimiter: str = ",", bom: bool = False) -> bytes:
    """A class's answers: right ones, named mistakes, junk and blanks, and a few rows that cannot be
    graded (two of them before the first graded row)."""
    numeric = [e.id for e in bank.items if not isinstance(e.question(0).answer, ChoiceAnswer)][:3]
    choice = [e.id for e in bank.items if isinstance(e.question(0).answer, ChoiceAnswer)][:1]
    plan = plan_class(bank, students=students, master_seed=11, items=numeric + choice)
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(["student", "name", "code", *plan.items])
    writer.writerow(["999", "Nobody", "", *[""] * len(plan.items)])  # an unknown student
    writer.writerow(["x", "=Not a number", "", *[""] * len(plan.items)])
    for sheet in plan.sheets:
        writer.writerow([str(sheet.student), f"Student {sheet.student}", sheet.code, *class_cells(sheet)])
    writer.writerow(["1", "Student 1 again", "", *[""] * len(plan.items)])
    return (codecs.BOM_UTF8 if bom else b"") + out.getvalue().encode("utf-8")


@pytest.mark.parametrize(("delimiter", "bom"), [(",", False), (";", True)], ids=["comma", "semicolon, BOM"])
def test_the_stream_writes_the_marks_the_whole_class_does(
    bank: Bank, tmp_path: Path, delimiter: str, bom: bool
) -> None:
    path = tmp_path / "answers.csv"
    path.write_bytes(_answers(bank, 12, delimiter=delimiter, bom=bom))
    whole = grade_file(bank, path, master_seed=11, students=12)
    out = io.BytesIO()
    with RowSpool() as spool:
        graded = grade_stream(
            bank, path, marks=out, table=True, spool=spool, master_seed=11, students=12, jobs=1
        )
        assert out.getvalue() == marks_file(whole)
        assert graded.tally.summary() == whole.summary()
        assert graded.tally.counting() == whole.counting()
        assert graded.tally.problems == whole.problems
        assert graded.table == [table_row(row) for row in whole.rows]
        assert list(spool) == list(whole.rows)
        for ascii_only in (True, False):
            text = "".join(json_chunks(graded.columns, spool, whole.summary(), ensure_ascii=ascii_only))
            expected = json.dumps(whole.to_json(), ensure_ascii=ascii_only, indent=2, separators=(",", ": "))
            assert text == expected


def test_the_json_of_a_class_with_no_row(bank: Bank, tmp_path: Path) -> None:
    item = bank.items[0].id
    path = tmp_path / "answers.csv"
    path.write_text(f"student,{item}\n", encoding="utf-8")
    whole = grade_file(bank, path)
    with RowSpool() as spool:
        graded = grade_stream(bank, path, spool=spool)
        text = "".join(json_chunks(graded.columns, spool, graded.tally.summary(), ensure_ascii=True))
    assert text == json.dumps(whole.to_json(), indent=2)


@pytest.mark.parametrize(
    "data",
    [
        b"student,a\n1,\xff\n",
        b"\xef\xbb\xbfstudent,a\n1,x\n\xff\n",
        b"\xef\xbb\xbfab\n\xff",  # the line counted as `decode` counts it (past the mark)
        b"student,a\n" + b"1,x\n" * 40 + b"2,\xe2\x82\n",
        b"student,a\n" + b"1,\xc3\xa9\n" * 30 + b"\xc3",
        b"student\x00,a\n",
    ],
)
def test_a_file_is_refused_as_decode_refuses_it(
    bank: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    with pytest.raises(AnswersFileError) as whole:
        decode(data, "answers.csv")
    path = tmp_path / "answers.csv"
    path.write_bytes(data)
    for block in (7, 1 << 20):  # blocks that cut the file anywhere, and one that holds it
        monkeypatch.setattr(answers_file, "_BLOCK", block)
        with pytest.raises(AnswersFileError) as streamed:
            grade_file(bank, path)
        assert str(streamed.value) == f"{path}{str(whole.value).removeprefix('answers.csv')}"


def test_a_file_read_in_small_blocks_is_graded_the_same(
    bank: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "answers.csv"
    path.write_bytes(_answers(bank, 5, bom=True).replace(b"Student 2", "Stüdent 2 ✓".encode()))
    expected = grade_file(bank, path, master_seed=11, students=5)
    monkeypatch.setattr(answers_file, "_BLOCK", 5)
    assert grade_file(bank, path, master_seed=11, students=5) == expected


def test_a_running_sum_ends_where_sum_does() -> None:
    draw = random.Random(7)
    for _ in range(200):
        terms: list[float] = [
            draw.choice([draw.random() * 10 ** draw.randint(-8, 8), 1, 0.1, 1 / 3, 2, 0.0, 1e16])
            for _ in range(draw.randint(0, 40))
        ]
        running = RunningSum()
        for term in terms:
            running.add(term)
        assert running.value == sum(terms), (sys.version_info, terms)
        assert type(running.value) is type(sum(terms))


def test_the_report_of_a_spooled_class_is_the_report_of_the_whole_class(bank: Bank, tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_bytes(_answers(bank, 8))
    whole = grade_file(bank, path, master_seed=11, students=8)
    with RowSpool() as spool:
        graded = grade_stream(bank, path, spool=spool, master_seed=11, students=8)
        pages = report_pages(bank, graded)
        assert next(pages)[0] == "index.html"  # made one at a time, the index first
        assert dict(report_pages(bank, graded)) == report_files(bank, whole)
