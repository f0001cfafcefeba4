"""`quiz stats` and `quiz review` over a known history: per bank and topic, mistakes, due counts, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from fsrs import Rating
from msgspec.structs import replace

from attnquiz.engine.practice import review
from attnquiz.engine.practice.history_records import Attempt, CardRecord, CardUpdate, utc_now
from attnquiz.engine.practice.store import Store

PRACTICE = Path(__file__).resolve().parent.parent / "data" / "practice"
QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]


def quiz(home: Path, *args: str, stdin: str = "", columns: str = "80") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_") and k != "NO_COLOR"}
    env.update(QUIZ_HOME=str(home), QUIZ_PATH=str(PRACTICE), COLUMNS=columns)
    return subprocess.run(
        [*QUIZ, *args], input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False
    )


def fill(home: Path) -> None:
    """Five attempts of the demo bank: two lapses of score-a (one named), one of everything else right."""
    now = utc_now()
    rows = [
        ("score-a", "additive-attention", "wrong", 0.0, "no-tanh", Rating.Again, now - timedelta(days=3)),
        ("score-a", "additive-attention", "wrong", 0.0, "no-tanh", Rating.Again, now - timedelta(hours=1)),
        ("score-b", "additive-attention", "correct", 1.0, None, Rating.Good, now - timedelta(days=2)),
        ("score-c", "scoring", "correct", 1.0, None, Rating.Easy, now - timedelta(days=1)),
        ("pick-one", "concepts", "partial", 0.5, None, Rating.Hard, now - timedelta(minutes=5)),
    ]
    with Store.open(home / "history.sqlite3") as store:
        for position, (item, topic, status, score, mistake, rating, when) in enumerate(rows, 1):
            attempt = Attempt(
                session="filled",
                position=position,
                mode="practice",
                bank="demo",
                item=item,
                topic=topic,
                source="Demo Quiz",
                seed=position,
                variant_code="x",
                response="1",
                status=status,
                score=score,
                mistake=mistake,
                seconds=10.0,
                at=when,
            )
            store.record(
                attempt, review.card_update(bank="demo", item=item, topic=topic, rating=rating, when=when)
            )


def test_stats_without_history_says_how_to_start(tmp_path: Path) -> None:
    result = quiz(tmp_path, "stats")
    assert result.returncode == 0
    assert "No history yet" in result.stdout
    assert "quiz run week1" in result.stdout
    assert not (tmp_path / "history.sqlite3").exists()
    data = json.loads(quiz(tmp_path, "stats", "--json").stdout)
    assert data["banks"] == []
    assert data["due"] == 0


def test_stats_show_accuracy_mistakes_due_and_days(tmp_path: Path) -> None:
    fill(tmp_path)
    result = quiz(tmp_path, "stats")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "\x1b" not in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "demo  5 attempts · 50 %" in out
    assert "additive-attention" in out
    assert "█" in out
    assert "Most frequent mistakes" in out
    assert "no-tanh" in out
    assert "Last days" in out
    assert "due: quiz review" in out


def test_stats_json_has_the_numbers(tmp_path: Path) -> None:
    fill(tmp_path)
    data = json.loads(quiz(tmp_path, "stats", "--json").stdout)
    [bank] = data["banks"]
    assert (bank["bank"], bank["attempts"], bank["correct"], bank["accuracy"]) == ("demo", 5, 2, 0.5)
    topics = {t["topic"]: t for t in data["topics"]}
    assert topics["additive-attention"]["attempts"] == 3
    assert topics["additive-attention"]["accuracy"] == round(1 / 3, 4)
    assert topics["scoring"]["accuracy"] == 1.0
    [mistake] = data["mistakes"]
    assert (mistake["tag"], mistake["count"], mistake["topics"]) == ("no-tanh", 2, ["additive-attention"])
    # score-a lapsed an hour ago (due again within minutes); score-b and score-c are days away, pick-one
    # (Hard five minutes ago) is still being learnt.
    assert topics["additive-attention"]["due"] >= 1
    assert data["due"] >= 1
    assert sum(d["attempts"] for d in data["days"]) == 5


def test_stats_can_be_limited_to_a_bank(tmp_path: Path) -> None:
    fill(tmp_path)
    data = json.loads(quiz(tmp_path, "stats", "week1", "--json").stdout)
    assert data["banks"] == []
    assert data["mistakes"] == []


def test_stats_on_a_corrupt_history_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "history.sqlite3").write_text("not a database at all\n" * 50)
    result = quiz(tmp_path, "stats")
    assert result.returncode == 1
    assert result.stderr.startswith("quiz: the history database")
    assert "is damaged" in result.stderr
    assert "Traceback" not in result.stderr


def test_review_serves_the_lapsed_item_first_with_a_fresh_variant(tmp_path: Path) -> None:
    fill(tmp_path)
    result = quiz(tmp_path, "review", "demo", "--json", stdin="s\n" * 5)
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    served = [o["item"] for o in objects if o["type"] == "skip"]
    # Most overdue first: score-b (Good, a learning step of minutes, two days ago), then score-a
    # (lapsed an hour ago); score-c was Easy and is days away.
    assert served[:2] == ["score-b", "score-a"]
    assert "score-c" not in served
    summary = objects[-1]
    assert summary["mode"] == "review"
    assert summary["rows"][0]["variant_code"] != "x"


def test_review_with_nothing_due_says_when_the_next_review_is(tmp_path: Path) -> None:
    later = utc_now() + timedelta(days=30)

    def learnt(bank: str, item: str) -> CardUpdate:
        def update(current: CardRecord | None) -> CardRecord:
            card = review.next_card(
                current, bank=bank, item=item, topic="t", rating=Rating.Easy, when=utc_now()
            )
            return replace(card, due=later)

        return update

    with Store.open(tmp_path / "history.sqlite3") as store:
        for position, item in enumerate(("score-a", "score-b", "score-c", "pick-one"), 1):
            attempt = Attempt(
                session="s",
                position=position,
                mode="practice",
                bank="demo",
                item=item,
                topic="t",
                source="s",
                seed=1,
                variant_code="x",
                response="1",
                status="correct",
                score=1.0,
                mistake=None,
                seconds=1.0,
                at=utc_now(),
            )
            store.record(attempt, learnt("demo", item))
    result = quiz(tmp_path, "review", "demo")
    assert result.returncode == 0, result.stderr
    assert "Nothing is due now" in result.stdout
    assert later.astimezone().strftime("%d %b") in result.stdout
