"""The history store: schema and migrations, one transaction per attempt, concurrency, damaged files."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from msgspec.structs import replace

from attnquiz.engine.practice import history_schema
from attnquiz.engine.practice import store as store_module
from attnquiz.engine.practice.history_file import StoreError, default_path
from attnquiz.engine.practice.history_records import Attempt, CardRecord
from attnquiz.engine.practice.store import Store

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def attempt(position: int = 1, **changes: object) -> Attempt:
    base = Attempt(
        session="s1",
        position=position,
        mode="practice",
        bank="week1",
        item="additive-score",
        topic="additive-attention",
        source="2026 T1 Quiz 1, Q13",
        seed=42,
        variant_code="0000-01AK",
        response="0.87",
        status="correct",
        score=1.0,
        mistake=None,
        seconds=12.5,
        at=T0,
    )
    return replace(base, **changes)


def card(reviews: int = 1, **changes: object) -> CardRecord:
    base = CardRecord(
        bank="week1",
        item="additive-score",
        topic="additive-attention",
        state='{"opaque": true}',
        due=T0 + timedelta(days=1),
        created=T0,
        reviews=reviews,
    )
    return replace(base, **changes)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "history.sqlite3")
    yield opened
    opened.close()


def test_a_new_database_is_created_with_wal_and_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "folder" / "history.sqlite3"
    with Store.open(path) as opened:
        assert opened.schema_version == history_schema.SCHEMA_VERSION
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"attempts", "cards"} <= tables
    raw.close()


def test_an_attempt_is_stored_and_read_back_unchanged(db: Store) -> None:
    stored = attempt(mistake="no-tanh", status="wrong", score=0.0, response="0.5")
    db.record(stored)
    assert db.attempts() == [stored]
    assert db.count_attempts() == 1


def test_recording_the_same_position_of_a_session_replaces_the_answer(db: Store) -> None:
    db.record(attempt(response="1.0", status="wrong", score=0.0))
    db.record(attempt(response="0.87"))
    rows = db.attempts()
    assert [r.response for r in rows] == ["0.87"]
    db.record(attempt(position=2, response="2"))
    assert [r.position for r in db.attempts()] == [1, 2]


def test_the_card_update_sees_the_current_card_and_is_stored_with_the_attempt(db: Store) -> None:
    seen: list[CardRecord | None] = []

    def bump(current: CardRecord | None) -> CardRecord:
        seen.append(current)
        return card(reviews=(current.reviews if current else 0) + 1)

    db.record(attempt(1), bump)
    db.record(attempt(2), bump)
    assert seen[0] is None
    assert seen[1] is not None
    assert seen[1].reviews == 1
    stored = db.card("week1", "additive-score")
    assert stored is not None
    assert stored.reviews == 2
    assert all(a.reviewed for a in db.attempts())


def test_an_attempt_without_a_card_update_is_not_marked_reviewed(db: Store) -> None:
    db.record(attempt(1))
    assert not db.attempts()[0].reviewed
    assert db.card("week1", "additive-score") is None


def test_a_failing_card_update_stores_nothing(db: Store) -> None:
    def broken(current: CardRecord | None) -> CardRecord:
        raise RuntimeError("scheduler bug")

    with pytest.raises(RuntimeError, match="scheduler bug"):
        db.record(attempt(1), broken)
    assert db.attempts() == []
    # The connection is usable again after the rollback.
    db.record(attempt(2))
    assert db.count_attempts() == 1


def test_a_bad_attempt_is_a_store_error_and_stores_nothing(db: Store) -> None:
    with pytest.raises(StoreError, match="cannot store the attempt"):
        db.record(attempt(1, status="invalid"), lambda current: card())
    assert db.attempts() == []
    assert db.card("week1", "additive-score") is None


def test_times_must_be_timezone_aware(db: Store) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        db.record(attempt(at=datetime(2026, 3, 2, 9, 30)))


def test_recent_seeds_are_newest_first(db: Store) -> None:
    for i, seed in enumerate([5, None, 7, 9]):
        db.record(attempt(i + 1, seed=seed, at=T0 + timedelta(minutes=i)))
    assert db.recent_seeds("week1", "additive-score") == [9, 7, None]
    assert db.recent_seeds("week1", "other") == []


def test_cards_come_soonest_due_first_and_can_be_limited_to_banks(db: Store) -> None:
    db.record(attempt(1), lambda c: card(item="b", due=T0 + timedelta(days=3)))
    db.record(attempt(2), lambda c: card(item="a", due=T0 + timedelta(days=1)))
    db.record(attempt(3, bank="week2"), lambda c: card(bank="week2", item="c", due=T0))
    assert [c.item for c in db.cards()] == ["c", "a", "b"]
    assert [c.item for c in db.cards(["week1"])] == ["a", "b"]
    assert db.cards_created_since(T0) == 3
    assert db.cards_created_since(T0 + timedelta(seconds=1)) == 0


def test_statistics_group_by_bank_topic_mistake_and_day(db: Store) -> None:
    db.record(attempt(1))
    db.record(attempt(2, status="wrong", score=0.0, mistake="no-tanh"))
    db.record(attempt(3, status="partial", score=0.5, topic="heads", at=T0 + timedelta(days=1)))
    db.record(
        attempt(4, status="wrong", score=0.0, mistake="no-tanh", topic="heads", at=T0 + timedelta(days=1))
    )
    db.record(attempt(5, bank="week2", topic="positions", mistake="x", status="wrong", score=0.0))

    by_bank = {g.bank: g for g in db.group_stats(by_topic=False)}
    assert by_bank["week1"].attempts == 4
    assert by_bank["week1"].correct == 1
    assert by_bank["week1"].accuracy == pytest.approx(1.5 / 4)
    by_topic = {(g.bank, g.topic): g for g in db.group_stats(by_topic=True, banks=["week1"])}
    assert set(by_topic) == {("week1", "additive-attention"), ("week1", "heads")}
    assert by_topic["week1", "heads"].accuracy == pytest.approx(0.25)

    mistakes = db.mistake_stats()
    assert [(m.tag, m.count) for m in mistakes] == [("no-tanh", 2), ("x", 1)]
    assert mistakes[0].topics == ("additive-attention", "heads")
    assert db.mistake_stats(banks=["week2"])[0].tag == "x"

    days = db.daily_stats(T0 - timedelta(days=1))
    assert sum(d.attempts for d in days) == 5
    assert db.group_stats(by_topic=False, banks=[]) == []


def test_a_file_that_is_not_a_database_is_a_clear_store_error(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_bytes(b"this is not SQLite, it is a note\n" * 200)
    with pytest.raises(StoreError) as caught:
        Store.open(path)
    message = str(caught.value)
    assert str(path) in message
    assert "not a database" in message
    assert "--db" in message


def test_a_folder_in_place_of_the_file_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a folder"):
        Store.open(tmp_path)


def test_a_database_from_a_newer_quiz_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {history_schema.SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(StoreError, match="newer version of quiz"):
        Store.open(path)


def test_a_database_with_a_missing_table_is_reported_as_damaged(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    Store.open(path).close()
    raw = sqlite3.connect(path)
    raw.execute("DROP TABLE cards")
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="damaged: table cards is missing"):
        Store.open(path)


def test_a_later_migration_upgrades_an_existing_database_and_keeps_its_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "history.sqlite3"
    with Store.open(path) as old:
        old.record(attempt(1))
    extra = ("ALTER TABLE attempts ADD COLUMN device TEXT",)
    migrations = (*history_schema.MIGRATIONS, extra)
    # Patched where `Store` reads them: the store module imported them from the schema's.
    monkeypatch.setattr(store_module, "MIGRATIONS", migrations)
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", len(migrations))
    with Store.open(path) as upgraded:
        assert upgraded.schema_version == len(migrations)
        assert upgraded.count_attempts() == 1
    raw = sqlite3.connect(path)
    columns = {r[1] for r in raw.execute("PRAGMA table_info(attempts)")}
    raw.close()
    assert "device" in columns


def test_the_path_comes_from_db_then_quiz_home_then_the_user_data_dir(tmp_path: Path) -> None:
    explicit = tmp_path / "mine.db"
    assert default_path(explicit, env={"QUIZ_HOME": str(tmp_path / "home")}) == explicit
    assert (
        default_path(None, env={"QUIZ_HOME": str(tmp_path / "home")}) == tmp_path / "home" / "history.sqlite3"
    )
    fallback = default_path(None, env={})
    assert fallback.name == "history.sqlite3"
    assert fallback.parent.name == "quiz"


WRITER = textwrap.dedent(
    """
    import sys
    from msgspec.structs import replace
    from datetime import UTC, datetime
    from attnquiz.engine.practice.history_records import Attempt, CardRecord
    from attnquiz.engine.practice.store import Store

    path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    base = Attempt(session=name, position=0, mode="practice", bank="week1", item="shared",
                   topic="t", source="s", seed=1, variant_code="c", response="1", status="correct",
                   score=1.0, mistake=None, seconds=1.0, at=datetime.now(UTC))

    def bump(current):
        reviews = current.reviews + 1 if current else 1
        return CardRecord(bank="week1", item="shared", topic="t", state="{}", due=datetime.now(UTC),
                          created=current.created if current else datetime.now(UTC), reviews=reviews)

    with Store.open(path) as store:
        for i in range(count):
            store.record(replace(base, position=i, at=datetime.now(UTC)), bump)
    """
)


def test_concurrent_writers_lose_no_attempt_and_no_review(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    writers, each = 3, 40
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"session-{k}", str(each)])
        for k in range(writers)
    ]
    for process in processes:
        assert process.wait(timeout=120) == 0
    with Store.open(path) as opened:
        assert opened.count_attempts() == writers * each
        shared = opened.card("week1", "shared")
        assert shared is not None
        # Every read-modify-write of the shared card saw the previous one: no lost update.
        assert shared.reviews == writers * each


def test_sessions_opening_a_new_database_at_the_same_moment_all_get_it(tmp_path: Path) -> None:
    # Switching a new file to WAL takes a lock SQLite does not wait for; a session that lost that
    # race used to run without history and lose its answers.
    path = tmp_path / "history.sqlite3"
    start_at = time.time() + 1.0
    script = textwrap.dedent(
        f"""
        import time
        from attnquiz.engine.practice.store import Store
        time.sleep(max(0.0, {start_at!r} - time.time()))
        store = Store.open({str(path)!r})
        print(store.schema_version)
        store.close()
        """
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    outcomes = [process.communicate(timeout=60) for process in processes]
    assert [process.returncode for process in processes] == [0] * 6, [err for _, err in outcomes]
    assert {out.strip() for out, _ in outcomes} == {str(history_schema.SCHEMA_VERSION)}


def _totals_by_scan(path: Path) -> dict[tuple[str, str], tuple[int, int, float, str]]:
    raw = sqlite3.connect(path)
    rows = raw.execute(
        "SELECT bank, topic, COUNT(*), SUM(status = 'correct'), SUM(score), MAX(at) "
        "FROM attempts GROUP BY bank, topic"
    ).fetchall()
    raw.close()
    return {(b, t): (n, c, round(s, 9), last) for b, t, n, c, s, last in rows}


def _totals_kept(path: Path) -> dict[tuple[str, str], tuple[int, int, float, str]]:
    raw = sqlite3.connect(path)
    rows = raw.execute("SELECT bank, topic, attempts, correct, score, last FROM topic_totals").fetchall()
    raw.close()
    return {(b, t): (n, c, round(s, 9), last) for b, t, n, c, s, last in rows}


def test_the_topic_totals_kept_by_triggers_equal_a_full_scan(tmp_path: Path) -> None:
    # Inserts, exam answers replaced (same session and position, maybe another topic), and deletes,
    # in a seeded random order: the totals quiz stats reads always equal summing the table.
    import random

    rng = random.Random(7)
    path = tmp_path / "history.sqlite3"
    with Store.open(path) as opened:
        for step in range(300):
            status = rng.choice(["correct", "partial", "wrong"])
            opened.record(
                attempt(
                    position=rng.randrange(40),
                    session=rng.choice(["s1", "s2"]),
                    topic=rng.choice(["a", "b", "c"]),
                    bank=rng.choice(["week1", "week2"]),
                    status=status,
                    score={"correct": 1.0, "partial": 0.5, "wrong": 0.0}[status],
                    at=T0 + timedelta(minutes=rng.randrange(10_000)),
                )
            )
            if step % 50 == 49:
                opened._db.execute(
                    "DELETE FROM attempts WHERE id IN (SELECT id FROM attempts ORDER BY random() LIMIT 5)"
                )
    assert _totals_kept(path) == _totals_by_scan(path)
    with Store.open(path) as opened:
        stats = {(g.bank, g.topic): g.attempts for g in opened.group_stats(by_topic=True)}
    assert stats == {key: value[0] for key, value in _totals_by_scan(path).items()}


def test_an_old_history_gets_its_totals_when_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    raw = sqlite3.connect(path)
    for statement in history_schema.MIGRATIONS[0]:
        raw.execute(statement)
    raw.execute("PRAGMA user_version = 1")
    for n in range(30):  # rows as schema 1 wrote them, before the totals existed
        row = history_schema.attempt_row(
            attempt(
                position=n, topic="ab"[n % 2], status="correct" if n % 3 else "wrong", score=float(n % 3 > 0)
            )
        )[:-1]  # schema 1 had no rating
        columns = history_schema.ATTEMPT_COLUMNS.removesuffix(", rating")
        raw.execute(f"INSERT INTO attempts ({columns}) VALUES ({', '.join('?' * len(row))})", row)
    raw.commit()
    raw.close()
    with Store.open(path) as opened:
        assert opened.schema_version == history_schema.SCHEMA_VERSION
    assert _totals_kept(path) == _totals_by_scan(path)
    assert sum(v[0] for v in _totals_kept(path).values()) == 30
