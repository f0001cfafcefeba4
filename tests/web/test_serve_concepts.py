"""Concept questions in `quiz serve`: a text area, then the model answer and key points, then the
student's own rating (again, hard, good, easy), which schedules the review as in the terminal.

Over HTTP as the pages' forms send it, and in a real browser driven from the keyboard.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from attnquiz.engine.grading.outcome import SELF_RATINGS
from attnquiz.engine.practice.store import Store
from tests.web.conftest import Server, csrf_of, launched_chromium, start_server
from tests.web.test_serve_http import text_of

BANK = Path(__file__).resolve().parents[1] / "data" / "concept" / "concepts.yaml"
HOSTILE = '<script>alert("x")</script> & the softmax saturates'


@pytest.fixture
def concepts(tmp_path: Path) -> Iterator[Server]:
    running = start_server(str(BANK), db=tmp_path / "history.sqlite3")
    try:
        yield running
    finally:
        running.stop()


def _start(server: Server, topic: str, count: int = 1, *, mode: str = "practice") -> str:
    home = server.request("GET", "/")
    form = {
        "csrf": csrf_of(home.body),
        "bank": "concepts",
        "mode": mode,
        "topic": topic,
        "count": str(count),
        "seed": "7",
    }
    reply = server.request("POST", "/start", form=form)
    assert reply.status == 303, reply.body
    return reply.headers["location"]


def _post(server: Server, session: str, action: str, page: str, **fields: str) -> Any:
    position = re.search(r'name="position" value="(\d+)"', page)
    assert position, page[:300]
    form = {"csrf": csrf_of(page), "position": position.group(1), **fields}
    return server.request("POST", f"{session}/{action}", form=form)


def _history(server: Server) -> tuple[list[Any], list[Any]]:
    with Store.open(server.db) as store:
        return store.attempts(), store.cards()


def test_the_web_ratings_are_the_engines() -> None:
    assert SELF_RATINGS == ("again", "hard", "good", "easy")


def test_answer_then_model_answer_then_rating_schedules_the_review(concepts: Server) -> None:
    session = _start(concepts, "scaled-attention")
    page = concepts.request("GET", session).body
    assert '<textarea id="response" name="response"' in page
    assert "Show the model answer" in page
    assert "vanishing gradients" not in page  # the key points only after the student's own answer

    reply = _post(concepts, session, "answer", page, response=HOSTILE + "\nsecond line")
    assert (reply.status, reply.headers["location"]) == (303, session)
    rate = concepts.request("GET", session).body
    # The typed answer, escaped and kept as written; the model answer; every key point; four ratings.
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; the softmax saturates\nsecond line" in rate
    assert "<script>alert" not in rate
    shown = text_of(rate)
    assert "Model answer" in shown
    assert "The softmax then saturates" in shown
    assert "A saturated softmax has vanishing gradients" in shown
    assert re.findall(r'name="rating" value="(\w+)"', rate) == list(SELF_RATINGS)
    # The answer is stored at once (an interrupted session keeps it), unrated until rated.
    (attempt,), cards = _history(concepts)
    assert (attempt.status, attempt.rating, attempt.response) == ("unscored", None, HOSTILE + "\nsecond line")
    assert cards == []

    # A rating out of the four is refused; a form without its CSRF token too; a second answer is not taken.
    assert _post(concepts, session, "rate", rate, rating="perfect").status == 400
    position = re.search(r'name="position" value="(\d+)"', rate)
    assert position
    refused = concepts.request(
        "POST", f"{session}/rate", form={"position": position.group(1), "rating": "good"}
    )
    assert refused.status == 403
    again = _post(concepts, session, "answer", rate, response="another try")
    assert (again.status, again.headers["location"]) == (303, session)
    assert len(_history(concepts)[0]) == 1

    reply = _post(concepts, session, "rate", rate, rating="again")
    assert reply.status == 303
    attempts, (card,) = _history(concepts)
    assert [(a.status, a.rating) for a in attempts][-1] == ("unscored", "again")
    assert card.item == "why-scale"
    assert card.due - attempts[-1].at < timedelta(hours=1)  # "again": back within the session's day

    summary = text_of(concepts.request("GET", f"{session}/summary").body)
    assert "1 concept question answered: not scored" in summary
    assert "you rated it again" in summary


def test_an_easy_rating_puts_the_review_days_away(concepts: Server) -> None:
    session = _start(concepts, "rnn-encoder-decoder")
    page = concepts.request("GET", session).body
    _post(concepts, session, "answer", page, response="")  # thought through, nothing typed
    rate = concepts.request("GET", session).body
    assert "You thought it through without writing it down." in rate
    assert _post(concepts, session, "rate", rate, rating="easy").status == 303
    attempts, (card,) = _history(concepts)
    assert attempts[-1].rating == "easy"
    assert card.due - attempts[-1].at > timedelta(days=1)


def test_an_exam_keeps_concept_answers_and_shows_the_model_answers_at_the_end(concepts: Server) -> None:
    session = _start(concepts, "", count=3, mode="exam")  # the whole bank: a number and two concepts
    concept_at: list[str] = []
    for _ in range(3):
        page = concepts.request("GET", session).body
        assert "Save answer" in page
        position = re.search(r'name="position" value="(\d+)"', page)
        assert position
        if "<textarea" in page:
            assert "It is kept for the results" in page
            concept_at.append(position.group(1))
            _post(concepts, session, "answer", page, response=f"my answer {len(concept_at)} & <b>")
            if len(concept_at) == 1:  # revisit: the saved answer is back in the field, escaped
                page = concepts.request("GET", session).body
                assert _post(concepts, session, "go", page, go=position.group(1)).status == 303
                again = concepts.request("GET", session).body
                assert "my answer 1 &amp; &lt;b&gt;</textarea>" in again
                assert 'class="pill done"' in again
                _post(concepts, session, "skip", again)  # on to the next question
        else:
            _post(concepts, session, "answer", page, response="1")
    assert len(concept_at) == 2
    done = concepts.request("GET", session)  # every question answered: look them over, then hand in
    assert (done.status, done.headers["location"]) == (303, f"{session}/submit")
    submit = concepts.request("GET", f"{session}/submit").body
    assert "Every question has an answer" in submit
    handed = concepts.request("POST", f"{session}/finish", form={"csrf": csrf_of(submit), "confirm": "yes"})
    assert handed.headers["location"] == f"{session}/summary"
    results = text_of(concepts.request("GET", f"{session}/summary").body)
    assert "2 concept questions answered: not scored" in results
    assert "/ 1" in results  # the score counts the one scored question only
    assert "• Not scored" in results
    assert "my answer 1 & <b>" in results
    assert "A saturated softmax has vanishing gradients" in results
    assert "Long sentences lose information, early words most" in results
    assert "not rated yet: quiz review asks for it" in results


def test_the_preview_shows_the_model_answer_and_key_points(concepts: Server) -> None:
    page = text_of(concepts.request("GET", "/preview/concepts/why-scale").body)
    assert "Model answer" in page
    assert "Dividing by" in page
    assert "Key points" in page
    assert "Long sentences lose information" not in page  # only the item asked for


# -- in a real browser, from the keyboard ------------------------------------------------------------


def test_a_concept_question_answered_compared_and_rated_from_the_keyboard(concepts: Server) -> None:
    errors: list[str] = []
    with launched_chromium() as browser:
        page = browser.new_context(viewport={"width": 1000, "height": 900}).new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(concepts.url)
        form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="concepts"]'))
        form.locator('select[name="topic"]').select_option("scaled-attention")
        form.locator('input[name="count"]').fill("1")
        form.locator('button[type="submit"]').focus()
        page.keyboard.press("Enter")
        page.wait_for_url("**/s/*")

        # The text area has the focus; Enter makes a new line, Tab reaches the button.
        page.wait_for_function("document.activeElement && document.activeElement.id === 'response'")
        page.keyboard.type("Large scores saturate the softmax.")
        page.keyboard.press("Enter")
        page.keyboard.type("Its gradients vanish.")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Show the model answer"
        page.keyboard.press("Enter")

        page.wait_for_selector("form.rate")
        assert (
            page.locator(".own-answer").inner_text()
            == "Large scores saturate the softmax.\nIts gradients vanish."
        )
        assert page.locator(".key-points li").count() == 4
        assert page.locator(".concept-key math").count() > 0  # the maths typeset as MathML
        # "Good" has the focus (the usual rating); Shift+Tab goes back to "Hard".
        page.wait_for_function("document.activeElement && document.activeElement.value === 'good'")
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Enter")
        page.wait_for_url("**/summary")
        assert "you rated it hard" in page.locator("table.rows").inner_text()
    assert errors == []
    attempts, (card,) = _history(concepts)
    assert [(a.status, a.rating) for a in attempts] == [("unscored", "hard")]
    assert attempts[0].response == "Large scores saturate the softmax.\nIts gradients vanish."
    assert card.due > attempts[0].at
