"""`quiz serve` pages of issue 26 over HTTP: a scored answer self-rated, carry-forward explained, a
concept question's model answer rendered in the summary."""

from __future__ import annotations

import re
from datetime import timedelta

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.store import Store
from tests.web.conftest import Server, csrf_of
from tests.web.test_serve_http import SEED, answer, planned_questions, start, text_of


def test_a_correct_answer_can_be_rated_a_guess_and_comes_back_soon(server: Server) -> None:
    (question,) = planned_questions("complexity", 1)
    session = start(server, topic="complexity", count="1", seed=str(SEED))
    where, page = answer(server, session, question.answer.format())
    assert where == f"{session}/feedback/1"
    assert "A lucky guess? Rate it yourself" in text_of(page)
    reply = server.request(
        "POST", f"{session}/rerate", form={"csrf": csrf_of(page), "position": "1", "rating": "again"}
    )
    assert reply.headers["location"] == f"{session}/feedback/1?rated=again"
    rated = text_of(server.request("GET", reply.headers["location"]).body)
    assert "You rated this answer again" in rated
    with Store.open(server.db) as store:
        (attempt,) = store.attempts()
        (card,) = store.cards()
    assert (attempt.status, attempt.rating) == ("correct", "again")
    assert card.due - attempt.at < timedelta(hours=1)
    assert card.reviews == 1
    bad = server.request(
        "POST", f"{session}/rerate", form={"csrf": csrf_of(page), "position": "1", "rating": "x"}
    )
    assert bad.status == 400
    nowhere = server.request(
        "POST", f"{session}/rerate", form={"csrf": csrf_of(page), "position": "7", "rating": "good"}
    )
    assert nowhere.status == 404


def test_a_part_that_uses_an_earlier_one_says_how_it_is_marked(server: Server) -> None:
    plan = plan_practice(banks.load("week1"), seed=SEED, items=["additive-chain"], count=1)
    parts = plan.questions[0].build().variant.parts
    session = start(server, items="additive-chain", count="1", seed=str(SEED))
    first = text_of(server.request("GET", session).body)
    assert "A part that uses an earlier one is marked with your own earlier answer" in first
    _, page = answer(server, session, parts[0].answer.format())
    assert "This part uses your answer to (a)" in text_of(page)
    assert "error carried forward" in text_of(page)


def test_a_concept_answer_in_the_summary_is_rendered_not_raw_tex(server: Server) -> None:
    session = start(server, items="path-length-explained", count="1", seed=str(SEED))
    page = server.request("GET", session).body
    position = re.search(r'name="position" value="(\d+)"', page)
    assert position
    server.request(
        "POST", f"{session}/answer", form={"csrf": csrf_of(page), "position": position[1], "response": ""}
    )
    rate = server.request("GET", session).body
    server.request(
        "POST", f"{session}/rate", form={"csrf": csrf_of(rate), "position": position[1], "rating": "good"}
    )
    summary = server.request("GET", f"{session}/summary").body
    cell = re.search(r'<td data-label="Answer">(.*?)</td>', summary, re.DOTALL)
    assert cell, summary
    assert "$" not in cell[1]
    assert "<math" in cell[1]  # O(T) typeset as MathML
