"""Nothing typed in `quiz serve` is lost, however the question is left: reload, Back/Forward, each
header link, a hint, End session and the exam's clock. Debian's headless Chromium driven by
Playwright against a real `quiz serve`; skipped cleanly where Playwright or a Chromium is missing.

In practice the browser keeps a draft of the box (put back when the question comes again); in an
exam the header links save the answer as the exam's own buttons do; ending a practice session with
an answer in the box asks whether to check it first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from attnquiz.engine.practice.store import Store
from tests.web.conftest import Server, chromium_path
from tests.web.test_serve_http import PRACTICE_TOPIC, SEED, planned_questions

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (apt-get install chromium)")
EXAM_TOPIC = "complexity"
"""Its first three questions at SEED are answered in one text field each (no parts, no options)."""
HEADER_LINKS = ["Practice", "Review", "Stats", "Preview"]


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


def start(page: Any, *, topic: str, count: int, exam: bool = False, time: str = "") -> str:
    """Start a week1 session from the start page; the question page's address."""
    form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="week1"]'))
    form.locator('select[name="topic"]').select_option(topic)
    form.locator('input[name="count"]').fill(str(count))
    form.locator('input[name="seed"]').fill(str(SEED))
    if exam:
        form.locator('input[name="mode"][value="exam"]').check()
        form.locator('input[name="time"]').fill(time)
    form.locator('button[type="submit"]').click()
    page.wait_for_selector("#response")
    return str(page.url)


def header(page: Any, name: str) -> Any:
    return page.locator("header.top nav").get_by_role("link", name=name, exact=True)


def stored(server: Server) -> dict[int, tuple[str, str]]:
    """The history's attempts: position → (response, status)."""
    with Store.open(server.db) as store:
        return {a.position: (a.response, a.status) for a in store.attempts()}


def test_a_reload_puts_back_what_was_typed(page: Any, server: Server) -> None:
    start(page, topic=PRACTICE_TOPIC, count=2)
    page.fill("#response", "0.42 typed")
    page.reload()
    page.wait_for_selector("#response")
    assert page.locator("#response").input_value() == "0.42 typed"
    assert page.locator("#draft-note").is_visible()


def test_back_and_forward_keep_what_was_typed(page: Any, server: Server) -> None:
    question = start(page, topic=PRACTICE_TOPIC, count=2)
    page.fill("#response", "1.5")
    page.go_back()  # to the start page
    page.wait_for_selector("form.start")
    page.go_forward()
    page.wait_for_url(question)
    assert page.locator("#response").input_value() == "1.5"
    page.fill("#response", "1.75")
    header(page, "Stats").click()
    page.wait_for_url("**/stats")
    page.go_back()
    page.wait_for_url(question)
    assert page.locator("#response").input_value() == "1.75"


@pytest.mark.parametrize("link", HEADER_LINKS)
def test_each_header_link_of_a_practice_question_keeps_a_draft(page: Any, server: Server, link: str) -> None:
    question = start(page, topic=PRACTICE_TOPIC, count=2)
    page.fill("#response", f"typed before {link}")
    header(page, link).click()
    page.wait_for_load_state()
    assert page.url != question
    page.goto(question)  # coming back by the address, not by Back
    assert page.locator("#response").input_value() == f"typed before {link}"


def test_checking_the_answer_clears_its_draft(page: Any, server: Server) -> None:
    first, _ = planned_questions(PRACTICE_TOPIC, 2)
    question = start(page, topic=PRACTICE_TOPIC, count=2)
    page.fill("#response", first.answer.format())
    page.get_by_role("button", name="Check").click()
    page.wait_for_url("**/feedback/1")
    page.get_by_role("link", name="Next question").click()
    page.wait_for_url(question)
    assert page.locator("#response").input_value() == ""  # question 2 starts empty
    assert not page.locator("#draft-note").is_visible()
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('quiz-draft:')).length") == 0


def test_a_hint_keeps_what_was_typed(page: Any, server: Server) -> None:
    start(page, topic=PRACTICE_TOPIC, count=2)
    page.fill("#response", "0.3")
    page.get_by_role("button", name="Hint").click()
    page.wait_for_selector(".hint")
    assert page.locator("#response").input_value() == "0.3"


def test_the_header_links_of_an_exam_save_the_answer(page: Any, server: Server) -> None:
    question = start(page, topic=EXAM_TOPIC, count=3, exam=True)
    for n, link in enumerate(HEADER_LINKS, start=1):
        page.get_by_role("button", name="Question 1,").click()  # answered or not
        page.wait_for_selector("h1:has-text('Question 1 of 3')")
        page.fill("#response", str(100 + n))
        header(page, link).click()
        page.wait_for_load_state()
        target = {"Practice": ""}.get(link, "/" + link.lower())
        assert page.url.removesuffix("/").endswith(f"{server.port}{target}")
        assert stored(server)[1][0] == str(100 + n), link  # saved before the link was followed
        page.goto(question)
    page.get_by_role("button", name="Question 1, answered").click()
    page.wait_for_selector("h1:has-text('Question 1 of 3')")
    assert page.locator("#response").input_value() == "104"


def test_an_unreadable_exam_answer_stops_a_header_link_and_says_why(page: Any, server: Server) -> None:
    question = start(page, topic=EXAM_TOPIC, count=2, exam=True)
    page.fill("#response", "1/0 + (")
    header(page, "Stats").click()
    page.wait_for_selector("#invalid")
    assert page.url == question
    assert page.locator("#response").input_value() == "1/0 + ("
    assert stored(server) == {}


def test_end_session_with_an_answer_in_the_box_asks_to_check_it(page: Any, server: Server) -> None:
    first, _ = planned_questions(PRACTICE_TOPIC, 2)
    question = start(page, topic=PRACTICE_TOPIC, count=2)
    page.fill("#response", first.answer.format())
    page.get_by_role("button", name="End session").click()
    page.wait_for_selector("h1:has-text('Check your answer first?')")
    page.get_by_role("link", name="Back to question 1").click()  # changed their mind
    page.wait_for_url(question)
    assert page.locator("#response").input_value() == first.answer.format()

    page.get_by_role("button", name="End session").click()
    page.get_by_role("button", name="Check it, then end").click()
    page.wait_for_url("**/feedback/1")
    assert "Correct" in page.locator(".verdict").inner_text()
    page.get_by_role("link", name="See the summary").click()
    page.wait_for_url("**/summary")
    assert "1 / 1" in page.locator(".score").inner_text()
    assert stored(server) == {1: (first.answer.format(), "correct")}


def test_end_session_without_checking_ends_it(page: Any, server: Server) -> None:
    start(page, topic=PRACTICE_TOPIC, count=2)
    page.fill("#response", "0.5")
    page.get_by_role("button", name="End session").click()
    page.get_by_role("button", name="End without checking it").click()
    page.wait_for_url("**/summary")
    assert stored(server) == {}
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('quiz-draft:')).length") == 0


def test_the_clock_saves_a_draft_put_back_after_a_reload(page: Any, server: Server) -> None:
    first, _ = planned_questions(EXAM_TOPIC, 2)
    start(page, topic=EXAM_TOPIC, count=2, exam=True, time="10s")
    page.fill("#response", first.answer.format())
    page.reload()  # typed, never saved: the draft comes back, then the clock sends it
    page.wait_for_selector("#response")
    assert page.locator("#response").input_value() == first.answer.format()
    page.wait_for_url("**/summary", timeout=30000)
    assert "Time is up: the exam was submitted." in page.content()
    assert stored(server) == {1: (first.answer.format(), "correct")}


def test_leaving_asks_first_where_the_browser_cannot_keep_a_draft(browser: Any, server: Server) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    # Storage refused, as a browser with site data blocked refuses it: no draft can be kept.
    context.add_init_script(
        "Object.defineProperty(window, 'localStorage', {get() { throw new DOMException('denied'); }});"
    )
    page = context.new_page()
    asked: list[str] = []

    def answer_dialog(dialog: Any) -> None:
        asked.append(dialog.type)
        dialog.dismiss()  # stay on the page

    page.on("dialog", answer_dialog)
    page.goto(server.url)
    question = start(page, topic=PRACTICE_TOPIC, count=2)
    page.fill("#response", "0.5")
    header(page, "Stats").click()
    page.wait_for_timeout(500)  # the dialog is answered at once; this only lets the page settle
    assert asked == ["beforeunload"]
    assert page.url == question
    assert page.locator("#response").input_value() == "0.5"
    page.get_by_role("button", name="Check").click()  # sending the answer asks nothing
    page.wait_for_url("**/feedback/1")
    assert asked == ["beforeunload"]
    context.close()


def test_how_a_formula_is_read_is_shown_while_typing(page: Any, server: Server) -> None:
    form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="week1"]'))
    form.locator('input[name="items"]').fill("block-params-formula")
    form.locator('input[name="count"]').fill("1")
    form.locator('input[name="seed"]').fill(str(SEED))
    form.locator('button[type="submit"]').click()
    page.wait_for_selector("#response")
    page.locator("#response").press_sequentially("12d_model^2+13d_model")
    page.wait_for_selector("#reading code")
    assert page.locator("#reading").inner_text() == "Read as 12*d_model^2 + 13*d_model"
    page.locator("#response").fill("")
    page.locator("#response").press_sequentially("12d_model^")
    page.wait_for_selector("#reading:has-text('Cannot be read yet')")
    assert stored(server) == {}
