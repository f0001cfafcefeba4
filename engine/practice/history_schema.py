"""The history's SQLite schema: its migrations, and how attempts and cards are written to and read from rows.

Each entry of `MIGRATIONS` upgrades the schema by one version; `SCHEMA_VERSION` is the version this
quiz writes. A row that cannot be decoded raises `DamagedRow` (the store skips and counts it).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from attnquiz.engine.practice.history_records import (
    Attempt,
    CardRecord,
    DamagedRow,
    time_from_text,
    time_text,
)

# Stored times all start with a four-digit year ("2026-12-01T..."); text outside this range (a word,
# an empty string) cannot be one. SQL aggregates use it to leave such rows out cheaply, with the
# index on ``at``; `time_from_text` is the exact check where rows are decoded one by one.
PLAUSIBLE_TIME = "at >= '0001' AND at < '9999-12-32'"
IMPLAUSIBLE_TIME = "(at < '0001' OR at >= '9999-12-32')"


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

ATTEMPT_COLUMNS = (
    "session, position, mode, bank, item, topic, source, seed, variant_code, response, status, "
    "score, mistake, seconds, at, hints, reviewed, rating"
)


def attempt_row(attempt: Attempt) -> tuple[Any, ...]:
    """The values of an attempt's row, in the order of `ATTEMPT_COLUMNS`."""
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
        time_text(attempt.at),
        attempt.hints,
        int(attempt.reviewed),
        attempt.rating,
    )


def attempt_from_row(row: sqlite3.Row) -> Attempt:
    """The attempt a row holds (DamagedRow: its values cannot be decoded)."""
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
        at=time_from_text(row["at"]),
        hints=row["hints"],
        reviewed=bool(row["reviewed"]),
        rating=row["rating"],
    )


def card_from_row(row: sqlite3.Row) -> CardRecord:
    """The card a row holds (DamagedRow: its values, or its state's JSON, cannot be decoded)."""
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
        due=time_from_text(row["due"]),
        created=time_from_text(row["created"]),
        reviews=row["reviews"],
        lapses=row["lapses"],
    )


__all__ = [
    "ATTEMPT_COLUMNS",
    "IMPLAUSIBLE_TIME",
    "MIGRATIONS",
    "PLAUSIBLE_TIME",
    "SCHEMA_VERSION",
    "attempt_from_row",
    "attempt_row",
    "card_from_row",
]
