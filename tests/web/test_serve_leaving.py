"""`quiz serve` over plain HTTP (the pages without their script): ending a practice session with an
answer in the box asks first, a hint keeps the box, an exam's header links save its answer."""

from __future__ import annotations

import re

from attnquiz.engine.store import Store
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
