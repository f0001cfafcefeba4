"""After a slip, both careful students are right: the one who carries each part as typed (rounded as
asked) and the one who goes on from the unrounded values computed from their own earlier answers. The
feedback names the target that matched, and per-entry feedback of a vector or matrix part calls an
entry off only when it follows from none of the accepted targets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from attnquiz.engine.answers.kinds import (
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    Part,
    PartsAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.check.parts import perturbed
from attnquiz.engine.grading.parts import grade_parts
from attnquiz.main import app

runner = CliRunner()
SEEDS = range(60)
NAMED = {"additive-chain", "sdpa-chain", "causal-mask-chain", "layernorm-chain"}
"""The chains where the issue found only one careful student right after a slip."""


def _chains() -> list[tuple[str, str]]:
    """Every item of both banks whose parts use earlier ones."""
    found = []
    for name in ("week1", "week2"):
        for entry in banks.load(name).items:
            answer = entry.question(0).answer
            if isinstance(answer, PartsAnswer) and any(p.uses for p in answer.parts):
                found.append((name, entry.id))
    return found


CHAINS = _chains()


def _answer(item: str, seed: int, bank: str = "week1") -> PartsAnswer:
    answer = banks.load(bank).get(item).question(seed).answer
    assert isinstance(answer, PartsAnswer)
    return answer


def _number(answer: SingleAnswer, value: float) -> str:
    """``value`` written at the precision the part asks for, with Python's own formatting."""
    tolerance = answer.tolerance
    if tolerance.mode == "decimals":
        return f"{value:.{tolerance.places}f}"
    if tolerance.mode == "exact":
        return str(round(value))
    raise AssertionError(f"teach the test {tolerance.mode}")


def _typed(answer: SingleAnswer, value: Any) -> str:
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return _number(answer, float(value))
    rows = np.atleast_2d(np.asarray(value, dtype=float))
    return "; ".join(" ".join(_number(answer, float(x)) for x in row) for row in rows)


def _read(text: str, answer: SingleAnswer) -> Any:
    rows = [[float(x) for x in row.split()] for row in text.split(";")]
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return rows[0][0]
    if isinstance(answer, VectorAnswer):
        return tuple(rows[0])
    return tuple(tuple(r) for r in rows)


def _students(answer: PartsAnswer) -> tuple[list[str], list[str]] | None:
    """Two students whose (a) is wrong: one goes on from each part as typed, the other from each part
    as computed before rounding (from their own wrong (a)). Both type every part rounded as asked.
    None where a value is outside what a part's method takes."""
    first = answer.parts[0]
    slip = _typed(first.answer, perturbed(first.answer))
    typed_texts, typed_values = [slip], {first.label: _read(slip, first.answer)}
    kept_texts, kept_values = [slip], {first.label: _read(slip, first.answer)}
    for part in answer.parts[1:]:
        if not part.uses:
            return None  # every later part of these chains uses an earlier one
        assert part.recompute is not None
        try:
            from_typed = part.recompute(*(typed_values[label] for label in part.uses))
            from_kept = part.recompute(*(kept_values[label] for label in part.uses))
        except (ArithmeticError, ValueError):
            return None
        text = _typed(part.answer, from_typed)
        typed_texts.append(text)
        typed_values[part.label] = _read(text, part.answer)
        kept_texts.append(_typed(part.answer, from_kept))
        kept_values[part.label] = _value(part, from_kept)
    return typed_texts, kept_texts


def _value(part: Part, value: Any) -> Any:
    if isinstance(part.answer, NumericAnswer | IntegerAnswer):
        return float(value)
    array = np.asarray(value, dtype=float)
    if isinstance(part.answer, VectorAnswer):
        return tuple(float(x) for x in array.reshape(-1))
    assert isinstance(part.answer, MatrixAnswer)
    return tuple(tuple(float(x) for x in row) for row in np.atleast_2d(array))


def test_the_named_chains_are_all_checked() -> None:
    assert {item for _, item in CHAINS} >= NAMED


@pytest.mark.parametrize(("bank", "item"), CHAINS)
def test_after_a_slip_both_careful_students_are_right_on_every_later_part(bank: str, item: str) -> None:
    differ = 0
    for seed in SEEDS:
        answer = _answer(item, seed, bank)
        students = _students(answer)
        if students is None:
            continue
        typed, kept = students
        differ += typed != kept
        for who, responses in (("typed", typed), ("unrounded", kept)):
            result = grade_parts(answer, responses)
            assert result.parts[0].grade.status == "wrong", (item, seed, responses[0])
            for graded in result.parts[1:]:
                assert graded.grade.feedback.startswith("Correct"), (
                    item,
                    seed,
                    who,
                    responses,
                    graded.label,
                    graded.grade.feedback,
                )
                assert graded.grade.score == answer.carried_score
    if item in NAMED - {"causal-mask-chain"}:  # its parts are exact counts: nothing to round
        assert differ > 0, "the two students never differ: the test shows nothing"


def test_the_feedback_names_the_unrounded_target_that_matched() -> None:
    answer = _answer("additive-chain", 0)
    kept = grade_parts(answer, ["3.283680687", "0.77", "1.47"]).parts[2]
    assert kept.grade.status == "correct"
    assert kept.grade.feedback == "Correct, given your unrounded (b) = 0.767399."
    assert kept.carried_forward == {"b": "0.767399"}
    assert kept.expected.format() == "1.47"
    typed = grade_parts(answer, ["3.283680687", "0.77", "1.46"]).parts[2]
    assert (typed.grade.status, typed.grade.feedback) == ("correct", "Correct, given your (b) = 0.77.")
    wrong = grade_parts(answer, ["3.283680687", "0.77", "1.50"]).parts[2]
    assert wrong.grade.status == "wrong"
    assert "1.46 from your (b) = 0.77" in wrong.grade.feedback
    assert "from your unrounded (b) = 0.767399" in wrong.grade.feedback


@pytest.mark.parametrize("last", ["1.47", "1.46"])
def test_quiz_answer_marks_both_careful_students_right(last: str) -> None:
    command = ["answer", "week1", "additive-chain", "--seed", "0", "3.283680687", "0.77", last]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"(c) ✓ Correct read as: {last}" in said
    assert "Score 0.67" in said


def test_per_entry_feedback_accepts_an_entry_that_follows_from_the_rounded_earlier_part() -> None:
    command = [
        "answer",
        "week1",
        "sdpa-chain",
        "--code",
        "07XS-Q6EH",
        "2.83 0; 2.83 0.71",
        "0.94 0.06; 0.89 0.11",
        "3.94 3.88; 3.89 3.77",
    ]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    # 3.88 = 0.94·4 + 0.06·2 from the rounded (b); only 3.77 follows from nothing (3.79 or 3.78).
    assert "Not correct: entry (2, 2) is off." in said


def test_entries_each_from_a_different_target_are_wrong_and_said_so() -> None:
    answer = _answer("sdpa-chain", 0)
    graded = grade_parts(answer, ["0 2.83; 2.83 4.24", "0.06 0.94; 0.20 0.80", "1.89 0.18; 1.60 0.60"]).parts
    exact_c = answer.parts[2].answer
    assert isinstance(exact_c, MatrixAnswer)
    # the key's (c) is [[1.89, 0.17], ...] and from the rounded (b) [[1.88, 0.18], ...]: a mix of both
    assert exact_c.format().startswith("[[1.89, 0.17]")
    assert graded[2].grade.status == "wrong"
    assert "not all from the same ones" in graded[2].grade.feedback


def test_a_class_of_unrounded_students_is_graded_right() -> None:
    from attnquiz.engine.classwork.grading import grade_text
    from attnquiz.engine.seeding import variant_code

    lines = ["code,1a additive-chain,1b additive-chain,1c additive-chain"]
    expected = []
    for seed in range(20):
        students = _students(_answer("additive-chain", seed))
        assert students is not None
        lines.append(",".join([variant_code(seed), *students[1]]))
        expected.append(2.0)
    marks = grade_text(banks.load("week1"), "\n".join(lines) + "\n")
    assert [row.total for row in marks.rows] == expected


def test_quiz_run_marks_the_unrounded_student_right_after_a_slip(tmp_path: Path) -> None:
    from attnquiz.engine.practice.planning import plan_practice

    for seed in range(40):  # a session whose variant tells the two students apart
        plan = plan_practice(banks.load("week1"), seed=seed, items=["additive-chain"], count=1)
        answer = plan.questions[0].build().answer
        assert isinstance(answer, PartsAnswer)
        students = _students(answer)
        if students is not None and students[0] != students[1]:
            kept = students[1]
            break
    else:
        raise AssertionError("no session in 40 tells the two students apart")
    env = {**os.environ, "QUIZ_HOME": str(tmp_path), "NO_COLOR": "1"}
    command = ["run", "week1", "--item", "additive-chain", "-n", "1", "--seed", str(seed), "--json"]
    result = subprocess.run(
        [sys.executable, "-c", "from attnquiz.main import main; main()", *command],
        input="".join(f"{t}\n" for t in kept),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    summary = next(e for e in events if e.get("type") == "summary")
    assert summary["score"] == pytest.approx(2 / 3, abs=1e-4)  # the summary writes 4 decimals


def test_quiz_check_catches_a_grader_that_punishes_the_unrounded_student(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from attnquiz.engine.check.parts import part_problems
    from attnquiz.engine.grading import parts as part_grading

    answer = _answer("additive-chain", 0)
    assert list(part_problems(answer)) == []
    # Grading as before: only the values as typed are carried forward.
    monkeypatch.setattr(part_grading, "_unrounded_targets", lambda *_args: [])
    problems = [message for check, message, _ in part_problems(answer) if check == "carry"]
    assert any("goes on from the unrounded values" in m and "part (c)" in m for m in problems), problems
