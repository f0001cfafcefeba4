"""A cell `quiz scan` left for its review (``?review N``) is said one way everywhere: in a number
column, a part's column, a concept question's answer or mark column; in marks.csv's notes, the class
summary, the JSON, the report and each student's result page. It is never graded as an answer
(never "could not be read", never the parser's error), counts 0 and has no mark until settled."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.classwork.class_marks import AWAITS_REVIEW, ClassMarks
from attnquiz.engine.classwork.grading import grade_text, review_feedback
from attnquiz.engine.classwork.marks_writer import marks_csv
from attnquiz.engine.classwork.report import report_files
from attnquiz.main import app

HEADER = (
    "student,name,code,additive-score,2a additive-chain,2b additive-chain,2c additive-chain,"
    "what-ffn-does,what-ffn-does mark (0-4)"
)
ANSWERS = f"""\
{HEADER}
1,Ann,3H4K-PDC6,?review 1,?review 2,0.5,0.3,(written on the answer sheet),?review 3
2,Bob,304N-FFNV,1.5,1,?review 4,0.2,?review 6,2
3,Cy,0NNF-DXJB,?review,1,0.5,0.2,(written on the answer sheet),2
"""


def graded() -> ClassMarks:
    return grade_text(banks.load("week1"), ANSWERS, master_seed=5, students=3)


def test_every_kind_of_column_holds_a_review_cell() -> None:
    ann, bob, cy = graded().rows
    statuses = [[c.status for c in row.cells] for row in (ann, bob, cy)]
    assert statuses[0][:2] == ["review", "review"]  # a number, a part
    assert statuses[0][4] == "review"  # a concept question's mark
    assert statuses[1][2] == "review"  # a part that uses an earlier one
    assert statuses[1][4] == "review"  # a concept answer the scan could not read
    assert statuses[2][0] == "invalid"  # a bare "?review" is not how the scan writes one: an answer
    for cell in (*ann.cells[:2], ann.cells[4], bob.cells[2], bob.cells[4]):
        assert cell.score == 0.0
        assert cell.feedback == review_feedback(cell.review)
        assert cell.review.startswith("?review ")
        assert not cell.problem
        assert cell.mistake is None


def test_a_part_in_review_carries_nothing_and_its_later_parts_are_graded() -> None:
    _, bob, _ = graded().rows
    later = bob.cells[3]  # (c) uses (b), which is in review: graded against the exact (b)
    assert later.status in ("correct", "wrong", "partial")
    assert "?review" not in later.feedback
    assert "cannot" not in later.feedback.lower()


def test_marks_csv_says_it_in_the_notes_with_no_score() -> None:
    rows = list(csv.reader(io.StringIO(marks_csv(graded()))))
    head, ann, bob, _ = rows
    notes = dict(zip(head, ann, strict=True))["notes"]
    assert notes == (
        f"additive-score: {AWAITS_REVIEW} (?review 1); 2a additive-chain: {AWAITS_REVIEW} (?review 2); "
        f"what-ffn-does: {AWAITS_REVIEW} (?review 3)"
    )
    by_column = dict(zip(head, ann, strict=True))
    assert by_column["additive-score"] == ""  # no score yet: an empty cell, not a 0
    assert by_column["2a additive-chain"] == ""
    assert by_column["what-ffn-does"] == ""
    assert f"2b additive-chain: {AWAITS_REVIEW} (?review 4)" in dict(zip(head, bob, strict=True))["notes"]


def test_the_summary_and_json_count_them_apart_from_concept_answers_awaiting_a_mark() -> None:
    marks = graded()
    summary = marks.summary()
    assert summary.review == 5
    assert summary.unmarked == 0
    data = marks.to_json()
    assert data["summary"]["review"] == 5
    assert data["rows"][0]["cells"][0]["status"] == "review"
    assert data["rows"][0]["cells"][0]["review"] == "?review 1"
    # An item's mean is over the cells that have a mark: one in review is not counted as a 0.
    assert summary.items[0].counts["review"] == 1


def test_each_students_page_and_the_report_say_it() -> None:
    files = report_files(banks.load("week1"), graded())
    page = files["students/1.html"].decode()
    assert f"{AWAITS_REVIEW} (?review 1)" in page.replace("&#x27;", "'")
    assert "could not be read" not in page
    assert "<code>?review 1</code>" not in page  # the scan's marker is not the student's answer
    index = files["index.html"].decode().replace("&#x27;", "'")
    assert (
        "5 answers await the scan's review (additive-score, 2a additive-chain, 2b additive-chain, " in index
    )
    items = list(csv.reader(io.StringIO(files["items.csv"].decode())))
    assert items[0][-1] == "review"
    assert items[1][-1] == "1"


def test_quiz_grade_says_it_once_in_the_summary(tmp_path: Path) -> None:
    answers = tmp_path / "answers.csv"
    answers.write_text(ANSWERS, encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["grade", "week1", str(answers), "--seed", "5", "--students", "3", "-o", str(tmp_path / "m.csv")],
        env={"COLUMNS": "300"},
    )
    assert "5 answers await the scan's review (additive-score, 2a additive-chain, 2b additive-chain, " in (
        result.output
    )
    assert "concept answers await" not in result.output
    assert "concept answer awaits" not in result.output
    as_json = CliRunner().invoke(
        app, ["grade", "week1", str(answers), "--seed", "5", "--students", "3", "--json"]
    )
    assert json.loads(as_json.output)["summary"]["review"] == 5


@pytest.mark.parametrize("text", ["?review 12", " ?review 3 ", "?review  4"])
def test_the_scans_marker_is_read_as_written(text: str) -> None:
    answers = ANSWERS.replace("?review 1,", f'"{text}",', 1)
    first = grade_text(banks.load("week1"), answers, master_seed=5, students=3).rows[0].cells[0]
    assert first.status == "review"


@pytest.mark.parametrize("text", ["?review", "?review x", "?reviewer 3", "review 3"])
def test_anything_else_is_an_answer(text: str) -> None:
    answers = ANSWERS.replace("?review 1,", f"{text},", 1)
    first = grade_text(banks.load("week1"), answers, master_seed=5, students=3).rows[0].cells[0]
    assert first.status == "invalid"
