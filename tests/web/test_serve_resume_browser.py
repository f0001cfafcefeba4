"""An exam taken in Chromium outlives the server that ran it: killed with its answers saved, a new
server's home page offers it, and *Resume* brings back its question, answers and clock, on a desktop
and on a phone. Debian's headless Chromium driven by Playwright; skipped cleanly where either is missing.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import Server, chromium_path, start_server
from tests.web.test_serve_exam_browser import TOPIC, on_question, start_exam
from tests.web.test_serve_http import planned_questions

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (apt-get install chromium)")


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


def seconds(text: str) -> int:
    minutes, secs = re.fullmatch(r"(\d+):(\d\d)", text.strip()).groups()  # type: ignore[union-attr]
    return int(minutes) * 60 + int(secs)


@pytest.mark.parametrize("width", [1280, 390])
def test_an_exam_of_a_killed_server_is_resumed_from_the_home_page(
    browser: Any, tmp_path: Path, servers: list[Server], width: int
) -> None:
    db = tmp_path / "history.sqlite3"
    first, second, _ = planned_questions(TOPIC, 3)
    servers.append(start_server("week1", db=db))
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(servers[0].url)
    start_exam(page, count=3, time="20m")
    page.fill("#response", first.answer.format())
    page.get_by_role("button", name="Next question").click()
    on_question(page, 2, 3)
    page.fill("#response", second.answer.format())
    page.get_by_role("button", name="Next question").click()
    on_question(page, 3, 3)
    before = seconds(page.locator("#timer-text").inner_text())
    servers[0].process.send_signal(signal.SIGKILL)
    servers[0].process.wait(timeout=30)

    servers.append(start_server("week1", db=db))
    page.goto(servers[1].url)
    kept = page.locator("section[aria-labelledby='kept-title']")
    assert "2 of 3 answered" in kept.inner_text()
    # On a phone too, the list of kept exams stays within the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    kept.get_by_role("button", name="Resume").click()
    on_question(page, 3, 3)
    assert seconds(page.locator("#timer-text").inner_text()) <= before
    page.get_by_role("button", name="Question 1, answered").click()
    on_question(page, 1, 3)
    assert page.locator("#response").input_value() == first.answer.format()
    context.close()
    assert not errors, errors
