"""Review and stats as a student meets them: honest "nothing due" messages, JSON Lines always, a
narrow terminal, the recall figure explained, when an item comes back, skips that come back, and
no Easy for piped answers."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.grading.grade import grade
from attnquiz.engine.practice import review
from attnquiz.engine.practice.history_records import utc_now
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.session import Session
from attnquiz.engine.practice.store import Store
from attnquiz.wording import when
from tests.cli.test_stats import PRACTICE, fill, quiz


def test_new_0_never_claims_that_no_new_items_are_left(tmp_path: Path) -> None:
    result = quiz(tmp_path, "review", "demo", "--new", "0")
    assert result.returncode == 0
    assert "no new items left" not in result.stdout
    assert "--new 0 asks for no new items (4 not started yet)" in " ".join(result.stdout.split())


def test_nothing_due_is_told_in_one_json_line_like_every_review_line(tmp_path: Path) -> None:
    fill(tmp_path)
    for args in (("review", "demo", "--new", "0", "--json"), ("review", "demo", "--json")):
        result = quiz(tmp_path, *args, stdin="1\n" * 10)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines, result.stdout
        assert all(line.startswith("{") and line.endswith("}") for line in lines), result.stdout
        assert [json.loads(line)["type"] for line in lines][-1] == "summary"


def test_stats_at_40_columns_keeps_every_topic_name_whole(tmp_path: Path) -> None:
    fill(tmp_path)
    out = quiz(tmp_path, "stats", columns="40").stdout
    assert all(len(line) <= 40 for line in out.splitlines()), out
    lines = [line.strip() for line in out.splitlines()]
    for topic in ("additive-attention", "scoring", "concepts"):
        assert topic in lines, out


def test_stats_explains_accuracy_and_recall(tmp_path: Path) -> None:
    fill(tmp_path)
    out = " ".join(quiz(tmp_path, "stats").stdout.split())
    assert "accuracy: your mean score over every answer so far." in out
    if "recall" in out.split("accuracy:")[0]:
        assert "recall: the chance FSRS predicts" in out


def test_each_graded_answer_says_when_the_item_comes_back(tmp_path: Path) -> None:
    result = quiz(tmp_path, "run", "demo", "--original", stdin="1.93\n5\n")
    assert result.returncode == 0, result.stderr
    assert "Back for review in 10 min." in result.stdout  # a new item answered right
    assert "Back for review in 1 min." in result.stdout  # a new item answered wrong
    lines = quiz(tmp_path, "run", "demo", "--original", "--json", stdin="1.93\n").stdout.splitlines()
    graded = json.loads(lines[0])
    assert graded["next_due"] is not None


@pytest.mark.parametrize(
    ("later", "text"),
    [
        (timedelta(seconds=5), "now"),
        (timedelta(minutes=10), "in 10 min"),
        (timedelta(days=1, hours=1), "tomorrow"),
        (timedelta(days=4), "in 4 days"),
    ],
)
def test_when_says_it_as_a_person_would(later: timedelta, text: str) -> None:
    now = utc_now().replace(hour=11, minute=0)
    assert when(now + later, now).startswith(text)


def test_a_skipped_item_comes_back_in_review_without_a_lapse(tmp_path: Path) -> None:
    skipped = quiz(tmp_path, "run", "demo", "--item", "score-b", "--seed", "4", stdin="s\n")
    assert "quiz review asks it again" in skipped.stdout
    with Store.open(tmp_path / "history.sqlite3") as opened:
        (card,) = opened.cards()
        assert (card.item, card.reviews, card.lapses) == ("score-b", 0, 0)
        assert opened.count_attempts() == 0
    # --new 0: only what is due comes, and the skipped item is due.
    lines = quiz(tmp_path, "review", "demo", "--new", "0", "--json", stdin="1\n").stdout.splitlines()
    items = [json.loads(line).get("item") for line in lines]
    assert "score-b" in items


def test_piped_answers_are_never_rated_easy(tmp_path: Path) -> None:
    lines = quiz(tmp_path, "run", "demo", "--original", "--json", stdin="1.93\n").stdout.splitlines()
    graded = json.loads(lines[0])
    assert (graded["status"], graded["review"]) == ("correct", "good")


def test_a_timed_session_still_rates_a_quick_answer_easy() -> None:
    bank = banks.load(str(PRACTICE / "demo.yaml"))
    plan = plan_practice(bank, seed=1, items=["score-a"], original=True)
    for timed, rating in ((True, "easy"), (False, "good")):
        session = Session(plan, timed=timed)
        question = session.show()
        assert question is not None
        answer = question.answer.format()
        assert grade(question, answer).status == "correct"
        session.answer(answer)
        assert session.slots[0].rating == rating
        rated = review.rate(grade(question, answer), answer=question.answer, seconds=None)
        assert rated is not None
        assert rated.name == "Good"
