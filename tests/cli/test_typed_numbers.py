"""Every number a user types on the command line is read by a total reader: ``²`` (a digit to
``str.isdigit``, not to ``int``), other scripts' digits, thousands of digits and underscores give
one line that says what was expected, never a traceback. The option table is read from the
commands themselves, so a new number option is attacked too."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
import typer.core
import typer.main
from typer.testing import CliRunner

from attnquiz.engine.practice.planning import parse_duration
from attnquiz.engine.typed_numbers import NumberFieldError, whole, whole_in
from attnquiz.main import app

runner = CliRunner()
HOSTILE_NUMBERS = ["²", "١٢", "9" * 5000, "-²", "1_0", "", " ", "0x10", "1e3", "١", "٣٠m", "²h"]

# The arguments each command needs before its options are looked at.
ARGUMENTS = {
    "run": ["week1"],
    "review": [],
    "stats": [],
    "show": ["week1", "additive-score"],
    "answer": ["week1", "additive-score", "1"],
    "export": ["week1"],
    "grade": ["week1"],
    "scan": [],
    "check": ["week1"],
    "serve": [],
}


def number_options() -> list[tuple[str, str]]:
    """(command, option) for every option of an int or float type, of every command."""
    found = []
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    for name, command in group.commands.items():
        assert command.callback is not None
        hints = typing.get_type_hints(command.callback)
        for param in command.params:
            kinds = typing.get_args(hints.get(param.name or "")) or (hints.get(param.name or ""),)
            if param.param_type_name == "option" and any(k in (int, float) for k in kinds):
                found.append((name, param.opts[0]))
    return found


def test_every_number_option_is_known_here() -> None:
    options = number_options()
    assert len(options) >= 20
    assert {name for name, _ in options} <= set(ARGUMENTS)


@pytest.mark.parametrize(("command", "option"), number_options())
@pytest.mark.parametrize("typed", ["²", "9" * 5000, "١٢x"])
def test_a_number_option_given_a_non_number_says_so_in_one_line(
    command: str, option: str, typed: str, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, [command, *ARGUMENTS[command], option, typed], env={"QUIZ_HOME": str(tmp_path), "NO_COLOR": "1"}
    )
    assert result.exit_code in (1, 2), result.output
    assert isinstance(result.exception, SystemExit), result.exception
    said = [line for line in result.output.splitlines() if line.startswith(("Error:", "quiz:"))]
    assert len(said) == 1, result.output
    assert option in said[0] or "number" in said[0] or "integer" in said[0], said


@pytest.mark.parametrize("typed", HOSTILE_NUMBERS)
def test_quiz_run_exam_time_given_a_non_duration_says_so_in_one_line(typed: str, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["run", "week1", "--exam", "--time", typed], env={"QUIZ_HOME": str(tmp_path), "NO_COLOR": "1"}
    )
    assert result.exit_code in (1, 2), result.output
    assert isinstance(result.exception, SystemExit), result.exception
    said = [line for line in result.output.splitlines() if line.startswith(("Error:", "quiz:"))]
    assert len(said) == 1, result.output
    assert len(said[0]) < 200


@pytest.mark.parametrize(
    ("text", "value"),
    [("12", 12), (" 7 ", 7), ("0", 0), ("9" * 12, 10**12 - 1)]
    + [(t, None) for t in [*HOSTILE_NUMBERS, "9" * 13, "+1", "1.0", "1 2", "١", "１"]],
)
def test_the_reader_takes_ascii_digits_only(text: str, value: int | None) -> None:
    assert whole(text) == value


def test_a_number_out_of_range_or_unreadable_is_one_line() -> None:
    assert whole_in("5", 1, 10, "count") == 5
    for typed in ("²", "11", "0", "9" * 5000):
        with pytest.raises(NumberFieldError) as refused:
            whole_in(typed, 1, 10, "count")
        assert "\n" not in str(refused.value)
        assert len(str(refused.value)) < 100


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("20m", 1200.0), ("45", 2700.0), ("1:30:00", 5400.0), ("90s", 90.0), ("1h30m", 5400.0)],
)
def test_durations_that_are_durations_still_are(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds
