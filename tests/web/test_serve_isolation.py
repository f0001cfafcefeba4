"""`quiz serve` never waits on one request: slow grading, looping plugins, half-open connections.

Times are measured and printed; the only assertions on them are generous bounds (a stalled server
waits minutes, or for ever), never a speed.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import selectors
import socket
import stat
import statistics
import subprocess
import sys
import threading
import time
from html import unescape
from pathlib import Path
from urllib.parse import urlencode

import pytest

from attnquiz.web import connections
from tests.test_hostile_banks import plugin_bank
from tests.web.conftest import Server, csrf_of, start_server

SEED = 1
# A formula answer whose exact value has about 10**7 digits and then some: without a cost model,
# computing it holds the interpreter for minutes (and a thread would not help: it is one C call).
WORST_ANSWER = "((((((((10)^8)^8)^8)^8)^8)^8)^8)^8*d+12d^2+13d"
PROMPT = 10.0
"""A generous bound on answering a cheap page while another request computes (seconds)."""


def start_item(server: Server, item: str) -> str:
    home = server.request("GET", "/")
    assert home.status == 200, home.body
    form = {"csrf": csrf_of(home.body), "bank": "week1", "mode": "practice", "items": item, "count": "1"}
    form["seed"] = str(SEED)
    reply = server.request("POST", "/start", form=form)
    assert reply.status == 303, reply.body
    return reply.headers["location"]


def post_answer(server: Server, session: str, response: str, into: list[tuple[int, float]]) -> None:
    page = server.request("GET", session)
    position = re.search(r'name="position" value="(\d+)"', page.body)
    assert position, page.body[:400]
    body = urlencode({"csrf": csrf_of(page.body), "position": position.group(1), "response": response})
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    headers = {
        "Host": f"127.0.0.1:{server.port}",
        "Cookie": server.cookie,
        "Origin": server.base,
        "Content-Type": "application/x-www-form-urlencoded",
    }
    began = time.monotonic()
    connection.request("POST", f"{session}/answer", body=body, headers=headers)
    reply = connection.getresponse()
    reply.read()
    into.append((reply.status, time.monotonic() - began))
    connection.close()


def test_a_second_client_is_answered_while_another_posts_the_worst_answer(tmp_path: Path) -> None:
    server = start_server("week1", db=tmp_path / "history.sqlite3")
    try:
        session = start_item(server, "block-params-formula")
        first: list[tuple[int, float]] = []
        poster = threading.Thread(target=post_answer, args=(server, session, WORST_ANSWER, first))
        poster.start()
        time.sleep(0.5)  # the answer is being graded now (if it is still going)
        waits = []
        for path in ("/static/app.css", "/stats", "/", "/preview"):
            began = time.monotonic()
            reply = server.request("GET", path)
            waits.append(time.monotonic() - began)
            assert reply.status == 200, (path, reply.body[:300])
        still_grading = poster.is_alive()
        poster.join(timeout=300)
        assert not poster.is_alive()
        print(
            f"second client: {', '.join(f'{w * 1000:.0f} ms' for w in waits)}; first: {first}; "
            f"first still grading while they were answered: {still_grading}"
        )
        assert max(waits) < PROMPT
        assert [status for status, _ in first] == [303]
        page = unescape(server.request("GET", session).body)
        assert "cost nothing" in page, page[:2000]  # unreadable: it is not counted
    finally:
        server.stop()
    assert "Traceback" not in server.stderr


def test_a_plugin_that_loops_at_import_stops_the_preview_once(tmp_path: Path) -> None:
    folder = tmp_path / "bank"
    bank = plugin_bank(
        folder,
        at_import="with open(pathlib.Path(__file__).with_name('imports'), 'a') as f: f.write('x')\n"
        "while True: pass",
    )
    server = start_server(str(bank), "--time-limit", "1", db=tmp_path / "history.sqlite3")
    try:
        home = server.request("GET", "/")
        assert home.status == 200
        assert "A bank with a plugin" in home.body  # listed, never imported
        assert not (folder / "imports").exists()
        began = time.monotonic()
        first = server.request("GET", "/preview/mine")
        took = time.monotonic() - began
        assert first.status == 503, first.body[:500]
        # Stopped by its CPU seconds, or on a machine too loaded to give it those, by the wall clock.
        assert re.search(
            r"This page was stopped: it took (more than 1 s of computing|longer than 16 s)",
            unescape(first.body),
        )
        assert (folder / "imports").read_text() == "x"
        again = server.request("GET", "/preview/mine")  # remembered: the plugin is not run again
        assert again.status == 503
        assert (folder / "imports").read_text() == "x"
        assert server.request("GET", "/static/app.css").status == 200
        form = {"csrf": csrf_of(home.body), "bank": "mine", "mode": "practice", "count": "1"}
        started = server.request("POST", "/start", form=form)
        assert started.status == 400
        assert "bank mine: preparing its questions was stopped" in unescape(started.body)
        bank.write_text(bank.read_text() + "\n", encoding="utf-8")  # an edit: the preview tries again
        assert server.request("GET", "/preview/mine").status == 503
        assert (folder / "imports").read_text() == "xxx"
        print(f"the stopped preview answered in {took:.1f} s")
    finally:
        server.stop()
    assert "Traceback" not in server.stderr


def test_a_plugin_generator_that_loops_leaves_its_question_out(tmp_path: Path) -> None:
    bank = plugin_bank(tmp_path / "bank", in_generation="while t > 0: pass")
    server = start_server(str(bank), "--time-limit", "1", db=tmp_path / "history.sqlite3")
    try:
        home = server.request("GET", "/")
        form = {"csrf": csrf_of(home.body), "bank": "mine", "mode": "practice", "count": "1", "seed": "3"}
        started = server.request("POST", "/start", form=form)
        assert started.status == 303, started.body[:500]
        page = server.request("GET", started.headers["location"])
        assert page.status in {200, 303}
        if page.status == 303:
            page = server.request("GET", page.headers["location"])
        shown = unescape(page.body)
        assert "question 1 is left out: building its variant was stopped" in shown, shown[:3000]
        assert server.request("GET", "/static/app.css").status == 200
    finally:
        server.stop()
    assert "Traceback" not in server.stderr


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed the connection (an end of file, or a reset: it had unread bytes)."""
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def fds_of(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts descriptors in /proc")
def test_half_open_connections_are_limited_and_closed(tmp_path: Path) -> None:
    server = start_server("week1", db=tmp_path / "history.sqlite3")
    idle: list[socket.socket] = []
    try:
        before = fds_of(server.process.pid)
        for _ in range(connections.ANONYMOUS_CONNECTIONS * 3):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1")  # a header never finished
            idle.append(sock)
        time.sleep(1.0)
        held = fds_of(server.process.pid) - before
        assert held <= connections.ANONYMOUS_CONNECTIONS + 5, held
        began = time.monotonic()
        for sock in idle:  # each is closed by the server: at once beyond the limit, else at the deadline
            assert closed_by_server(sock)
        took = time.monotonic() - began
        print(f"descriptors held by {len(idle)} half-open connections: {held}; all closed after {took:.1f} s")
        assert took < connections.REQUEST_SECONDS * 6
        assert server.request("GET", "/").status == 200
    finally:
        for sock in idle:
            sock.close()
        server.stop()


def test_a_kept_alive_round_trip_is_measured(tmp_path: Path) -> None:
    server = start_server("week1", db=tmp_path / "history.sqlite3")
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        headers = {"Host": f"127.0.0.1:{server.port}", "Cookie": server.cookie}
        times = []
        for _ in range(40):
            began = time.perf_counter()
            connection.request("GET", "/static/app.css", headers=headers)
            reply = connection.getresponse()
            reply.read()
            times.append(time.perf_counter() - began)
            assert reply.status == 200
            assert not reply.will_close
        connection.close()
        median = statistics.median(times[5:])
        print(f"kept-alive round trip: median {median * 1000:.2f} ms over {len(times) - 5} requests")
        assert median < 1.0  # without TCP_NODELAY it is ~40 ms; a stall is seconds
    finally:
        server.stop()


def test_the_listening_socket_is_tcp_so_asyncio_sets_nodelay() -> None:
    from attnquiz.serve import listen

    listener = listen("127.0.0.1", 0)
    try:
        assert listener.proto == socket.IPPROTO_TCP
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        with client, accepted:
            assert accepted.proto == socket.IPPROTO_TCP  # what asyncio checks before TCP_NODELAY
    finally:
        listener.close()


def test_open_never_puts_the_token_on_a_command_line(tmp_path: Path) -> None:
    record = tmp_path / "browser-args"
    browser = tmp_path / "browser"
    browser.write_text(
        f"#!{sys.executable}\nimport json, pathlib, sys\n"
        f"pathlib.Path({str(record)!r}).write_text(json.dumps(sys.argv))\n",
        encoding="utf-8",
    )
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": str(browser), "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "attnquiz", "serve", "week1", "--open", "--db", str(tmp_path / "h.sqlite3")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        link = ""
        for _ in range(5):
            found = re.search(r"http://\S+token=(\S+)", process.stdout.readline())
            if found:
                link, token = found.group(0), found.group(1)
                break
        assert link
        for _ in range(2400):
            if record.exists() and record.read_text():
                break
            time.sleep(0.05)
        argv = json.loads(record.read_text())
        assert token not in " ".join(argv)
        page = Path(argv[-1].removeprefix("file://"))
        assert page.is_file()
        assert stat.S_IMODE(page.stat().st_mode) == 0o600
        assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        assert token in page.read_text(encoding="utf-8")
    finally:
        process.send_signal(2)
        process.communicate(timeout=30)
    assert not page.exists()  # removed when the server stops


@pytest.mark.parametrize(
    ("path", "fields", "said"),
    [
        ("/start", {"bank": "week1", "count": "²"}, "count must be a whole number"),
        ("/start", {"bank": "week1", "count": "١"}, "count must be a whole number"),
        ("/start", {"bank": "week1", "seed": "-1"}, "seed must be a whole number"),
        ("/start", {"bank": "week1", "count": "9" * 40}, "count must be a whole number"),
        ("/start", {"bank": "week1", "time": "1e999s", "mode": "exam"}, ""),
        ("/review/start", {"limit": "0"}, "limit must be a whole number"),
        ("/review/start", {"limit": "²"}, "limit must be a whole number"),
        ("/review/start", {"new": "-5"}, "new must be a whole number"),
    ],
)
def test_every_number_field_is_a_clear_400(
    shared: Server, path: str, fields: dict[str, str], said: str
) -> None:
    home = shared.request("GET", "/")
    reply = shared.request("POST", path, form={"csrf": csrf_of(home.body), **fields})
    assert reply.status == 400, reply.body[:500]
    assert said in unescape(reply.body)


@pytest.mark.parametrize(
    "query", ["?days=%C2%B2", "?days=0", "?days=1e9", "?seed=%C2%B2", "?seed=-1", "?seed=%ff"]
)
def test_a_bad_number_in_a_query_is_ignored(shared: Server, query: str) -> None:
    path = "/preview/week1" if "seed" in query else "/stats"
    assert shared.request("GET", path + query).status == 200


class HalfOpenFlood:
    """``count`` connections that send half a request and never finish it, each re-opened as soon as
    the server closes it: what any local user can do without the token."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.opened = 0
        self.closed_by_server = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, selector: selectors.BaseSelector) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1")  # a header never finished
        except OSError:
            return  # refused or reset at once: tried again on the next round
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        self.opened += 1

    def _run(self) -> None:
        with selectors.DefaultSelector() as selector:
            while not self.stopping.is_set():
                for _ in range(self.count - len(selector.get_map())):
                    self._open(selector)
                for key, _ in selector.select(timeout=0.05):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    with contextlib.suppress(OSError):
                        sock.recv(100)
                    selector.unregister(sock)
                    sock.close()
                    self.closed_by_server += 1
            for key in list(selector.get_map().values()):
                assert isinstance(key.fileobj, socket.socket)
                key.fileobj.close()

    def __enter__(self) -> HalfOpenFlood:
        self.thread.start()
        while self.opened < self.count and self.thread.is_alive():
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=60)


@pytest.mark.parametrize("hostile", [70, 300])
def test_the_token_holder_is_served_through_a_flood_of_half_open_connections(
    tmp_path: Path, hostile: int
) -> None:
    """Held connections without the token cannot take the user's: every page the user asks for,
    each on a new connection as a browser opens them, and a burst of them at once, is answered."""
    server = start_server("week1", db=tmp_path / "history.sqlite3")
    pages = ["/", "/stats", "/static/app.css", "/review"]
    statuses: list[int] = []
    try:
        with HalfOpenFlood(server.port, hostile) as flood:
            for n in range(40):
                statuses.append(server.request("GET", pages[n % len(pages)]).status)
            burst: list[int] = []
            threads = [
                threading.Thread(target=lambda: burst.append(server.request("GET", "/static/app.css").status))
                for _ in range(100)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            statuses += burst
        print(f"{hostile} held: {flood.opened} opened, {flood.closed_by_server} closed by the server")
        assert flood.opened >= hostile
        if hostile > connections.ANONYMOUS_CONNECTIONS:
            assert flood.closed_by_server > 0  # the oldest anonymous ones made room
        assert statuses == [200] * 140, statuses
    finally:
        server.stop()
    assert "Traceback" not in server.stderr
