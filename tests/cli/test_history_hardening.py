"""The history under damage and hostile conditions: damaged rows, read-only and full disks, permissions,
a foreign SQLite file, no home folder. Each ends in one clear line, never a traceback or lost data."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from attnquiz.engine.practice import history_schema
from attnquiz.engine.practice.history_file import StoreError, cannot_use, default_path
from attnquiz.engine.practice.store import Store
from tests.cli.test_stats import PRACTICE, QUIZ, fill, quiz


def damage(path: Path) -> None:
    """The issue's damaged rows: a time that is not a time, a state that is not JSON, a due that is a
    word, and a mistake tag that is rich markup."""
    db = sqlite3.connect(path)
    first, second = (r[0] for r in db.execute("SELECT id FROM attempts ORDER BY id LIMIT 2"))
    db.execute("UPDATE attempts SET at = 'not a time' WHERE id = ?", (first,))
    db.execute("UPDATE attempts SET mistake = '[/]' WHERE id = ?", (second,))
    db.execute("UPDATE cards SET state = '{not json' WHERE item = 'score-a'")
    db.execute("UPDATE cards SET due = 'tomorrow' WHERE item = 'score-b'")
    db.commit()
    db.close()


def test_damaged_rows_are_skipped_with_one_warning_in_stats_run_and_review(tmp_path: Path) -> None:
    for number, (args, stdin) in enumerate(
        (
            (("stats",), ""),
            (("stats", "--json"), ""),
            (("run", "demo", "--original"), "1.93\n1\na\n"),
            (("review", "demo", "--limit", "3"), "1\n1\n1\n"),
            (("review", "demo", "--json"), "1\n1\n1\n1\n"),
        )
    ):
        home = tmp_path / str(number)  # each on a freshly damaged history: answers heal the cards
        home.mkdir()
        fill(home)
        damage(home / "history.sqlite3")
        result = quiz(home, *args, stdin=stdin)
        assert result.returncode == 0, (args, result.stderr)
        assert "Traceback" not in result.stderr
        warnings = [line for line in result.stderr.splitlines() if "unreadable history row" in line]
        assert len(warnings) == 1, (args, result.stderr)
        assert warnings[0].startswith("quiz: warning: skipped ")
    stats = json.loads(quiz(tmp_path / "1", "stats", "--json").stdout)
    assert sum(t["attempts"] for t in stats["topics"]) == 4  # five stored, one with a damaged time
    assert "[/]" in quiz(tmp_path / "0", "stats").stdout  # the tag printed as it is, never read as markup


def test_the_damaged_card_is_replaced_by_the_next_answer(tmp_path: Path) -> None:
    fill(tmp_path)
    damage(tmp_path / "history.sqlite3")
    quiz(tmp_path, "run", "demo", "--item", "score-a", "--seed", "1", stdin="1\n")
    with Store.open(tmp_path / "history.sqlite3") as opened:
        cards = {c.item: c for c in opened.cards()}
        assert json.loads(cards["score-a"].state)  # a state FSRS wrote again
        assert opened.damage == {"cards": 1}  # score-b's due is still 'tomorrow': skipped, counted


@pytest.mark.parametrize(
    ("error", "advice"),
    [
        (sqlite3.OperationalError("database or disk is full"), "is full"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "read-only"),
        (sqlite3.OperationalError("database is locked"), "locked by another program"),
        (sqlite3.DatabaseError("database disk image is malformed"), "move it away"),
        (sqlite3.DatabaseError("file is not a database"), "move it away"),
        (sqlite3.OperationalError("disk I/O error"), "check the disk"),
    ],
)
def test_each_cause_gets_its_own_advice(tmp_path: Path, error: sqlite3.Error, advice: str) -> None:
    target = tmp_path / "history.sqlite3"
    target.touch()
    message = cannot_use(target, error)
    assert advice in message
    if advice != "move it away":
        assert "move it away" not in message  # a healthy database is never to be thrown away


def test_a_full_disk_while_recording_says_so_and_keeps_the_history(tmp_path: Path) -> None:
    fill(tmp_path)
    path = tmp_path / "history.sqlite3"
    with Store.open(path) as opened:
        before = opened.count_attempts()
        # SQLite's own limit on the file's pages stands in for a full disk.
        opened._db.execute(f"PRAGMA max_page_count = {opened._db.execute('PRAGMA page_count').fetchone()[0]}")
        from tests.engine.test_store import attempt

        big = attempt(position=99, response="x" * 200_000, session="big")
        with pytest.raises(StoreError, match="is full") as caught:
            opened.record(big)
        assert "move it away" not in str(caught.value)
        assert opened.count_attempts() == before


def test_the_history_is_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = quiz(home, "run", "demo", "--original", stdin="1.93\n")
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((home / "history.sqlite3").stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for extra in ("-wal", "-shm"):
        side = home / f"history.sqlite3{extra}"
        if side.exists():
            assert stat.S_IMODE(side.stat().st_mode) & 0o077 == 0


def test_an_existing_world_readable_history_is_narrowed(tmp_path: Path) -> None:
    fill(tmp_path)
    path = tmp_path / "history.sqlite3"
    path.chmod(0o644)
    quiz(tmp_path, "stats")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_file_given_with_db_keeps_its_permissions(tmp_path: Path) -> None:
    shared = tmp_path / "shared.sqlite3"
    Store.open(shared).close()
    shared.chmod(0o640)
    quiz(tmp_path, "stats", "--db", str(shared))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640


def test_a_foreign_sqlite_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    foreign = tmp_path / "contacts.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE people (name TEXT)")
    db.execute("INSERT INTO people VALUES ('Ada')")
    db.commit()
    db.close()
    before = foreign.read_bytes()
    stats = quiz(tmp_path, "stats", "--db", str(foreign))
    assert stats.returncode == 1
    assert stats.stderr.count("\n") == 1
    assert "not a quiz history" in stats.stderr
    assert "people" in stats.stderr
    run = quiz(tmp_path, "run", "demo", "--original", "--db", str(foreign), stdin="1.93\n")
    assert run.returncode == 0
    assert "not a quiz history" in " ".join(run.stderr.split())
    assert "History is off" in run.stdout
    assert foreign.read_bytes() == before
    assert not Path(f"{foreign}-wal").exists()


def test_an_empty_sqlite_file_becomes_a_history(tmp_path: Path) -> None:
    empty = tmp_path / "new.db"
    sqlite3.connect(empty).close()
    with Store.open(empty) as opened:
        assert opened.schema_version == history_schema.SCHEMA_VERSION


_NO_HOME = (
    "import os, pwd, sys\n"
    "os.environ.pop('HOME', None)\n"
    "def missing(uid): raise KeyError(f'getpwuid(): uid not found: {uid}')\n"
    "pwd.getpwuid = missing\n"
    "from attnquiz.main import main\n"
    "sys.argv = ['quiz', *sys.argv[1:]]\n"
    "main()\n"
)


def test_no_home_folder_and_no_quiz_home_is_one_line_and_practice_still_runs(tmp_path: Path) -> None:
    # docker run --user N: HOME unset and no passwd entry for the uid.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("QUIZ_") and k not in {"HOME", "XDG_DATA_HOME"}
    }
    env.update(QUIZ_PATH=str(PRACTICE), COLUMNS="80")
    env.pop("XDG_CACHE_HOME", None)

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _NO_HOME, *args], input=stdin, capture_output=True, text=True, env=env,
            timeout=120, check=False, cwd=tmp_path,
        )  # fmt: skip

    stats = run("stats")
    assert stats.returncode == 1
    assert stats.stderr.startswith("quiz: there is no home folder")
    assert "QUIZ_HOME" in stats.stderr
    assert "Traceback" not in stats.stderr
    session = run("run", "demo", "--original", stdin="1.93\n")
    assert session.returncode == 0, session.stderr
    assert "Correct" in session.stdout
    assert "QUIZ_HOME" in session.stderr
    listed = run("list", "demo")
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr


def test_default_path_without_a_home_raises_a_store_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    def no_home(*args: object, **kwargs: object) -> str:
        raise RuntimeError("could not determine the home directory")

    monkeypatch.setattr(platformdirs, "user_data_dir", no_home)
    monkeypatch.delenv("HOME", raising=False)  # with no HOME, platformdirs is asked (and finds none)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    with pytest.raises(StoreError, match="set QUIZ_HOME"):
        default_path(env={})
    _ = QUIZ


def test_a_quiz_home_that_others_can_write_is_refused_for_the_history(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # a folder above QUIZ_HOME that anyone can write in (not sticky)
    home = shared / "home"
    result = quiz(home, "run", "demo", "--original", stdin="1.93\n")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "not private: other users can write in the folder" in result.stderr
    assert "This session runs without history" in result.stderr
    assert not (home / "history.sqlite3").exists()


@pytest.mark.skipif(os.getuid() != 0, reason="gives a file to another user (needs root)")
def test_a_history_file_or_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    fill(tmp_path)
    history = tmp_path / "history.sqlite3"
    history.chmod(0o666)
    os.chown(history, 65534, 65534)  # prepared by another user, writable by all
    with pytest.raises(StoreError, match="belongs to another user"):
        Store.open(history, explicit=False)
    os.chown(history, 0, 0)
    other = tmp_path / "theirs"
    other.mkdir()
    os.chown(other, 65534, 65534)
    with pytest.raises(StoreError, match=r"the folder .* belongs to another user"):
        Store.open(other / "history.sqlite3", explicit=False)
    link = tmp_path / "linked"
    link.mkdir()
    (link / "history.sqlite3").symlink_to(history)
    with pytest.raises(StoreError, match="is a link"):
        Store.open(link / "history.sqlite3", explicit=False)
