"""Two rules of a session (issue 24): a concept question is never scored, even skipped or left
unanswered; a question in parts left part-way is one attempt, the same in the summary, the history,
the stats and the review schedule."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Scheduler

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import Plan, plan_practice
from attnquiz.engine.practice.session import Session
from attnquiz.engine.practice.store import Store

CONCEPTS = Path(__file__).resolve().parents[1] / "data" / "concept" / "concepts.yaml"
T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "history.sqlite3")
    yield opened
    opened.close()


def _session(plan: Plan, store: Store | None) -> Session:
    ticks = iter(range(1000, 100000))
    return Session(
        plan,
        store=store,
        clock=lambda: float(next(ticks)),
        now=lambda: T0,
        session_id="rules",
        fsrs_scheduler=Scheduler(enable_fuzzing=False),
    )


def _right(session: Session) -> str:
    slot = session.current
    assert slot is not None
    return session.question(slot).answer.format()


# -- concept questions ------------------------------------------------------------------------------


def test_a_skipped_concept_question_is_not_in_the_score() -> None:
    plan = plan_practice(banks.load(str(CONCEPTS)), seed=1, items=["score", "why-scale"])
    session = _session(plan, None)
    session.show()
    session.answer(_right(session))
    session.show()
    session.skip()
    summary = session.finish("completed")
    assert [(r.item, r.status, r.scored) for r in summary.rows] == [
        ("score", "correct", True),
        ("why-scale", "skipped", False),
    ]
    assert (summary.score, summary.out_of, summary.unscored) == (1.0, 1, 0)
    assert summary.revisit == ()


def test_an_exam_s_unanswered_concept_question_is_not_in_the_score() -> None:
    plan = plan_practice(
        banks.load(str(CONCEPTS)), seed=1, items=["score", "why-scale", "fixed-context"], exam=True
    )
    session = _session(plan, None)
    session.show()
    session.answer(_right(session))
    summary = session.finish("submitted")
    assert [r.status for r in summary.rows] == ["correct", "unanswered", "unanswered"]
    assert (summary.score, summary.out_of) == (1.0, 1)


def _quiz(home: Path, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_")}
    env.update(QUIZ_HOME=str(home), NO_COLOR="1", COLUMNS="100", PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-c", "from attnquiz.main import main; main()", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_quiz_run_skipping_only_a_concept_question_gives_no_score_of_zero(tmp_path: Path) -> None:
    result = _quiz(tmp_path, "run", str(CONCEPTS), "--item", "why-scale", "--seed", "1", stdin="skip\n")
    assert result.returncode == 0, result.stderr
    assert "Score 0 / 1" not in result.stdout
    as_json = _quiz(
        tmp_path, "run", str(CONCEPTS), "--item", "why-scale", "--seed", "1", "--json", stdin="s\n"
    )
    summary = json.loads(as_json.stdout.splitlines()[-1])
    assert (summary["type"], summary["out_of"], summary["score"]) == ("summary", 0, 0)


def test_the_browser_stats_of_a_self_rated_only_topic_have_no_accuracy(tmp_path: Path) -> None:
    from attnquiz.web import history

    db = tmp_path / "history.sqlite3"
    with Store.open(db) as opened:
        plan = plan_practice(banks.load(str(CONCEPTS)), seed=1, items=["why-scale"])
        session = _session(plan, opened)
        session.show()
        session.answer("the variance grows with d_k")
        session.rate("good")
        session.finish("completed")
    report = history.collect(db)
    [topic] = report.topics
    assert (topic["attempts"], topic["scored"], topic["accuracy"]) == (1, 0, None)
    chart = str(report.topic_chart())
    assert "0% of 1" not in chart
    assert "self-rated</text>" in chart
    [bank] = report.banks
    assert bank["accuracy"] is None
    assert not any(day.attempts and not day.self_rated for day in report.days)


# -- a question in parts left part-way ------------------------------------------------------------


def _params_chain(store: Store | None, *, exam: bool = False) -> Session:
    plan = plan_practice(banks.load("week1"), seed=83187, items=["params-chain"], count=1, exam=exam)
    session = _session(plan, store)
    session.show()
    session.answer(session.question(session.slots[0]).variant.parts[0].answer.format())  # (a) right
    return session


@pytest.mark.parametrize("leave", ["skip", "quit"])
def test_a_question_left_after_a_is_one_graded_attempt_everywhere(store: Store, leave: str) -> None:
    session = _params_chain(store)
    if leave == "skip":
        session.skip()
    summary = session.finish("completed" if leave == "skip" else "quit")
    # The summary: one row, graded with the parts not answered as blank (1 of 5 parts right).
    [row] = summary.rows
    assert (row.status, row.response) == ("partial", "32 |  |  |  | ")
    assert math.isclose(row.score, 0.2)
    assert (math.isclose(summary.score, 0.2), summary.out_of) == (True, 1)
    # The history: the same attempt, reviewed (its review scheduled from that grade).
    [attempt] = store.attempts()
    assert (attempt.status, attempt.reviewed) == ("partial", True)
    assert math.isclose(attempt.score, 0.2)
    [card] = store.cards()
    assert card.item == "params-chain"
    assert card.due > T0
    assert card.due < T0 + timedelta(days=2)  # a partial answer comes back soon
    # The stats: one attempt, its score counted.
    [stats] = store.group_stats(by_topic=False)
    assert stats.attempts == 1
    assert math.isclose(stats.score, 0.2)


def test_an_exam_submitted_after_a_grades_the_question_with_the_rest_blank(store: Store) -> None:
    session = _params_chain(store, exam=True)
    summary = session.finish("submitted")
    [row] = summary.rows
    assert row.status == "partial"
    assert math.isclose(row.score, 0.2)
    [attempt] = store.attempts()
    assert (attempt.status, attempt.reviewed) == ("partial", True)
    assert len(store.cards()) == 1


def test_quiz_run_grades_a_question_skipped_after_a(tmp_path: Path) -> None:
    command = ["run", "week1", "--item", "params-chain", "-n", "1", "--seed", "83187", "--json"]
    result = _quiz(tmp_path, *command, stdin="32\nskip\n")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [e["type"] for e in events] == ["grade", "grade", "summary"]
    whole = events[1]
    assert (whole["response"], whole["status"]) == ("32 |  |  |  | ", "partial")
    assert [p["feedback"] for p in whole["parts"][1:]] == ["Not answered."] * 4
    summary = events[2]
    assert (summary["rows"][0]["status"], summary["stored"]) == ("partial", 1)
    text = _quiz(tmp_path, *command[:-1], stdin="32\nskip\n")
    assert "Skipped" not in text.stdout
    assert "(b) ✗ Wrong" in text.stdout
