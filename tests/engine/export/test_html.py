"""HTML worksheets: one self-contained file, MathML maths, print CSS with a page break per student."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pypdf import PdfReader

from attnquiz.engine.export.text import html

from .samples import sample_plan

_VOID = {"meta", "br", "mspace", "link", "img", "input", "hr"}


class _Checker(HTMLParser):
    """Collects tags and checks that every element is closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend(attrs)
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend(attrs)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack.pop() == tag, f"</{tag}> closes the wrong element"


def _check(document: str) -> _Checker:
    checker = _Checker()
    checker.feed(document)
    checker.close()
    assert checker.stack == []
    return checker


def test_worksheets_are_one_self_contained_file_with_mathml_and_no_script() -> None:
    plan = sample_plan(3)
    document = html.worksheets(plan, plan.sheets)
    checker = _check(document)
    assert "script" not in checker.tags
    assert "link" not in checker.tags
    assert "img" not in checker.tags
    assert not any(value and value.startswith(("http:", "https:", "//")) for _, value in checker.attributes)
    assert {"math", "mfrac", "msqrt", "mroot", "mtable", "msub", "msup"} <= set(checker.tags)
    assert document.count('<section class="sheet"') == 3
    assert "break-after: page" in document
    assert "@page { size: A4" in document
    for sheet in plan.sheets:
        assert f'data-code="{sheet.code}"' in document


def test_keys_full_and_brief() -> None:
    plan = sample_plan(2)
    full = html.key(plan, plan.sheets, "us-letter")
    _check(full)
    assert "@page { size: letter" in full
    assert "Wrong answers to recognise" in full
    brief = html.key(plan, plan.sheets, style="brief")
    _check(brief)
    assert "Wrong answers to recognise" not in brief
    for sheet in plan.sheets:
        for question in sheet.questions:
            assert question.answer.format() in brief


def test_punctuation_after_a_formula_stays_with_it() -> None:
    assert '<span class="nobr"><math alttext="x"><mi>x</mi></math>.</span>' in html.content("Take $x$.")


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.skipif(_browser() is None, reason="no Chromium on PATH (apt-get install chromium)")
def test_a_real_browser_prints_one_student_per_page_with_typeset_maths(tmp_path: Path) -> None:
    plan = sample_plan(3)
    page = tmp_path / "worksheets.html"
    page.write_text(html.worksheets(plan, plan.sheets), encoding="utf-8")
    printed = tmp_path / "printed.pdf"
    browser = _browser()
    assert browser is not None
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={printed}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    reader = PdfReader(printed)
    assert round(float(reader.pages[0].mediabox.height)) == 842  # A4, from the print CSS
    pages = [p.extract_text() for p in reader.pages]
    codes = [sheet.code for sheet in plan.sheets]
    starts = [i for i, text in enumerate(pages) if "Question 1 " in text or "Question 1\n" in text]
    assert len(starts) == 3
    for sheet, start in zip(plan.sheets, starts, strict=True):
        # Each student starts a page of their own, and no page shows two students.
        assert sheet.code in pages[start]
    assert all(sum(code in text for code in codes) <= 1 for text in pages)
    # The radical is drawn by the browser's MathML layout (msqrt), not written in the source.
    assert "√" in pages[0]
