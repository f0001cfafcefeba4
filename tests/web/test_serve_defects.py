"""`quiz serve` over HTTP: what a student meets after an answer (the self-rating's wording and the
interval each rating gives), a question in parts saved part-way in an exam, the question kept
open beside its feedback."""

from __future__ import annotations

import json
import re

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.store import Store
from tests.web.conftest import Server, csrf_of
from tests.web.test_serve_http import SEED, answer, planned_questions, start, text_of


def ratings_of(page: str) -> dict[str, str]:
    """Each rating button's value and what it says about when the question comes back."""
    found = re.findall(r'value="(again|hard|good|easy)".*?<span class="due">back ([^<]+)</span>', page)
    return dict(found)


def test_a_lucky_guess_is_offered_only_after_a_right_answer(server: Server) -> None:
    first, _ = planned_questions("complexity", 2)
    session = start(server, topic="complexity", count="2", seed=str(SEED))
    _, right = answer(server, session, first.answer.format())
    assert "A lucky guess?" in text_of(right)
    _, wrong = answer(server, session, "123456789")
    assert "Wrong" in text_of(wrong) or "Not correct" in text_of(wrong)
    assert "lucky guess" not in text_of(wrong).lower()
    assert "Knew it, but slipped?" in text_of(wrong)


def test_each_rating_button_says_when_the_question_comes_back(server: Server) -> None:
    (first,) = planned_questions("complexity", 1)
    session = start(server, topic="complexity", count="1", seed=str(SEED))
    _, page = answer(server, session, first.answer.format())
    said = ratings_of(page)
    assert set(said) == {"again", "hard", "good", "easy"}
    assert said["again"].endswith("min")  # a new card rated Again is back within minutes
    assert not said["easy"].endswith("min")  # rated Easy, it is back days later


def test_the_question_stays_open_beside_its_feedback(server: Server) -> None:
    (first,) = planned_questions("complexity", 1)
    session = start(server, topic="complexity", count="1", seed=str(SEED))
    _, page = answer(server, session, first.answer.format())
    assert '<details class="prompt-again" open>' in page


def test_an_exam_question_in_parts_saved_part_way_shows_as_such_and_shows_its_saved_part(
    server: Server,
) -> None:
    plan = plan_practice(banks.load("week1"), seed=SEED, items=["params-chain"], count=1)
    question = plan.questions[0].build()
    first_part = question.variant.parts[0].answer.format()
    session = start(server, items="params-chain, additive-score", count="2", seed=str(SEED), mode="exam")
    answer(server, session, first_part)  # (a) saved, (b) asked next
    page = server.request("GET", session).body
    server.request("POST", f"{session}/go", form={"csrf": csrf_of(page), "position": "1", "go": "2"})
    elsewhere = server.request("GET", session).body
    assert 'aria-label="Question 1, part-answered"' in elsewhere
    assert 'aria-label="Question 2, not answered"' in elsewhere
    server.request("POST", f"{session}/go", form={"csrf": csrf_of(elsewhere), "position": "2", "go": "1"})
    back = text_of(server.request("GET", session).body)
    assert f"Saved so far: (a) {first_part}" in back
    assert "Your answer to (b)" in back


def test_hints_come_in_steps_never_the_same_one_again(server: Server) -> None:
    (first,) = planned_questions("complexity", 1)
    steps = [first.variant.hint, *first.variant.solution[:-1]] if first.variant.hint else []
    steps = steps or list(first.variant.solution[:-1])
    assert len(steps) >= 2, "the question needs two hints for this test"
    session = start(server, topic="complexity", count="1", seed=str(SEED))
    shown = []
    for _ in range(len(steps) + 2):  # pressed beyond the last: nothing more, nothing repeated
        page = server.request("GET", session).body
        fields = {"csrf": csrf_of(page), "position": "1", "response": ""}
        server.request("POST", f"{session}/hint", form=fields)
        shown = re.findall(r"<li>(.*?)</li>", server.request("GET", session).body.split('class="hint"')[1])
        shown = shown[: len(steps)]
    final = server.request("GET", session).body
    assert final.count('class="hint"') == 1
    hint_box = final.split('class="hint"')[1].split("</div>")[0]
    assert len(re.findall(r"<li>", hint_box)) == len(steps)
    assert len(set(shown)) == len(steps)
    assert re.search(r"<button[^>]*hint[^>]* disabled>Another hint</button>", final)
    _, feedback = answer(server, session, first.answer.format())
    assert "Correct" in text_of(feedback)
    with Store.open(server.db) as store:
        (attempt,) = store.attempts()
    assert attempt.hints == len(steps)


def test_another_like_this_follows_a_wrong_answer_with_a_fresh_variant(server: Server) -> None:
    first, second = planned_questions("complexity", 2)
    session = start(server, topic="complexity", count="2", seed=str(SEED))
    _, right = answer(server, session, first.answer.format())
    assert "Another like this" not in right  # offered after a wrong or part-right answer only
    _, wrong = answer(server, session, "123456789")
    assert "Another like this" in wrong
    # The wrong answer was the last: the fresh variant comes as a session of its own.
    reply = server.request("POST", f"{session}/another", form={"csrf": csrf_of(wrong), "position": "2"})
    fresh = reply.headers["location"]
    assert fresh != session
    asked = server.request("GET", fresh).body
    assert "Question 1 of 1" in asked
    assert second.code not in asked  # a fresh variant of the same item
    assert second.source in asked

    again = start(server, topic="complexity", count="2", seed=str(SEED))
    _, wrong = answer(server, again, "123456789")
    reply = server.request("POST", f"{again}/another", form={"csrf": csrf_of(wrong), "position": "1"})
    assert reply.headers["location"] == again
    asked = text_of(server.request("GET", again).body)
    assert "Question 2 of 3" in asked
    assert "another like this" in asked
    assert first.code not in asked
    twice = server.request("POST", f"{again}/another", form={"csrf": csrf_of(wrong), "position": "1"})
    assert twice.status == 404  # already followed by one
    for bad in ("0", "9", "x", "1" * 50):
        refused = server.request("POST", f"{again}/another", form={"csrf": csrf_of(wrong), "position": bad})
        assert refused.status == 404, bad


def test_how_a_formula_is_read_is_shown_before_grading_and_says_nothing_of_right_or_wrong(
    server: Server,
) -> None:
    session = start(server, items="block-params-formula", count="1", seed=str(SEED))
    page = server.request("GET", session).body
    assert "Show how it reads" in page
    fields = {"csrf": csrf_of(page), "position": "1", "format": "json"}
    cases = {
        "12d_model^2+13d_model": ("12*d_model^2 + 13*d_model", ""),  # right, its products said
        "d_model(12d_model+13)": ("d_model*(12*d_model + 13)", ""),  # right too, written another way
        "2 d_model": ("2*d_model", ""),  # wrong: read all the same, nothing said of it
    }
    for typed, expected in cases.items():
        reply = server.request("POST", f"{session}/read", form={**fields, "response": typed})
        assert reply.status == 200
        data = json.loads(reply.body)
        assert (data["read_as"], data["problem"]) == expected, typed
        assert set(data) == {"read_as", "problem"}
    for hostile in ("__import__('os')", "9**9**9**9", "(" * 5000, "x" * 20000, "d_model^", "\x00"):
        reply = server.request("POST", f"{session}/read", form={**fields, "response": hostile})
        assert reply.status == 200, hostile
        assert json.loads(reply.body)["problem"], hostile
    # Without the script: the button shows the question again with the reading, the text kept.
    plain = server.request(
        "POST", f"{session}/read", form={**fields, "format": "", "response": "12d_model^2+13d_model"}
    )
    assert plain.headers["location"] == session
    shown = server.request("GET", session).body
    assert "Read as <code>12*d_model^2 + 13*d_model</code>" in shown
    assert 'value="12d_model^2+13d_model"' in shown
    with Store.open(server.db) as store:
        assert store.attempts() == []  # nothing graded, nothing saved
