"""`quiz serve` sends again what it has already made, and only while it is still right (issue 28).

- the home page, made in a forked child, is sent again while the banks' files are unchanged, and
  made afresh after any change to one (an edit, a write that puts the time back, a removal);
- the stylesheet and script come from memory, with an ETag and 304 Not Modified, and a changed
  file is read again;
- a question's Markdown is made once per text, except a text with an image, whose file may change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html import unescape
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from attnquiz.web import render
from attnquiz.web.assets import Assets
from tests.web.conftest import Server

TITLE = 'title: "Week 1: attention'


def home_titles(server: Server) -> str:
    page = server.request("GET", "/")
    assert page.status == 200, page.body
    return unescape(page.body)


def test_the_home_page_follows_every_change_to_a_banks_file(server: Server, bank_copy: Path) -> None:
    text = bank_copy.read_text(encoding="utf-8")
    assert TITLE in text
    first = home_titles(server)
    assert "Week 1: attention" in first
    assert home_titles(server) == first  # unchanged files: the same page

    bank_copy.write_text(text.replace(TITLE, 'title: "Renamed bank', 1), encoding="utf-8")
    assert "Renamed bank" in home_titles(server)

    # The same size and the modification time put back: the change time still tells.
    same_size = text.replace(TITLE, 'title: "Week Z: attention', 1)
    assert len(same_size) == len(text)
    before = bank_copy.stat()
    bank_copy.write_text(same_size, encoding="utf-8")
    os.utime(bank_copy, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert bank_copy.stat().st_mtime_ns == before.st_mtime_ns
    assert "Week Z" in home_titles(server)

    bank_copy.unlink()
    gone = home_titles(server)
    assert "Week Z" not in gone
    assert "no bank file" in gone

    bank_copy.write_text(text, encoding="utf-8")
    assert home_titles(server) == first


REUSE_SCRIPT = r"""
import asyncio, json, os
from attnquiz.web.isolation import page_in_child
from starlette.requests import Request
from starlette.responses import Response

key = ["a"]

async def made_by(request):
    return Response(str(os.getpid()))  # rendered in a child: its own process id

endpoint = page_in_child(made_by, cpu_seconds=5, reuse=lambda request: key[0])
request = Request({"type": "http", "method": "GET", "path": "/", "query_string": b"", "headers": []})

async def main():
    bodies = []
    for asked in ("a", "a", "b", "b", "a"):
        key[0] = asked
        bodies.append((await endpoint(request)).body.decode())
    print(json.dumps(bodies))

asyncio.run(main())
"""


def test_a_page_is_made_once_per_key_and_again_for_a_new_one() -> None:
    # A fresh interpreter of one thread, as the server is (the module forks).
    run = subprocess.run(
        [sys.executable, "-c", REUSE_SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    a, a_again, b, b_again, a_last = json.loads(run.stdout)
    assert a == a_again == a_last  # one child made it; the others sent its page again
    assert b == b_again != a
    assert int(a) != os.getpid()


def test_static_files_carry_an_etag_and_answer_304(shared: Server) -> None:
    page = shared.request("GET", "/static/app.css")
    assert page.status == 200
    assert page.headers["content-type"] == "text/css; charset=utf-8"
    assert page.headers["cache-control"] == "no-cache"
    assert "content-security-policy" in page.headers  # behind the guard like every page
    etag = page.headers["etag"]
    assert page.body == (Path(render.__file__).parent / "static" / "app.css").read_text(encoding="utf-8")

    again = shared.request("GET", "/static/app.css", headers={"If-None-Match": etag})
    assert (again.status, again.body) == (304, "")
    for asked in (f'W/{etag}, "other"', "*"):
        assert shared.request("GET", "/static/app.css", headers={"If-None-Match": asked}).status == 304
    assert shared.request("GET", "/static/app.css", headers={"If-None-Match": '"old"'}).status == 200

    head = shared.request("HEAD", "/static/app.js")
    assert head.status == 200
    assert head.body == ""
    assert int(head.headers["content-length"]) == len(
        (Path(render.__file__).parent / "static" / "app.js").read_bytes()
    )
    assert shared.request("GET", "/static/app.js", cookie=False).status == 403


@pytest.mark.parametrize("path", ["/static/nope.css", "/static/", "/static/..%2Fapp.py", "/static/../app.py"])
def test_only_the_static_folders_own_files_are_sent(shared: Server, path: str) -> None:
    assert shared.request("GET", path).status == 404


def test_a_changed_static_file_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "app.css").write_text("body { color: red }", encoding="utf-8")
    (tmp_path / ".hidden").write_text("secret", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    assets = Assets(tmp_path)
    assert assets.names == {"app.css"}
    first = assets.asset("app.css")
    assert assets.asset("app.css") is first
    (tmp_path / "app.css").write_text("body { color: blue }", encoding="utf-8")
    second = assets.asset("app.css")
    assert second.body == b"body { color: blue }"
    assert second.etag != first.etag


SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">'
    '<rect width="4" height="4" fill="{}"/></svg>'
)


def test_a_text_with_an_image_shows_the_file_as_it_is_now(tmp_path: Path) -> None:
    question = cast(Any, SimpleNamespace(folder=str(tmp_path)))
    picture = tmp_path / "pic.svg"
    picture.write_text(SVG.format("red"), encoding="utf-8")
    text = "A picture:\n\n![a square](pic.svg)"
    red = render.markdown(text, question)
    picture.write_text(SVG.format("blue"), encoding="utf-8")
    blue = render.markdown(text, question)
    assert red != blue
    assert render.inline(text, question) != render.inline(text.replace("pic", "gone"), question)


def test_a_text_without_images_is_the_same_page_every_time() -> None:
    text = "The weight is $\\alpha = \\mathrm{softmax}(e)_1$, **bold**."
    assert render.markdown(text) == render.markdown(text)
    assert render.markdown(text) is render.markdown(text)  # made once
    assert "<math" in render.markdown(text)
    assert str(render.inline(text)) != str(render.markdown(text))  # block and inline kept apart


def test_a_bank_changed_within_one_clock_tick_is_told_by_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A coarse file-system clock can give two writes of the same size the same times: while the
    # file is recent, its bytes tell the versions apart; once it has settled, stat alone is enough.
    import time

    from attnquiz.web import app

    bank = tmp_path / "bank.yaml"
    bank.write_text("title: one\n", encoding="utf-8")
    seen = bank.stat()
    ref = app.BankRef("bank", str(bank))
    monkeypatch.setattr(Path, "stat", lambda self, **_: seen)  # every version: the same times and size
    first = app._file_identity(ref)
    bank.write_text("title: two\n", encoding="utf-8")
    assert app._file_identity(ref) != first
    later = seen.st_ctime_ns + int(app.RACY_SECONDS * 1e9) + 1
    monkeypatch.setattr(time, "time_ns", lambda: later)
    settled = app._file_identity(ref)
    bank.write_text("title: six\n", encoding="utf-8")
    assert app._file_identity(ref) == settled
