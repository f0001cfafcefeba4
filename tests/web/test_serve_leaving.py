"""`quiz serve` over plain HTTP (the pages without their script): ending a practice session with an
answer in the box asks first, a hint keeps the box, an exam's header links save its answer."""

from __future__ import annotations

import re

from attnquiz.engine.practice.store import Store
from tests.web.conftest import Server, csrf_of
from tests.web.test_serve_http import PRACTICE_TOPIC, SEED, planned_questions, start, text_of


def form_of(server: Server, session: str) -> dict[str, str]:
    page = server.request("GET", session).body
    position = re.search(r'name="position" value="(\d+)"', page)
    assert position, page[:400]
    return {"csrf": csrf_of(page), "position": position.group(1)}


def test_end_session_with_an_answer_asks_and_checks_it_on_the_way_out(server: Server) -> None:
    first, _ = planned_questions(PRACTICE_TOPIC, 2)
    session = start(server, topic=PRACTICE_TOPIC, count="2", seed=str(SEED))
    fields = form_of(server, session)
    asked = server.request("POST", f"{session}/finish", form={**fields, "response": first.answer.format()})
    assert asked.status == 200
    assert "Check your answer first?" in text_of(asked.body)
    # Back to the question: the text is in the box (kept by the server, no script needed).
    assert f'value="{first.answer.format()}"' in server.request("GET", session).body
    checked = server.request(
        "POST", f"{session}/answer", form={**fields, "response": first.answer.format(), "then": "end"}
    )
    assert checked.headers["location"] == f"{session}/feedback/1"
    feedback = text_of(server.request("GET", f"{session}/feedback/1").body)
    assert "Correct" in feedback
    assert "See the summary" in feedback
    with Store.open(server.db) as store:
        assert [(a.position, a.status) for a in store.attempts()] == [(1, "correct")]


def test_end_session_with_an_empty_box_or_confirmed_ends_at_once(server: Server) -> None:
    session = start(server, topic=PRACTICE_TOPIC, count="2", seed=str(SEED))
    fields = form_of(server, session)
    empty = server.request("POST", f"{session}/finish", form={**fields, "response": "   "})
    assert empty.headers["location"] == f"{session}/summary"

    again = start(server, topic=PRACTICE_TOPIC, count="2", seed=str(SEED))
    fields = form_of(server, again)
    ended = server.request("POST", f"{again}/finish", form={**fields, "response": "0.5", "confirm": "yes"})
    assert ended.headers["location"] == f"{again}/summary"


def test_a_hint_keeps_the_box_and_a_skip_empties_it(server: Server) -> None:
    session = start(server, topic=PRACTICE_TOPIC, count="2", seed=str(SEED))
    fields = form_of(server, session)
    server.request("POST", f"{session}/hint", form={**fields, "response": "0.25 <b>x</b>"})
    page = server.request("GET", session).body
    assert 'value="0.25 &lt;b&gt;x&lt;/b&gt;"' in page  # kept, escaped
    assert 'data-fresh="1"' in page


def test_an_exam_header_link_saves_then_follows_only_the_header_links(server: Server) -> None:
    session = start(server, topic="complexity", count="2", seed=str(SEED), mode="exam")
    fields = form_of(server, session)
    left = server.request("POST", f"{session}/leave", form={**fields, "response": "12", "to": "/stats"})
    assert left.headers["location"] == "/stats"
    with Store.open(server.db) as store:
        assert [(a.position, a.response) for a in store.attempts()] == [(1, "12")]
    fields = form_of(server, session)
    for hostile in ("https://example.org/", "//example.org", "/s/x/finish", "javascript:alert(1)", ""):
        away = server.request("POST", f"{session}/leave", form={**fields, "to": hostile})
        assert away.headers["location"] == "/", hostile
    unreadable = server.request("POST", f"{session}/leave", form={**fields, "response": "1/0 + (", "to": "/"})
    assert unreadable.headers["location"] == session


def test_the_home_page_offers_to_resume_an_unfinished_exam_and_repeat_gives_fresh_variants(
    server: Server,
) -> None:
    first, second = planned_questions("complexity", 2)
    session = start(server, topic="complexity", count="2", seed=str(SEED), mode="exam", time="20m")
    fields = form_of(server, session)
    server.request("POST", f"{session}/answer", form={**fields, "response": first.answer.format()})
    home = server.request("GET", "/").body
    offered = re.search(rf'<li><a href="{session}">Resume the exam: [^<]*</a>(.*?)</li>', home, re.S)
    assert offered, home[:2000]
    said = text_of(offered.group(1))
    assert "1 of 2 answered" in said
    left = re.search(r"(\d+):(\d\d) left", said)
    assert left
    assert 0 < int(left.group(1)) * 60 + int(left.group(2)) <= 20 * 60
    # Resumed: the saved answer is there, the clock goes on.
    fields = form_of(server, session)
    server.request("POST", f"{session}/go", form={**fields, "go": "1"})
    resumed = server.request("GET", session).body
    assert f'value="{first.answer.format()}"' in resumed
    assert 'id="timer"' in resumed

    fields = form_of(server, session)
    handed = server.request("POST", f"{session}/finish", form={**fields, "confirm": "yes"})
    assert handed.headers["location"] == f"{session}/summary"
    assert session not in server.request("GET", "/").body  # nothing left to resume
    summary = server.request("GET", f"{session}/summary").body
    assert "Another exam like this, with fresh variants" in summary
    fresh = server.request("POST", f"{session}/again", form={"csrf": csrf_of(summary)}).headers["location"]
    assert fresh != session
    page = server.request("GET", fresh).body
    assert "Question 1 of 2" in page
    assert 'id="timer"' in page  # an exam with its time limit again
    assert first.code not in page
    assert second.code not in page
    early = server.request("POST", f"{fresh}/again", form={"csrf": csrf_of(page)})
    assert early.status == 404  # not ended yet


def test_an_exam_answer_read_then_changed_and_saved_comes_back_as_saved(server: Server) -> None:
    session = start(server, topic="complexity", count="2", seed=str(SEED), mode="exam")
    fields = form_of(server, session)
    server.request("POST", f"{session}/read", form={**fields, "response": "12"})
    assert 'value="12"' in server.request("GET", session).body  # kept while it is read
    server.request("POST", f"{session}/skip", form={**fields, "response": "13"})  # Next: saves 13
    fields = form_of(server, session)
    server.request("POST", f"{session}/go", form={**fields, "go": "1"})
    back = server.request("GET", session).body
    assert 'value="13"' in back
    assert 'value="12"' not in back
