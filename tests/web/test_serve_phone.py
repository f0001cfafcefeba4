"""`quiz serve` on a phone's screen (320 and 390 px wide), in Debian's headless Chromium: long
formulas scroll inside their own box and never widen the page, the stats tables keep every column
in view, and the question stays visible beside its feedback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attnquiz.engine.bank import finding as banks
from tests.web.conftest import Server, chromium_path, start_server

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (apt-get install chromium)")
BUILT_IN = [found.name for found in banks.discover() if found.origin == "built-in"]
WIDTHS = [320, 390]


@pytest.fixture(scope="module")
def every_bank(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder: Path = tmp_path_factory.mktemp("phone")
    running = start_server(*BUILT_IN, db=folder / "history.sqlite3")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def phone(request: pytest.FixtureRequest, browser: Any, every_bank: Server) -> Iterator[tuple[Any, int]]:
    width: int = request.param
    context = browser.new_context(viewport={"width": width, "height": 800})
    opened = context.new_page()
    opened.goto(every_bank.url)
    yield opened, width
    context.close()


WIDE_FORMULAS = {"week1", "week2"}
"""The banks whose worked solutions hold a formula wider than a phone (the code bank's are code)."""


def page_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def widest_formula(page: Any) -> int:
    """The widest formula of the page's worked solutions, as wide as it would be laid out whole."""
    return int(
        page.evaluate("Math.max(0, ...[...document.querySelectorAll('ol math')].map(m => m.scrollWidth))")
    )


def start(page: Any, server: Server, bank: str, item: str) -> None:
    page.goto(server.base + "/")
    form = page.locator("form.start").filter(has=page.locator(f'input[name="bank"][value="{bank}"]'))
    form.locator('input[name="items"]').fill(item)
    form.locator('input[name="count"]').fill("1")
    form.locator('input[name="seed"]').fill("1")
    form.locator('button[type="submit"]').click()
    page.wait_for_selector("#response")


@pytest.mark.parametrize("bank", BUILT_IN)
def test_no_formula_of_a_bank_widens_the_preview(
    phone: tuple[Any, int], every_bank: Server, bank: str
) -> None:
    page, width = phone
    assert set(BUILT_IN) >= WIDE_FORMULAS
    page.goto(f"{every_bank.base}/preview/{bank}?seed=1")
    if bank in WIDE_FORMULAS:
        assert widest_formula(page) > width  # the bank has a formula wider than the screen ...
    assert page_width(page) <= width  # ... and it scrolls in its own box (as code does in its own)


@pytest.mark.parametrize(("bank", "item"), [("week1", "weighted-sum-first-element"), ("week2", "pe-vector")])
def test_a_worked_solution_fits_and_keeps_the_question_in_view(
    phone: tuple[Any, int], every_bank: Server, bank: str, item: str
) -> None:
    page, width = phone
    start(page, every_bank, bank, item)
    page.get_by_role("button", name="Skip").click()
    page.wait_for_url("**/feedback/1")
    assert widest_formula(page) > width
    assert page_width(page) <= width
    assert page.locator("details.prompt-again .prompt").is_visible()  # the question beside its feedback
    assert page.locator("details.solution ol").is_visible()


def test_the_stats_tables_keep_the_due_column_on_a_phone(phone: tuple[Any, int], every_bank: Server) -> None:
    page, width = phone
    start(page, every_bank, "week1", "weighted-sum-first-element")
    page.fill("#response", "0")
    page.get_by_role("button", name="Check").click()
    page.wait_for_url("**/feedback/1")
    page.goto(f"{every_bank.base}/stats")
    due = page.locator('td[data-label="Due"]')
    assert due.count() >= 2  # one row of the banks' table, one of the topics'
    for n in range(due.count()):
        box = due.nth(n).bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= width
        label = due.nth(n).evaluate("td => getComputedStyle(td, '::before').content")
        assert "Due" in label  # its heading said beside it
    assert page_width(page) <= width
