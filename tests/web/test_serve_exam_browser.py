"""The browser exam keeps what a student typed, however they leave the question, and asks before it is
handed in: Debian's headless Chromium driven by Playwright against a real `quiz serve`.

Each test types an answer into the box and leaves without pressing *Save answer* (by *Next question*,
*Go to N*, *Submit the exam* or the page's clock), then finds the answer saved (back in the box) and
graded (in the summary and in the history). Skipped cleanly where Playwright or a Chromium is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from attnquiz.engine.practice.store import Store
from tests.web.conftest import Server, chromium_path
from tests.web.test_serve_http import SEED, planned_questions

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (apt-get install chromium)")
TOPIC = "complexity"
"""Its first three questions at SEED are answered in one text field each (no parts, no options)."""


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: errors.append(str(e)))
    opened.goto(server.url)
    yield opened
    context.close()
    assert not errors, errors


def start_exam(page: Any, *, count: int, time: str = "") -> None:
    form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="week1"]'))
    form.locator('select[name="topic"]').select_option(TOPIC)
    form.locator('input[name="count"]').fill(str(count))
    form.locator('input[name="seed"]').fill(str(SEED))
    form.locator('input[name="mode"][value="exam"]').check()
    form.locator('input[name="time"]').fill(time)
    form.locator('button[type="submit"]').click()
    page.wait_for_selector("#response")


def on_question(page: Any, position: int, count: int) -> None:
    page.wait_for_selector(f"h1:has-text('Question {position} of {count}')")


def stored(server: Server) -> dict[int, tuple[str, str]]:
    """The history's attempts: position → (response, status)."""
    with Store.open(server.db) as store:
        return {a.position: (a.response, a.status) for a in store.attempts()}


def test_next_and_go_to_keep_the_typed_answer_and_submit_grades_it(page: Any, server: Server) -> None:
    first, second, third = planned_questions(TOPIC, 3)
    start_exam(page, count=3)

    page.fill("#response", first.answer.format())
    page.get_by_role("button", name="Next question").click()
    on_question(page, 2, 3)
    assert page.locator("#response").input_value() == ""
    assert "Saved your answer to question 1." in page.content()

    page.fill("#response", second.answer.format())
    page.get_by_role("button", name="Question 1, answered").click()  # Go to 1
    on_question(page, 1, 3)
    assert page.locator("#response").input_value() == first.answer.format()  # saved, back in the box
    assert page.locator("button.pill.done").count() == 2  # questions 1 and 2 have an answer

    page.get_by_role("button", name="Question 3, not answered").click()
    on_question(page, 3, 3)
    page.fill("#response", third.answer.format())
    page.get_by_role("button", name="Submit the exam").click()  # the last answer goes in with it
    page.wait_for_url("**/summary")
    assert "3 / 3" in page.locator(".score").inner_text()
    assert stored(server) == {
        1: (first.answer.format(), "correct"),
        2: (second.answer.format(), "correct"),
        3: (third.answer.format(), "correct"),
    }


def test_an_unreadable_answer_stops_the_move_and_says_why(page: Any, server: Server) -> None:
    start_exam(page, count=2)
    page.fill("#response", "1/0 + (")
    page.get_by_role("button", name="Next question").click()
    page.wait_for_selector("#invalid")
    on_question(page, 1, 2)  # still here, the text kept, nothing spent
    assert page.locator("#response").input_value() == "1/0 + ("
    assert stored(server) == {}


def test_saving_the_last_question_leads_to_a_page_to_look_over_and_submit(page: Any, server: Server) -> None:
    first, second = planned_questions(TOPIC, 2)
    start_exam(page, count=2)
    page.keyboard.type(first.answer.format())
    page.keyboard.press("Enter")
    on_question(page, 2, 2)
    page.fill("#response", "12")  # wrong, changed below
    page.keyboard.press("Enter")
    page.wait_for_url("**/submit")
    shown = page.locator("main").inner_text()
    assert "Every question has an answer" in shown
    assert "12" in page.locator("table.rows").inner_text()
    assert "summary" not in page.url  # not handed in yet

    page.get_by_role("button", name="Go to question 2").click()
    on_question(page, 2, 2)
    assert page.locator("#response").input_value() == "12"
    page.fill("#response", second.answer.format())
    page.get_by_role("button", name="Save answer").click()
    page.wait_for_url("**/submit")
    page.get_by_role("button", name="Submit the exam").click()
    page.wait_for_url("**/summary")
    assert "2 / 2" in page.locator(".score").inner_text()


def test_submitting_with_questions_unanswered_asks_first(page: Any, server: Server) -> None:
    first, _ = planned_questions(TOPIC, 2)
    start_exam(page, count=2)
    page.get_by_role("button", name="Submit the exam").click()
    page.wait_for_url("**/submit?ask=1")
    assert "2 questions have no answer yet: 1, 2." in page.locator("[role=alert]").inner_text()
    page.get_by_role("link", name="Back to question 1").click()
    on_question(page, 1, 2)

    page.fill("#response", first.answer.format())
    page.get_by_role("button", name="Submit the exam").click()  # saved, but question 2 is still open
    page.wait_for_url("**/submit?ask=1")
    assert "1 question has no answer yet: 2." in page.locator("[role=alert]").inner_text()
    page.get_by_role("button", name="Submit with 1 unanswered").click()
    page.wait_for_url("**/summary")
    assert "1 / 2" in page.locator(".score").inner_text()
    assert stored(server)[1] == (first.answer.format(), "correct")


def test_the_timer_hands_in_what_is_in_the_box(page: Any, server: Server) -> None:
    first, _ = planned_questions(TOPIC, 2)
    start_exam(page, count=2, time="8s")
    page.fill("#response", first.answer.format())  # typed, never saved: the clock sends it
    page.wait_for_url("**/summary", timeout=30000)
    assert "Time is up: the exam was submitted." in page.content()
    assert "1 / 2" in page.locator(".score").inner_text()
    assert stored(server) == {1: (first.answer.format(), "correct")}
