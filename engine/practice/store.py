"""Attempt history and review cards in SQLite: opening and migrating it, WAL, one transaction per attempt.

The store knows nothing about FSRS: a card's scheduling state is an opaque JSON text with its due
time beside it, and `attnquiz.engine.practice.review` computes the next state. `Store.record` runs that
computation
inside the attempt's own transaction, so that two sessions answering the same item at once cannot
overwrite each other's review, and an attempt is never stored without its card update (or the
other way round).

Every SQLite failure surfaces as `StoreError` (a QuizError): a corrupt, unreadable or too new
database is a message for the user, with the advice that fits its cause (a read-only file, a full
disk, a lock, damage), never a traceback, and a session can carry on without history. A SQLite file
that is not quiz's is refused rather than converted. Rows that cannot be decoded (a time that is
not a time, a card whose state is not JSON) are skipped and counted (`Store.damage`), so one bad
row never stops a student from practising.

The values the history holds are in `attnquiz.engine.practice.history_records`, its schema and rows
in `attnquiz.engine.practice.history_schema`, and where its file lives and how it is kept private in
`attnquiz.engine.practice.history_file`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from attnquiz.engine.practice.history_file import (
    StoreError,
    cannot_use,
    default_path,
    is_transient,
    private_file,
    private_folder,
    refuse_shared,
)
from attnquiz.engine.practice.history_records import (
    Attempt,
    CardRecord,
    CardUpdate,
    DamagedRow,
    DayStats,
    GroupStats,
    MistakeStats,
    bank_totals,
    time_from_text,
    time_text,
)
from attnquiz.engine.practice.history_schema import (
    ATTEMPT_COLUMNS,
    IMPLAUSIBLE_TIME,
    MIGRATIONS,
    PLAUSIBLE_TIME,
    SCHEMA_VERSION,
    attempt_from_row,
    attempt_row,
    card_from_row,
)

BUSY_TIMEOUT_SECONDS = 10.0


class Store:
    """An open history database. Use `Store.open`; close it (or use it as a context manager)."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        self.path = path
        self._seen_damage: dict[tuple[str, object], int] = {}
        self._told: set[tuple[str, object]] = set()

    @property
    def damage(self) -> dict[str, int]:
        """Rows skipped so far because they could not be decoded, by table (each row counted once)."""
        totals: dict[str, int] = {}
        for (table, _), count in self._seen_damage.items():
            totals[table] = totals.get(table, 0) + count
        return totals

    def _damaged(self, table: str, key: object, count: int = 1) -> None:
        """Note ``count`` damaged rows of ``table`` known by ``key`` (read again, they count once)."""
        if count:
            self._seen_damage[(table, key)] = count

    def damage_warning(self) -> str | None:
        """One line on the damaged rows skipped since the last warning, or None when there are none new."""
        new = {key: n for key, n in self._seen_damage.items() if key not in self._told}
        if not new:
            return None
        self._told |= set(new)
        by_table: dict[str, int] = {}
        for (table, _), count in new.items():
            by_table[table] = by_table.get(table, 0) + count
        total = sum(by_table.values())
        parts = ", ".join(f"{n} {table[:-1] if n == 1 else table}" for table, n in sorted(by_table.items()))
        # Short enough for one line of a terminal: the history's path is in `quiz stats` and summaries.
        return f"skipped {total} unreadable history row{'s' if total != 1 else ''} ({parts})"

    # -- opening --------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, explicit: bool = True) -> Store:
        """Open (creating or upgrading if needed) the database at ``path``.

        ``explicit`` (the default) means the user named the file: its permissions are left as they
        are; `open_store` passes False for quiz's own location, whose file is narrowed to 0600.

        Raises:
            StoreError: the file cannot be created or read, is not a quiz database, is corrupt,
                or was written by a newer version of quiz.
        """
        target = Path(path)
        if target.is_dir():
            raise StoreError(f"history database {target} is a folder, not a file")
        # Narrowing the permissions of a file or folder the user named with --db is not ours to do;
        # quiz's own history and its folder (QUIZ_HOME or the data folder) are made private even if they
        # already exist (the bank cache may have created the folder first).
        own = not explicit
        try:
            private_folder(target.parent, tighten=own)
            if own:
                refuse_shared(target)  # before anything is written there
            private_file(target, tighten=own)
        except OSError as exc:
            if not target.parent.is_dir():
                raise StoreError(
                    f"cannot create the folder of the history database {target}: {exc.strerror}"
                ) from None
            if not target.exists():
                raise StoreError(cannot_use(target, exc)) from None
        deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
        pause = 0.01
        while True:
            connection: sqlite3.Connection | None = None
            try:
                # Autocommit mode: every transaction below is an explicit BEGIN IMMEDIATE ... COMMIT.
                connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
                connection.row_factory = sqlite3.Row
                store = cls(connection, target)
                store._prepare()
            except sqlite3.OperationalError as exc:
                if connection is not None:
                    connection.close()
                # Two sessions opening a new database at once: switching it to WAL takes a lock
                # that SQLite does not wait for, so the loser retries instead of running without
                # history (and losing its answers).
                if is_transient(exc) and time.monotonic() < deadline:
                    time.sleep(pause)
                    pause = min(pause * 2, 0.2)
                    continue
                raise StoreError(cannot_use(target, exc)) from None
            except sqlite3.Error as exc:
                if connection is not None:
                    connection.close()
                raise StoreError(cannot_use(target, exc)) from None
            except StoreError:
                if connection is not None:
                    connection.close()
                raise
            return store

    def _prepare(self) -> None:
        db = self._db
        # Reading the header first: a file that is not a database fails here, before any write.
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version == 0:
            self._refuse_foreign()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the history database {self.path} was written by a newer version of quiz "
                f"(schema {version}; this quiz knows up to {SCHEMA_VERSION}); upgrade quiz or use --db"
            )
        mode = str(db.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
        if mode != "wal":
            raise StoreError(f"the history database {self.path} cannot use write-ahead logging (mode {mode})")
        # FULL syncs the log at each commit: an attempt survives even a power cut, for about a
        # millisecond per answer.
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        if version < SCHEMA_VERSION:
            self._migrate()
        self._check_tables()

    def _migrate(self) -> None:
        db = self._db
        with self._transaction():
            # Read again inside the write lock: another process may have migrated meanwhile.
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    db.execute(statement)
            if version < SCHEMA_VERSION:
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _refuse_foreign(self) -> None:
        """A database with tables but none of quiz's is someone else's: never convert it."""
        names = sorted(
            str(row[0])
            for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
            )
        )
        if names and not {"attempts", "cards"} & set(names):
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise StoreError(
                f"{self.path} is not a quiz history (it is a SQLite database with other tables: {shown}); "
                "it was left untouched: give quiz another file with --db"
            )

    def _check_tables(self) -> None:
        names = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = {"attempts", "cards", "topic_totals"} - names
        if missing:
            raise StoreError(
                f"the history database {self.path} is damaged: table {', '.join(sorted(missing))} is missing"
            )

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the file."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Close the connection (everything recorded is already committed)."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ---------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        db = self._db
        # IMMEDIATE takes the write lock at once, so a read-modify-write of a card is atomic
        # with respect to another session writing the same card.
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            # SQLite rolls back by itself after some errors (a full disk): a second ROLLBACK would
            # fail and hide the error that says what happened.
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"cannot {doing}: {cannot_use(self.path, exc)}") from None

    # -- writing --------------------------------------------------------------------------------

    def record(self, attempt: Attempt, update_card: CardUpdate | None = None) -> None:
        """Store an attempt (replacing an earlier one of the same session and position) in one transaction.

        Args:
            attempt: The graded attempt.
            update_card: Called inside the transaction with the item's current card; the card it
                returns is stored with the attempt, which is then marked reviewed.

        Raises:
            StoreError: the database could not be written; nothing of this attempt was stored.
        """
        with self._errors("store the attempt"), self._transaction() as db:
            reviewed = attempt.reviewed
            if update_card is not None:
                current = self._card(attempt.bank, attempt.item)
                new = update_card(current)
                if new is not None:
                    self._put_card(new)
                    reviewed = True
            row = attempt_row(attempt)
            row = (*row[:-2], int(reviewed), row[-1])
            placeholders = ", ".join("?" * len(row))
            db.execute(
                f"INSERT INTO attempts ({ATTEMPT_COLUMNS}) VALUES ({placeholders}) "
                "ON CONFLICT (session, position) DO UPDATE SET "
                + ", ".join(
                    f"{name} = excluded.{name}"
                    for name in (c.strip() for c in ATTEMPT_COLUMNS.split(","))
                    if name not in {"session", "position"}
                ),
                row,
            )

    def update_card(self, bank: str, item: str, update: CardUpdate) -> CardRecord | None:
        """Apply ``update`` to the item's card in one transaction, without an attempt (a skipped question).

        Returns:
            The card stored, or None when ``update`` left it alone.

        Raises:
            StoreError: the database could not be written; the card is unchanged.
        """
        with self._errors("update the review card"), self._transaction():
            new = update(self._card(bank, item))
            if new is not None:
                self._put_card(new)
        return new

    def _put_card(self, card: CardRecord) -> None:
        self._db.execute(
            "INSERT INTO cards (bank, item, topic, state, due, created, reviews, lapses) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (bank, item) DO UPDATE SET topic = excluded.topic, state = excluded.state, "
            "due = excluded.due, reviews = excluded.reviews, lapses = excluded.lapses",
            (
                card.bank,
                card.item,
                card.topic,
                card.state,
                time_text(card.due),
                time_text(card.created),
                card.reviews,
                card.lapses,
            ),
        )

    # -- reading --------------------------------------------------------------------------------

    def _card(self, bank: str, item: str) -> CardRecord | None:
        """The item's card; None when it has none or its row is damaged (the next review replaces it)."""
        row = self._db.execute("SELECT * FROM cards WHERE bank = ? AND item = ?", (bank, item)).fetchone()
        if row is None:
            return None
        try:
            return card_from_row(row)
        except DamagedRow:
            self._damaged("cards", (bank, item))
            return None

    def _decoded(
        self, rows: Iterable[sqlite3.Row], decode: Callable[[sqlite3.Row], Any], table: str
    ) -> list[Any]:
        """The rows that decode; the others are counted in `damage`."""
        out = []
        for row in rows:
            try:
                out.append(decode(row))
            except DamagedRow:
                self._damaged(table, row["id"] if table == "attempts" else (row["bank"], row["item"]))
        return out

    def card(self, bank: str, item: str) -> CardRecord | None:
        """The review card of an item, if it has been answered before."""
        with self._errors("read a card"):
            return self._card(bank, item)

    def cards(self, banks: Iterable[str] | None = None) -> list[CardRecord]:
        """Every card (of the given banks), soonest due first."""
        with self._errors("read the cards"):
            rows = self._db.execute("SELECT * FROM cards ORDER BY due, bank, item").fetchall()
        wanted = set(banks) if banks is not None else None
        kept = [r for r in rows if wanted is None or r["bank"] in wanted]
        cards: list[CardRecord] = self._decoded(kept, card_from_row, "cards")
        return cards

    def cards_created_since(self, moment: datetime) -> int:
        """How many cards were created at or after ``moment`` (new items begun since then)."""
        with self._errors("count new cards"):
            row = self._db.execute(
                "SELECT COUNT(*) FROM cards WHERE created >= ?", (time_text(moment),)
            ).fetchone()
        return int(row[0])

    def attempts(
        self,
        *,
        bank: str | None = None,
        item: str | None = None,
        session: str | None = None,
        since: datetime | None = None,
    ) -> list[Attempt]:
        """Stored attempts, oldest first, optionally only of a bank, an item, a session or since a time."""
        clauses: list[str] = []
        args: list[Any] = []
        for column, value in (("bank", bank), ("item", item), ("session", session)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        if since is not None:
            clauses.append("at >= ?")
            args.append(time_text(since))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._errors("read the attempts"):
            rows = self._db.execute(f"SELECT * FROM attempts {where} ORDER BY at, id", args).fetchall()
        attempts: list[Attempt] = self._decoded(rows, attempt_from_row, "attempts")
        return attempts

    def recent_seeds(self, bank: str, item: str, limit: int = 3) -> list[int | None]:
        """The seeds of the item's latest attempts, newest first (None: the original instance)."""
        with self._errors("read recent attempts"):
            rows = self._db.execute(
                "SELECT seed FROM attempts WHERE bank = ? AND item = ? ORDER BY at DESC, id DESC LIMIT ?",
                (bank, item, limit),
            ).fetchall()
        return [r["seed"] for r in rows]

    def count_attempts(self) -> int:
        """How many attempts are stored."""
        with self._errors("count the attempts"):
            return int(self._db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0])

    def group_stats(self, *, by_topic: bool, banks: Sequence[str] | None = None) -> list[GroupStats]:
        """Attempts, correct answers, total score and last attempt per bank (or per bank and topic).

        One pass over the covering index ``attempts_topic`` (bank, topic, status, score, at), so a
        history of a million attempts is summed in a fraction of a second. Rows whose time is not a
        time are left out and counted in `damage`.
        """
        topics = self._topic_stats(banks)
        return topics if by_topic else bank_totals(topics)

    def _topic_stats(self, banks: Sequence[str] | None) -> list[GroupStats]:
        where, args = _bank_filter(banks)
        damaged_where = f"{where} AND {IMPLAUSIBLE_TIME}" if where else f"WHERE {IMPLAUSIBLE_TIME}"
        with self._errors("read the statistics"):
            rows = self._db.execute(
                "SELECT bank, topic, attempts AS n, correct, score, last, unscored "
                f"FROM topic_totals {where} ORDER BY bank, topic",
                args,
            ).fetchall()
            # Few or none: found through the index on `at` (both ends of it), then taken out of their groups.
            damaged = {
                (r["bank"], r["topic"]): r
                for r in self._db.execute(
                    "SELECT bank, topic, COUNT(*) AS n, SUM(status = 'correct') AS correct, "
                    "SUM(score) AS score, SUM(status = 'unscored') AS unscored "
                    f"FROM attempts INDEXED BY attempts_at {damaged_where} "
                    "GROUP BY bank, topic",
                    args,
                ).fetchall()
            }
        out = []
        for r in rows:
            bad = damaged.get((r["bank"], r["topic"]))
            n, correct, score = int(r["n"]), int(r["correct"] or 0), float(r["score"] or 0.0)
            unscored = int(r["unscored"] or 0)
            last = r["last"]
            if bad is not None:
                self._damaged("attempts", ("group", r["bank"], r["topic"]), int(bad["n"]))
                n -= int(bad["n"])
                correct -= int(bad["correct"] or 0)
                score -= float(bad["score"] or 0.0)
                unscored -= int(bad["unscored"] or 0)
                last = self._last_plausible("bank = ? AND topic = ?", [r["bank"], r["topic"]])
            if n <= 0:
                continue
            out.append(
                GroupStats(
                    r["bank"],
                    r["topic"],
                    n,
                    correct,
                    max(score, 0.0),
                    self._time_or_none(last),
                    max(unscored, 0),
                )
            )
        return out

    def _last_plausible(self, condition: str, args: list[Any]) -> str | None:
        row = self._db.execute(
            f"SELECT MAX(at) FROM attempts INDEXED BY attempts_topic WHERE {condition} AND {PLAUSIBLE_TIME}",
            args,
        ).fetchone()
        return str(row[0]) if row is not None and row[0] is not None else None

    def _time_or_none(self, text: str | None) -> datetime | None:
        """A stored time, or None when there is none or it does not decode (counted as damage)."""
        if text is None:
            return None
        try:
            return time_from_text(text)
        except (ValueError, TypeError):
            self._damaged("attempts", ("time", text))
            return None

    def mistake_stats(self, *, banks: Sequence[str] | None = None, limit: int = 10) -> list[MistakeStats]:
        """The most frequent named mistakes, with the topics they were made in."""
        where, args = _bank_filter(banks)
        where = f"{where} AND mistake IS NOT NULL" if where else "WHERE mistake IS NOT NULL"
        with self._errors("read the statistics"):
            rows = self._db.execute(
                f"SELECT mistake, COUNT(*) AS n, GROUP_CONCAT(DISTINCT topic) AS topics, "
                f"MAX(CASE WHEN {PLAUSIBLE_TIME} THEN at END) AS last "
                f"FROM attempts {where} GROUP BY mistake ORDER BY n DESC, last DESC LIMIT ?",
                [*args, limit],
            ).fetchall()
        return [
            MistakeStats(
                tag=str(r["mistake"]),
                count=int(r["n"]),
                topics=tuple(sorted(str(r["topics"]).split(","))),
                last=self._time_or_none(r["last"]),
            )
            for r in rows
        ]

    def daily_stats(self, since: datetime, *, banks: Sequence[str] | None = None) -> list[DayStats]:
        """Attempts and total score per local calendar day since ``since`` (rows with a bad time left out)."""
        where, args = _bank_filter(banks)
        where = f"{where} AND at >= ?" if where else "WHERE at >= ?"
        with self._errors("read the statistics"):
            rows = self._db.execute(
                f"SELECT date(at, 'localtime') AS day, COUNT(*) AS n, SUM(score) AS score, "
                "SUM(status = 'unscored') AS unscored "
                f"FROM attempts {where} AND at < '9999-12-32' "
                "GROUP BY day HAVING day IS NOT NULL ORDER BY day",
                [*args, time_text(since)],
            ).fetchall()
        return [
            DayStats(
                day=r["day"],
                attempts=int(r["n"]),
                score=float(r["score"] or 0.0),
                unscored=int(r["unscored"] or 0),
            )
            for r in rows
        ]


def _bank_filter(banks: Sequence[str] | None) -> tuple[str, list[Any]]:
    if banks is None:
        return "", []
    if not banks:
        return "WHERE 0", []
    return f"WHERE bank IN ({', '.join('?' * len(banks))})", list(banks)


def open_store(path: str | os.PathLike[str] | None = None) -> Store:
    """Open the history at ``path`` (``--db``), ``QUIZ_HOME`` or the user data dir."""
    return Store.open(default_path(path), explicit=path is not None)


__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "Store",
    "open_store",
]
