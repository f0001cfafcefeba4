"""Attempt history and review cards in SQLite: versioned schema, WAL, one transaction per attempt.

The store knows nothing about FSRS: a card's scheduling state is an opaque JSON text with its due
time beside it, and `attnquiz.engine.review` computes the next state. `Store.record` runs that computation
inside the attempt's own transaction, so that two sessions answering the same item at once cannot
overwrite each other's review, and an attempt is never stored without its card update (or the
other way round).

Every SQLite failure surfaces as `StoreError` (a QuizError): a corrupt, unreadable or too new
database is a message for the user, never a traceback, and a session can carry on without history.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attnquiz.engine.errors import QuizError

DB_NAME = "history.sqlite3"
APP_NAME = "quiz"
BUSY_TIMEOUT_SECONDS = 10.0


class StoreError(QuizError):
    """The history database cannot be opened, read or written (corrupt, locked, too new, no access)."""


# ---------------------------------------------------------------------------------------------
# Where the database lives
# ---------------------------------------------------------------------------------------------


def default_path(explicit: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Path:
    """The database file: ``explicit`` (``--db``), else ``$QUIZ_HOME/history.sqlite3``, else the data dir.

    Args:
        explicit: A path given on the command line.
        env: The environment to read ``QUIZ_HOME`` from (``os.environ`` when None).

    Returns:
        The path of the database file (it may not exist yet).
    """
    if explicit is not None:
        return Path(explicit).expanduser()
    environ = os.environ if env is None else env
    home = environ.get("QUIZ_HOME", "").strip()
    if home:
        return Path(home).expanduser() / DB_NAME
    import platformdirs  # only when neither override is given: it is not needed otherwise

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / DB_NAME


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC (the only kind of time the store holds)."""
    return datetime.now(UTC)


def _to_text(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("the store holds timezone-aware times only")
    # One fixed format and zone, so that text order is time order in SQL comparisons.
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _from_text(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One graded answer to one question, as the history keeps it.

    ``session`` and ``position`` identify the question within a session: recording the same pair
    again replaces the earlier answer (an exam answer revised before submitting).
    """

    session: str
    position: int
    mode: str
    bank: str
    item: str
    topic: str
    source: str
    seed: int | None
    variant_code: str
    response: str
    status: str
    score: float
    mistake: str | None
    seconds: float
    at: datetime
    hints: int = 0
    reviewed: bool = False

    def to_json(self) -> dict[str, Any]:
        """The attempt as JSON outputs show it."""
        return {
            "session": self.session,
            "position": self.position,
            "mode": self.mode,
            "bank": self.bank,
            "item": self.item,
            "topic": self.topic,
            "source": self.source,
            "seed": self.seed,
            "variant_code": self.variant_code,
            "response": self.response,
            "status": self.status,
            "score": self.score,
            "mistake": self.mistake,
            "seconds": round(self.seconds, 3),
            "at": _to_text(self.at),
            "hints": self.hints,
            "reviewed": self.reviewed,
        }


@dataclass(frozen=True, slots=True)
class CardRecord:
    """An item's review card: its scheduler state (opaque JSON), when it is due, and when it began."""

    bank: str
    item: str
    topic: str
    state: str
    due: datetime
    created: datetime
    reviews: int = 0
    lapses: int = 0


CardUpdate = Callable[[CardRecord | None], CardRecord | None]
"""Given the item's current card (None if it has none), the card to store (None: leave it)."""


# ---------------------------------------------------------------------------------------------
# Schema
# ---------------------------------------------------------------------------------------------

# Each entry upgrades the schema by one version; append, never edit a shipped step.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE attempts (
            id INTEGER PRIMARY KEY,
            session TEXT NOT NULL,
            position INTEGER NOT NULL,
            mode TEXT NOT NULL,
            bank TEXT NOT NULL,
            item TEXT NOT NULL,
            topic TEXT NOT NULL,
            source TEXT NOT NULL,
            seed INTEGER,
            variant_code TEXT NOT NULL,
            response TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('correct', 'partial', 'wrong')),
            score REAL NOT NULL CHECK (score BETWEEN 0 AND 1),
            mistake TEXT,
            seconds REAL NOT NULL CHECK (seconds >= 0),
            at TEXT NOT NULL,
            hints INTEGER NOT NULL DEFAULT 0,
            reviewed INTEGER NOT NULL DEFAULT 0,
            UNIQUE (session, position)
        )
        """,
        "CREATE INDEX attempts_item ON attempts (bank, item, at)",
        "CREATE INDEX attempts_at ON attempts (at)",
        """
        CREATE TABLE cards (
            bank TEXT NOT NULL,
            item TEXT NOT NULL,
            topic TEXT NOT NULL,
            state TEXT NOT NULL,
            due TEXT NOT NULL,
            created TEXT NOT NULL,
            reviews INTEGER NOT NULL DEFAULT 0,
            lapses INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (bank, item)
        )
        """,
        "CREATE INDEX cards_due ON cards (due)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

_ATTEMPT_COLUMNS = (
    "session, position, mode, bank, item, topic, source, seed, variant_code, response, status, "
    "score, mistake, seconds, at, hints, reviewed"
)


def _attempt_row(attempt: Attempt) -> tuple[Any, ...]:
    return (
        attempt.session,
        attempt.position,
        attempt.mode,
        attempt.bank,
        attempt.item,
        attempt.topic,
        attempt.source,
        attempt.seed,
        attempt.variant_code,
        attempt.response,
        attempt.status,
        float(attempt.score),
        attempt.mistake,
        float(attempt.seconds),
        _to_text(attempt.at),
        attempt.hints,
        int(attempt.reviewed),
    )


def _attempt_from_row(row: sqlite3.Row) -> Attempt:
    return Attempt(
        session=row["session"],
        position=row["position"],
        mode=row["mode"],
        bank=row["bank"],
        item=row["item"],
        topic=row["topic"],
        source=row["source"],
        seed=row["seed"],
        variant_code=row["variant_code"],
        response=row["response"],
        status=row["status"],
        score=row["score"],
        mistake=row["mistake"],
        seconds=row["seconds"],
        at=_from_text(row["at"]),
        hints=row["hints"],
        reviewed=bool(row["reviewed"]),
    )


def _card_from_row(row: sqlite3.Row) -> CardRecord:
    return CardRecord(
        bank=row["bank"],
        item=row["item"],
        topic=row["topic"],
        state=row["state"],
        due=_from_text(row["due"]),
        created=_from_text(row["created"]),
        reviews=row["reviews"],
        lapses=row["lapses"],
    )


# ---------------------------------------------------------------------------------------------
# Aggregates for `quiz stats`
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupStats:
    """Attempts of one bank or one topic of a bank: how many, how well, when last."""

    bank: str
    topic: str | None
    attempts: int
    correct: int
    score: float
    last: datetime | None

    @property
    def accuracy(self) -> float:
        """The mean score of the attempts (partial credit counts as its fraction)."""
        return self.score / self.attempts if self.attempts else 0.0


@dataclass(frozen=True, slots=True)
class MistakeStats:
    """How often a named misconception was made, where, and when last."""

    tag: str
    count: int
    topics: tuple[str, ...]
    last: datetime


@dataclass(frozen=True, slots=True)
class DayStats:
    """The attempts of one local calendar day."""

    day: str
    attempts: int
    score: float

    @property
    def accuracy(self) -> float:
        """The mean score of the day's attempts."""
        return self.score / self.attempts if self.attempts else 0.0


# ---------------------------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------------------------


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text[0].lower() + text[1:] if text else text


def _is_transient(exc: sqlite3.OperationalError) -> bool:
    """A lock held by another process for a moment (not damage): worth trying again."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _cannot_use(target: Path, exc: sqlite3.Error) -> str:
    return (
        f"cannot use the history database {target} ({_describe(exc)}); "
        "move it away to start a new history, or give another with --db"
    )


class Store:
    """An open history database. Use `Store.open`; close it (or use it as a context manager)."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        self.path = path

    # -- opening --------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Store:
        """Open (creating or upgrading if needed) the database at ``path``.

        Raises:
            StoreError: the file cannot be created or read, is not a quiz database, is corrupt,
                or was written by a newer version of quiz.
        """
        target = Path(path)
        if target.is_dir():
            raise StoreError(f"history database {target} is a folder, not a file")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder of the history database {target}: {exc.strerror}"
            ) from None
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
                if _is_transient(exc) and time.monotonic() < deadline:
                    time.sleep(pause)
                    pause = min(pause * 2, 0.2)
                    continue
                raise StoreError(_cannot_use(target, exc)) from None
            except sqlite3.Error as exc:
                if connection is not None:
                    connection.close()
                raise StoreError(_cannot_use(target, exc)) from None
            except StoreError:
                if connection is not None:
                    connection.close()
                raise
            return store

    def _prepare(self) -> None:
        db = self._db
        # Reading the header first: a file that is not a database fails here, before any write.
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
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

    def _check_tables(self) -> None:
        names = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = {"attempts", "cards"} - names
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
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot {doing} in the history database {self.path} ({_describe(exc)})"
            ) from None

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
            row = (*_attempt_row(attempt)[:-1], int(reviewed))
            placeholders = ", ".join("?" * len(row))
            db.execute(
                f"INSERT INTO attempts ({_ATTEMPT_COLUMNS}) VALUES ({placeholders}) "
                "ON CONFLICT (session, position) DO UPDATE SET "
                + ", ".join(
                    f"{name} = excluded.{name}"
                    for name in (c.strip() for c in _ATTEMPT_COLUMNS.split(","))
                    if name not in {"session", "position"}
                ),
                row,
            )

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
                _to_text(card.due),
                _to_text(card.created),
                card.reviews,
                card.lapses,
            ),
        )

    # -- reading --------------------------------------------------------------------------------

    def _card(self, bank: str, item: str) -> CardRecord | None:
        row = self._db.execute("SELECT * FROM cards WHERE bank = ? AND item = ?", (bank, item)).fetchone()
        return _card_from_row(row) if row is not None else None

    def card(self, bank: str, item: str) -> CardRecord | None:
        """The review card of an item, if it has been answered before."""
        with self._errors("read a card"):
            return self._card(bank, item)

    def cards(self, banks: Iterable[str] | None = None) -> list[CardRecord]:
        """Every card (of the given banks), soonest due first."""
        with self._errors("read the cards"):
            rows = self._db.execute("SELECT * FROM cards ORDER BY due, bank, item").fetchall()
        wanted = set(banks) if banks is not None else None
        return [_card_from_row(r) for r in rows if wanted is None or r["bank"] in wanted]

    def cards_created_since(self, moment: datetime) -> int:
        """How many cards were created at or after ``moment`` (new items begun since then)."""
        with self._errors("count new cards"):
            row = self._db.execute(
                "SELECT COUNT(*) FROM cards WHERE created >= ?", (_to_text(moment),)
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
            args.append(_to_text(since))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._errors("read the attempts"):
            rows = self._db.execute(f"SELECT * FROM attempts {where} ORDER BY at, id", args).fetchall()
        return [_attempt_from_row(r) for r in rows]

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
        """Attempts, correct answers, total score and last attempt per bank (or per bank and topic)."""
        group = "bank, topic" if by_topic else "bank"
        where, args = _bank_filter(banks)
        with self._errors("read the statistics"):
            rows = self._db.execute(
                f"SELECT {group}, COUNT(*) AS n, SUM(status = 'correct') AS correct, SUM(score) AS score, "
                f"MAX(at) AS last FROM attempts {where} GROUP BY {group} ORDER BY {group}",
                args,
            ).fetchall()
        return [
            GroupStats(
                bank=r["bank"],
                topic=r["topic"] if by_topic else None,
                attempts=int(r["n"]),
                correct=int(r["correct"] or 0),
                score=float(r["score"] or 0.0),
                last=_from_text(r["last"]) if r["last"] else None,
            )
            for r in rows
        ]

    def mistake_stats(self, *, banks: Sequence[str] | None = None, limit: int = 10) -> list[MistakeStats]:
        """The most frequent named mistakes, with the topics they were made in."""
        where, args = _bank_filter(banks)
        where = f"{where} AND mistake IS NOT NULL" if where else "WHERE mistake IS NOT NULL"
        with self._errors("read the statistics"):
            rows = self._db.execute(
                f"SELECT mistake, COUNT(*) AS n, GROUP_CONCAT(DISTINCT topic) AS topics, MAX(at) AS last "
                f"FROM attempts {where} GROUP BY mistake ORDER BY n DESC, last DESC LIMIT ?",
                [*args, limit],
            ).fetchall()
        return [
            MistakeStats(
                tag=r["mistake"],
                count=int(r["n"]),
                topics=tuple(sorted(str(r["topics"]).split(","))),
                last=_from_text(r["last"]),
            )
            for r in rows
        ]

    def daily_stats(self, since: datetime, *, banks: Sequence[str] | None = None) -> list[DayStats]:
        """Attempts and total score per local calendar day since ``since``."""
        where, args = _bank_filter(banks)
        where = f"{where} AND at >= ?" if where else "WHERE at >= ?"
        with self._errors("read the statistics"):
            rows = self._db.execute(
                f"SELECT date(at, 'localtime') AS day, COUNT(*) AS n, SUM(score) AS score "
                f"FROM attempts {where} GROUP BY day ORDER BY day",
                [*args, _to_text(since)],
            ).fetchall()
        return [DayStats(day=r["day"], attempts=int(r["n"]), score=float(r["score"] or 0.0)) for r in rows]


def _bank_filter(banks: Sequence[str] | None) -> tuple[str, list[Any]]:
    if banks is None:
        return "", []
    if not banks:
        return "WHERE 0", []
    return f"WHERE bank IN ({', '.join('?' * len(banks))})", list(banks)


def open_store(path: str | os.PathLike[str] | None = None) -> Store:
    """Open the history at ``path`` (``--db``), ``QUIZ_HOME`` or the user data dir."""
    return Store.open(default_path(path))


__all__ = [
    "DB_NAME",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Attempt",
    "CardRecord",
    "CardUpdate",
    "DayStats",
    "GroupStats",
    "MistakeStats",
    "Store",
    "StoreError",
    "default_path",
    "open_store",
    "utc_now",
]
