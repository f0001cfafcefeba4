"""An interrupted session keeps every part already answered (DESIGN §8), in an exam and in practice."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attnquiz.engine.practice.store import Store


def _stored(home: Path) -> bool:
    path = home / "history.sqlite3"
    if not path.exists():
        return False
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
            return bool(db.execute("SELECT count(*) FROM attempts").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return False


def _kill_after_first_part(tmp_path: Path, *mode: str) -> None:
    """Run a session over the five-part params chain, answer (a), and kill the process (SIGKILL:
    nothing of quiz's own runs after it) as soon as (a) is stored, before (b) is answered."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80", "QUIZ_HOME": str(tmp_path)}
    args = ["run", "week1", *mode, "--item", "params-chain", "-n", "1", "--seed", "83187", "--json"]
    process = subprocess.Popen(
        [sys.executable, "-c", "from attnquiz.main import main; main()", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdin is not None
    try:
        process.stdin.write("32\n")
        process.stdin.flush()
        # An exam prints nothing per answer: wait until (a) is in the history, then kill at once.
        deadline = time.monotonic() + 90
        while not _stored(tmp_path):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("(a) was never stored while the session ran")
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=60)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("mode", [("--exam",), ()], ids=["exam", "practice"])
def test_a_session_killed_after_part_a_keeps_part_a(tmp_path: Path, mode: tuple[str, ...]) -> None:
    _kill_after_first_part(tmp_path, *mode)
    store = Store.open(tmp_path / "history.sqlite3")
    try:
        attempts = store.attempts()
    finally:
        store.close()
    assert len(attempts) == 1
    attempt = attempts[0]
    assert attempt.item == "params-chain"
    # (a) as given, the parts not yet reached blank; (a) right is one fifth of the question.
    assert attempt.response.split("|")[0].strip() == "32"
    assert [piece.strip() for piece in attempt.response.split("|")[1:]] == ["", "", "", ""]
    assert attempt.status == "partial"
    assert attempt.score == pytest.approx(0.2)
    assert not attempt.reviewed  # no review from a question half answered
