"""What the pages show, as safe HTML: bank Markdown with MathML (the HTML export's renderer) and SVG charts.

Everything returned here is `Markup` (trusted by the templates) only because every piece of text
in it was escaped by the HTML export (`attnquiz.engine.export.text.html`) or by `escape` below; all other
values reach the templates as plain strings and are escaped by Jinja2's autoescape.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import lru_cache

from markupsafe import Markup, escape

from attnquiz.engine.bank import images
from attnquiz.engine.export.text import html as html_export
from attnquiz.engine.variant import Question
from attnquiz.wording import LABELS, MARKS


def markdown(source: str, question: Question | None = None) -> Markup:
    """Bank Markdown with TeX maths: paragraphs, lists, tables, code and images (of ``question``'s
    bank folder), maths as MathML."""
    if _IMAGE not in source:
        return _remembered(source, block=True)
    with _images_of(question):
        return Markup(html_export.content(source))  # the export escapes every text node


def inline(source: str, question: Question | None = None) -> Markup:
    """Bank Markdown for a list item or a table cell (no paragraph tags)."""
    if _IMAGE not in source:
        return _remembered(source, block=False)
    with _images_of(question):
        return Markup(html_export.inline_content(source))  # the export escapes every text node


_IMAGE = "!["
"""Markdown's image syntax: a text with an image reads its file, which may change, so it is made
afresh each time."""


@lru_cache(maxsize=2048)
def _remembered(source: str, *, block: bool) -> Markup:
    """A text without images as HTML, made once: a question page is sent again at every reload and
    every answer of its session, and its Markdown and MathML are a pure function of the text."""
    made = html_export.content(source) if block else html_export.inline_content(source)
    return Markup(made)  # the export escapes every text node


def _images_of(question: Question | None) -> AbstractContextManager[None]:
    """Images of the text are found in the question's bank folder (shown as data URIs: the CSP
    allows ``img-src data:``)."""
    folder = getattr(question, "folder", "")
    return images.using(folder) if folder else nullcontext()


def figures(question: Question, where: str) -> Markup:
    """The variant's figures that belong ``where`` ("prompt" or "solution") as inline SVG."""
    return Markup("\n".join(html_export.figures(question, where)))  # the SVG escapes every label


def percent(fraction: float) -> str:
    """A fraction as a whole percentage: ``0.873`` → ``87%``."""
    return f"{round(100 * fraction)}%"


def score(value: float) -> str:
    """A score as the summary writes it: ``1``, ``0.5``, ``0.33``."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar of a chart: its label, its value as a fraction (0..1) and the text written at its end."""

    label: str
    fraction: float
    text: str


_ROW = 44
_BAR_WIDTH = 360
_CHART_WIDTH = _BAR_WIDTH + 110


def bar_chart(title: str, bars: Sequence[Bar]) -> Markup:
    """Horizontal bars, each under its label (so a phone's narrow screen keeps the text readable),
    drawn as SVG with presentation attributes only (the CSP forbids inline styles) and titles that
    screen readers read out."""
    height = max(1, len(bars)) * _ROW + 4
    rows = []
    for index, bar in enumerate(bars):
        y = index * _ROW
        width = max(0.0, min(1.0, bar.fraction)) * _BAR_WIDTH
        label = bar.label if len(bar.label) <= 56 else bar.label[:55] + "…"
        rows.append(
            f"<g><title>{escape(bar.label)}: {escape(bar.text)}</title>"
            f'<text x="0" y="{y + 15}" class="label">{escape(label)}</text>'
            f'<rect x="0" y="{y + 21}" width="{_BAR_WIDTH}" height="16" class="track"/>'
            f'<rect x="0" y="{y + 21}" width="{width:.1f}" height="16" class="fill"/>'
            f'<text x="{_BAR_WIDTH + 8}" y="{y + 34}" class="value">{escape(bar.text)}</text></g>'
        )
    return Markup(  # every text in it is escaped above
        f'<svg class="chart" role="img" viewBox="0 0 {_CHART_WIDTH} {height}" '
        f'width="{_CHART_WIDTH}" height="{height}" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>{''.join(rows)}</svg>"
    )


@dataclass(frozen=True, slots=True)
class Day:
    """One day of the activity chart."""

    label: str
    attempts: int
    accuracy: float
    self_rated: bool = False
    """Every answer of the day was a concept question's (self-rated, never scored): no accuracy."""


_DAY_WIDTH = 36
_DAY_HEIGHT = 120
_DAY_TOP = 18
"""Room above the tallest column for its count."""


def day_chart(title: str, days: Sequence[Day]) -> Markup:
    """Attempts per day as columns, each shaded by that day's accuracy (written under it)."""
    most = max((d.attempts for d in days), default=0) or 1
    width = max(1, len(days)) * _DAY_WIDTH + 8
    base = _DAY_TOP + _DAY_HEIGHT
    height = base + 26
    columns = []
    for index, day in enumerate(days):
        x = 4 + index * _DAY_WIDTH
        tall = day.attempts / most * _DAY_HEIGHT
        top = _DAY_TOP + _DAY_HEIGHT - tall
        detail = f"{day.attempts} answers, {percent(day.accuracy)} right" if day.attempts else "no answers"
        if day.self_rated:
            detail = f"{day.attempts} answers, self-rated (not scored)"
        level = (
            "none"
            if not day.attempts or day.self_rated
            else ("good" if day.accuracy >= 0.8 else "fair" if day.accuracy >= 0.5 else "poor")
        )
        columns.append(
            f"<g><title>{escape(day.label)}: {escape(detail)}</title>"
            f'<rect x="{x + 4}" y="{top:.1f}" width="{_DAY_WIDTH - 8}" height="{tall:.1f}" '
            f'class="day {level}"/>'
            f'<text x="{x + _DAY_WIDTH / 2}" y="{top - 3:.1f}" text-anchor="middle" class="count">'
            f"{day.attempts or ''}</text>"
            f'<text x="{x + _DAY_WIDTH / 2}" y="{base + 18}" text-anchor="middle" class="label">'
            f"{escape(day.label[-2:])}</text></g>"
        )
    return Markup(  # every text in it is escaped above
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<line x1="0" x2="{width}" y1="{base}" y2="{base}" class="axis"/>'
        f"{''.join(columns)}</svg>"
    )


__all__ = [
    "LABELS",
    "MARKS",
    "Bar",
    "Day",
    "bar_chart",
    "day_chart",
    "figures",
    "inline",
    "markdown",
    "percent",
    "score",
]
