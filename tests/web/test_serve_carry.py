"""`quiz serve` carries forward what the student typed (a rounded earlier part, and a huge one, issue
25), and never scores a concept question (issue 24)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from attnquiz.engine.answers.carry import rounded_chain
from attnquiz.engine.answers.kinds import PartsAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import plan_practice
from tests.web.conftest import Server, csrf_of, start_server
from tests.web.test_serve_http import answer, start

SEED = 7


def _start(server: Server, item: str) -> str:
    return start(server, items=item, count="1", seed=str(SEED))


def _answer(server: Server, session: str, response: str) -> tuple[str, str]:
    """`test_serve_http.answer`, with the page it leads to as its words (tags and spacing dropped)."""
    where, page = answer(server, session, response)
    return where, " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_a_huge_earlier_part_gives_a_readable_grade_in_the_browser(shared: Server) -> None:
    session = _start(shared, "additive-chain")
    _answer(shared, session, "3")
    _, page = _answer(shared, session, "1e27")
    assert "(b) ✗" in page
    where, page = _answer(shared, session, "5")
    assert where == f"{session}/feedback/1"
    assert "even with your (b) = 1e27 carried forward: that gives" in page
    # Asked again, the page is the same (no 500 on a retry).
    assert shared.request("GET", where).status == 200


def test_a_student_who_rounds_and_reuses_their_values_is_right_in_the_browser(shared: Server) -> None:
    plan = plan_practice(banks.load("week1"), seed=SEED, items=["sdpa-chain"], count=1)
    question = plan.questions[0].build()
    answer = question.answer
    assert isinstance(answer, PartsAnswer)
    typed = [link.target.format() for link in rounded_chain(answer)]
    assert typed != [p.answer.format() for p in answer.parts], "at this seed the rounding changes nothing"
    session = _start(shared, "sdpa-chain")
    for response in typed:
        where, page = _answer(shared, session, response)
    assert where == f"{session}/feedback/1"
    for part in answer.parts:
        assert f"({part.label}) ✓ Correct" in page


CONCEPTS = Path(__file__).resolve().parents[1] / "data" / "concept" / "concepts.yaml"


def test_a_skipped_concept_question_is_not_scored_in_the_browser_and_its_stats_say_self_rated(
    tmp_path: Path,
) -> None:
    running = start_server(str(CONCEPTS), db=tmp_path / "history.sqlite3")
    try:
        home = running.request("GET", "/")
        form = {
            "csrf": csrf_of(home.body),
            "bank": "concepts",
            "mode": "practice",
            "topic": "scaled-attention",
        }
        reply = running.request("POST", "/start", form={**form, "count": "1", "seed": "7"})
        session = reply.headers["location"]
        page = running.request("GET", session).body
        position = re.search(r'name="position" value="(\d+)"', page)
        assert position
        skipped = running.request(
            "POST", f"{session}/skip", form={"csrf": csrf_of(page), "position": position.group(1)}
        )
        assert skipped.status == 303
        done = running.request("POST", f"{session}/finish", form={"csrf": csrf_of(page)})
        assert done.status == 303
        summary = " ".join(
            unescape(re.sub(r"<[^>]+>", " ", running.request("GET", f"{session}/summary").body)).split()
        )
        assert "0 / 1" not in summary
        # A concept answer rated, then the stats: a self-rated topic, not "0% of 1".
        home = running.request("GET", "/")
        reply = running.request(
            "POST", "/start", form={**form, "csrf": csrf_of(home.body), "count": "1", "seed": "8"}
        )
        session = reply.headers["location"]
        page = running.request("GET", session).body
        position = re.search(r'name="position" value="(\d+)"', page)
        assert position
        fields = {"csrf": csrf_of(page), "position": position.group(1), "response": "the variance grows"}
        assert running.request("POST", f"{session}/answer", form=fields).status == 303
        page = running.request("GET", session).body
        rated = running.request(
            "POST",
            f"{session}/rate",
            form={"csrf": csrf_of(page), "position": position.group(1), "rating": "good"},
        )
        assert rated.status == 303
        stats = running.request("GET", "/stats").body
        assert "0% of 1" not in stats
        assert "self-rated</text>" in stats
    finally:
        running.stop()


def test_a_question_in_parts_skipped_after_a_is_graded_in_the_browser(shared: Server) -> None:
    plan = plan_practice(banks.load("week1"), seed=SEED, items=["params-chain"], count=1)
    question = plan.questions[0].build()
    session = _start(shared, "params-chain")
    _answer(shared, session, question.variant.parts[0].answer.format())
    page = shared.request("GET", session).body
    position = re.search(r'name="position" value="(\d+)"', page)
    assert position
    reply = shared.request(
        "POST", f"{session}/skip", form={"csrf": csrf_of(page), "position": position.group(1)}
    )
    assert reply.status == 303
    feedback = shared.request("GET", reply.headers["location"]).body
    shown = " ".join(unescape(re.sub(r"<[^>]+>", " ", feedback)).split())
    assert "Not answered." in shown
    assert "Skipped" not in shown
    assert "Partly right" in feedback  # the page's title: the question graded, not skipped
    # It was the session's only question: the session is over, and its summary counts the attempt.
    summary = " ".join(
        unescape(re.sub(r"<[^>]+>", " ", shared.request("GET", f"{session}/summary").body)).split()
    )
    assert "0.2 / 1" in summary


def test_after_a_slip_a_student_who_goes_on_from_the_unrounded_values_is_right_in_the_browser(
    shared: Server,
) -> None:
    from attnquiz.engine.check.parts import perturbed
    from attnquiz.engine.grading.single import answer_value

    plan = plan_practice(banks.load("week1"), seed=SEED, items=["additive-chain"], count=1)
    answer = plan.questions[0].build().answer
    assert isinstance(answer, PartsAnswer)
    a, b, c = answer.parts
    assert b.recompute is not None
    assert c.recompute is not None
    slip = a.answer_for(perturbed(a.answer)).format()
    unrounded_b = answer_value(b.answer_for(b.recompute(float(slip))))  # (b) before it is rounded
    typed_b = b.answer_for(unrounded_b).format()
    from_unrounded = c.answer_for(c.recompute(unrounded_b)).format()
    from_typed = c.answer_for(c.recompute(float(typed_b))).format()
    assert from_unrounded != from_typed, "at this seed the two careful students agree"
    session = _start(shared, "additive-chain")
    for response in (slip, typed_b, from_unrounded):
        where, page = _answer(shared, session, response)
    assert where == f"{session}/feedback/1"
    assert "(c) ✓ Correct" in page
    assert "given your unrounded (b) =" in page
