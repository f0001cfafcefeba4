"""Whole numbers a person types (form fields, command options, cells of a file): one total reader.

``str.isdigit`` is true of ``²`` and ``١``, and ``int`` refuses the first, reads the second, takes
``1_000`` and refuses more than 4,300 digits: a check with one and a conversion with the other is a
``ValueError`` (a traceback, a 500) waiting for the right character. Here a whole number is ASCII
digits only, at most `MAX_DIGITS` of them, and anything else is None, or one line that says what
was expected.
"""

from __future__ import annotations

from attnquiz.engine.errors import QuizError

MAX_DIGITS = 12
"""More digits than any count, seed (2**32) or position quiz takes."""


class NumberFieldError(QuizError):
    """A typed whole number that is not one, or not in its range."""


def whole(text: str) -> int | None:
    """The whole number ``text`` is (spaces around it allowed), or None."""
    cleaned = text.strip()
    if 0 < len(cleaned) <= MAX_DIGITS and cleaned.isascii() and cleaned.isdigit():
        return int(cleaned)
    return None


def whole_in(text: str, low: int, high: int, name: str) -> int:
    """The whole number from ``low`` to ``high`` that ``text`` is, or `NumberFieldError` naming ``name``."""
    value = whole(text)
    if value is None or not low <= value <= high:
        shown = text.strip()[:20]
        raise NumberFieldError(f"{name} must be a whole number from {low} to {high}, not {shown!r}")
    return value


__all__ = ["MAX_DIGITS", "NumberFieldError", "whole", "whole_in"]
