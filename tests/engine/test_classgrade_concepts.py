"""Concept questions in `quiz grade`: answers kept and never scored by their text; marks by hand summed."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.classwork.answers_file import AnswersFileError
from attnquiz.engine.classwork.grading import grade_text
from attnquiz.engine.classwork.marks_writer import marks_csv
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.engine.plan.columns import mark_column, template_csv
from attnquiz.main import app

BANK = Path(__file__).resolve().parents[1] / "data" / "concept" / "concepts.yaml"
SEED = 5


@pytest.fixture(scope="module")
def bank() -> Bank:
    return banks.load(str(BANK))


def _codes(bank: Bank, students: int = 3) -> list[str]:
    return [sheet.code for sheet in plan_class(bank, students=students, master_seed=SEED).sheets]


def _csv(rows: list[list[str]], delimiter: str = ",") -> str:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return out.getvalue()


def test_the_template_has_an_answer_and_a_mark_column_per_concept_question(bank: Bank) -> None:
    plan = plan_class(bank, students=2, master_seed=SEED)
    header = next(csv.reader(io.StringIO(template_csv(plan))))
    assert header == [
        "student",
        "name",
        "code",
        "score",
        "why-scale",
        "why-scale mark (0-4)",
        "fixed-context",
        "fixed-context mark (0-2)",
    ]
    assert mark_column("why-scale", 4) == "why-scale mark (0-4)"


# The key's own model answer, a right-sounding and a nonsense answer: none is scored by its text.
TEXTS = [
    "With unit-variance entries q·k has variance d_k; the softmax saturates; dividing by sqrt(d_k) fixes it",
    "0.88",
    '=HYPERLINK("http://x")',
    "¯\\_(ツ)_/¯",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_concept_answer_is_kept_as_written_and_awaits_its_mark(bank: Bank, text: str) -> None:
    code = _codes(bank, 1)[0]
    marks = grade_text(bank, _csv([["student", "code", "why-scale"], ["1", code, text]]), master_seed=SEED)
    (cell,) = marks.rows[0].cells
    assert (cell.response, cell.status, cell.score, cell.mark, cell.points) == (
        text,
        "unmarked",
        0.0,
        None,
        4,
    )
    assert cell.mistake is None
    assert marks.summary().unmarked == 1
    written = list(csv.DictReader(io.StringIO(marks_csv(marks))))
    assert written[0]["why-scale"] == ""  # no score yet: not a 0 that looks like one
    assert written[0]["notes"] == "why-scale: awaits a mark by hand"


def test_the_model_answer_itself_is_not_scored_either(bank: Bank) -> None:
    question = bank.get("why-scale").question(0)
    assert isinstance(question.answer, ExplainAnswer)
    code = _codes(bank, 1)[0]
    text = _csv([["student", "code", "why-scale"], ["1", code, question.answer.value]])
    (cell,) = grade_text(bank, text, master_seed=SEED).rows[0].cells
    assert (cell.status, cell.score) == ("unmarked", 0.0)


@pytest.mark.parametrize(
    ("mark", "status", "score"),
    [("0", "wrong", 0.0), ("1", "partial", 0.25), ("2.5", "partial", 0.625), ("4", "correct", 1.0),
     ("+3", "partial", 0.75), (" 4 ", "correct", 1.0)],
)  # fmt: skip
def test_a_mark_is_a_share_of_the_question_and_is_summed(
    bank: Bank, mark: str, status: str, score: float
) -> None:
    code = _codes(bank, 1)[0]
    rows = [
        ["student", "code", "score", "why-scale", "why-scale mark (0-4)"],
        [
            "1",
            code,
            plan_class(bank, students=1, master_seed=SEED).sheets[0].questions[0].answer.format(),
            "some words",
            mark,
        ],
    ]
    graded = grade_text(bank, _csv(rows), master_seed=SEED, students=3)
    row = graded.rows[0]
    assert row.graded, row.problem
    cell = row.cells[1]
    assert (cell.response, cell.status, cell.score, cell.mark) == ("some words", status, score, float(mark))
    assert row.total == pytest.approx(1.0 + score)  # the number question scored by the grader, plus the mark
    assert graded.summary().unmarked == 0


def test_marks_sum_over_a_class_with_some_answers_still_to_mark(bank: Bank) -> None:
    codes = _codes(bank)
    rows = [
        ["student", "code", "why-scale", "why-scale mark (0-4)", "fixed-context", "fixed-context mark (0-2)"],
        ["1", codes[0], "an answer", "3", "another", "2"],
        ["2", codes[1], "", "", "written on paper only", "1"],  # a mark needs no typed answer
        ["3", codes[2], "an answer", "", "", ""],  # one awaiting a mark, one not answered
    ]
    graded = grade_text(bank, _csv(rows), master_seed=SEED)
    totals = [row.total for row in graded.rows]
    assert totals == pytest.approx([0.75 + 1.0, 0.0 + 0.5, 0.0])
    statuses = [[c.status for c in row.cells] for row in graded.rows]
    assert statuses == [["partial", "correct"], ["blank", "partial"], ["unmarked", "blank"]]
    summary = graded.summary()
    assert summary.unmarked == 1
    assert summary.to_json()["unmarked"] == 1
    # The mean of a question counts the answers marked, not those still waiting.
    assert summary.items[0].mean == pytest.approx(0.75 / 2)
    assert summary.items[0].counts["unmarked"] == 1
    data = graded.to_json()
    assert data["rows"][0]["cells"][0] == {
        "item": "why-scale",
        "response": "an answer",
        "status": "partial",
        "score": 0.75,
        "mistake": None,
        "mark": 3.0,
        "points": 4,
    }


def test_a_mark_column_alone_grades_a_concept_question_left_on_paper(bank: Bank) -> None:
    code = _codes(bank, 1)[0]
    text = _csv([["student", "code", "why-scale mark"], ["1", code, "2,5"]], delimiter=";")
    graded = grade_text(bank, text, master_seed=SEED)
    assert graded.items == ("why-scale",)
    (cell,) = graded.rows[0].cells
    assert (cell.response, cell.status, cell.mark, cell.score) == ("", "partial", 2.5, 0.625)
    assert marks_csv(graded).splitlines()[1].split(";")[4] == "0,625"  # in the file's own decimal comma


@pytest.mark.parametrize("mark", ["5", "4.01", "-1", "abc", "good", "nan", "1e1", "3/4", "1 2", "∞"])
def test_a_bad_mark_is_that_one_cell_s_problem_and_the_rest_of_the_row_is_graded(
    bank: Bank, mark: str
) -> None:
    codes = _codes(bank, 2)
    rows = [
        ["student", "code", "score", "why-scale", "why-scale mark (0-4)", "fixed-context mark (0-2)"],
        ["1", codes[0], "1.93", "fine", "2", "1"],
        ["2", codes[1], "1.93", "fine", mark, "2"],
    ]
    graded = grade_text(bank, _csv(rows), file="answers.csv", master_seed=SEED)
    assert graded.rows[0].graded
    row = graded.rows[1]
    assert (row.line, row.graded, row.problem) == (3, True, "")
    score, concept, other = row.cells
    problem = (
        f"column 'why-scale mark (0-4)': the mark {mark!r} is not a number from 0 to 4 (a mark for each "
        "key point of why-scale)"
    )
    assert (concept.problem, concept.marks, concept.response) == (problem, 0.0, "fine")
    # The row's other cells are graded and counted, and the student stays in the class's means.
    assert other.status == "correct"
    assert row.total == score.marks + 1.0
    summary = graded.summary()
    assert (summary.problems, summary.graded, summary.bad_cells) == (0, 2, ((3, problem),))
    assert summary.mean_total == (graded.rows[0].total + row.total) / 2
    written = list(csv.DictReader(io.StringIO(marks_csv(graded))))[1]
    assert written["why-scale"] == ""  # no mark, rather than a 0 that looks like one
    assert written["notes"] == f"why-scale: not graded: {problem}"


def test_quiz_grade_lists_a_bad_mark_at_its_line_and_writes_the_rest(bank: Bank, tmp_path: Path) -> None:
    codes = _codes(bank, 2)
    answers = tmp_path / "answers.csv"
    answers.write_text(
        _csv(
            [
                ["student", "code", "why-scale", "why-scale mark (0-4)"],
                ["1", codes[0], "fine", "3"],
                ["2", codes[1], "fine", "good"],
            ]
        ),
        encoding="utf-8",
    )
    marks = tmp_path / "marks.csv"
    result = runner.invoke(app, ["grade", str(BANK), str(answers), "--seed", str(SEED), "-o", str(marks)])
    assert result.exit_code == 1
    assert (
        f"{answers}:3: column 'why-scale mark (0-4)': the mark 'good' is not a number from 0 to 4"
        in " ".join(result.stderr.split())
    )
    assert "1 cell could not be graded" in result.stderr
    assert "2 students graded" in result.stdout
    written = list(csv.DictReader(io.StringIO(marks.read_text(encoding="utf-8"))))
    assert [r["total"] for r in written] == ["0.75", "0"]
    data = json.loads(
        runner.invoke(app, ["grade", str(BANK), str(answers), "--seed", str(SEED), "--json"]).stdout
    )
    assert data["summary"]["bad_cells"][0]["line"] == 3


@pytest.mark.parametrize(
    ("heading", "message"),
    [
        (
            "score mark",
            "answers.csv:1: column 'score mark': score is not a concept question, and only a concept "
            "question's answers are marked by hand (quiz grade marks the others)",
        ),
        (
            "why-scale mark (0-5)",
            "answers.csv:1: column 'why-scale mark (0-5)': why-scale has 4 key points, a mark each, so its "
            "marks are 0 to 4 (head the column 'why-scale mark (0-4)')",
        ),
    ],
)
def test_a_mark_column_that_cannot_be_right_is_a_located_error(
    bank: Bank, heading: str, message: str
) -> None:
    text = _csv([["student", "code", heading], ["1", _codes(bank, 1)[0], "1"]])
    with pytest.raises(AnswersFileError) as caught:
        grade_text(bank, text, file="answers.csv", master_seed=SEED)
    assert str(caught.value) == message


def test_two_mark_columns_for_one_question_are_refused(bank: Bank) -> None:
    text = _csv(
        [["student", "code", "why-scale mark", "why-scale mark (0-4)"], ["1", _codes(bank, 1)[0], "1", "2"]]
    )
    with pytest.raises(
        AnswersFileError, match=r"answers.csv:1: why-scale has two mark columns \(columns 3 and 4\)"
    ):
        grade_text(bank, text, file="answers.csv", master_seed=SEED)


runner = CliRunner()


def test_template_then_grade_from_the_command_line(tmp_path: Path) -> None:
    answers = tmp_path / "answers.csv"
    made = runner.invoke(
        app, ["grade", str(BANK), "--template", "--students", "3", "--seed", str(SEED), "-o", str(answers)]
    )
    assert made.exit_code == 0, made.output
    rows = list(csv.reader(io.StringIO(answers.read_text(encoding="utf-8"))))
    header = rows[0]
    at = {name: header.index(name) for name in header}
    rows[1][at["why-scale"]] = "the variance of q·k grows with d_k"
    rows[1][at["why-scale mark (0-4)"]] = "3"
    rows[2][at["why-scale"]] = "no idea"  # left to mark
    answers.write_text(_csv(rows), encoding="utf-8")
    marks = tmp_path / "marks.csv"
    result = runner.invoke(
        app, ["grade", str(BANK), str(answers), "--seed", str(SEED), "-o", str(marks)], env={"COLUMNS": "120"}
    )
    assert result.exit_code == 0, result.output
    assert "1 concept answer awaits marking by hand (why-scale)" in result.stdout
    written = list(csv.DictReader(io.StringIO(marks.read_text(encoding="utf-8"))))
    assert [r["why-scale"] for r in written] == ["0.75", "", "0"]
    assert [r["total"] for r in written] == ["0.75", "0", "0"]
    as_json = runner.invoke(app, ["grade", str(BANK), str(answers), "--seed", str(SEED), "--json"])
    data = json.loads(as_json.stdout)
    assert data["summary"]["unmarked"] == 1
    assert data["rows"][1]["cells"][1]["response"] == "no idea"
