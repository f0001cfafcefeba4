"""A terminal exam survives an interruption: Ctrl-C asks, a killed process or a closed terminal leaves
an exam that `quiz run --resume` continues with its questions, answers and time left."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.cli.test_run_pty import attempts, finish, spawn

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")

LEFT = re.compile(r"\[(\d)/4 · (\d+):(\d\d) left\] › ")
VARIANT = re.compile(r"Question (\d) of 4 · variant (\S+)")


def seconds_left(child: pexpect.spawn) -> tuple[int, int]:
    """Waits for an exam prompt; its question and the seconds it says are left."""
    child.expect(LEFT)
    match = child.match
    assert match is not None
    return int(match.group(1)), int(match.group(2)) * 60 + int(match.group(3))


def saved_state(home: Path) -> dict[str, Any]:
    (path,) = (home / "history-exams").glob("*.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_ctrl_c_asks_and_no_returns_to_the_question_with_the_line_being_typed(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--seed", "3", "--exam", "--time", "20m")
    assert seconds_left(child)[0] == 1
    child.sendline("0.5")
    child.expect("Saved your answer to question 1")
    assert seconds_left(child)[0] == 2
    child.send("0.2")
    child.expect("0.2")  # read by readline (Ctrl-C flushes what the terminal has not passed on yet)
    child.sendcontrol("c")
    child.expect(r"Answers: 1● 2○ 3○ 4○")
    child.expect("Ctrl-C again leaves it unsubmitted: quiz run --resume continues it later.")
    child.expect(r"Submit with 3 unanswered\? \[y/N\] › ")
    child.sendline("n")
    # Back at question 2, with what was being typed put back on the line to finish.
    assert seconds_left(child)[0] == 2
    child.expect("0.2")
    child.sendline("5")
    child.expect("Saved your answer to question 2")
    assert seconds_left(child)[0] == 3
    child.sendcontrol("c")
    child.expect(r"Submit with 2 unanswered\? \[y/N\] › ")
    child.sendline("y")
    child.expect("Results")
    child.expect("Another exam like this one \\(fresh questions\\):")
    child.expect(
        r"quiz run demo --exam --time 20m(\x1b\[0m)?\r\n"
    )  # no --seed: not the questions just solved
    text = finish(child)
    assert "--seed 3" not in text
    assert child.exitstatus == 0
    assert sorted(item for item, _ in attempts(tmp_path)) == ["score-b", "score-c"]
    assert not list((tmp_path / "history-exams").glob("*.json"))  # handed in: nothing left to resume


def test_an_exam_killed_with_sigkill_resumes_with_its_questions_answers_and_time(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--seed", "3", "--exam", "--time", "20m")
    child.expect(VARIANT)
    codes = {1: child.match.group(2)}
    child.sendline("0.5")
    child.expect(VARIANT)
    codes[2] = child.match.group(2)
    child.sendline("1.25")
    child.expect(VARIANT)
    codes[3] = child.match.group(2)
    position, before = seconds_left(child)
    assert position == 3
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    child.close()
    assert child.signalstatus == signal.SIGKILL

    resumed = spawn(tmp_path, "run", "--resume")
    resumed.expect(r"Resuming the exam left on")
    resumed.expect(r"demo, 2 of 4\s+answered")
    resumed.expect(VARIANT)
    assert (int(resumed.match.group(1)), resumed.match.group(2)) == (3, codes[3])
    position, after = seconds_left(resumed)
    assert position == 3
    assert after <= before
    resumed.sendline("b")
    resumed.expect(VARIANT)
    assert resumed.match.group(2) == codes[2]
    resumed.expect(r"Your answer: (\x1b\[0m)?1\.25")
    resumed.sendline("b")
    resumed.expect(VARIANT)
    assert resumed.match.group(2) == codes[1]
    resumed.expect(r"Your answer: (\x1b\[0m)?0\.5")
    resumed.sendline("submit")
    resumed.expect(r"Submit with 2 unanswered\? \[y/N\] › ")
    resumed.sendline("y")
    resumed.expect("Summary")
    text = finish(resumed)
    assert "Traceback" not in text
    assert resumed.exitstatus == 0
    # One attempt per question answered: the resumed exam replaced, never duplicated, the stored ones.
    assert sorted(item for item, _ in attempts(tmp_path)) == ["score-b", "score-c"]
    nothing = spawn(tmp_path, "run", "--resume")
    nothing.expect("there is no unfinished exam to resume")
    finish(nothing)
    assert nothing.exitstatus == 1


def test_ctrl_c_twice_and_a_closed_terminal_leave_the_exam_kept_with_the_line_typed(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--seed", "3", "--exam", "--time", "20m")
    child.sendline("0.5")
    child.expect("Saved your answer to question 1")
    child.expect(LEFT)
    child.send("0.7")
    child.expect("0.7")
    child.sendcontrol("c")
    child.expect(r"\[y/N\] › ")
    child.sendcontrol("c")
    child.expect("The exam is kept, not submitted \\(1 of 4 answered, \\d+:\\d\\d left\\)")
    child.expect("Continue it with: quiz run --resume")
    finish(child)
    assert child.exitstatus == 130
    state = saved_state(tmp_path)
    assert state["draft"] == {"position": 2, "text": "0.7"}
    assert [s["answered"] for s in state["slots"]] == [True, False, False, False]

    again = spawn(tmp_path, "run", "demo", "--resume")
    again.expect(LEFT)
    again.expect("0.7")  # the line being typed, back to finish
    again.send("5")
    again.expect("5")
    os.kill(again.pid, signal.SIGHUP)  # the window closed
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 128 + signal.SIGHUP
    assert saved_state(tmp_path)["draft"] == {"position": 2, "text": "0.75"}


def test_resume_refuses_options_that_would_change_the_exam_and_a_bank_edited_since(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "--resume", "--seed", "4")
    child.expect("--resume continues an exam as it was left: drop --seed")
    finish(child)
    assert child.exitstatus == 2
    bare = spawn(tmp_path, "run")
    bare.expect("which bank")
    finish(bare)
    assert bare.exitstatus == 2


def test_time_up_keeps_the_line_being_typed_as_the_answer(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original", "--time", "8s")
    child.expect(r"\[1/3 · 0:0\d left\] › ")
    child.send("1.93")  # typed, not entered, when the time runs out
    child.expect("1.93")
    child.expect("Time is up: the line you were typing, '1.93', is saved as your answer.", timeout=60)
    child.expect("Time is up: the exam was submitted.")
    child.expect("Score 1 / 3")
    finish(child)
    assert sorted(attempts(tmp_path)) == [("score-a", "correct")]
    assert not list((tmp_path / "history-exams").glob("*.json"))


def test_a_new_session_says_an_unfinished_exam_is_kept(tmp_path: Path) -> None:
    from tests.cli.test_run_piped import quiz

    child = spawn(tmp_path, "run", "demo", "--seed", "3", "--exam", "--time", "20m")
    child.sendline("0.5")
    child.expect("Saved your answer to question 1")
    child.expect(LEFT)
    os.kill(child.pid, signal.SIGTERM)  # SIGTERM, like a closed terminal, keeps it unsubmitted
    child.expect("Continue it with: quiz run --resume")
    finish(child)
    assert child.exitstatus == 128 + signal.SIGTERM
    result = quiz(tmp_path, "run", "demo", "--original", stdin="q\n")
    said = " ".join(result.stdout.split())
    kept = (
        r"An unfinished exam \(demo, 1 of 4 answered, \d+:\d\d left\) is kept: quiz run --resume continues it"
    )
    assert re.search(kept, said), said
