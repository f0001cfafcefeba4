"""Hostile formula answers through the front ends a student or a teacher uses (issue 25).

Every entry of the hostile corpus answers with a clear message and no traceback through
`quiz answer`, `quiz run` (answers piped) and `quiz grade` (a class's CSV), and a bank whose own
formulas are towers is a located load error in `quiz check` and `quiz list` instead of a hang.
Each command runs under a generous time limit (the subprocess timeout); the elapsed time is
measured and shown with any failure, never asserted as a speed (bench/ measures speed).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine.test_formula_hostile import INVALID, ISSUE_TOWER

QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]
ROOT = Path(__file__).resolve().parent.parent.parent
TOWERS = ROOT / "tests" / "data" / "bad_formula_banks" / "towers.yaml"
LIMIT = 120  # seconds per command, on a loaded machine; grading one response takes milliseconds
# What a line of piped input or a CSV cell can hold (no new line, no NUL byte: a CSV with one is not text).
LINES = [text for text, _ in INVALID if text and "\n" not in text and "\x00" not in text]


def quiz(home: Path, *args: str, stdin: str = "") -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_") and k != "NO_COLOR"}
    env.update(QUIZ_HOME=str(home), COLUMNS="100", NO_COLOR="1")
    start = time.monotonic()
    result = subprocess.run(
        [*QUIZ, *args], input=stdin, capture_output=True, text=True, env=env, timeout=LIMIT, check=False
    )
    return result, time.monotonic() - start


@pytest.mark.parametrize(
    "response",
    [ISSUE_TOWER, "1e300^2*d + 12d^2 + 13d", "9**9**9", "(" * 60 + "d" + ")" * 60, "d" * 1999, "2/3d"],
    ids=["tower", "huge", "power-of-power", "nesting", "long-name", "ambiguous"],
)
def test_quiz_answer_refuses_a_hostile_formula_with_a_reason(tmp_path: Path, response: str) -> None:
    result, elapsed = quiz(
        tmp_path, "answer", "week1", "block-params-formula", "--seed", "1", "--json", "--", response
    )
    assert "Traceback" not in result.stderr, result.stderr
    graded = json.loads(result.stdout)
    assert graded["status"] == "invalid", (graded, f"{elapsed:.2f} s")
    assert graded["feedback"], graded


def test_quiz_run_piped_answers_every_hostile_formula(tmp_path: Path) -> None:
    stdin = "".join(f"{line}\n" for line in LINES)
    result, elapsed = quiz(
        tmp_path,
        "run",
        "week1",
        "--item",
        "block-params-formula",
        "--count",
        "1",
        "--seed",
        "1",
        "--json",
        "--no-history",
        stdin=stdin,
    )
    assert "Traceback" not in result.stderr, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    grades = [r for r in records if r["type"] == "grade"]
    # An invalid answer costs nothing and keeps the question: every line is graded, in order.
    assert [g["response"] for g in grades] == LINES, f"{elapsed:.2f} s"
    for graded in grades:
        assert graded["status"] == "invalid", graded
        assert graded["feedback"], graded
    assert records[-1]["type"] == "summary"


def test_quiz_grade_marks_a_class_of_hostile_formulas(tmp_path: Path) -> None:
    template = tmp_path / "template.csv"
    made, _ = quiz(
        tmp_path,
        "grade",
        "week1",
        "--template",
        "--students",
        str(len(LINES)),
        "--seed",
        "7",
        "--items",
        "block-params-formula",
        "-o",
        str(template),
    )
    assert made.returncode == 0, made.stderr
    with template.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    column = rows[0].index("block-params-formula")
    for row, response in zip(rows[1:], LINES, strict=True):
        row[column] = response
    answers = tmp_path / "answers.csv"
    with answers.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    result, elapsed = quiz(tmp_path, "grade", "week1", str(answers), "--seed", "7", "--json")
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    cells = [cell for row in report["rows"] for cell in row["cells"]]
    assert [cell["response"] for cell in cells] == LINES, f"{elapsed:.2f} s"
    assert {cell["status"] for cell in cells} == {"invalid"}
    assert report["summary"]["graded"] == len(LINES)


@pytest.mark.parametrize("command", [["check"], ["list"]])
def test_a_bank_of_formula_towers_is_a_located_error_not_a_hang(tmp_path: Path, command: list[str]) -> None:
    result, elapsed = quiz(tmp_path, *command, str(TOWERS))
    assert result.returncode != 0, f"{elapsed:.2f} s"
    assert "Traceback" not in result.stderr, result.stderr
    shown = result.stdout + result.stderr
    assert "towers.yaml:11: items[0].answer.value" in shown, shown
    assert "towers.yaml:22: items[1].mistakes[0].value" in shown, shown
    assert "is too large to grade" in shown
