"""A real `quiz serve` for the web tests: started as a user starts it, in its own process, on a free port."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEEK1 = ROOT / "questions" / "week1.yaml"
_URL = re.compile(r"http://[^/ ]+:(\d+)/\?token=([A-Za-z0-9_-]+)")


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str


@dataclass
class Server:
    """A running `quiz serve`: its address, token, history file, and a raw HTTP client to it."""

    process: subprocess.Popen[str]
    port: int
    token: str
    db: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"

    @property
    def cookie(self) -> str:
        return f"quiz_token_{self.port}={self.token}"

    def request(
        self,
        method: str,
        path: str,
        *,
        form: dict[str, str] | list[tuple[str, str]] | None = None,
        headers: dict[str, str] | None = None,
        cookie: bool = True,
    ) -> Reply:
        """One request as a browser on the server's own page sends it, unless ``headers`` say otherwise."""
        sent = {"Host": f"127.0.0.1:{self.port}"}
        if cookie:
            sent["Cookie"] = self.cookie
        body = None
        if form is not None:
            body = urlencode(form)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
            sent["Origin"] = self.base
        sent.update(headers or {})
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
        finally:
            connection.close()

    stderr: str = ""

    def stop(self) -> None:
        """Stop the server as Ctrl-C does, keeping what it wrote on stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            _, self.stderr = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, self.stderr = self.process.communicate()


def start_server(*args: str, db: Path) -> Server:
    """Start ``quiz serve ARGS --db DB`` and wait for the link it prints."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "attnquiz", "serve", *args, "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    seen = []
    for _ in range(5):
        line = process.stdout.readline()
        seen.append(line)
        found = _URL.search(line)
        if found:
            return Server(process, int(found.group(1)), found.group(2), db)
    process.kill()
    _, err = process.communicate()
    raise AssertionError(f"quiz serve printed no link: {seen!r} {err}")


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found, page[:500]
    return found.group(1)


@pytest.fixture
def bank_copy(tmp_path: Path) -> Path:
    """A copy of week1 that a test may edit (the preview watches it)."""
    target = tmp_path / "mybank.yaml"
    shutil.copyfile(WEEK1, target)
    return target


@pytest.fixture
def server(tmp_path: Path, bank_copy: Path) -> Iterator[Server]:
    running = start_server("week1", str(bank_copy), db=tmp_path / "history.sqlite3")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the tests of a module that neither edit its bank nor count its history."""
    folder = tmp_path_factory.mktemp("shared")
    running = start_server("week1", db=folder / "history.sqlite3")
    try:
        yield running
    finally:
        running.stop()


def chromium_path() -> str | None:
    """Debian's Chromium (Playwright's own browsers are never downloaded), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """Debian's Chromium, started headless by Playwright. The test skips, saying why, where
    Playwright or Chromium is missing or Chromium does not start."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium found (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except sync_api.Error as exc:
            pytest.skip(f"Chromium does not start here: {str(exc).splitlines()[0]}")
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for a module's browser tests (see `launched_chromium`)."""
    with launched_chromium() as launched:
        yield launched
