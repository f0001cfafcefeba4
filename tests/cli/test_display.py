"""attnquiz.display: how text is folded to the terminal, and how questions and grades are laid out."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from attnquiz import display, question_lines
from attnquiz.engine.answers.kinds import ChoiceAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.grading.grade import grade
from attnquiz.folding import fold
from attnquiz.line_breaks import NBSP


def lines(text: str, width: int, hang: int = 0) -> list[str]:
    return fold(text, width, hang=hang).plain.split("\n")


def capture(width: int = 80) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, no_color=True, highlight=False), out


def test_fold_never_breaks_inside_a_short_bracketed_group() -> None:
    text = "the encoder states h₁ = [3, 2], h₂ = [0, 3] and the vectors [[2, 1], [1, 0], [2, 2]] here"
    for width in range(24, 60):
        for line in lines(text, width):
            assert line.count("[") == line.count("]"), (width, line)


def test_fold_breaks_after_an_operator_not_before_it() -> None:
    text = "so the dense total is 24d² = 14,155,776 FLOPs per token, and 4nd + 2nd = 6nd"
    for width in range(20, 70):
        for line in lines(text, width)[1:]:
            assert line[:1] not in set("=+−×·"), (width, line)


def test_fold_hangs_continuation_lines_and_leaves_no_trailing_spaces() -> None:
    folded = lines("1. " + "word " * 30, 30, hang=3)
    assert len(folded) > 2
    assert all(line.startswith("   word") for line in folded[1:])
    assert all(line == line.rstrip() for line in folded)
    assert all(len(line) <= 30 for line in folded)


def test_fold_keeps_an_indented_lines_indent_on_its_continuations() -> None:
    folded = lines("  A. " + "option text " * 10, 40, hang=3)
    assert all(line.startswith("     option") for line in folded[1:])


def test_fold_keeps_words_joined_by_a_no_break_space_and_prints_a_plain_space() -> None:
    folded = lines(f"Type your answer and press Enter.  ?{NBSP}hint · s{NBSP}skip", 36)
    assert folded == ["Type your answer and press Enter.", "? hint · s skip"]
    assert NBSP not in "".join(folded)


def test_fold_keeps_newlines_and_styles() -> None:
    text = Text.assemble(("Answer: ", "bold green"), "[1.99, 1.78]\nsecond line")
    folded = fold(text, 80)
    assert folded.plain == "Answer: [1.99, 1.78]\nsecond line"
    assert any(span.style == "bold green" and span.end - span.start == 8 for span in folded.spans)


def test_a_word_wider_than_the_line_gets_a_line_of_its_own() -> None:
    assert lines("a " + "x" * 50 + " b", 20) == ["a", "x" * 50, "b"]


@pytest.mark.parametrize("width", [40, 80, 120])
def test_choice_options_hang_under_their_text(width: int) -> None:
    question = banks.load("week1").get("scaling-effects").question(17)
    console, out = capture(width)
    display.print_question(console, question)
    text = out.getvalue()
    assert all(len(line) <= width and line == line.rstrip() for line in text.splitlines())
    options = ("  A. " + text.split("  A. ", 1)[1]).split("\n\n", 1)[0].splitlines()
    assert isinstance(question.answer, ChoiceAnswer)
    assert len(options) >= len(question.answer.options)
    # Every line of the options is either an option's first line or hangs under its text.
    assert all((line[2:3].isupper() and line[3:5] == ". ") or line.startswith("     ") for line in options)


def test_a_session_holds_the_note_back_and_quiz_show_keeps_it() -> None:
    entry = banks.load("week1").get("long-sentence-models")
    question = entry.original()
    assert question.student_note, "the original's note for students: the options are the bank's own"
    console, out = capture()
    display.print_question(console, question, note=False)
    assert "Note:" not in out.getvalue()
    display.print_question(console, question)
    assert "Note:" in out.getvalue()


def test_the_verdict_shows_a_score_only_when_it_is_partial() -> None:
    question = banks.load("week1").get("scaling-effects").question(17)
    right = question.answer.format()
    assert display.verdict(grade(question, right)).plain == "✓ Correct"
    first_true = right.split(",")[0]
    partial = grade(question, first_true)
    assert partial.status == "partial"
    assert display.verdict(partial).plain.startswith("◐ Partly right  ·  score 0.")


def test_grade_remarks_drop_what_the_verdict_already_says() -> None:
    question = banks.load("week1").get("scaling-effects").question(17)
    partial = grade(question, question.answer.format().split(",")[0])
    assert "Partly right: score" in partial.feedback
    remarks = question_lines.grade_remarks(partial)
    assert remarks
    assert not any(r.startswith("Partly right") for r in remarks)
    additive = banks.load("week1").get("additive-score").original()
    wrong = grade(additive, "0.5")
    assert wrong.status == "wrong"
    assert wrong.mistake is None
    assert question_lines.grade_remarks(wrong) == []


def test_the_reading_is_echoed_only_when_it_says_more_than_the_response() -> None:
    question = banks.load("week1").get("additive-score").original()
    console, out = capture()
    display.print_grade(console, grade(question, "1.93"), "1.93")
    assert "read as" not in out.getvalue()
    display.print_grade(console, grade(question, "2*tanh(2)"), "2*tanh(2)")
    assert "read as: 2*tanh(2) = 1.92806" in out.getvalue()


COMMAND = "quiz run week1 --item weights-independent-of-length --item additive-score"


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (80, ["  " + COMMAND]),
        (
            40,
            [
                "  quiz run week1 --item \\",
                "      weights-independent-of-length \\",
                "      --item additive-score",
            ],
        ),
        (
            30,
            [
                "  quiz run week1 --item \\",
                "      weights-independent-of-length \\",
                "      --item additive-score",
            ],
        ),
    ],
)
def test_a_printed_command_breaks_before_options_and_fits_where_its_words_do(
    width: int, expected: list[str]
) -> None:
    from attnquiz.session_view import command_lines

    printed = command_lines(COMMAND, width)
    assert printed == expected
    # Every line fits unless one word alone is wider; pasted, the lines are the same command.
    assert all(len(line) <= width for line in printed if "weights-independent-of-length" not in line)
    assert " ".join(line.rstrip(" \\").strip() for line in printed) == COMMAND
