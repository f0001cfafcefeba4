"""The numbers of the stats page: those `quiz stats --json` prints, read with the same store queries."""

from __future__ import annotations

import sqlite3
import stat
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from attnquiz.web import render


@dataclass
class Report:
    """The history as the stats page shows it."""

    history: str
    exists: bool
    banks: list[dict[str, Any]] = field(default_factory=list)
    topics: list[dict[str, Any]] = field(default_factory=list)
    mistakes: list[Any] = field(default_factory=list)
    days: list[render.Day] = field(default_factory=list)
    due: int = 0
    warning: str | None = None
    holds_until: datetime | None = None
    """When a due count or the days of the chart change next, the history unchanged."""

    def topic_chart(self) -> Any:
        """A bar per topic: its accuracy, with the number of answers."""
        bars = [
            render.Bar(f"{t['bank']} · {t['topic']}", t["accuracy"] or 0.0, _bar_text(t)) for t in self.topics
        ]
        return render.bar_chart("Accuracy per topic", bars)

    def day_chart(self) -> Any:
        """A column per day: answers given, shaded by accuracy."""
        return render.day_chart("Answers per day", self.days)


def _bar_text(group: dict[str, Any]) -> str:
    """A topic's bar label (short: it sits beside the bar): its accuracy over the scored answers.
    Concept answers are self-rated, never scored, so a topic with only those has no accuracy (not
    "0% of 1"); the table beside the chart counts every answer."""
    if not group["scored"]:
        return "self-rated"
    return f"{render.percent(group['accuracy'])} of {group['scored']}"


def collect(db: Path | None, *, days: int = 14) -> Report:
    """Read the history at ``db`` (or the default one) as `quiz stats` does; nothing is created."""
    from attnquiz.engine.practice import review
    from attnquiz.engine.practice.history_file import StoreError, default_path
    from attnquiz.engine.practice.history_records import bank_totals, utc_now
    from attnquiz.engine.practice.store import Store

    path = default_path(db)
    report = Report(history=str(path), exists=path.exists())
    if not report.exists:
        return report
    now = utc_now()
    since = review.start_of_day(now) - timedelta(days=days - 1)
    try:
        with Store.open(path, explicit=db is not None) as store:
            topic_rows = store.group_stats(by_topic=True)
            bank_rows = bank_totals(topic_rows)
            report.mistakes = store.mistake_stats()
            day_rows = store.daily_stats(since)
            cards = store.cards()
            report.warning = store.damage_warning()
    except StoreError as exc:
        report.warning = str(exc)
        return report
    due: dict[tuple[str, str], int] = {}
    for card in cards:
        key = (card.bank, card.topic)
        due[key] = due.get(key, 0) + review.is_due(card, now)
    report.due = sum(due.values())
    report.holds_until = review.next_change(cards, now)
    report.banks = [
        {
            "bank": g.bank,
            "attempts": g.attempts,
            "correct": g.correct,
            # None where every answer is a concept question's (self-rated, never scored).
            "accuracy": g.accuracy if g.scored else None,
            "scored": g.scored,
            "last": g.last,
            "due": sum(n for (b, _), n in due.items() if b == g.bank),
        }
        for g in bank_rows
    ]
    report.topics = [
        {
            "bank": g.bank,
            "topic": g.topic or "",
            "attempts": g.attempts,
            "correct": g.correct,
            "accuracy": g.accuracy if g.scored else None,
            "scored": g.scored,
            "due": due.get((g.bank, g.topic or ""), 0),
        }
        for g in topic_rows
    ]
    # Every day of the window, with the days without answers, so the chart's columns are evenly spaced.
    by_day = {d.day: d for d in day_rows}
    start = since.date()
    for offset in range(days):
        label = (start + timedelta(days=offset)).isoformat()
        found = by_day.get(label)
        report.days.append(
            render.Day(
                label,
                found.attempts if found else 0,
                found.accuracy if found else 0.0,
                self_rated=found is not None and found.attempts == found.unscored,
            )
        )
    return report


class HistoryVersion:
    """Which version of the history file a page would read now, so that a page made from it is sent
    again only while it is the same: the file (device and inode) and SQLite's ``data_version``,
    which changes with every transaction any other connection commits (a session of this server,
    `quiz run` in a terminal). Read through one read-only connection of its own that asks nothing
    else, never waiting for a lock; whatever goes wrong, the answer is "unknown" (None), and the
    page is made afresh."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None

    def now(self) -> tuple[object, ...] | None:
        if self.path is None:
            return None
        try:
            info = self.path.stat()
        except FileNotFoundError:
            self.close()
            return ("no history",)
        except OSError:
            self.close()
            return None
        if not stat.S_ISREG(info.st_mode):  # opening a FIFO would wait for a writer, and the loop with it
            self.close()
            return None
        try:
            if self._connection is None or self._file != (info.st_dev, info.st_ino):
                self.close()
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                self._connection = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
                self._file = (info.st_dev, info.st_ino)
            version = self._connection.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error:
            self.close()
            return None
        return (info.st_dev, info.st_ino, version)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection = None
        self._file = None


__all__ = ["HistoryVersion", "Report", "collect"]
