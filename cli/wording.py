"""How quiz words a verdict and a moment, the same in the terminal and the browser (no rich here).

`attnquiz.display` and `attnquiz.session_view` (rich) and `attnquiz.web` (HTML) all take these, so a
verdict or a due date reads the same whichever front end shows it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

LABELS = {
    "correct": "Correct",
    "partial": "Partly right",
    "wrong": "Wrong",
    "invalid": "Cannot read that",
    "unscored": "Not scored",
    "skipped": "Skipped",
    "unanswered": "Not answered",
}
"""The verdict words."""
MARKS = {
    "correct": "✓",
    "partial": "◐",
    "wrong": "✗",
    "invalid": "?",
    "unscored": "•",  # a concept answer: compared with the model answer and self-rated, never scored
    "skipped": "–",
    "unanswered": "·",
}
"""The verdict marks."""
SEP = "  ·  "
"""Separates the facts of one line (a header, a verdict, a bank's title and its count of items)."""


def when(moment: datetime, now: datetime | None = None) -> str:
    """When a review falls due, as a person says it: ``in 10 min``, ``today at 18:05``, ``tomorrow``,
    ``in 3 days (Fri 05 Dec)``."""
    current = (now or datetime.now(UTC)).astimezone()
    local = moment.astimezone()
    seconds = (local - current).total_seconds()
    if seconds < 30:
        return "now"
    if seconds < 3600:
        return f"in {max(1, round(seconds / 60))} min"
    days = (local.date() - current.date()).days
    if days == 0:
        return f"today at {local:%H:%M}"
    if days == 1:
        return "tomorrow"
    return f"in {days} days ({local:%a %d %b})"


def clock(seconds: float) -> str:
    """Remaining time as a countdown shows it: ``18:32`` or ``1:05:00``."""
    total = max(0, int(seconds + 0.999))
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def span(interval: timedelta) -> str:
    """A review interval as a rating button shows it: ``10 min``, ``5 h``, ``1 day``, ``12 days``,
    ``4 months``."""
    minutes = max(1, round(interval.total_seconds() / 60))
    if minutes < 60:
        return f"{minutes} min"
    hours = round(minutes / 60)
    if hours < 24:
        return f"{hours} h"
    days = round(hours / 24)
    if days < 100:
        return f"{days} day{'s' if days != 1 else ''}"
    months = round(days / 30.44)
    return f"{months} months" if months < 24 else f"{days / 365.25:.0f} years"


def kind_name(kind: str, *, multiple: bool = False) -> str:
    """An answer kind (``choice``, ``integer``…) as a user reads it; ``multiple``: a choice of several."""
    if kind == "choice":
        return "multiple select" if multiple else "single choice"
    names = {
        "integer": "count",
        "numeric": "number",
        "expression": "formula",
        "parts": "in parts",
        "explain": "concept",
    }
    return names.get(kind, kind)
