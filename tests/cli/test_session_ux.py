"""How a session reads to a student: line breaks, what is held back until the answer, Ctrl-C and Ctrl-D.

The pseudo-terminal tests share test_run_pty's helpers; the piped ones run `quiz` as a subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.cli.test_run_pty import ANSI, PRACTICE, attempts, finish, spawn

QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")
NOTE = "The notes give the answer to this one as 1.93, from 2 tanh 2."


def run(home: Path, *args: str, stdin: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_") and k != "NO_COLOR"}
    env.update(QUIZ_HOME=str(home), QUIZ_PATH=str(PRACTICE), COLUMNS=str(columns))
    return subprocess.run(
        [*QUIZ, *args], input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False
    )


def bank_with_a_note(folder: Path) -> Path:
    """The demo bank, with a note for students on its first item that gives the answer away."""
    source = (PRACTICE / "demo.yaml").read_text(encoding="utf-8")
    marker = "    tolerance: {decimals: 2}\n"
    first = source.index(marker) + len(marker)
    path = folder / "noted.yaml"
    note = f'    note: {{text: "{NOTE}", for: students}}\n'
    path.write_text(source[:first] + note + source[first:], encoding="utf-8")
    return path


def test_a_session_shows_the_items_note_after_the_answer_not_with_the_question(tmp_path: Path) -> None:
    bank = bank_with_a_note(tmp_path)
    result = run(tmp_path, "run", str(bank), "--original", "--item", "score-a", stdin="2\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    answered = out.index("› 2")
    assert NOTE[:30] not in out[:answered]
    assert NOTE[:30] in out[answered:]
    assert out.index("Worked solution") < out.index(NOTE[:30])


def test_quiz_show_keeps_the_note_beside_the_question(tmp_path: Path) -> None:
    bank = bank_with_a_note(tmp_path)
    result = run(tmp_path, "show", str(bank), "score-a", "--original", stdin="")
    assert result.returncode == 0, result.stderr
    assert "Note: " + NOTE[:30] in result.stdout


@pytest.mark.parametrize("columns", [40, 80])
def test_a_piped_transcript_fits_and_hangs_its_lines_without_trailing_spaces(
    tmp_path: Path, columns: int
) -> None:
    answers = "\n".join(["1", "s", "0", "q"]) + "\n"
    # Seed 1 draws scored questions first, so a wrong "1" shows a worked solution with numbered steps.
    result = run(tmp_path, "run", "week1", "--seed", "1", "--count", "4", stdin=answers, columns=columns)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert not [line for line in lines if len(line) > columns]
    assert not [line for line in lines if line != line.rstrip()]
    # A numbered step of a worked solution continues under its text, not under its number.
    steps = [i for i, line in enumerate(lines) if re.match(r"\d\. ", line)]
    assert steps
    for i in steps:
        following = lines[i + 1] if i + 1 < len(lines) else ""
        assert not following or re.match(r"(\d\. |   \S|\S)", following), following


def test_the_summary_names_each_question_by_the_item_that_practice_options_take(tmp_path: Path) -> None:
    result = run(tmp_path, "run", "demo", "--original", stdin="2\n0\nq\n")
    summary = result.stdout[result.stdout.index("Summary") :]
    assert re.search(r"^1\s+score-a\s+✗ 0", summary, re.MULTILINE), summary
    assert "--item score-a" in summary


@POSIX_ONLY
def test_ctrl_c_at_the_first_prompt_stops_at_once(tmp_path: Path) -> None:
    # The first prompt is where the grader is warmed up. In a thread, that left about one Ctrl-C in
    # four unseen until the next key; five tries catch such a race most of the time.
    for _ in range(5):
        child = spawn(tmp_path, "run", "demo", "--original", "--no-history")
        child.expect(r"\[1/3\] › ")
        child.sendcontrol("c")
        child.expect(r"Summary \(interrupted\)", timeout=10)
        finish(child)
        assert child.exitstatus == 130


@POSIX_ONLY
def test_ctrl_d_at_the_pause_puts_the_summary_on_a_line_of_its_own(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original")
    child.expect(r"\[1/3\] › ")
    child.sendline("1.93")
    child.expect("Enter next")
    child.sendeof()
    child.expect(pexpect.EOF)
    text = ANSI.sub("", str(child.before))
    child.close()
    assert child.exitstatus == 0
    assert re.search(r"^Summary", text, re.MULTILINE), text
    assert attempts(tmp_path) == [("score-a", "correct")]


def test_the_key_help_keeps_each_key_beside_its_word_in_a_narrow_terminal(tmp_path: Path) -> None:
    result = run(tmp_path, "run", "demo", "--original", stdin="q\n", columns=40)
    assert "? hint · s skip · q quit · h help" in result.stdout
    assert not re.search(r"(^| )[?sqh]$", result.stdout.split("Question 1")[0], re.MULTILINE)


def test_quiz_answer_speaks_like_a_session(tmp_path: Path) -> None:
    result = run(tmp_path, "answer", "week1", "additive-score", "--original", "4", stdin="")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "✗ Wrong  ·  mistake: no-tanh"
    assert "read as: 4" in lines
