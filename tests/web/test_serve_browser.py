"""`quiz serve` in a real browser: Debian's headless Chromium driven by Playwright, keyboard only.

Skipped cleanly where Playwright or a Chromium cannot be found (Playwright's own browser download is
never used: it needs the network).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import Server, chromium_path
from tests.web.test_serve_http import PRACTICE_TOPIC, SEED, planned_questions

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (apt-get install chromium)")


@pytest.fixture
def console_errors() -> list[str]:
    return []


@pytest.fixture
def page(browser: Any, server: Server, console_errors: list[str]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors = console_errors
    # A Content-Security-Policy violation or a script error is a bug of the pages.
    opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: errors.append(str(e)))
    opened.goto(server.url)
    yield opened
    context.close()
    assert not errors, errors


def focused(page: Any, selector: str) -> None:
    """Wait for the page's autofocus to reach ``selector`` (keys typed before it would be lost)."""
    page.wait_for_function(
        "selector => document.activeElement !== null && document.activeElement.matches(selector)",
        arg=selector,
    )


def start_from_keyboard(page: Any, *, topic: str, count: int, exam_time: str | None = None) -> None:
    """Fill the week1 start form with the keyboard only, as a user with no mouse does."""
    form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="week1"]'))
    form.locator('select[name="topic"]').focus()
    form.locator('select[name="topic"]').select_option(topic)
    page.keyboard.press("Tab")
    page.keyboard.type(str(count))
    page.keyboard.press("Tab")  # Items: left empty, every item of the topic
    page.keyboard.press("Tab")
    page.keyboard.type(str(SEED))
    if exam_time is not None:
        form.locator('input[name="mode"][value="exam"]').focus()
        page.keyboard.press("Space")
        form.locator('input[name="time"]').focus()
        page.keyboard.type(exam_time)
    form.locator('button[type="submit"]').focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/s/*")
    focused(page, "#response, input[name=choice]")


def test_a_practice_session_right_wrong_and_unreadable_read_back_by_quiz_stats(
    page: Any, server: Server
) -> None:
    first, second = planned_questions(PRACTICE_TOPIC, 2)
    mistake = second.variant.mistakes[0]
    start_from_keyboard(page, topic=PRACTICE_TOPIC, count=2)

    # The answer field has the focus: type and press Enter.
    page.keyboard.type("1/0 + (")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    assert "Cannot read that" in page.locator("#invalid").inner_text()
    assert page.locator("#response").input_value() == "1/0 + ("
    focused(page, "#response")

    page.locator("#response").fill("")
    page.keyboard.type(first.answer.format())
    page.keyboard.press("Enter")
    page.wait_for_url("**/feedback/1")
    assert "Correct" in page.locator(".verdict").inner_text()
    assert page.locator("math").count() > 0  # the question is typeset as MathML
    focused(page, "a.button")  # "Next question"
    page.keyboard.press("Enter")
    page.wait_for_selector("#response")
    focused(page, "#response")

    page.keyboard.type(mistake.format(second.answer))
    page.keyboard.press("Enter")
    page.wait_for_url("**/feedback/2")
    verdict = page.locator(".verdict").inner_text()
    assert "Wrong" in verdict
    assert mistake.tag in verdict
    assert page.locator("details.solution[open]").count() == 1
    focused(page, "a.button")  # "See the summary"
    page.keyboard.press("Enter")
    page.wait_for_url("**/summary")
    assert "1 / 2" in page.locator(".score").inner_text()

    result = subprocess.run(
        [sys.executable, "-m", "attnquiz", "stats", "--json", "--db", str(server.db)],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(result.stdout)
    assert [(t["topic"], t["attempts"], t["correct"]) for t in data["topics"]] == [(PRACTICE_TOPIC, 2, 1)]
    assert [m["tag"] for m in data["mistakes"]] == [mistake.tag]

    page.goto(f"{server.base}/stats")
    assert page.locator("svg.chart").count() == 2
    assert PRACTICE_TOPIC in page.locator("svg.chart").first.inner_html()


def test_an_exam_submits_itself_when_its_time_is_up(page: Any, server: Server) -> None:
    (question, _) = planned_questions("complexity", 2)
    start_from_keyboard(page, topic="complexity", count=2, exam_time="4s")
    assert page.locator("#timer").is_visible()
    page.keyboard.type(question.answer.format())
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Saved your answer to question 1.")
    # Nothing more is typed: the page's timer sends the exam in when the time is up.
    page.wait_for_url("**/summary", timeout=15000)
    assert "Time is up: the exam was submitted." in page.content()
    assert "1 / 2" in page.locator(".score").inner_text()


def test_the_preview_reloads_when_the_bank_changes_and_shows_load_errors(
    page: Any, server: Server, bank_copy: Path
) -> None:
    page.goto(f"{server.base}/preview/mybank/additive-score?seed=5")
    assert "Original (the past paper)" in page.content()
    text = bank_copy.read_text(encoding="utf-8")
    bank_copy.write_text(text.replace('"2026 T1 Quiz 1, Q13"', '"Edited source, live"', 1), encoding="utf-8")
    page.wait_for_selector("text=Edited source, live", timeout=10000)

    bank_copy.write_text(text.replace("params: {dim: 2}", "params: {dim: many}", 1), encoding="utf-8")
    page.wait_for_selector(".errors", timeout=10000)
    issue = page.locator("code.issue").first.inner_text()
    assert issue.startswith("mybank.yaml:") or "/mybank.yaml:" in issue
    assert ": items[" in issue
    assert ".params.dim: " in issue

    bank_copy.write_text(text, encoding="utf-8")  # fixed: the page comes back by itself
    page.wait_for_selector("text=Original (the past paper)", timeout=10000)


def test_a_page_without_the_token_is_refused(browser: Any, server: Server) -> None:
    context = browser.new_context()
    try:
        response = context.new_page().goto(f"{server.base}/")
        assert response is not None
        assert response.status == 403
    finally:
        context.close()


def test_a_form_on_another_site_cannot_post_to_the_server(
    page: Any, server: Server, console_errors: list[str]
) -> None:
    # A page of another origin (served by the browser's request routing) with a hidden form.
    hostile = (
        f'<form id="f" method="post" action="{server.base}/start">'
        '<input name="bank" value="week1"><input name="mode" value="practice"></form>'
    )
    page.route("http://evil.test/", lambda route: route.fulfill(body=hostile, content_type="text/html"))
    page.goto("http://evil.test/")
    with page.expect_navigation() as navigation:
        page.evaluate("document.getElementById('f').submit()")
    response = navigation.value
    assert response is not None
    assert response.status == 403
    assert page.url.startswith(f"{server.base}/start")
    assert console_errors == [
        "Failed to load resource: the server responded with a status of 403 (Forbidden)"
    ]
    console_errors.clear()  # the refusal is the one error this page should log
