"""Concept questions as a user meets them: quiz run (piped, JSON, exam), answer, show, check, stats."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

FOLDER = Path(__file__).resolve().parent.parent / "data" / "explain"
BANK = "explain"  # found on QUIZ_PATH, so that the commands a session prints stay short
QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]


def quiz(
    home: Path, *args: str, stdin: str = "", columns: int = 80, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_") and k != "NO_COLOR"}
    env.update(QUIZ_HOME=str(home), QUIZ_PATH=str(FOLDER), COLUMNS=str(columns), PYTHONUNBUFFERED="1")
    env.update(extra)
    return subprocess.run(
        [*QUIZ, *args], input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False
    )


def attempts(home: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(home / "history.sqlite3")
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute("SELECT * FROM attempts ORDER BY position")]
    db.close()
    return rows


def card_due(home: Path, item: str) -> datetime:
    db = sqlite3.connect(home / "history.sqlite3")
    [(due,)] = db.execute("SELECT due FROM cards WHERE item = ?", (item,)).fetchall()
    db.close()
    return datetime.fromisoformat(due)


def test_a_piped_concept_answer_shows_the_model_answer_asks_a_rating_and_keeps_both(tmp_path: Path) -> None:
    run = [str(BANK), "--item", "why-scale", "--seed", "1"]
    before = datetime.now(UTC)
    result = quiz(tmp_path, "run", *run, stdin="the variance of q.k grows with d_k\n7\nsuper\n3\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("Model answer") < out.index("Key points") < out.index("Rated good")
    assert "  • large scores saturate the softmax (one weight near 1)" in out
    assert out.count("Type 1 again (you missed it)") == 2  # each bad key asks again
    assert "self-rated, never scored" in out
    [stored] = attempts(tmp_path)
    assert (stored["status"], stored["response"], stored["rating"], stored["reviewed"]) == (
        "unscored",
        "the variance of q.k grows with d_k",
        "good",
        1,
    )
    assert card_due(tmp_path, "why-scale") > before + timedelta(minutes=5)


def test_enter_alone_thinks_it_through_and_again_brings_it_back_soon(tmp_path: Path) -> None:
    before = datetime.now(UTC)
    result = quiz(tmp_path, "run", str(BANK), "--item", "why-mask", "--seed", "1", stdin="\nagain\n")
    assert result.returncode == 0, result.stderr
    assert "Model answer" in result.stdout
    [stored] = attempts(tmp_path)
    assert (stored["response"], stored["rating"]) == ("", "again")
    assert card_due(tmp_path, "why-mask") < before + timedelta(minutes=30)
    assert "Practise what you missed" in result.stdout


def test_quitting_at_the_rating_keeps_the_typed_answer_unrated(tmp_path: Path) -> None:
    result = quiz(tmp_path, "run", str(BANK), "--item", "why-scale", "--seed", "1", stdin="my answer\nq\n")
    assert result.returncode == 0, result.stderr
    assert "stopped early" in result.stdout
    [stored] = attempts(tmp_path)
    assert (stored["response"], stored["status"], stored["rating"]) == ("my answer", "unscored", None)
    assert card_due(tmp_path, "why-scale") <= datetime.now(UTC)  # due: quiz review asks for the rating
    review = quiz(tmp_path, "review", str(BANK), "--json", stdin="now I know\n3\n")
    first = json.loads(review.stdout.splitlines()[0])
    assert (first["type"], first["item"], first["status"]) == ("grade", "why-scale", "unscored")


def test_the_json_stream_has_the_unscored_grade_and_the_rating(tmp_path: Path) -> None:
    run = [str(BANK), "--item", "why-scale", "--item", "score", "--seed", "1", "--json"]
    result = quiz(tmp_path, "run", *run, stdin="because\n4\n3.51\n")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["type"] for e in events] == ["grade", "rating", "grade", "summary"]
    grade, rating, _, summary = events
    assert (grade["status"], grade["read_as"], grade["rating"], grade["review"]) == (
        "unscored",
        "because",
        None,
        None,
    )
    assert (rating["item"], rating["rating"]) == ("why-scale", "easy")
    assert rating["next_due"] is not None
    assert (summary["unscored"], summary["out_of"]) == (1, 1)
    assert summary["rows"][0]["rating"] == "easy"


def test_an_exam_shows_the_model_answers_at_the_end_and_scores_only_scored_questions(tmp_path: Path) -> None:
    run = [str(BANK), "--item", "why-scale", "--item", "score", "--seed", "1", "--exam"]
    result = quiz(tmp_path, "run", *run, stdin="the variance grows\n3.51\nsubmit\n")
    assert result.returncode == 0, result.stderr
    results = result.stdout[result.stdout.index("Results") :]
    assert "Your answer: the variance grows" in results
    assert results.index("Model answer") < results.index("Key points") < results.index("Summary")
    assert "quiz review" in results
    assert re.search(r"Score [01] / 1 ", results)  # the number question only
    assert "1 concept question not in the score" in results
    by_item = {a["item"]: a for a in attempts(tmp_path)}
    assert (by_item["why-scale"]["status"], by_item["why-scale"]["rating"]) == ("unscored", None)


@pytest.mark.parametrize("columns", [80, 40])
def test_the_model_answer_block_fits_in_plain_ascii(tmp_path: Path, columns: int) -> None:
    run = [str(BANK), "--item", "why-scale", "--seed", "1"]
    result = quiz(
        tmp_path, "run", *run, stdin="x\n2\n", columns=columns, NO_COLOR="1", PYTHONIOENCODING="ascii"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert result.stdout.isascii()
    assert not [line for line in lines if len(line) > columns]
    assert not [line for line in lines if line != line.rstrip()]
    points = [line for line in lines if line.startswith("  * ")]
    assert len(points) == 3  # the key points as a list, one bullet each
    assert "\x1b[" not in result.stdout


def test_quiz_answer_prints_the_model_answer_and_needs_no_variant(tmp_path: Path) -> None:
    result = quiz(tmp_path, "answer", str(BANK), "why-scale", "it saturates")
    assert result.returncode == 0, result.stderr
    assert "Not scored" in result.stdout
    assert "your answer: it saturates" in result.stdout
    assert "Key points" in result.stdout
    data = json.loads(quiz(tmp_path, "answer", str(BANK), "why-scale", "it saturates", "--json").stdout)
    assert (data["status"], data["score"], data["read_as"], data["rating"]) == (
        "unscored",
        0.0,
        "it saturates",
        None,
    )
    assert data["answer"]["kind"] == "explain"
    assert len(data["answer"]["points"]) == 3
    assert data["answer"]["value"].startswith("With unit-variance entries")
    # Another item still needs its variant.
    assert quiz(tmp_path, "answer", str(BANK), "score", "1").returncode == 2


def test_quiz_show_json_gives_the_answer_contract(tmp_path: Path) -> None:
    shown = json.loads(quiz(tmp_path, "show", str(BANK), "why-mask", "--json").stdout)
    assert shown["answer"] == {
        "kind": "explain",
        "value": "So that position $t$ cannot attend to the tokens it is trained to predict.",
        "tolerance": {"exact": True},
        "points": [
            "training predicts every position at once",
            "without the mask a position would see its own target",
        ],
    }
    assert shown["prompt"] == "Why does a decoder mask the scores of later positions?"
    seeded = json.loads(quiz(tmp_path, "show", str(BANK), "why-mask", "--seed", "5", "--json").stdout)
    assert seeded["answer"] == shown["answer"]
    text = quiz(tmp_path, "show", str(BANK), "why-mask", "--solution").stdout
    assert "Model answer" in text
    assert "Solution" not in text  # a concept question has no worked solution to show empty


def test_quiz_check_passes_a_bank_of_concept_questions(tmp_path: Path) -> None:
    result = quiz(tmp_path, "check", str(BANK), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    kinds = {i["item"]: (i["kind"], i["ok"], i["warnings"]) for i in report["items"]}
    assert kinds["why-scale"] == ("explain", True, [])
    assert kinds["why-mask"] == ("explain", True, [])


def test_stats_count_self_rated_answers_without_an_accuracy(tmp_path: Path) -> None:
    quiz(tmp_path, "run", str(BANK), "--item", "why-mask", "--seed", "1", stdin="x\n3\n")
    data = json.loads(quiz(tmp_path, "stats", "--json").stdout)
    [topic] = [t for t in data["topics"] if t["topic"] == "masking"]
    assert (topic["attempts"], topic["unscored"], topic["accuracy"]) == (1, 1, None)
    text = quiz(tmp_path, "stats").stdout
    assert "self-rated" in text
    assert "0 %" not in text
