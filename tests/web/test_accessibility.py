"""WCAG 2.1 A and AA over every page of `quiz serve` and the HTML worksheets and keys, under axe-core.

The engine is axe-core as the PyPI package ``axe-playwright-python`` ships it (``axe.min.js``,
axe-core `AXE_VERSION`), injected by Playwright into Debian's headless Chromium (Playwright's own
browser download is never used). Only the rules tagged `WCAG_TAGS` run, and every page must have 0
violations in each `LOOK`: a desktop window, a 320 px wide phone, 200 % zoom, and forced colours
(Windows high contrast). A second set of tests drives the pages with the keyboard alone.

Skipped cleanly where Playwright, the axe package or a Chromium cannot be found.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import Server, chromium_path, csrf_of, start_server
from tests.web.scan_review_fixture import scanned_class
from tests.web.test_serve_http import PRACTICE_TOPIC, SEED, answer, post, start

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
pytest.importorskip("axe_playwright_python", reason="axe-playwright-python is not installed")
CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (apt-get install chromium)")

AXE_VERSION = "4.12.1"
"""The axe-core that ``axe-playwright-python==0.1.8`` ships (pinned in the test extras)."""
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
"""WCAG 2.0 and 2.1, levels A and AA: the rules axe runs (and no best-practice or AAA rule)."""
CONCEPTS = Path(__file__).resolve().parents[1] / "data" / "concept" / "concepts.yaml"


@dataclass(frozen=True)
class Look:
    """How the page is shown: window size, zoom (device scale factor stands in for browser zoom)."""

    name: str
    width: int
    height: int
    zoom: float = 1.0
    forced_colors: bool = False


LOOKS = [
    Look("desktop", 1280, 900),
    Look("320px", 320, 640),
    # 200 % zoom of a 1280 px window lays the page out in 640 CSS pixels at twice the size.
    Look("zoom-200", 640, 450, zoom=2.0),
    Look("forced-colours", 1280, 900, forced_colors=True),
]


def _axe_source() -> str:
    return resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")


def violations(page: Any) -> list[str]:
    """axe-core over the page as it is now: one line per violation (rule, impact, where, why)."""
    page.evaluate(_axe_source())  # evaluated by the DevTools protocol: the page's CSP does not apply
    version = page.evaluate("axe.version")
    assert version == AXE_VERSION, f"axe-core {version}, expected {AXE_VERSION}"
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        WCAG_TAGS,
    )
    found = []
    for rule in result["violations"]:
        for node in rule["nodes"]:
            found.append(
                f"{rule['id']} ({rule['impact']}): {' '.join(node['target'])}: {node['failureSummary']}"
                f" -- {node['html'][:200]}"
            )
    return found


# -- the pages ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    """One server with week1, the concept bank and a broken bank; every page of it, by name."""
    folder = tmp_path_factory.mktemp("a11y")
    broken = folder / "broken.yaml"
    text = (Path(__file__).resolve().parents[2] / "questions" / "week1.yaml").read_text(encoding="utf-8")
    broken.write_text(text.replace("params: {dim: 2}", "params: {dim: many}", 1), encoding="utf-8")
    scanned = scanned_class(folder)  # a scan with every kind of item left for review
    server = start_server(
        "week1", str(CONCEPTS), str(broken), "--scan", str(scanned.answers), db=folder / "history.sqlite3"
    )
    try:
        pages = {"home": "/", "preview": "/preview", "preview-week1": "/preview/week1"}
        pages["preview-errors"] = "/preview/broken"
        pages["preview-figures"] = f"/preview/week1/it-referent-weight?seed={SEED}"
        pages["preview-plot"] = f"/preview/week1/unscaled-saturation?seed={SEED}"
        pages["not-found"] = "/no-such-page"

        practice = start(server, topic=PRACTICE_TOPIC, count="2", seed=str(SEED))
        pages["practice-question"] = practice
        where, _ = answer(server, practice, "1/0 + (")  # unreadable: the question again, with why
        pages["practice-invalid"] = where
        where, _ = answer(server, practice, "0")
        pages["practice-feedback"] = where
        post(server, practice, "hint")
        pages["practice-hint"] = practice
        post(server, practice, "skip")
        pages["practice-summary"] = f"{practice}/summary"

        figure = start(server, items="it-referent-weight", count="1", seed=str(SEED))
        pages["figure-question"] = figure
        where, _ = answer(server, figure, "0.5")
        pages["figure-feedback"] = where

        parts = start(server, items="additive-chain", count="1", seed=str(SEED))
        answer(server, parts, "1")
        pages["parts-question"] = parts

        home = server.request("GET", "/")
        form = {"csrf": csrf_of(home.body), "bank": "concepts", "mode": "practice"}
        form |= {"topic": "scaled-attention", "count": "1", "seed": str(SEED)}
        concept = server.request("POST", "/start", form=form).headers["location"]
        pages["concept-question"] = concept
        where, _ = answer(server, concept, "Large scores saturate the softmax.")
        pages["concept-rating"] = where

        # Two hours: the clock runs while the tests do, and must not run out under them.
        timed = start(server, topic="complexity", count="2", seed=str(SEED), mode="exam", time="120m")
        answer(server, timed, "12")
        pages["exam-timer"] = timed
        exam = start(server, topic="complexity", count="2", seed=str(SEED), mode="exam", time="20m")
        answer(server, exam, "12")
        post(server, exam, "finish")
        pages["exam-summary"] = f"{exam}/summary"

        pages["review"] = "/review"
        pages["stats"] = "/stats"
        pages["scan-review"] = "/scan"
        # One item settled: the notice and the table of what was settled shown too.
        scan_csrf = csrf_of(server.request("GET", "/scan").body)
        choice = next(i["n"] for i in scanned.items() if i["kind"] == "field" and i["read"])
        settled = server.request("POST", f"/scan/{choice}", form={"csrf": scan_csrf, "choice": "blank"})
        pages["scan-review-settled"] = settled.headers["location"].split("#")[0]
        yield server, pages
    finally:
        server.stop()


PAGES = [
    "home",
    "practice-question",
    "practice-invalid",
    "practice-hint",
    "practice-feedback",
    "practice-summary",
    "figure-question",
    "figure-feedback",
    "parts-question",
    "concept-question",
    "concept-rating",
    "exam-timer",
    "exam-summary",
    "review",
    "stats",
    "scan-review",
    "scan-review-settled",
    "preview",
    "preview-week1",
    "preview-figures",
    "preview-plot",
    "preview-errors",
    "not-found",
]


def _open(browser: Any, look: Look) -> tuple[Any, Any]:
    context = browser.new_context(
        viewport={"width": look.width, "height": look.height}, device_scale_factor=look.zoom
    )
    page = context.new_page()
    if look.forced_colors:
        page.emulate_media(forced_colors="active")
    return context, page


@pytest.mark.parametrize("look", LOOKS, ids=lambda look: look.name)
def test_every_page_of_quiz_serve_has_no_wcag_violation(
    browser: Any, site: tuple[Server, dict[str, str]], look: Look
) -> None:
    server, pages = site
    context, page = _open(browser, look)
    found: dict[str, list[str]] = {}
    try:
        page.goto(server.url)
        for name in PAGES:
            page.goto(server.base + pages[name])
            found[name] = violations(page)
            if name == "figure-feedback":
                # The solution's figure table, opened as a user opens it, is checked too.
                page.locator("details.solution details.figure-data summary").first.click()
                found[name + " (table shown)"] = violations(page)
    finally:
        context.close()
    bad = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    assert not bad, "\n".join(bad)


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The HTML worksheets and keys (grid and full) of one student, every item of week1."""
    out = tmp_path_factory.mktemp("sheets")
    made: dict[str, Path] = {}
    for key in ("grid", "full"):
        folder = out / key
        command = [sys.executable, "-m", "attnquiz", "export", "week1", "--students", "1", "--seed", "2026"]
        command += ["--all", "--format", "html", "--key", key, "-o", str(folder)]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr
        for path in sorted(folder.glob("*.html")):
            made[f"{key}/{path.name}"] = path
    assert made, "the export wrote no HTML"
    return made


@pytest.mark.parametrize("look", LOOKS, ids=lambda look: look.name)
def test_the_html_worksheets_and_keys_have_no_wcag_violation(
    browser: Any, sheets: dict[str, Path], look: Look
) -> None:
    context, page = _open(browser, look)
    found: dict[str, list[str]] = {}
    try:
        for name, path in sheets.items():
            page.goto(path.as_uri())
            found[name] = violations(page)
    finally:
        context.close()
    bad = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    assert not bad, "\n".join(bad)


def test_axe_finds_what_it_is_asked_to_find(browser: Any) -> None:
    """The harness can fail: a page with an unlabelled field and faint text has violations."""
    context, page = _open(browser, LOOKS[0])
    try:
        page.set_content(
            '<!DOCTYPE html><html lang="en"><head><title>t</title></head><body><main>'
            '<input type="text"><p style="color:#ccc;background:#fff">faint</p></main></body></html>'
        )
        rules = {line.split(" ", 1)[0] for line in violations(page)}
    finally:
        context.close()
    assert {"label", "color-contrast"} <= rules


# -- the keyboard ------------------------------------------------------------------------------------

CONTROLS = (
    "a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), select, textarea, summary,"
    " [tabindex]:not([tabindex='-1'])"
)
"""What a keyboard user must be able to reach: every link, button, field, disclosure and scroll box."""

KEYBOARD_PAGES = [
    "home",
    "practice-question",
    "practice-feedback",
    "figure-feedback",
    "parts-question",
    "concept-question",
    "concept-rating",
    "exam-timer",
    "exam-summary",
    "review",
    "stats",
    "scan-review",
    "preview-figures",
    "preview-errors",
    "not-found",
]

_FOCUS_STATE = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const style = getComputedStyle(e);
  const ring = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2)
    || (style.boxShadow && style.boxShadow !== "none");
  return {key: e.dataset.a11yKey || "", ring: ring};
}"""


@pytest.mark.parametrize("name", KEYBOARD_PAGES)
def test_the_keyboard_reaches_every_control_with_a_visible_focus(
    browser: Any, site: tuple[Server, dict[str, str]], name: str
) -> None:
    server, pages = site
    context, page = _open(browser, LOOKS[0])
    try:
        page.goto(server.url)
        page.goto(server.base + pages[name])
        # Number every visible control; then Tab through the page from its top and see each one.
        count = page.evaluate(
            """selector => {
              const found = [...document.querySelectorAll(selector)].filter(
                e => e.checkVisibility({visibilityProperty: true}));
              // Tab stops once in a group of radio buttons (the arrows move within it).
              const groups = new Map();
              let n = 0;
              for (const e of found) {
                const form = [...document.forms].indexOf(e.form);
                const group = e.type === "radio" ? form + "/" + e.name : null;
                if (group !== null && groups.has(group)) { e.dataset.a11yKey = groups.get(group); continue; }
                e.dataset.a11yKey = String(n);
                if (group !== null) groups.set(group, String(n));
                n += 1;
              }
              return n;
            }""",
            CONTROLS,
        )
        assert count > 0
        page.evaluate("document.activeElement && document.activeElement.blur()")
        reached: dict[str, bool] = {}
        for _ in range(2 * count + 5):
            page.keyboard.press("Tab")
            state = page.evaluate(_FOCUS_STATE)
            if state is None:
                continue
            if state["key"] in reached:
                break
            reached[state["key"]] = state["ring"]
        missing = [
            page.evaluate(f"document.querySelector('[data-a11y-key=\"{key}\"]').outerHTML.slice(0, 200)")
            for key in sorted(set(map(str, range(count))) - set(reached), key=int)
        ]
    finally:
        context.close()
    assert not missing, f"{name}: {len(missing)} of {count} controls never reached by Tab: {missing}"
    assert all(reached.values()), f"{name}: controls focused with no visible ring: {reached}"


def test_the_exam_timer_is_announced_politely_and_never_moves_the_focus(
    browser: Any, site: tuple[Server, dict[str, str]]
) -> None:
    server, pages = site
    context, page = _open(browser, LOOKS[0])
    try:
        page.clock.install()
        page.goto(server.url)
        page.goto(server.base + pages["exam-timer"])
        region = page.locator("#timer-announce")
        assert region.get_attribute("aria-live") == "polite"
        assert page.locator("#timer").get_attribute("aria-live") == "off"  # the ticking clock is silent
        assert region.inner_text() == ""  # nothing said on arrival
        field = page.locator("#response")
        field.focus()
        page.keyboard.type("12")
        remaining = float(page.locator("#timer").get_attribute("data-remaining") or "0")
        # Run the page's clock to just past the next five-minute mark below the time left.
        mark = int((remaining - 1) // 300) * 300
        page.clock.run_for(int((remaining - mark + 1) * 1000))
        assert region.inner_text() == f"{mark // 60} minutes left."
        assert page.evaluate("document.activeElement.id") == "response"
        assert field.input_value() == "12"  # typing was never interrupted
    finally:
        context.close()


def test_the_stats_charts_have_their_numbers_as_tables(site: tuple[Server, dict[str, str]]) -> None:
    """The day chart's numbers in a table: one row per day shown, the answers adding up to the banks'."""
    server, _ = site
    page = server.request("GET", "/stats?days=5").body
    day_table = page[
        page.index('<table class="day-table">') : page.index("</table>", page.index("day-table"))
    ]
    rows = re.findall(r'<tr><th scope="row">(\d{4}-\d\d-\d\d)</th><td class="num">(\d+)</td>', day_table)
    assert len(rows) == 5
    banks_table = page[page.index("<h2>Banks</h2>") : page.index("<h2>Per topic</h2>")]
    row = r'<tr><td[^>]*>[^<]+</td><td class="num"[^>]*>(\d+)</td>'  # each row's cells say their column
    answers = [int(n) for n in re.findall(row, banks_table)]
    assert sum(int(n) for _, n in rows) == sum(answers) > 0
