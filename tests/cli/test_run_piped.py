"""`quiz run` with answers piped on standard input: plain text, JSON Lines, exams, interruptions, history."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.variant import Question

PRACTICE = Path(__file__).resolve().parent.parent / "data" / "practice"
# Not `python -m attnquiz.main`: run as __main__, that module is a second copy of attnquiz.main, and the
# commands of attnquiz.practice register on the imported copy's app.
QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]
ITEMS = ["score-a", "score-b", "pick-one", "score-c"]


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_") and k != "NO_COLOR"}
    env.update(QUIZ_HOME=str(home), QUIZ_PATH=str(PRACTICE), COLUMNS="80", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def quiz(home: Path, *args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*QUIZ, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment(home, **extra),
        timeout=120,
        check=False,
    )


def start(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*QUIZ, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(home),
    )


def read_until(process: subprocess.Popen[str], marker: str, timeout: float = 60) -> str:
    """Read the process's output line by line until a line contains ``marker``."""
    assert process.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return "".join(seen)
    raise AssertionError(f"{marker!r} never appeared in:\n{''.join(seen)}")


def attempts(home: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(home / "history.sqlite3")
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute("SELECT * FROM attempts ORDER BY id")]
    db.close()
    return rows


def questions(seed: int, items: list[str] = ITEMS) -> list[Question]:
    plan = plan_practice(banks.load(str(PRACTICE / "demo.yaml")), seed=seed, items=items)
    return [p.build() for p in plan.questions]


def seed_with_a_mistake() -> int:
    """A seed whose score-b variant lists a mistake (most do; the test needs one that does)."""
    return next(s for s in range(100) if questions(s)[1].variant.mistakes)


def item_args(seed: int) -> list[str]:
    args = ["run", "demo", "--seed", str(seed)]
    for item in ITEMS:
        args += ["--item", item]
    return args


def plain(text: str) -> None:
    assert "\x1b" not in text, "no escape sequences in piped output"
    assert "Traceback" not in text
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert not too_wide, too_wide


def test_a_piped_session_grades_correct_mistake_invalid_skip_and_wrong(tmp_path: Path) -> None:
    seed = seed_with_a_mistake()
    qs = questions(seed)
    mistake = qs[1].variant.mistakes[0]
    lines = [qs[0].answer.format(), mistake.format(qs[1].answer), "Z", "s", "99"]
    result = quiz(tmp_path, *item_args(seed), stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    plain(out)
    assert f"seed {seed}" in out.splitlines()[1]
    assert "Demo Quiz, Q1" in out
    assert "✓ Correct" in out
    assert f"mistake: {mistake.tag}" in out
    assert "? Cannot read that" in out
    assert "Nothing was counted" in out
    assert "– Skipped." in out
    assert "✗ Wrong" in out
    # The worked solution follows wrong answers by default, not correct ones.
    assert out.count("Worked solution") == 2
    # Long commands are broken with shell continuations; joined, they are the commands to type.
    summary = re.sub(r" \\\n +", " ", out[out.index("Summary") :])
    assert "Score 1 / 4" in summary
    assert mistake.tag in summary
    assert "Topics to revisit:" in summary
    assert (
        f"quiz run demo --item score-a --item score-b --item pick-one --item score-c --seed {seed}" in summary
    )
    assert "quiz run demo --item score-b --item pick-one --item score-c" in summary

    rows = attempts(tmp_path)
    assert [(r["item"], r["status"], r["mistake"]) for r in rows] == [
        ("score-a", "correct", None),
        ("score-b", "wrong", mistake.tag),
        ("score-c", "wrong", None),
    ]
    assert [r["variant_code"] for r in rows] == [qs[0].code, qs[1].code, qs[3].code]
    assert all(r["reviewed"] for r in rows)


def test_json_prints_one_object_per_response_and_a_summary(tmp_path: Path) -> None:
    seed = seed_with_a_mistake()
    qs = questions(seed)
    lines = [qs[0].answer.format(), qs[1].variant.mistakes[0].format(qs[1].answer), "Z", "s", "99"]
    result = quiz(tmp_path, *item_args(seed), "--json", stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(o["type"], o.get("status")) for o in objects] == [
        ("grade", "correct"),
        ("grade", "wrong"),
        ("grade", "invalid"),
        ("skip", None),
        ("grade", "wrong"),
        ("summary", None),
    ]
    first = objects[0]
    assert first["bank"] == "demo"
    assert first["item"] == "score-a"
    assert first["seed"] == qs[0].seed
    assert first["variant_code"] == qs[0].code
    assert first["source"] == "Demo Quiz, Q1"
    assert first["score"] == 1.0
    assert objects[1]["mistake"] == qs[1].variant.mistakes[0].tag
    assert objects[2]["feedback"]
    summary = objects[-1]
    assert summary["score"] == 1.0
    assert summary["out_of"] == 4
    assert summary["ended"] == "completed"
    assert summary["stored"] == 3


def test_end_of_input_ends_the_session_with_its_summary(tmp_path: Path) -> None:
    seed = 11
    qs = questions(seed)
    result = quiz(tmp_path, *item_args(seed), stdin=qs[0].answer.format() + "\n")
    assert result.returncode == 0, result.stderr
    assert "Score 1 / 1" in result.stdout
    assert "1 of 4 asked" in result.stdout
    assert len(attempts(tmp_path)) == 1


def test_solutions_always_and_never(tmp_path: Path) -> None:
    seed = 11
    qs = questions(seed)
    always = quiz(tmp_path, *item_args(seed), "--solutions", "always", stdin=qs[0].answer.format() + "\n")
    assert "Worked solution" in always.stdout
    never = quiz(tmp_path, *item_args(seed), "--solutions", "never", stdin="99\n")
    assert "✗ Wrong" in never.stdout
    assert "Worked solution" not in never.stdout


def test_a_hint_is_shown_and_the_session_goes_on(tmp_path: Path) -> None:
    result = quiz(tmp_path, "run", "demo", "--item", "score-a", "--seed", "3", stdin="?\nq\n")
    assert "Hint 1 of 3: Add the two projected vectors" in result.stdout  # the first of its hints in steps
    assert "No questions were answered." in result.stdout


def test_an_exam_shows_nothing_until_submitted_and_allows_revisits(tmp_path: Path) -> None:
    lines = ["2", "0", "back", "g 1", "1.93", "submit"]
    result = quiz(tmp_path, "run", "demo", "--original", "--exam", stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    plain(out)
    before = out[: out.index("Results")]
    assert "Correct" not in before
    assert "Wrong" not in before
    assert "Saved your answer to question 1." in before
    summary = out[out.index("Summary") :]
    assert "Score 2 / 3" in summary
    assert "unanswered" in summary
    rows = attempts(tmp_path)
    assert [(r["item"], r["response"], r["status"], r["reviewed"]) for r in rows] == [
        ("score-a", "1.93", "correct", 1),
        ("score-c", "0", "correct", 1),
    ]


def test_a_timed_exam_submits_itself_when_time_is_up(tmp_path: Path) -> None:
    with start(tmp_path, "run", "demo", "--original", "--time", "3s") as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("1.93\n")
        process.stdin.flush()
        # Standard input stays open: only the clock can end this session.
        assert process.wait(timeout=60) == 0
        out = process.stdout.read()
    assert "Time is up" in out
    assert "Score 1 / 3" in out
    rows = attempts(tmp_path)
    assert [(r["item"], r["reviewed"]) for r in rows] == [("score-a", 1)]


def test_a_corrupt_history_is_a_warning_and_the_session_still_runs(tmp_path: Path) -> None:
    (tmp_path / "history.sqlite3").write_bytes(b"\x00garbage, not SQLite\n" * 100)
    result = quiz(tmp_path, "run", "demo", "--original", stdin="1.93\n")
    assert result.returncode == 0
    assert "Traceback" not in result.stderr
    assert "quiz: warning: the history database" in result.stderr
    assert "move it away" in result.stderr
    assert "not a database" in result.stderr
    assert "History is off" in result.stdout
    assert "✓ Correct" in result.stdout
    assert "nothing was saved" in result.stdout


def test_a_killed_session_keeps_every_answer_already_given(tmp_path: Path) -> None:
    with start(tmp_path, "run", "demo", "--original") as process:
        assert process.stdin is not None
        read_until(process, "Question 1 of 3")
        process.stdin.write("1.93\n")
        process.stdin.flush()
        read_until(process, "Question 2 of 3")
        process.kill()
        assert process.wait(timeout=30) == -signal.SIGKILL
    rows = attempts(tmp_path)
    assert [(r["item"], r["status"], r["reviewed"]) for r in rows] == [("score-a", "correct", 1)]


def test_an_interrupted_piped_session_prints_its_summary_and_keeps_answers(tmp_path: Path) -> None:
    with start(tmp_path, "run", "demo", "--original") as process:
        assert process.stdin is not None
        read_until(process, "Question 1 of 3")
        process.stdin.write("1.93\n")
        process.stdin.flush()
        read_until(process, "Question 2 of 3")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert "Summary (interrupted)" in out
    assert "Score 1 / 1" in out
    assert len(attempts(tmp_path)) == 1


def test_two_sessions_at_once_lose_nothing(tmp_path: Path) -> None:
    seeds = (21, 22)
    processes = []
    for seed in seeds:
        answers = "\n".join(q.answer.format() for q in questions(seed)) + "\n"
        process = start(tmp_path, *item_args(seed))
        assert process.stdin is not None
        process.stdin.write(answers)
        process.stdin.flush()
        processes.append(process)
    for process in processes:
        with process:
            assert process.stdin is not None
            process.stdin.close()
            assert process.wait(timeout=120) == 0
    rows = attempts(tmp_path)
    assert len(rows) == 8
    assert all(r["status"] == "correct" for r in rows)
    db = sqlite3.connect(tmp_path / "history.sqlite3")
    reviews = dict(db.execute("SELECT item, reviews FROM cards").fetchall())
    db.close()
    assert reviews == dict.fromkeys(ITEMS, 2)


def test_a_whole_week1_session_renders_in_80_columns(tmp_path: Path) -> None:
    bank = banks.load("week1")
    count = min(12, len(bank.items))
    plan = plan_practice(bank, seed=5, count=count)
    # A named mistake where the variant lists one (feedback and solution are drawn), else a skip.
    lines = []
    for planned in plan.questions:
        question = planned.build()
        mistakes = question.variant.mistakes
        lines.append(mistakes[0].format(question.answer) if mistakes else "s")
    result = quiz(
        tmp_path, "run", "week1", "--count", str(count), "--seed", "5", stdin="\n".join(lines) + "\n"
    )
    assert result.returncode == 0, result.stderr
    plain(result.stdout)
    assert f"Question {count} of {count}" in result.stdout
    assert "Cannot read" not in result.stdout
    assert f"{sum(line != 's' for line in lines)} answers saved" in result.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["run", "demo", "--topic", "scorin"],
            1,
            "quiz: bank 'demo' has no topic 'scorin' (did you mean scoring?)",
        ),
        (["run", "demo", "--exam", "--time", "soon"], 1, "quiz: 'soon' is not a duration"),
        (["run", "demo", "--original", "--seed", "3"], 2, "quiz: --original asks the papers' own questions"),
        (["run", "nosuchbank"], 1, "quiz: no bank named 'nosuchbank'"),
        (["run", "demo", "--solutions", "sometimes"], 2, "sometimes"),
    ],
    ids=["unknown-topic", "bad-time", "original-with-seed", "unknown-bank", "bad-solutions"],
)
def test_bad_options_are_one_clear_line(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    result = quiz(tmp_path, *args)
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert re.search(r"Question \d", result.stdout) is None


def test_an_exam_in_json_reveals_grades_only_after_submission(tmp_path: Path) -> None:
    result = quiz(tmp_path, "run", "demo", "--original", "--exam", "--json", stdin="2\nnope\n0\nsubmit\n")
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(o["type"], o.get("status")) for o in objects] == [
        ("saved", None),
        ("grade", "invalid"),
        ("saved", None),
        ("grade", "wrong"),
        ("grade", "correct"),
        ("summary", None),
    ]
    assert objects[0]["response"] == "2"
    assert objects[3]["item"] == "score-a"
    assert objects[3]["review"] == "again"
    assert objects[-1]["ended"] == "submitted"
