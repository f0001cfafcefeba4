"""Reading the letters of a choice: ``B``, ``(b)``, ``A, C, D``, ``acd``, ``A and C``."""

from __future__ import annotations

import re

from attnquiz.engine.answers.parse import (
    MAX_LENGTH,
    Invalid,
    ReadError,
    clip,
    describe_char,
    prepare,
    remembered,
)

_CHOICE_SPLIT = re.compile(r"[\s,;/&+()\[\]{}]+")


@remembered
def letters(text: str, options: str, *, multiple: bool) -> frozenset[str] | Invalid:
    """Read the letters of a choice: ``B``, ``b``, ``(b)``, ``B.``, ``A, C, D``, ``acd``, ``C D A``,
    ``A and C``, ``{A,C}``. Duplicates are ignored; letters outside ``options`` and an empty
    selection are invalid, and a single-choice item takes exactly one letter."""
    span = f"{options[0]}–{options[-1]}"
    try:
        clean = prepare(text)
    except ReadError as err:
        if len(text) > MAX_LENGTH:
            return Invalid(err.reason)
        return Invalid(f"No option chosen: type the letter{'s' if multiple else ''} of your choice ({span}).")
    words = [w.rstrip(".):") for w in _CHOICE_SPLIT.split(clean)]
    chosen: set[str] = set()
    for word in words:
        if not word or word.lower() == "and":
            continue
        bad = next((ch for ch in word if not (ch.isascii() and ch.isalpha())), None)
        if bad is not None:
            return Invalid(f"Unexpected {describe_char(bad)}: type the letters of your choice ({span}).")
        outside = sorted({ch.upper() for ch in word} - set(options))
        if outside and len(word) > 1 and len(outside) > 1:
            return Invalid(f"`{clip(word)}` is not a choice: type the letters of your choice ({span}).")
        if outside:
            return Invalid(f"There is no option {', '.join(outside)}: the options are {span}.")
        chosen.update(ch.upper() for ch in word)
    if not chosen:
        return Invalid(f"No option chosen: type the letter{'s' if multiple else ''} of your choice ({span}).")
    if not multiple and len(chosen) > 1:
        shown = ", ".join(sorted(chosen))
        return Invalid(f"Choose one option only (read {shown}).", shown)
    return frozenset(chosen)


__all__ = [
    "letters",
]
