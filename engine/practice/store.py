"""Attempt history and review cards in SQLite: versioned schema, WAL, one transaction per attempt.

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

The history is private: quiz creates its file 0600 and its folder 0700, and narrows an existing
file at the default location to 0600.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
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

    Raises:
        StoreError: no location is given and there is no home folder to put one in (``HOME``
            unset and the user has no passwd entry, as in ``docker run --user N``).
    """
    if explicit is not None:
        return Path(explicit).expanduser()
    environ = os.environ if env is None else env
    home = environ.get("QUIZ_HOME", "").strip()
    if home:
        return Path(home).expanduser() / DB_NAME
    import platformdirs  # only when neither override is given: it is not needed otherwise

    try:
        folder = platformdirs.user_data_dir(APP_NAME, appauthor=False)
    except (RuntimeError, KeyError, OSError):
        folder = ""
    if not folder or not Path(folder).is_absolute():
        raise StoreError(
            "there is no home folder to keep the history in (HOME is not set and this user has none): "
            "set QUIZ_HOME to a folder, or give --db FILE"
        )
    return Path(folder) / DB_NAME


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
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"time without a zone: {text!r}")
    return moment.astimezone(UTC)


class DamagedRow(ValueError):
    """A stored row whose values cannot be decoded (skipped and counted by the store)."""


# Stored times all start with a four-digit year ("2026-12-01T..."); text outside this range (a word,
# an empty string) cannot be one. SQL aggregates use it to leave such rows out cheaply, with the
# index on ``at``; `_from_text` is the exact check where rows are decoded one by one.
_PLAUSIBLE_TIME = "at >= '0001' AND at < '9999-12-32'"
_IMPLAUSIBLE_TIME = "(at < '0001' OR at >= '9999-12-32')"


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
    # A concept question's attempt (status ``unscored``): the student's own rating, once given.
    rating: str | None = None

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
            "rating": self.rating,
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
    (
        # `quiz stats` reads per-topic totals kept by triggers, so its time does not grow with the
        # history (a million attempts: milliseconds instead of seconds of scanning).
        "CREATE INDEX attempts_topic ON attempts (bank, topic, at)",
        "CREATE INDEX attempts_mistake ON attempts (mistake, topic, at) WHERE mistake IS NOT NULL",
        """
        CREATE TABLE topic_totals (
            bank TEXT NOT NULL,
            topic TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            correct INTEGER NOT NULL,
            score REAL NOT NULL,
            last TEXT,
            PRIMARY KEY (bank, topic)
        )
        """,
        """
        CREATE TRIGGER topic_totals_insert AFTER INSERT ON attempts BEGIN
            INSERT INTO topic_totals (bank, topic, attempts, correct, score, last)
            VALUES (NEW.bank, NEW.topic, 1, NEW.status = 'correct', NEW.score, NEW.at)
            ON CONFLICT (bank, topic) DO UPDATE SET
                attempts = attempts + 1,
                correct = correct + excluded.correct,
                score = score + excluded.score,
                last = MAX(COALESCE(last, excluded.last), excluded.last);
        END
        """,
        """
        CREATE TRIGGER topic_totals_delete AFTER DELETE ON attempts BEGIN
            UPDATE topic_totals SET
                attempts = attempts - 1,
                correct = correct - (OLD.status = 'correct'),
                score = score - OLD.score,
                last = (SELECT MAX(at) FROM attempts WHERE bank = OLD.bank AND topic = OLD.topic)
            WHERE bank = OLD.bank AND topic = OLD.topic;
            DELETE FROM topic_totals WHERE bank = OLD.bank AND topic = OLD.topic AND attempts <= 0;
        END
        """,
        """
        CREATE TRIGGER topic_totals_update AFTER UPDATE OF bank, topic, status, score, at ON attempts BEGIN
            UPDATE topic_totals SET
                attempts = attempts - 1,
                correct = correct - (OLD.status = 'correct'),
                score = score - OLD.score
            WHERE bank = OLD.bank AND topic = OLD.topic;
            DELETE FROM topic_totals WHERE bank = OLD.bank AND topic = OLD.topic AND attempts <= 0;
            INSERT INTO topic_totals (bank, topic, attempts, correct, score, last)
            VALUES (NEW.bank, NEW.topic, 1, NEW.status = 'correct', NEW.score, NEW.at)
            ON CONFLICT (bank, topic) DO UPDATE SET
                attempts = attempts + 1,
                correct = correct + excluded.correct,
                score = score + excluded.score,
                last = (SELECT MAX(at) FROM attempts WHERE bank = NEW.bank AND topic = NEW.topic);
            UPDATE topic_totals SET
                last = (SELECT MAX(at) FROM attempts WHERE bank = OLD.bank AND topic = OLD.topic)
            WHERE bank = OLD.bank AND topic = OLD.topic;
        END
        """,
        """
        INSERT INTO topic_totals (bank, topic, attempts, correct, score, last)
        SELECT bank, topic, COUNT(*), SUM(status = 'correct'), SUM(score), MAX(at)
        FROM attempts GROUP BY bank, topic
        """,
    ),
    (
        # Concept questions (issue 16): an attempt may be `unscored` (never scored by its content),
        # with the student's own `rating` of it. SQLite cannot change a CHECK constraint, so the
        # table is rebuilt (its indexes and triggers with it); the per-topic totals count the
        # unscored attempts apart, so that an accuracy is over scored attempts only.
        """
        CREATE TABLE attempts_v3 (
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
            status TEXT NOT NULL CHECK (status IN ('correct', 'partial', 'wrong', 'unscored')),
            score REAL NOT NULL CHECK (score BETWEEN 0 AND 1),
            mistake TEXT,
            seconds REAL NOT NULL CHECK (seconds >= 0),
            at TEXT NOT NULL,
            hints INTEGER NOT NULL DEFAULT 0,
            reviewed INTEGER NOT NULL DEFAULT 0,
            rating TEXT CHECK (rating IS NULL OR rating IN ('again', 'hard', 'good', 'easy')),
            UNIQUE (session, position)
        )
        """,
        """
        INSERT INTO attempts_v3 (id, session, position, mode, bank, item, topic, source, seed, variant_code,
            response, status, score, mistake, seconds, at, hints, reviewed)
        SELECT id, session, position, mode, bank, item, topic, source, seed, variant_code,
            response, status, score, mistake, seconds, at, hints, reviewed
        FROM attempts
        """,
        "DROP TABLE attempts",
        "ALTER TABLE attempts_v3 RENAME TO attempts",
        "CREATE INDEX attempts_item ON attempts (bank, item, at)",
        "CREATE INDEX attempts_at ON attempts (at)",
        "CREATE INDEX attempts_topic ON attempts (bank, topic, at)",
        "CREATE INDEX attempts_mistake ON attempts (mistake, topic, at) WHERE mistake IS NOT NULL",
        "ALTER TABLE topic_totals ADD COLUMN unscored INTEGER NOT NULL DEFAULT 0",
        """
        CREATE TRIGGER topic_totals_insert AFTER INSERT ON attempts BEGIN
            INSERT INTO topic_totals (bank, topic, attempts, correct, score, last, unscored)
            VALUES (NEW.bank, NEW.topic, 1, NEW.status = 'correct', NEW.score, NEW.at,
                NEW.status = 'unscored')
            ON CONFLICT (bank, topic) DO UPDATE SET
                attempts = attempts + 1,
                correct = correct + excluded.correct,
                score = score + excluded.score,
                unscored = unscored + excluded.unscored,
                last = MAX(COALESCE(last, excluded.last), excluded.last);
        END
        """,
        """
        CREATE TRIGGER topic_totals_delete AFTER DELETE ON attempts BEGIN
            UPDATE topic_totals SET
                attempts = attempts - 1,
                correct = correct - (OLD.status = 'correct'),
                score = score - OLD.score,
                unscored = unscored - (OLD.status = 'unscored'),
                last = (SELECT MAX(at) FROM attempts WHERE bank = OLD.bank AND topic = OLD.topic)
            WHERE bank = OLD.bank AND topic = OLD.topic;
            DELETE FROM topic_totals WHERE bank = OLD.bank AND topic = OLD.topic AND attempts <= 0;
        END
        """,
        """
        CREATE TRIGGER topic_totals_update AFTER UPDATE OF bank, topic, status, score, at ON attempts BEGIN
            UPDATE topic_totals SET
                attempts = attempts - 1,
                correct = correct - (OLD.status = 'correct'),
                score = score - OLD.score,
                unscored = unscored - (OLD.status = 'unscored')
            WHERE bank = OLD.bank AND topic = OLD.topic;
            DELETE FROM topic_totals WHERE bank = OLD.bank AND topic = OLD.topic AND attempts <= 0;
            INSERT INTO topic_totals (bank, topic, attempts, correct, score, last, unscored)
            VALUES (NEW.bank, NEW.topic, 1, NEW.status = 'correct', NEW.score, NEW.at,
                NEW.status = 'unscored')
            ON CONFLICT (bank, topic) DO UPDATE SET
                attempts = attempts + 1,
                correct = correct + excluded.correct,
                score = score + excluded.score,
                unscored = unscored + excluded.unscored,
                last = (SELECT MAX(at) FROM attempts WHERE bank = NEW.bank AND topic = NEW.topic);
            UPDATE topic_totals SET
                last = (SELECT MAX(at) FROM attempts WHERE bank = OLD.bank AND topic = OLD.topic)
            WHERE bank = OLD.bank AND topic = OLD.topic;
        END
        """,
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

_ATTEMPT_COLUMNS = (
    "session, position, mode, bank, item, topic, source, seed, variant_code, response, status, "
    "score, mistake, seconds, at, hints, reviewed, rating"
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
        attempt.rating,
    )


def _attempt_from_row(row: sqlite3.Row) -> Attempt:
    try:
        return _decode_attempt(row)
    except (ValueError, TypeError, KeyError) as exc:
        raise DamagedRow(str(exc)) from None


def _decode_attempt(row: sqlite3.Row) -> Attempt:
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
        rating=row["rating"],
    )


def _card_from_row(row: sqlite3.Row) -> CardRecord:
    try:
        state = json.loads(row["state"])
        if not isinstance(state, dict):
            raise ValueError("a card's state is a JSON object")
        return _decode_card(row)
    except (ValueError, TypeError, KeyError) as exc:
        raise DamagedRow(str(exc)) from None


def _decode_card(row: sqlite3.Row) -> CardRecord:
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
    unscored: int = 0
    """Attempts at concept questions (self-rated, never scored), included in ``attempts``."""

    @property
    def scored(self) -> int:
        """The attempts that have a score (all but the concept questions')."""
        return self.attempts - self.unscored

    @property
    def accuracy(self) -> float:
        """The mean score of the scored attempts (partial credit counts as its fraction)."""
        return self.score / self.scored if self.scored else 0.0


@dataclass(frozen=True, slots=True)
class MistakeStats:
    """How often a named misconception was made, where, and when last."""

    tag: str
    count: int
    topics: tuple[str, ...]
    last: datetime | None


@dataclass(frozen=True, slots=True)
class DayStats:
    """The attempts of one local calendar day."""

    day: str
    attempts: int
    score: float
    unscored: int = 0
    """Attempts at concept questions (self-rated, never scored), included in ``attempts``."""

    @property
    def accuracy(self) -> float:
        """The mean score of the day's scored attempts."""
        scored = self.attempts - self.unscored
        return self.score / scored if scored else 0.0


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


def _cannot_use(target: Path, exc: BaseException) -> str:
    """What went wrong with the database at ``target``, and the advice that fits the cause."""
    text = str(exc).lower()
    errno = getattr(exc, "sqlite_errorcode", None)
    full = "full" in text or errno == getattr(sqlite3, "SQLITE_FULL", 13)
    readonly = "readonly" in text or "read-only" in text or errno == getattr(sqlite3, "SQLITE_READONLY", 8)
    folder = target.parent
    if full:
        return (
            f"the disk holding the history database {target} is full ({_describe(exc)}); "
            "free some space and try again: the history itself is intact"
        )
    if readonly or (target.exists() and not os.access(target, os.W_OK)) or not os.access(folder, os.W_OK):
        where = target if target.exists() and not os.access(target, os.W_OK) else folder
        return (
            f"the history database {target} cannot be written ({_describe(exc)}): {where} is read-only "
            "for you; make it writable, or give another file with --db"
        )
    if _is_transient(exc) if isinstance(exc, sqlite3.OperationalError) else False:
        return (
            f"the history database {target} is locked by another program ({_describe(exc)}); "
            "close the other quiz session, or try again in a moment"
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return (
            f"the history database {target} is damaged ({_describe(exc)}); "
            "move it away to start a new history, or give another with --db"
        )
    return (
        f"cannot use the history database {target} ({_describe(exc)}); "
        "check the disk and the file, or give another with --db"
    )


def _private_file(target: Path, *, tighten: bool) -> None:
    """Create ``target`` empty with mode 0600 if missing (SQLite gives its -wal and -shm files the
    same mode); with ``tighten``, narrow an existing file of this user to 0600."""
    try:
        descriptor = os.open(
            target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except FileExistsError:
        if tighten:
            info = target.stat()
            if info.st_mode & 0o077 and info.st_uid == os.getuid() and stat.S_ISREG(info.st_mode):
                for path in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
                    if path.exists():
                        path.chmod(0o600)
        return
    os.close(descriptor)


def _refuse_shared(target: Path) -> None:
    """Refuse quiz's own history where another user could write it or its folder (a shared
    QUIZ_HOME prepared by someone else), as the bank cache refuses such a folder."""
    from attnquiz.engine.ownership import file_problem, folder_problem

    problem = folder_problem(target.parent) or file_problem(target)
    if problem is not None:
        raise StoreError(
            f"the history {target} is not private: {problem}; quiz keeps no history where others "
            "can change it: set QUIZ_HOME to a folder of your own, or give --db FILE"
        )


def _private_folder(folder: Path, *, tighten: bool) -> None:
    """Create ``folder`` (and missing parents) with mode 0700; with ``tighten``, narrow quiz's own one."""
    if not folder.exists():
        folder.mkdir(parents=True, mode=0o700)
        folder.chmod(0o700)  # mkdir's mode is masked by the umask
        return
    if tighten:
        info = folder.stat()
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            folder.chmod(0o700)


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
            _private_folder(target.parent, tighten=own)
            if own:
                _refuse_shared(target)  # before anything is written there
            _private_file(target, tighten=own)
        except OSError as exc:
            if not target.parent.is_dir():
                raise StoreError(
                    f"cannot create the folder of the history database {target}: {exc.strerror}"
                ) from None
            if not target.exists():
                raise StoreError(_cannot_use(target, exc)) from None
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
            raise StoreError(f"cannot {doing}: {_cannot_use(self.path, exc)}") from None

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
            row = _attempt_row(attempt)
            row = (*row[:-2], int(reviewed), row[-1])
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
                _to_text(card.due),
                _to_text(card.created),
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
            return _card_from_row(row)
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
        cards: list[CardRecord] = self._decoded(kept, _card_from_row, "cards")
        return cards

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
        attempts: list[Attempt] = self._decoded(rows, _attempt_from_row, "attempts")
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
        damaged_where = f"{where} AND {_IMPLAUSIBLE_TIME}" if where else f"WHERE {_IMPLAUSIBLE_TIME}"
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
            f"SELECT MAX(at) FROM attempts INDEXED BY attempts_topic WHERE {condition} AND {_PLAUSIBLE_TIME}",
            args,
        ).fetchone()
        return str(row[0]) if row is not None and row[0] is not None else None

    def _time_or_none(self, text: str | None) -> datetime | None:
        """A stored time, or None when there is none or it does not decode (counted as damage)."""
        if text is None:
            return None
        try:
            return _from_text(text)
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
                f"MAX(CASE WHEN {_PLAUSIBLE_TIME} THEN at END) AS last "
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
                [*args, _to_text(since)],
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


def bank_totals(topics: Sequence[GroupStats]) -> list[GroupStats]:
    """Per-bank totals of per-topic statistics (so that `quiz stats` reads the history once)."""
    merged: dict[str, GroupStats] = {}
    for t in topics:
        old = merged.get(t.bank)
        if old is None:
            merged[t.bank] = GroupStats(t.bank, None, t.attempts, t.correct, t.score, t.last, t.unscored)
            continue
        lasts = [x for x in (old.last, t.last) if x is not None]
        merged[t.bank] = GroupStats(
            t.bank,
            None,
            old.attempts + t.attempts,
            old.correct + t.correct,
            old.score + t.score,
            max(lasts) if lasts else None,
            old.unscored + t.unscored,
        )
    return list(merged.values())


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
    "bank_totals",
    "default_path",
    "open_store",
    "utc_now",
]
