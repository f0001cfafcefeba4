"""Exams that survive their front end: quiz serve keeps every exam it runs beside the history, so a
server killed loses nothing answered; its home page offers the exams kept on disk (left in the browser
or in a terminal) and takes them up again; one exam runs in one place at a time."""

from __future__ import annotations

import json
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.cli.test_run_pty import PRACTICE, finish, spawn
from tests.test_hostile_banks import plugin_bank
from tests.web.conftest import Server, csrf_of, start_server
from tests.web.test_serve_http import answer, planned_questions, start, text_of

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pseudo-terminals")

SEED = 7
VARIANT = re.compile(r"Question (\d+) of (\d+).*?variant ([A-Z0-9-]+)", re.S)
REMAINING = re.compile(r'data-remaining="([0-9.]+)"')
KEPT = re.compile(r'<input type="hidden" name="exam" value="([0-9a-f]+)">')
DEMO = PRACTICE / "demo.yaml"


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    """The servers a test starts, stopped at its end however it ends."""
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


def shown(server: Server, session: str) -> tuple[int, str, float | None, str]:
    """The question a session's page shows: its position, variant, time left and page."""
    page = server.request("GET", session).body
    found = VARIANT.search(page)
    assert found, page[:2000]
    remaining = REMAINING.search(page)
    return int(found.group(1)), found.group(3), float(remaining.group(1)) if remaining else None, page


def go(server: Server, session: str, position: int) -> str:
    page = server.request("GET", session).body
    reply = server.request("POST", f"{session}/go", form={"csrf": csrf_of(page), "go": str(position)})
    assert reply.status == 303
    return server.request("GET", session).body


def kept_on_home(server: Server) -> tuple[list[str], str]:
    """The kept exams the home page offers to resume (their ids), and the page's text."""
    home = server.request("GET", "/")
    assert home.status == 200, home.body
    return KEPT.findall(home.body), home.body


def resume(server: Server, exam: str) -> tuple[int, str, str]:
    """Press an offered exam's Resume button: the reply's status, where it leads and the page there."""
    home = server.request("GET", "/")
    reply = server.request("POST", "/resume", form={"csrf": csrf_of(home.body), "exam": exam})
    if reply.status == 303:
        return reply.status, reply.headers["location"], server.request("GET", reply.headers["location"]).body
    return reply.status, "", reply.body


def state_files(db: Path) -> list[Path]:
    return sorted((db.parent / "history-exams").glob("*.json"))


def test_an_exam_outlives_a_killed_server_and_is_resumed_with_its_answers_and_time(
    tmp_path: Path, servers: list[Server]
) -> None:
    db = tmp_path / "history.sqlite3"
    first, second, _third = planned_questions("complexity", 3, seed=SEED)
    servers.append(start_server("week1", db=db))
    server = servers[0]
    session = start(server, topic="complexity", count="3", seed=str(SEED), mode="exam", time="20m")
    codes = {}
    for position, question in ((1, first), (2, second)):
        at, code, _, _ = shown(server, session)
        assert at == position
        codes[position] = code
        assert answer(server, session, question.answer.format())[0] == session
    at, codes[3], before, _ = shown(server, session)
    assert at == 3
    assert before is not None
    (path,) = state_files(db)
    assert json.loads(path.read_text(encoding="utf-8"))["index"] == 2
    # A home page of the server running it offers it as its own session, not as a kept one.
    assert kept_on_home(server)[0] == []
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=30)

    servers.append(start_server("week1", db=db))
    again = servers[1]
    (kept,), home = kept_on_home(again)
    said = text_of(home)
    assert "Exams left before" in said
    assert re.search(r"week1 · 2 of 3 answered · \d+:\d\d left", said), said
    status, where, page = resume(again, kept)
    assert status == 303, page
    at, code, after, page = shown(again, where)
    assert (at, code) == (3, codes[3])  # where it was left
    assert after is not None
    assert after <= before
    # The saved answers are in their boxes when each question is shown again.
    for position, question in ((1, first), (2, second)):
        page = go(again, where, position)
        found = VARIANT.search(page)
        assert found
        assert (int(found.group(1)), found.group(3)) == (position, codes[position])
        assert f'value="{question.answer.format()}"' in page
    # Resumed once, it is no longer offered as kept (it runs here); the home page carries it on.
    assert kept_on_home(again)[0] == []
    assert "Resume the exam" in kept_on_home(again)[1]
    # Handed in here, its state goes: nothing is offered after a restart.
    page = again.request("GET", where).body
    reply = again.request("POST", f"{where}/finish", form={"csrf": csrf_of(page), "confirm": "yes"})
    assert reply.headers["location"] == f"{where}/summary"
    assert "2 / 3" in text_of(again.request("GET", f"{where}/summary").body)
    assert state_files(db) == []
    assert not list((db.parent / "history-exams").glob("*.lock"))
    again.stop()
    servers.append(start_server("week1", db=db))
    assert kept_on_home(servers[2])[0] == []


def terminal_exam(home: Path) -> tuple[pexpect.spawn, str]:
    """A timed exam of the demo bank in a terminal, its first question answered; the running child
    and the variant of its second question (where it is)."""
    child = spawn(home, "run", "demo", "--seed", "3", "--exam", "--time", "20m")
    child.expect(r"\[1/4 · \d+:\d\d left\] › ")
    child.sendline("0.5")
    child.expect("Saved your answer to question 1")
    child.expect(r"Question 2 of 4 · variant (\S+)")
    code = str(child.match.group(1))
    child.expect(r"\[2/4 · \d+:\d\d left\] › ")
    return child, code


def test_an_exam_left_in_a_terminal_is_resumed_in_the_browser_and_runs_in_one_place(
    tmp_path: Path, servers: list[Server]
) -> None:
    db = tmp_path / "history.sqlite3"
    child, code = terminal_exam(tmp_path)
    servers.append(start_server(str(DEMO), db=db))
    server = servers[0]
    (kept,), home = kept_on_home(server)
    assert re.search(r"demo · 1 of 4 answered · \d+:\d\d left", text_of(home))
    # Still running in the terminal: the browser refuses to run it a second time, and says why.
    status, _, page = resume(server, kept)
    assert status == 409
    assert "being taken elsewhere right now" in text_of(page)
    assert state_files(db)  # refused, not set aside
    child.send("0.25")  # typed, not entered, when the terminal is closed
    child.expect("0.25")
    child.kill(signal.SIGTERM)  # a closed terminal: left unsubmitted, to be resumed
    finish(child)
    assert child.exitstatus == 128 + signal.SIGTERM

    status, where, page = resume(server, kept)
    assert status == 303, page
    at, shown_code, left, page = shown(server, where)
    assert (at, shown_code) == (2, code)
    assert re.search(r'id="response"[^>]*value="0.25"|value="0.25"[^>]*id="response"', page)  # the line typed
    assert left is not None
    assert 0 < left <= 20 * 60
    assert 'value="0.5"' in go(server, where, 1)
    # Now the browser runs it: the terminal's --resume is refused while it does.
    other = spawn(tmp_path, "run", "--resume")
    text = finish(other)
    assert "being taken elsewhere right now" in " ".join(text.split())
    assert other.exitstatus != 0
    assert "Traceback" not in text
    # Stopping the server lets it go: the terminal takes it up again, where the browser left it.
    server.stop()
    back = spawn(tmp_path, "run", "--resume")
    back.expect(r"demo, 1 of 4\s+answered")
    back.expect(r"Question 1 of 4")  # the browser was last at question 1
    back.sendline("submit")
    back.expect(r"Submit with 3 unanswered\? \[y/N\] › ")
    back.sendline("y")
    back.expect("Summary")
    finish(back)
    assert state_files(tmp_path / "history.sqlite3") == []


def test_saved_exams_that_cannot_be_resumed_are_said_in_one_line(
    tmp_path: Path, servers: list[Server]
) -> None:
    db = tmp_path / "history.sqlite3"
    child, _ = terminal_exam(tmp_path)
    child.kill(signal.SIGKILL)
    finish(child)
    folder = db.parent / "history-exams"
    (good,) = state_files(db)
    data = json.loads(good.read_text(encoding="utf-8"))
    (folder / "0123456789abcdef.json").write_bytes(b"[" * 100_000)
    (folder / "00000000deadbeef.json").write_text("{}", encoding="utf-8")
    changed = {**data, "id": "feedfacefeedface"}
    changed["slots"] = [{**s, "item": "no-such-item"} for s in data["slots"]]
    (folder / "feedfacefeedface.json").write_text(json.dumps(changed), encoding="utf-8")
    elsewhere = {**data, "id": "abcdefabcdefabcd", "bank": "week1", "bank_ref": "week1", "bank_path": ""}
    (folder / "abcdefabcdefabcd.json").write_text(json.dumps(elsewhere), encoding="utf-8")

    servers.append(start_server(str(DEMO), db=db))
    server = servers[0]
    offered, home = kept_on_home(server)
    said = text_of(home)
    assert said.count("is damaged") == 2  # the two damaged files, one line each
    assert "not JSON" in said or "not an exam state" in said
    assert "This exam cannot be resumed here: its bank week1 is not one this server was started with" in said
    assert "abcdefabcdefabcd" not in offered  # the bank not offered: no button
    assert set(offered) == {good.stem, "feedfacefeedface"}
    # An exam whose bank changed is refused in one line, and set aside (kept, out of the list).
    status, _, page = resume(server, "feedfacefeedface")
    assert status == 409
    assert "the bank changed since it began" in text_of(page)
    assert (folder / "feedfacefeedface.unresumable").exists()
    assert "feedfacefeedface" not in kept_on_home(server)[0]
    # Ids that are not kept, or are not ids at all, and the bank not offered: a line, never a 500.
    for exam in ("abcdefabcdefabcd", "0123456789abcdef", "../../etc/passwd", "", "x" * 10_000):
        status, _, page = resume(server, exam)
        assert status in (400, 404), (exam[:20], status)
        assert "Traceback" not in page
    # An exam left with no time left: resuming it hands it in as time-up and shows its results.
    good.write_text(json.dumps({**data, "remaining": 0}), encoding="utf-8")
    status, where, _ = resume(server, good.stem)
    assert status == 303
    assert "Time is up" in text_of(server.request("GET", f"{where}/summary").body)
    assert not good.exists()
    # A state file changed under the server to something odd is read again on the next page.
    odd = folder / "1111222233334444.json"
    odd.write_text(json.dumps({**data, "id": odd.stem, "remaining": "soon"}), encoding="utf-8")
    offered, home = kept_on_home(server)
    assert offered == []
    assert "its remaining is not a time" in text_of(home)
    assert server.request("POST", "/resume", form={"exam": odd.stem}).status == 403  # the token is asked
    # A folder others may write to is not read at all (its files could be anyone's): said, once.
    folder.chmod(0o777)
    offered, home = kept_on_home(server)
    assert offered == []
    assert "The saved exams are not resumed:" in text_of(home)
    folder.chmod(0o700)


def test_a_kept_exam_whose_bank_code_now_loops_is_stopped_and_kept(
    tmp_path: Path, servers: list[Server]
) -> None:
    db = tmp_path / "history.sqlite3"
    folder = tmp_path / "bank"
    # Its generator loops while a file named "loop" is beside it: fine when the exam begins, not later.
    bank = plugin_bank(folder, in_generation="while pathlib.Path(__file__).with_name('loop').exists(): pass")
    servers.append(start_server(str(bank), "--time-limit", "1", db=db))
    home = servers[0].request("GET", "/")
    form = {"csrf": csrf_of(home.body), "bank": "mine", "mode": "exam", "count": "1", "seed": "3"}
    started = servers[0].request("POST", "/start", form=form)
    assert started.status == 303, started.body[:500]
    session = started.headers["location"]
    assert answer(servers[0], session, "16")[0] == session
    servers[0].process.send_signal(signal.SIGKILL)
    servers[0].process.wait(timeout=30)
    (folder / "loop").write_text("", encoding="utf-8")

    servers.append(start_server(str(bank), "--time-limit", "1", db=db))
    (kept,), _ = kept_on_home(servers[1])
    status, _, page = resume(servers[1], kept)
    assert status == 400
    assert "bank mine: rebuilding the exam was stopped" in text_of(page)
    assert [p.stem for p in state_files(db)] == [kept]  # kept, to try again once the bank is mended
    (folder / "loop").unlink()
    status, where, page = resume(servers[1], kept)
    assert status == 303, page[:500]
    # Its one question answered, it opens on the answers to look over before handing it in.
    assert servers[1].request("GET", where).headers["location"] == f"{where}/submit"
    assert re.search(r"\b16\b", text_of(servers[1].request("GET", f"{where}/submit").body))
