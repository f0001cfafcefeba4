"""`quiz answer` driven as a user drives it: in process (CliRunner) and as a subprocess, text and JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.seeding import variant_code
from attnquiz.main import app

runner = CliRunner()


# Not `python -m attnquiz.main`: run as __main__, that module is a second copy of attnquiz.main, on whose app
# the commands defined in their own modules (such as `answer`) are not registered.
QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]


def quiz(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    return subprocess.run(
        [*QUIZ, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def answer_json(*args: str) -> dict[str, object]:
    result = runner.invoke(app, ["answer", *args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert isinstance(data, dict)
    return data


# -- the examples ------------------------------------------------------------------------


def test_an_expression_for_the_original_is_correct() -> None:
    result = runner.invoke(app, ["answer", "week1", "additive-score", "--original", "2*tanh(2)"])
    assert result.exit_code == 0, result.output
    assert "✓ Correct" in result.output
    assert "read as: 2*tanh(2) = 1.92806" in result.output


def test_two_decimals_as_asked_are_correct() -> None:
    data = answer_json("week1", "additive-score", "--original", "1.93")
    assert data == {
        "status": "correct",
        "score": 1.0,
        "feedback": "Correct.",
        "mistake": None,
        "read_as": "1.93",
    }


def test_too_few_decimals_are_wrong_for_precision_not_method() -> None:
    data = answer_json("week1", "additive-score", "--original", "1.9")
    assert data["status"] == "wrong"
    assert data["mistake"] == "precision-too-low"
    assert "precision is too low" in str(data["feedback"])


def test_the_unscaled_matrix_is_named_no_sqrt_dk() -> None:
    # The example uses --seed 3, which draws fresh inputs; the paper's own numbers are --original.
    data = answer_json("week1", "sdpa-two-tokens", "--original", "[[1.54, 2.54], [2.46, 3.46]]")
    assert data["status"] == "wrong"
    assert data["mistake"] == "no-sqrt-dk"


def test_the_unscaled_matrix_of_a_seeded_variant_is_named_no_sqrt_dk() -> None:
    question = banks.load("week1").get("sdpa-two-tokens").question(3)
    unscaled = next(m for m in question.variant.mistakes if m.tag == "no-sqrt-dk")
    data = answer_json("week1", "sdpa-two-tokens", "--seed", "3", unscaled.format(question.answer))
    assert data["mistake"] == "no-sqrt-dk"


def test_a_half_right_selection_gets_partial_credit_and_says_which_tick_was_wrong() -> None:
    data = answer_json("week1", "mha-statements", "--seed", "3", "A, C, D")  # C, D right; A false
    assert data["status"] == "partial"
    assert data["score"] == 0.5
    assert "**A** is false" in str(data["feedback"])


def test_code_is_invalid_says_why_and_costs_nothing() -> None:
    result = runner.invoke(app, ["answer", "week1", "additive-score", "--seed", "1", "__import__('os')"])
    assert result.exit_code == 0, result.output
    assert "? Cannot read that" in result.output
    assert "Nothing was counted" in result.output
    assert "Unknown name __import__" in result.output
    data = answer_json("week1", "additive-score", "--seed", "1", "__import__('os')")
    assert data["status"] == "invalid"
    assert data["score"] == 0.0
    assert data["mistake"] is None


# -- options and input ---------------------------------------------------------------------------


def test_json_has_exactly_the_documented_fields() -> None:
    data = answer_json("week1", "additive-score", "--original", "4")
    assert list(data) == ["status", "score", "feedback", "mistake", "read_as"]
    assert data["mistake"] == "no-tanh"


def test_a_variant_code_selects_the_same_variant_as_its_seed() -> None:
    question = banks.load("week1").get("additive-score").question(7)
    right = question.answer.format()
    by_seed = answer_json("week1", "additive-score", "--seed", "7", right)
    by_code = answer_json("week1", "additive-score", "--code", variant_code(7), right)
    assert by_seed == by_code
    assert by_code["status"] == "correct"


def test_a_negative_response_is_an_answer_not_an_option() -> None:
    data = answer_json("week1", "additive-score", "--original", "-1.93")
    assert data["mistake"] == "sign-error"
    after_separator = runner.invoke(
        app, ["answer", "week1", "additive-score", "--original", "--json", "--", "-1.93"]
    )
    assert json.loads(after_separator.output)["mistake"] == "sign-error"


def test_the_response_can_come_from_standard_input() -> None:
    result = runner.invoke(app, ["answer", "week1", "additive-score", "--original", "--json"], input="1.93\n")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["status"] == "correct"
    dash = runner.invoke(app, ["answer", "week1", "additive-score", "--original", "-", "--json"], input="2")
    assert json.loads(dash.output)["mistake"] == "precision-too-low"


def test_every_grade_exits_0() -> None:
    for response in ("1.93", "4", "1.9", "", "abc", "9**9**9"):
        result = runner.invoke(app, ["answer", "week1", "additive-score", "--original", response])
        assert result.exit_code == 0, (response, result.output)


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["week1", "no-such-item", "--seed", "1", "1"], 1, "has no item"),
        (["no-such-bank", "additive-score", "--seed", "1", "1"], 1, "no bank named"),
        (["week1", "additive-score", "--code", "ZZZZ-ZZZZ", "1"], 1, "variant code"),
        (["week1", "additive-score", "1.93"], 2, "exactly one of --seed"),
        (["week1", "additive-score", "--seed", "1", "--original", "1.93"], 2, "exactly one of --seed"),
    ],
)
def test_user_errors_are_one_line_with_exit_1_and_usage_errors_exit_2(
    args: list[str], code: int, words: str
) -> None:
    result = runner.invoke(app, ["answer", *args])
    assert result.exit_code == code, result.output
    assert words in result.output
    assert "Traceback" not in result.output


# -- as a subprocess -----------------------------------------------------------------------------


def test_subprocess_prints_status_feedback_mistake_and_reading() -> None:
    result = quiz("answer", "week1", "sdpa-two-tokens", "--original", "1.54 2.54; 2.46 3.46")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "✗ Wrong  ·  mistake: no-sqrt-dk" in out
    assert "√dₖ" in out  # the feedback's maths rendered for the terminal
    assert "read as: [[1.54, 2.54], [2.46, 3.46]]" in out
    assert "\x1b[" not in out  # NO_COLOR
    assert max(len(line) for line in out.splitlines()) <= 80


def test_subprocess_json_and_piped_answer() -> None:
    result = quiz("answer", "week1", "mha-statements", "--seed", "3", "--json", stdin="A, C, D\n")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["status"], data["score"]) == ("partial", 0.5)


def test_subprocess_hostile_input_is_invalid_and_quick_to_refuse() -> None:
    result = quiz("answer", "week1", "additive-score", "--original", "--json", stdin="9" * 1_000_000)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "invalid"
    assert "too long" in data["feedback"]


def test_subprocess_unknown_item_exits_1_with_one_line() -> None:
    result = quiz("answer", "week1", "additive-scor", "--seed", "1", "1.93")
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0
    assert "did you mean additive-score" in result.stderr


def test_help_has_an_example() -> None:
    result = runner.invoke(app, ["answer", "--help"])
    assert result.exit_code == 0
    assert "Example: quiz answer week1 additive-score" in result.output
