"""Error carried forward from what the student typed: students who follow the instructions earn full
marks on every chain, the feedback's arithmetic holds, the key says how a later part follows from the
rounded earlier one, and carried values of any size give a readable grade."""

from __future__ import annotations

import csv
import io
import json
import math
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
from attnquiz.engine.grading.parts import grade_parts
from attnquiz.main import app


def _chains() -> list[tuple[str, str]]:
    """Every item of both banks whose parts use earlier ones (a chain)."""
    found = []
    for name in ("week1", "week2"):
        for entry in banks.load(name).items:
            answer = entry.question(0).answer
            if isinstance(answer, PartsAnswer) and any(p.uses for p in answer.parts):
                found.append((name, entry.id))
    return found


CHAINS = _chains()
KNOWN = {"additive-chain", "sdpa-chain", "params-chain", "cost-chain", "causal-mask-chain", "layernorm-chain"}
SEEDS = range(300)
runner = CliRunner()


def _answer(bank: str, item: str, seed: int) -> PartsAnswer:
    answer = banks.load(bank).get(item).question(seed).answer
    assert isinstance(answer, PartsAnswer)
    return answer


def test_the_chains_are_found() -> None:
    assert KNOWN | {"base-model-gap"} <= {item for _, item in CHAINS}


# -- a student, simulated without the engine's own rounding ---------------------------------------


def _typed_number(answer: SingleAnswer, value: float) -> str:
    """``value`` as a student writes it at the precision the part asks for (Python's own rounding)."""
    tolerance = answer.tolerance
    if tolerance.mode == "decimals":
        return f"{value:.{tolerance.places}f}"
    if tolerance.mode == "exact":
        assert float(value).is_integer()
        return str(int(value))
    raise AssertionError(f"a chain asks for {tolerance.mode}: teach the test that precision")


def _typed(answer: SingleAnswer, value: Any) -> str:
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return _typed_number(answer, float(value))
    rows = np.atleast_2d(np.asarray(value, dtype=float))
    return "; ".join(" ".join(_typed_number(answer, float(x)) for x in row) for row in rows)


def _value_of(text: str) -> Any:
    rows = [[float(x) for x in row.split()] for row in text.split(";")]
    if len(rows) == 1 and len(rows[0]) == 1:
        return rows[0][0]
    return tuple(rows[0]) if len(rows) == 1 else tuple(tuple(r) for r in rows)


def _exact_value(part: Part) -> Any:
    answer = part.answer
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return answer.value
    if isinstance(answer, VectorAnswer):
        return answer.values
    assert isinstance(answer, MatrixAnswer)
    return answer.rows


def _rounding_student(answer: PartsAnswer) -> list[str]:
    """Rounds every part as asked, and computes each later part from their own typed values."""
    typed: dict[str, str] = {}
    for part in answer.parts:
        if part.uses:
            assert part.recompute is not None
            value = part.recompute(*(_value_of(typed[label]) for label in part.uses))
        else:
            value = _exact_value(part)
        if isinstance(part.answer, VectorAnswer):
            value = np.asarray(value, dtype=float).reshape(1, -1)
        typed[part.label] = _typed(part.answer, value)
    return list(typed.values())


def _full_precision_student(answer: PartsAnswer) -> list[str]:
    """Keeps every digit: each part typed with the 17 significant digits of a float."""
    out = []
    for part in answer.parts:
        rows = np.atleast_2d(np.asarray(_exact_value(part), dtype=float))
        out.append("; ".join(" ".join(f"{x:.17g}" for x in row) for row in rows))
    return out


@pytest.mark.parametrize(("bank", "item"), CHAINS)
def test_a_student_who_rounds_as_asked_and_reuses_their_values_earns_full_marks(bank: str, item: str) -> None:
    differed = 0
    for seed in SEEDS:
        answer = _answer(bank, item, seed)
        responses = _rounding_student(answer)
        result = grade_parts(answer, responses)
        for graded, typed in zip(result.parts, responses, strict=True):
            assert (graded.grade.status, graded.grade.score) == ("correct", 1.0), (
                item,
                seed,
                graded.label,
                typed,
                graded.grade.feedback,
            )
        differed += responses != [p.answer.format().replace(",", "") for p in answer.parts]
    if item in {"sdpa-chain", "additive-chain", "layernorm-chain"}:
        assert differed > 0, "the rounded student never differs from the key: the test shows nothing"


@pytest.mark.parametrize(("bank", "item"), CHAINS)
def test_a_student_who_keeps_full_precision_earns_full_marks(bank: str, item: str) -> None:
    for seed in SEEDS:
        answer = _answer(bank, item, seed)
        result = grade_parts(answer, _full_precision_student(answer))
        assert (result.status, result.score) == ("correct", 1.0), (item, seed, result.feedback)


# -- the issue's two examples ----------------------------------------------------------------------


def test_the_issue_s_sdpa_example_is_correct_from_the_typed_weights() -> None:
    answer = _answer("week1", "sdpa-chain", 0)
    typed_b = "0.06 0.94; 0.20 0.80"
    result = grade_parts(answer, ["0 2.83; 2.83 4.24", typed_b, "1.88 0.18; 1.60 0.60"])
    assert [p.grade.status for p in result.parts] == ["correct"] * 3
    c = result.parts[2]
    assert c.grade.feedback == "Correct, from your (b) = [[0.06, 0.94], [0.20, 0.80]]."
    assert c.carried_forward == {"b": "[[0.06, 0.94], [0.20, 0.80]]"}
    # The value it names is the value it used: the typed (b) times V, computed here with numpy.
    v = np.asarray(banks.load("week1").get("sdpa-chain").question(0).variant.inputs["v"], dtype=float)
    assert isinstance(c.expected, MatrixAnswer)
    assert np.allclose(c.expected.rows, np.array([[0.06, 0.94], [0.20, 0.80]]) @ v)
    # The key's own answers still grade correct: the exact route is accepted too.
    assert grade_parts(answer, [p.answer.format() for p in answer.parts]).status == "correct"


def _additive_seed_9() -> tuple[PartsAnswer, float, float]:
    question = banks.load("week1").get("additive-chain").question(9)
    inputs = question.variant.inputs
    j = inputs["component"]
    answer = question.answer
    assert isinstance(answer, PartsAnswer)
    return answer, float(inputs["h"][j - 1]), float(inputs["h2"][j - 1])


def test_the_carried_weight_is_the_typed_one_and_the_stated_arithmetic_holds() -> None:
    # (a) = 3.12 is wrong; its softmax weight is 0.8849, so (b) = 0.88 is right given it. (c) is
    # then α·h1 + (1 − α)·h2 with the typed α = 0.88, here 2·0.88 − 1 = 0.76, not 2·0.8849 − 1.
    answer, h1, h2 = _additive_seed_9()
    assert (h1, h2) == (1.0, -1.0)
    consistent = grade_parts(answer, ["3.12", "0.88", "0.76"])
    b, c = consistent.parts[1], consistent.parts[2]
    assert b.grade.feedback == "Correct, given your (a) = 3.12."
    assert (c.grade.status, c.grade.feedback) == ("correct", "Correct, given your (b) = 0.88.")
    wrong = grade_parts(answer, ["3.12", "0.88", "0.5"]).parts[2]
    # The student who kept (b) unrounded, 0.884933 from their (a), would have 2·0.884933 − 1 = 0.77.
    assert wrong.grade.feedback == (
        "Not correct, even with your earlier values carried forward: 0.76 from your (b) = 0.88 or "
        "0.77 (to 2 decimal places) from your unrounded (b) = 0.884933."
    )
    assert math.isclose(0.88 * h1 + (1 - 0.88) * h2, 0.76)


def test_a_target_that_is_rounded_is_said_to_be() -> None:
    answer, h1, h2 = _additive_seed_9()
    wrong = grade_parts(answer, ["3.12", "0.884", "0.5"]).parts[2]  # 2·0.884 − 1 = 0.768
    assert wrong.carried_forward == {"b": "0.884"}
    assert wrong.grade.feedback == (
        "Not correct, even with your (b) = 0.884 carried forward: that gives 0.77 (to 2 decimal places)."
    )
    assert math.isclose(0.884 * h1 + (1 - 0.884) * h2, 0.768)


# -- the key ----------------------------------------------------------------------------------------


def test_the_key_says_how_c_follows_from_the_rounded_b() -> None:
    question = banks.load("week1").get("sdpa-chain").question(0)
    c = question.variant.parts[2]
    step = (
        "From the rounded (b) = [[0.06, 0.94], [0.20, 0.80]]: [[1.88, 0.18], [1.60, 0.60]] "
        "(marked correct too)."
    )
    assert c.solution[-1] == step
    assert f"**(c)** {step}" in question.variant.solution
    # Only where it matters: a chain of exact counts has nothing to add.
    params = banks.load("week1").get("params-chain").question(0)
    assert not any("rounded" in step for step in params.variant.solution)
    # Rebuilding the variant adds the step once.
    from msgspec.structs import replace

    again = replace(question.variant, hint="again")
    assert again.solution == question.variant.solution


def test_the_rounded_step_is_checked_by_quiz_check_and_the_exports_render_it() -> None:
    from attnquiz.engine.check.checks import check_item

    bank = banks.load("week1")
    report = check_item(bank, bank.get("sdpa-chain"), variants=30)
    assert report.ok, [f.message for f in report.failures]


def test_quiz_check_catches_a_grader_that_punishes_the_rounding_student(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from attnquiz.engine.check.parts import part_problems
    from attnquiz.engine.grading import grade as grading
    from attnquiz.engine.grading import outcome
    from attnquiz.engine.grading import parts as part_grading

    answer = _answer("week1", "sdpa-chain", 0)
    assert list(part_problems(answer)) == []

    def exact_only(parts: PartsAnswer, responses: Any) -> outcome.Grade:
        # Grading as before issue 24 when every earlier part is right: against the exact answers only.
        graded = [
            outcome.PartGrade(p.label, grading.grade_answer(p.answer, r, p.mistakes), p.answer, {})
            for p, r in zip(parts.parts, responses, strict=True)
        ]
        return outcome.Grade("wrong", 0.0, "", None, "", tuple(graded))

    monkeypatch.setattr(part_grading, "grade_parts", exact_only)
    problems = [message for check, message, _ in part_problems(answer) if check == "carry"]
    assert any("rounding each part as asked and reusing it types" in m and "part (c)" in m for m in problems)


# -- carried values of any size (issue 25) -----------------------------------------------------------

HUGE = ["1e15", "-1e27", "1e300", "-1e300", "5e-324", "1e-300", "0", "123456789012345678901234567890"]


def _filled(answer: SingleAnswer, number: str) -> str:
    if isinstance(answer, MatrixAnswer):
        rows, columns = answer.shape
        return "; ".join(" ".join([number] * columns) for _ in range(rows))
    if isinstance(answer, VectorAnswer):
        return " ".join([number] * len(answer.values))
    return number


@pytest.mark.parametrize(("bank", "item"), CHAINS)
def test_carried_values_of_any_size_give_a_readable_grade(bank: str, item: str) -> None:
    for seed in range(3):
        answer = _answer(bank, item, seed)
        keys = [p.answer.format() for p in answer.parts]
        for index, part in enumerate(answer.parts):
            for number in HUGE:
                responses = list(keys)
                responses[index] = _filled(part.answer, number)
                for later in (keys, [number] * len(keys)):
                    given = (
                        responses[: index + 1]
                        + [
                            _filled(p.answer, later[i]) if later is not keys else keys[i]
                            for i, p in enumerate(answer.parts)
                        ][index + 1 :]
                    )
                    result = grade_parts(answer, given)
                    json.dumps(result.to_json())
                    for graded in result.parts[index + 1 :]:
                        text = graded.grade.feedback
                        assert len(text) < 600, text
                        assert "Traceback" not in text, text
                        assert "nan" not in text.lower(), text


def test_quiz_answer_grades_a_huge_earlier_part_without_a_traceback() -> None:
    result = runner.invoke(app, ["answer", "week1", "additive-chain", "--seed", "1", "--", "3", "1e27", "5"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "with your (b) = 1e27 carried forward: that gives" in " ".join(result.output.split())
    as_json = runner.invoke(
        app, ["answer", "week1", "additive-chain", "--seed", "1", "--json", "--", "3", "1e27", "5"]
    )
    assert as_json.exit_code == 0, as_json.output
    c = json.loads(as_json.output)["parts"][2]
    assert c["carried_forward"] == {"b": "1e27"}
    assert "e27" in c["expected_text"]


def test_quiz_run_grades_a_huge_earlier_part_and_asks_the_next(tmp_path: Path) -> None:
    env = {**os.environ, "QUIZ_HOME": str(tmp_path), "NO_COLOR": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from attnquiz.main import main; main()",
            "run",
            "week1",
            "--item",
            "additive-chain",
            "-n",
            "1",
            "--seed",
            "1",
            "--json",
        ],
        input="3\n1e27\n5\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    grades = [e for e in events if e.get("type") == "grade"]
    assert [g["response"] for g in grades] == ["3", "1e27", "5"]
    assert "your (b) = 1e27" in grades[2]["parts"][-1]["feedback"]
    summary = next(e for e in events if e.get("type") == "summary")
    assert summary["rows"][0]["response"] == "3 | 1e27 | 5"


def test_quiz_grade_grades_a_class_with_a_huge_earlier_part(tmp_path: Path) -> None:
    from attnquiz.engine.seeding import variant_code

    answers = tmp_path / "answers.csv"
    answers.write_text(
        "code,1a additive-chain,1b additive-chain,1c additive-chain\n"
        f"{variant_code(1)},3,1e27,5\n{variant_code(2)},1,2,3\n",
        encoding="utf-8",
    )
    marks = tmp_path / "marks.csv"
    result = runner.invoke(app, ["grade", "week1", str(answers), "-o", str(marks)])
    assert result.exit_code == 0, result.output
    written = list(csv.DictReader(io.StringIO(marks.read_text(encoding="utf-8"))))
    assert [r["notes"] for r in written] == ["", ""]  # both students graded
    assert [r["1c additive-chain"] for r in written] == ["0", "0"]
    from attnquiz.engine.classwork.grading import grade_file

    graded = grade_file(banks.load("week1"), answers).rows[0]
    assert "your (b) = 1e27 carried forward: that gives" in graded.cells[2].feedback


def test_the_marking_grid_gives_the_later_part_from_the_rounded_earlier_one_too() -> None:
    from attnquiz.engine.answers.carry import key_text, rounded_chain
    from attnquiz.engine.export.pdf import typst
    from attnquiz.engine.plan.class_plan import plan_class

    plan = plan_class(banks.load("week1"), students=3, master_seed=3, items=["sdpa-chain", "params-chain"])
    source = typst.grid(plan, plan.sheets)
    for sheet in plan.sheets:
        sdpa, params = sheet.questions
        shown = key_text(sdpa.answer)
        assert shown.startswith(sdpa.answer.format() + "; from the rounded (b): (c) [[")
        assert typst.escape(shown) in source
        # Grading reads both back as right: the key never contradicts the grader.
        assert isinstance(sdpa.answer, PartsAnswer)
        typed = [link.target.format() for link in rounded_chain(sdpa.answer)]
        assert typed[2] in shown
        assert grade_parts(sdpa.answer, typed).status == "correct"
        assert key_text(params.answer) == params.answer.format()  # exact counts: nothing to add


# -- every front end ----------------------------------------------------------------------------------


def test_quiz_answer_marks_the_issue_s_rounding_student_right() -> None:
    typed = ["0 2.83; 2.83 4.24", "0.06 0.94; 0.20 0.80", "1.88 0.18; 1.60 0.60"]
    result = runner.invoke(app, ["answer", "week1", "sdpa-chain", "--seed", "0", *typed])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "(c) ✓ Correct" in said
    assert "Correct, from your (b) = [[0.06, 0.94], [0.20, 0.80]]." in said
    assert "Score 1" in said


def test_quiz_run_marks_the_rounding_student_right(tmp_path: Path) -> None:
    from attnquiz.engine.practice.planning import plan_practice

    plan = plan_practice(banks.load("week1"), seed=0, items=["sdpa-chain"], count=1)
    answer = plan.questions[0].build().answer
    assert isinstance(answer, PartsAnswer)
    typed = _rounding_student(answer)
    assert typed != [p.answer.format().replace(",", "") for p in answer.parts]
    env = {**os.environ, "QUIZ_HOME": str(tmp_path), "NO_COLOR": "1"}
    command = ["run", "week1", "--item", "sdpa-chain", "-n", "1", "--seed", "0", "--json"]
    result = subprocess.run(
        [sys.executable, "-c", "from attnquiz.main import main; main()", *command],
        input="".join(f"{t}\n" for t in typed),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    summary = next(e for e in events if e.get("type") == "summary")
    assert (summary["score"], summary["rows"][0]["status"]) == (1.0, "correct")


def test_quiz_grade_marks_a_class_of_rounding_students_right() -> None:
    from attnquiz.engine.classwork.grading import grade_text
    from attnquiz.engine.seeding import variant_code

    lines = ["code,1a sdpa-chain,1b sdpa-chain,1c sdpa-chain"]
    for seed in range(30):
        answer = _answer("week1", "sdpa-chain", seed)
        lines.append(",".join([variant_code(seed), *(f'"{t}"' for t in _rounding_student(answer))]))
    marks = grade_text(banks.load("week1"), "\n".join(lines) + "\n")
    assert all(row.graded for row in marks.rows)
    assert [row.total for row in marks.rows] == [3.0] * 30


FORMULA_CHAIN = r"""bank: fchain
title: "A formula chain where rounding matters"
items:
  - id: root-then-ten
    kind: formula
    source: "Day 13"
    topic: scaled-dot-product
    params:
      d: {choice: [2, 3, 5, 7]}
    prompt: "Take $d_k = {{d}}$."
    parts:
      - name: root
        prompt: "Compute $\\sqrt{d_k}$ to 1 decimal place."
        answer: {value: "sqrt(d)"}
        tolerance: {decimals: 1}
        solution: ["$\\sqrt{ {{d}} } = {{root}}$."]
      - prompt: "Multiply your (a) by 10, to 2 decimal places."
        answer: {value: "10 * root"}
        tolerance: {decimals: 2}
        solution: ["$10 \\cdot {{root}}$."]
"""


def test_a_yaml_formula_chain_says_how_b_follows_from_the_rounded_a_and_passes_quiz_check(
    tmp_path: Path,
) -> None:
    from attnquiz.engine.check.checks import check_path

    path = tmp_path / "fchain.yaml"
    path.write_text(FORMULA_CHAIN, encoding="utf-8")
    report = check_path(str(path), variants=10)
    assert report.ok, [f.message for item in report.items for f in item.failures] + [
        str(e) for e in report.errors
    ]
    bank = banks.load(str(path))
    for seed in range(10):
        question = bank.get("root-then-ten").question(seed)
        answer = question.answer
        assert isinstance(answer, PartsAnswer)
        d = float(question.variant.inputs["d"])
        rounded = f"{math.sqrt(d):.1f}"
        b = answer.parts[1]
        assert (
            b.solution[-1]
            == f"From the rounded (a) = {rounded}: {10 * float(rounded):.2f} (marked correct too)."
        )
        result = grade_parts(answer, [rounded, f"{10 * float(rounded):.2f}"])
        assert (result.status, result.parts[1].grade.feedback) == (
            "correct",
            f"Correct, from your (a) = {rounded}.",
        )
