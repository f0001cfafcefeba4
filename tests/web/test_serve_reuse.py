"""`quiz serve` sends again what it has already made, and only while it is still right (issue 28).

- the home, stats and review pages, made in a forked child, are sent again while what they read
  is unchanged (the banks' files, the history) and their moment has not come, and made afresh
  after any change (an edit, a write that puts the time back, a removal, an answer);
- the stylesheet and script come from memory, with an ETag and 304 Not Modified, and a changed
  file is read again;
- a question's Markdown is made once per text, except a text with an image, whose file may change.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from html import unescape
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from attnquiz.web import render
from attnquiz.web.assets import Assets
from tests.engine.test_parallel import fresh_json
from tests.web.conftest import Server
from tests.web.test_serve_http import answer, planned_questions, start

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
    a, a_again, b, b_again, a_last = fresh_json(REUSE_SCRIPT)
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


# -- pages made from the history: stats and review ----------------------------------------------


def stats_text(server: Server) -> str:
    page = server.request("GET", "/stats")
    assert page.status == 200, page.body
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page.body)).split())


def test_stats_and_review_follow_every_answer_from_the_server_or_a_terminal(server: Server) -> None:
    first, second = planned_questions("complexity", 2)
    wrong = second.variant.mistakes[0].format(second.answer)
    session = start(server, topic="complexity", count="2", seed="7")
    answer(server, session, first.answer.format())
    once = stats_text(server)
    assert "week1 · complexity: 100% of 1" in once
    assert stats_text(server) == once  # nothing changed: the same page
    review_once = server.request("GET", "/review").body
    assert server.request("GET", "/review").body == review_once

    answer(server, session, wrong)  # a second answer of this server's session
    assert "week1 · complexity: 50% of 2" in stats_text(server)
    assert server.request("GET", "/review").body != review_once

    # Another process writes the same history: `quiz run` in a terminal.
    environment = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    command = ["run", "week1", "--db", str(server.db), "--topic", "complexity", "--count", "1", "--seed", "7"]
    run = subprocess.run(
        [sys.executable, "-m", "attnquiz", *command],
        input=f"{first.answer.format()}\nq\n",
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "week1 · complexity: 67% of 3" in stats_text(server)


def test_a_history_replaced_by_another_file_is_read_again(server: Server) -> None:
    (question,) = planned_questions("complexity", 1)
    answer(server, start(server, topic="complexity", count="1", seed="7"), question.answer.format())
    assert "100% of 1" in stats_text(server)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{server.db}{suffix}").unlink(missing_ok=True)
    assert "100% of 1" not in stats_text(server)


@pytest.mark.parametrize(
    ("due", "expected"),
    [
        ("2026-12-05T14:00:00", "2026-12-05T14:00:00"),  # a learning card: at its moment
        ("2026-12-07T09:30:00", "2026-12-06T00:00:00"),  # the day ends first
        # A card in review falls due at the start of its day, a learning card at its moment: not
        # knowing which, the earlier (a page made again early is only a page made again).
        ("2026-12-05T18:00:00", "2026-12-05T18:00:00"),
        ("2026-12-06T18:00:00", "2026-12-06T00:00:00"),
        ("2026-12-05T11:00:00", "2026-12-06T00:00:00"),  # due already: the day's end
    ],
)
def test_pages_from_the_history_hold_until_a_card_may_fall_due_or_the_day_ends(
    due: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from attnquiz.engine.practice import review
    from attnquiz.engine.practice.history_records import CardRecord

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        now = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
        moment = datetime.fromisoformat(due).replace(tzinfo=UTC)
        record = CardRecord("week1", "item", "topic", "{}", moment, now)
        assert review.next_change([record], now) == datetime.fromisoformat(expected).replace(tzinfo=UTC)
        assert review.next_change([], now) == datetime(2026, 12, 6, tzinfo=UTC)
    finally:
        monkeypatch.undo()
        time.tzset()


DECLARED_SCRIPT = r"""
import asyncio, json, os, sys, time
from attnquiz.web import isolation
from starlette.requests import Request
from starlette.responses import Response

isolation.RACY_SECONDS = __RACY__
folder = __FOLDER__
watched = os.path.join(folder, "plugin.py")
until = [None]

async def made_by(request):
    with open(watched) as handle:
        text = handle.read()
    isolation.depends_on([watched], until=until[0])
    return Response(f"{os.getpid()} {text}")

endpoint = isolation.page_in_child(made_by, cpu_seconds=5, reuse=lambda request: "key")
request = Request({"type": "http", "method": "GET", "path": "/", "query_string": b"", "headers": []})

async def main():
    seen = []
    async def ask():
        seen.append((await endpoint(request)).body.decode())
    with open(watched, "w") as handle:
        handle.write("one")
    await ask(); await ask()
    with open(watched, "w") as handle:
        handle.write("two")  # the same size: its times tell
    await ask(); await ask()
    os.remove(watched)
    with open(watched, "w") as handle:
        handle.write("six")
    await ask()
    until[0] = time.time() - 1  # a page whose moment has passed is never sent again
    os.utime(watched)
    await ask(); await ask()
    print(json.dumps(seen))

asyncio.run(main())
"""


def declared(tmp_path: Path, racy_seconds: float) -> list[list[str]]:
    """The pages of `DECLARED_SCRIPT` (each: the process that made it, the file's text)."""
    script = DECLARED_SCRIPT.replace("__FOLDER__", repr(str(tmp_path)))
    script = script.replace("__RACY__", repr(racy_seconds))
    return [page.split() for page in fresh_json(script)]


def test_a_page_is_made_again_when_a_file_it_read_changes_or_its_moment_passes(tmp_path: Path) -> None:
    # The file is new: the rule for files that have not settled is the next test's.
    one, one_again, two, two_again, six, late, late_again = declared(tmp_path, 0.0)
    assert one == one_again
    assert one[1] == "one"
    assert two == two_again != one
    assert two[1] == "two"
    assert six[1] == "six"
    assert six[0] != two[0]
    assert late[0] != late_again[0]  # made by a new child each time


def test_a_page_that_read_a_file_changed_just_before_is_not_kept(tmp_path: Path) -> None:
    pids = [page[0] for page in declared(tmp_path, 3600.0)]
    assert len(set(pids)) == len(pids)  # every page made afresh: its file had not settled


def test_a_handler_run_in_the_server_itself_keeps_nothing_of_what_it_declares(tmp_path: Path) -> None:
    # The home page of a refused start form is made in the server: what it says it read must not
    # pile up there, growing with every refused form.
    import tracemalloc

    from attnquiz.web import isolation

    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for number in range(20_000):
            isolation.depends_on([f"{tmp_path}/bank{number}.yaml"], until=float(number))
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 100_000


def test_a_history_that_is_not_a_file_is_never_opened_by_the_server(tmp_path: Path) -> None:
    # A FIFO where the history should be: opening it would wait for a writer, and the server's loop
    # with it. The server's own watcher does not open it; the page is made (or refused) in a child.
    from attnquiz.web.history import HistoryVersion

    fifo = tmp_path / "history.sqlite3"
    os.mkfifo(fifo)
    watcher = HistoryVersion(fifo)
    assert watcher.now() is None
    (tmp_path / "folder.sqlite3").mkdir()
    assert HistoryVersion(tmp_path / "folder.sqlite3").now() is None
    assert HistoryVersion(tmp_path / "absent.sqlite3").now() == ("no history",)
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"not a database at all" * 100)
    assert HistoryVersion(garbage).now() is None
    assert HistoryVersion(None).now() is None
