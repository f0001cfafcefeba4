"""What students ask for, in the terminal: hints in steps, "another like this" after a miss, each
rating with the interval it gives, and a formula's reading confirmed before it is graded."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.cli.test_run_pty import attempts, finish, spawn

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")

CONCEPTS = Path(__file__).resolve().parent.parent / "data" / "concept" / "concepts.yaml"
INTERVAL = r"\(\d+ (?:min|h|days?|months)\)"
E = r"(?:\x1b\[[0-9;]*m)*"
"""Style sequences (bold, colour) between the words of a line."""


def test_hints_come_in_steps_and_another_like_this_follows_a_miss(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original", "--count", "1", columns=120)
    child.expect(r"\[1/1\] › ")
    child.sendline("?")
    child.expect(rf"Hint 1 of 3: {E}Add the two projected vectors")
    child.sendline("?")
    child.expect(rf"Hint 2 of 3: {E}Add the projections: .* = \[2, 2\]\.")  # the next hint, not the same
    child.sendline("?")
    child.expect(rf"Hint 3 of 3: {E}Apply tanh to each entry")
    child.sendline("?")
    child.expect("No more hints: the next step is the answer")
    child.sendline("0.5")
    child.expect("✗ Wrong")
    child.expect("Enter summary · a another like this · q quit › ")
    child.sendline("a")
    child.expect(r"Question 2 of 2 · another like this · variant (\S+)")
    child.expect(r"score-a")
    child.expect(r"\[2/2\] › ")
    child.sendline("?")
    child.expect("Hint 1 of 3")  # a new question starts its hints again
    child.sendline("q")
    child.expect("Summary")
    finish(child)
    assert attempts(tmp_path) == [("score-a", "wrong")]


def test_after_a_right_answer_there_is_no_other_like_it_offered(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "demo", "--original", "--count", "1", columns=120)
    child.expect(r"\[1/1\] › ")
    child.sendline("1.93")
    child.expect("✓ Correct")
    child.expect(rf"Enter summary · w solution · g guessed {INTERVAL} · q quit › ")
    child.sendline("a")  # not an offer here: said, and the session goes on
    child.expect("was not taken as an answer")
    text = finish(child)
    assert "another like this" not in text


def test_each_rating_shows_the_interval_it_gives(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", str(CONCEPTS), "--item", "why-scale", columns=140)
    child.expect(r"\[1/1\] › ")
    child.sendline("The variance grows with d_k.")
    choices = " · ".join(
        f"{n} {word} {INTERVAL}" for n, word in enumerate(("again", "hard", "good", "easy"), 1)
    )
    child.expect(rf"Rate your answer: {choices} › ")
    shown = re.findall(r"\((\d+) (min|h|days?|months)\)", str(child.after))
    child.sendline("4")
    child.expect(r"Rated easy\. Back for review in (\d+) days")
    assert child.match is not None
    # The interval it said is the one it gives, up to the scheduler's fuzz (intervals of days are
    # spread by a few per cent at random) and the calendar day it falls on.
    said, given = int(shown[3][0]), int(child.match.group(1))
    assert shown[3][1] == "days"
    assert abs(given - said) <= 1 + 0.25 * said
    assert [unit for _, unit in shown[:3]] == ["min", "min", "min"]  # the learning steps
    finish(child)


def test_without_history_the_ratings_have_no_intervals(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", str(CONCEPTS), "--item", "why-scale", "--no-history", columns=140)
    child.expect(r"\[1/1\] › ")
    child.sendline("")
    child.expect(r"Rate your answer: 1 again · 2 hard · 3 good · 4 easy › ")
    child.sendline("q")
    finish(child)


def test_a_formula_read_otherwise_than_typed_is_shown_and_confirmed_first(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "week1", "--item", "block-params-formula", "--count", "2", "--seed", "1")
    child.expect(r"\[1/2\] › ")
    child.sendline("12d^2+13d")
    child.expect(rf"Read as: {E}12\*d\^2 \+ 13\*d")
    child.expect(r"Grade it as read\? \[Y/n\] › ")
    child.sendline("n")  # not what was meant: the line comes back to edit
    child.expect(r"\[1/2\] › ")
    child.expect("12d\\^2\\+13d")
    child.sendline("")
    child.expect(r"Grade it as read\? \[Y/n\] › ")
    child.sendline("")  # Enter: yes
    child.expect("✓ Correct")
    child.expect("Enter next")
    child.sendline("")
    child.expect(r"\[2/2\] › ")
    child.sendline("12*d^2 + 13*d")  # read exactly as typed: graded at once, nothing asked
    child.expect(r"Grade it as read\?|✓ Correct")
    assert child.after == "✓ Correct"
    child.sendline("")
    finish(child)
    assert attempts(tmp_path) == [("block-params-formula", "correct")] * 2
