"""`quiz run` in a pseudo-terminal, as a student uses it: readline, prompt commands, Ctrl-C, exams, colour."""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from pathlib import Path

import pexpect
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")

PRACTICE = Path(__file__).resolve().parent.parent / "data" / "practice"
QUIZ = ["-c", "from attnquiz.main import main; main()"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")
# Colour parameters of SGR sequences (bold and dim are styles, which NO_COLOR leaves alone).
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")
UP = "\x1b[A"
BACKSPACE = "\x7f"


def spawn(home: Path, *args: str, columns: int = 80, no_color: bool = True) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_") and k != "NO_COLOR"}
    env.update(QUIZ_HOME=str(home), QUIZ_PATH=str(PRACTICE), TERM="xterm-256color")
    env.pop("COLUMNS", None)
    if no_color:
        env["NO_COLOR"] = "1"
    return pexpect.spawn(
        sys.executable,
        [*QUIZ, *args],
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(40, columns),
    )


def finish(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    text = str(child.before)
    child.close()
    return text


def attempts(home: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(home / "history.sqlite3")
    rows = db.execute("SELECT item, status FROM attempts ORDER BY id").fetchall()
    db.close()
    return [(str(a), str(b)) for a, b in rows]


def test_a_terminal_session_with_help_hint_solutions_and_quit(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original")
    child.expect("seed|own questions")
    child.expect(r"\? hint · s skip · q quit · h help")
    child.expect(r"\[1/3\] › ")
    child.sendline("h")
    child.expect("Commands at the prompt")
    child.expect(r"\[1/3\] › ")
    child.sendline("?")
    child.expect("Add the two projected vectors")
    child.expect(r"\[1/3\] › ")
    child.sendline("2")
    child.expect("✗ Wrong")
    child.expect(r"Answer: (\x1b\[0m)?1\.93")
    child.expect("Worked solution")  # shown at once after a wrong answer
    child.expect("Enter next · a another like this · q quit › ")
    child.sendline("")
    child.expect(r"\[2/3\] › ")
    child.sendline("0")
    child.expect("✓ Correct")
    child.expect(r"Enter next · w solution · g guessed \(\d+ min\) · q quit › ")
    child.sendline("g")  # a lucky guess: rated again, so it comes back soon (the score stays)
    child.expect(r"A guess: rated again \(the score stays\); back for review in \d+ min\.")
    child.expect("Enter next · w solution · q quit › ")
    child.sendline("w")
    child.expect("Worked solution")
    child.expect("Enter next · q quit › ")
    child.sendline("0.35")  # typed as if the next question were on the screen: said, not lost silently
    child.expect("'0.35' was not taken as an answer: the next question was not on the screen yet")
    child.expect(r"\[3/3\] › ")
    child.sendline("q")
    child.expect(r"Summary \(stopped early\)")
    child.expect("Score 1 / 2")
    finish(child)
    assert child.exitstatus == 0
    assert attempts(tmp_path) == [("score-a", "wrong"), ("score-c", "correct")]


def test_invalid_input_is_asked_again_and_readline_recalls_and_edits_it(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original")
    child.expect(r"\[1/3\] › ")
    child.sendline("1.93x")
    child.expect("Cannot read that")
    child.expect("Nothing was counted")
    child.expect(r"\[1/3\] › ")
    # Up recalls the last line; backspace removes the stray x.
    child.send(UP + BACKSPACE + "\r")
    child.expect("✓ Correct")
    child.sendline("q")
    finish(child)
    assert attempts(tmp_path) == [("score-a", "correct")]


def test_ctrl_c_stops_with_the_summary_and_keeps_earlier_answers(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original")
    child.expect(r"\[1/3\] › ")
    child.sendline("1.93")
    child.expect("Enter next")
    child.sendline("")
    child.expect(r"\[2/3\] › ")
    child.sendcontrol("c")
    child.expect(r"Summary \(interrupted\)")
    text = finish(child)
    assert "Traceback" not in text
    assert child.exitstatus == 130
    assert attempts(tmp_path) == [("score-a", "correct")]


def test_ctrl_d_ends_the_session_like_quit(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original")
    child.expect(r"\[1/3\] › ")
    child.sendeof()
    child.expect("Summary")
    finish(child)
    assert child.exitstatus == 0


def test_a_terminal_exam_counts_down_and_confirms_an_early_submission(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original", "--exam", "--time", "20m")
    child.expect("time 20 min")
    child.expect(r"\[1/3 · (19:5\d|20:00) left\] › ")
    child.sendline("1.93")
    child.expect("Saved your answer to question 1")
    child.expect(r"\[2/3 · \d+:\d\d left\] › ")
    child.sendline("?")
    child.expect("No hints or solutions during an exam")
    child.sendline("back")
    child.expect(r"Your answer: (\x1b\[0m)?1\.93")
    child.expect(r"\[1/3 · ")
    child.sendline("submit")
    child.expect(r"Submit with 2 unanswered\? \[y/N\] › ")
    child.sendline("n")
    child.expect(r"\[1/3 · ")
    child.sendline("g 3")
    child.expect("Which model reads")
    child.sendline("a")
    child.expect("Saved your answer to question 3")
    child.sendline("submit")
    child.expect(r"\[y/N\] › ")
    child.sendline("y")
    child.expect("Results")
    child.expect("Score 2 / 3")
    finish(child)
    assert child.exitstatus == 0
    assert sorted(attempts(tmp_path)) == [("pick-one", "correct"), ("score-a", "correct")]


def test_no_color_turns_colour_off_and_colour_is_on_otherwise(tmp_path: Path) -> None:
    plain_child = spawn(tmp_path, "run", "demo", "--original", no_color=True)
    plain_child.expect(r"\[1/3\] › ")
    plain_child.sendline("q")
    plain_text = finish(plain_child)
    coloured = spawn(tmp_path, "run", "demo", "--original", no_color=False)
    coloured.expect(r"\[1/3\] › ")
    coloured_text = str(coloured.before)
    coloured.sendline("q")
    finish(coloured)
    assert not COLOUR.search(plain_text)
    assert COLOUR.search(coloured_text)


def test_a_narrow_terminal_wraps_everything_without_a_traceback(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "week1", "--count", "4", "--seed", "8", columns=40)
    output: list[str] = []
    for position in range(1, 5):
        child.expect(rf"\[{position}/4\] (?:\([a-z]\) )?› ")  # a question in parts asks for (a)
        output.append(str(child.before))
        child.sendline("s")
        child.expect("Enter ")
        output.append(str(child.before))
        child.sendline("")
    child.expect("Summary")
    output.append(str(child.before))
    output.append(finish(child))
    text = ANSI.sub("", "".join(output))
    assert "Traceback" not in text
    assert child.exitstatus == 0
    too_wide = [line for line in text.split("\n") if len(line) > 40]
    assert not too_wide, too_wide
