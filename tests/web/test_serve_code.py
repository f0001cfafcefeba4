"""A code question in `quiz serve`, over plain HTTP: the page holds a code box with the stub (it works
without JavaScript), the code typed there runs in the sandbox, and the verdict names the mistake."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

from tests.web.conftest import Server, csrf_of, start_server

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
