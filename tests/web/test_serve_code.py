"""A code question in `quiz serve`, over plain HTTP: the page holds a code box with the stub (it works
without JavaScript), the code typed there runs in the sandbox, and the verdict names the mistake."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import Server, csrf_of, launched_chromium, start_server

WRONG_AXIS = """import numpy as np

def attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(axis=0, keepdims=True))
    return w / w.sum(axis=0, keepdims=True) @ V
"""


@pytest.fixture
def code_server(tmp_path: Path) -> Iterator[Server]:
    running = start_server("code", db=tmp_path / "history.sqlite3")
    try:
        yield running
    finally:
        running.stop()


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_a_code_question_in_the_browser_page(code_server: Server) -> None:
    home = code_server.request("GET", "/")
    form = {"csrf": csrf_of(home.body), "bank": "code", "mode": "practice", "items": "attention", "seed": "4"}
    reply = code_server.request("POST", "/start", form=form)
    assert reply.status == 303, reply.body
    session = reply.headers["location"]
    page = code_server.request("GET", session)
    assert page.status == 200
    box = re.search(
        r'<textarea id="response" name="response" class="code"[^>]*>(.*?)</textarea>', page.body, re.S
    )
    assert box is not None, page.body[:2000]
    assert "def attention(Q, K, V):" in unescape(box.group(1))  # the stub, ready to edit
    position = re.search(r'name="position" value="(\d+)"', page.body)
    assert position is not None
    answer = {
        "csrf": csrf_of(page.body),
        "position": position.group(1),
        "response": WRONG_AXIS.replace("\n", "\r\n"),
    }
    reply = code_server.request("POST", f"{session}/answer", form=answer)
    assert reply.status == 303
    shown = _text(code_server.request("GET", reply.headers["location"]).body)
    assert "softmax-over-queries" in shown
    assert "Softmax runs over the keys for each query" in shown


HOSTILE = """import os, signal

def attention(Q, K, V):
    for pid in (os.getppid(), os.getpgid(0), 1):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:
        os.fork()
"""


def test_hostile_code_leaves_the_server_unharmed(code_server: Server) -> None:
    home = code_server.request("GET", "/")
    form = {"csrf": csrf_of(home.body), "bank": "code", "mode": "practice", "items": "attention", "seed": "5"}
    session = code_server.request("POST", "/start", form=form).headers["location"]
    page = code_server.request("GET", session)
    position = re.search(r'name="position" value="(\d+)"', page.body)
    assert position is not None
    answer = {"csrf": csrf_of(page.body), "position": position.group(1), "response": HOSTILE}
    reply = code_server.request("POST", f"{session}/answer", form=answer)
    assert reply.status == 303
    shown = _text(code_server.request("GET", reply.headers["location"]).body)
    assert "PermissionError" in shown  # the fork refused, said with its line
    assert code_server.process.poll() is None
    assert code_server.request("GET", "/").status == 200


# -- in a real browser, typed at the keyboard ---------------------------------------------------------

TYPED_WRONG = """import numpy as np

def attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(axis=0, keepdims=True))
    return w / w.sum(axis=0, keepdims=True) @ V
"""
TYPED_RIGHT = TYPED_WRONG.replace("axis=0", "axis=-1")


def _shot(page: Any, name: str) -> None:
    """A screenshot to look at, into the folder QUIZ_SCREENSHOTS names (none when it is not set)."""
    folder = os.environ.get("QUIZ_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def _type_code(page: Any, code: str) -> None:
    """Empty the box, then type ``code`` key by key as a student does (Tab indents by four spaces)."""
    box = page.locator("textarea#response")
    box.focus()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    for line_number, line in enumerate(code.rstrip("\n").split("\n")):
        if line_number:
            page.keyboard.press("Enter")
        indent = len(line) - len(line.lstrip(" "))
        for _ in range(indent // 4):
            page.keyboard.press("Tab")
        page.keyboard.type(line.lstrip(" "))


def _gutter(page: Any) -> list[str]:
    return str(page.locator(".code-gutter").text_content()).split("\n")


def test_the_code_box_numbers_its_lines_and_grades_what_is_typed(code_server: Server) -> None:
    errors: list[str] = []
    with launched_chromium() as browser:
        page = browser.new_context(viewport={"width": 1000, "height": 1100}).new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(code_server.url)
        form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="code"]'))
        form.locator('input[name="items"]').fill("attention")
        form.locator('input[name="seed"]').fill("4")
        form.locator('button[type="submit"]').click()
        page.wait_for_url("**/s/*")

        # The box keeps its label and the focus; the gutter numbers the stub's lines, hidden from
        # screen readers and out of the Tab order.
        page.wait_for_function("document.activeElement && document.activeElement.id === 'response'")
        assert page.locator("label[for=response]").inner_text() == "Your code"
        gutter = page.locator(".code-gutter")
        assert gutter.get_attribute("aria-hidden") == "true"
        assert gutter.get_attribute("tabindex") is None
        stub_lines = page.locator("textarea#response").input_value().rstrip("\n").count("\n") + 1
        assert _gutter(page)[:stub_lines] == [str(n) for n in range(1, stub_lines + 1)]

        # A long answer: the gutter counts its lines, and scrolls as the box does.
        scrolled = page.evaluate(
            """() => {
                const box = document.getElementById("response");
                box.value = Array.from({length: 60}, (_, i) => "x = " + i).join("\\n");
                box.dispatchEvent(new Event("input"));
                box.scrollTop = box.scrollHeight;
                box.dispatchEvent(new Event("scroll"));
                const gutter = document.querySelector(".code-gutter");
                return [box.scrollTop, gutter.scrollTop, gutter.textContent.split("\\n").length];
            }"""
        )
        assert scrolled[0] > 0
        assert scrolled[1:] == [scrolled[0], 60]
        _shot(page, "0-long-scrolled")
        _type_code(page, TYPED_WRONG)
        assert page.locator("textarea#response").input_value() == TYPED_WRONG.rstrip("\n")
        assert _gutter(page) == [str(n) for n in range(1, TYPED_WRONG.count("\n") + 1)]
        # Escape, then Tab, leaves the box: the keyboard is never trapped in it.
        page.keyboard.press("Escape")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") != "response"
        _shot(page, "1-wrong-typed")
        page.locator("button", has_text="Check").click()
        page.wait_for_selector(".verdict")
        shown = page.locator("main").inner_text()
        assert "softmax-over-queries" in shown
        assert "Softmax runs over the keys for each query" in shown
        _shot(page, "2-wrong-verdict")

        page.locator("button", has_text="Another like this").click()
        page.wait_for_selector("textarea#response")
        _type_code(page, TYPED_RIGHT)
        _shot(page, "3-right-typed")
        page.locator("button", has_text="Check").click()
        page.wait_for_selector(".verdict")
        verdict = page.locator(".verdict").first.inner_text()
        assert "Correct" in verdict
        _shot(page, "4-right-verdict")
    assert errors == []


def test_a_draft_put_back_is_numbered(code_server: Server) -> None:
    with launched_chromium() as browser:
        page = browser.new_context().new_page()
        page.goto(code_server.url)
        form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="code"]'))
        form.locator('input[name="items"]').fill("attention")
        form.locator('button[type="submit"]').click()
        page.wait_for_selector(".code-gutter")
        page.locator("textarea#response").focus()
        page.keyboard.press("Control+End")
        for line in ("# one", "# two", "# three", "# four"):
            page.keyboard.press("Enter")
            page.keyboard.type(line)
        typed = page.locator("textarea#response").input_value()
        page.reload()  # the draft is put back into the box from the browser's storage
        page.wait_for_selector(".code-gutter")
        assert page.locator("textarea#response").input_value() == typed
        assert _gutter(page) == [str(n) for n in range(1, typed.count("\n") + 2)]


def test_without_scripts_the_code_box_is_a_plain_text_area(code_server: Server) -> None:
    with launched_chromium() as browser:
        page = browser.new_context(java_script_enabled=False).new_page()
        page.goto(code_server.url)
        form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="code"]'))
        form.locator('input[name="items"]').fill("attention")
        form.locator('input[name="seed"]').fill("4")
        form.locator('button[type="submit"]').click()
        page.wait_for_selector("textarea#response")
        assert page.locator(".code-gutter").count() == 0
        page.locator("textarea#response").fill(TYPED_RIGHT)
        _shot(page, "5-no-script")
        page.locator("button", has_text="Check").click()
        page.wait_for_selector(".verdict")
        assert "Correct" in page.locator(".verdict").first.inner_text()


def test_the_code_box_with_its_line_numbers_has_no_wcag_violation(code_server: Server) -> None:
    from tests.web.test_accessibility import LOOKS, violations  # skips where axe-core is missing

    with launched_chromium() as browser:
        for look in LOOKS:
            context = browser.new_context(
                viewport={"width": look.width, "height": look.height}, device_scale_factor=look.zoom
            )
            page = context.new_page()
            if look.forced_colors:
                page.emulate_media(forced_colors="active")
            page.goto(code_server.url)
            form = page.locator("form.start").filter(has=page.locator('input[name="bank"][value="code"]'))
            form.locator('input[name="items"]').fill("attention")
            form.locator('button[type="submit"]').click()
            page.wait_for_selector(".code-gutter")
            assert violations(page) == [], look.name
            context.close()
