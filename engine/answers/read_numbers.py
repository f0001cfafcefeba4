"""Reading one number: ``1.93``, ``589,824``, ``2*tanh(2)``, ``35%``, refusing a decimal comma or a list.

The checks that only a single number needs (a decimal comma, a percent sign) are here; the
expression is evaluated by `attnquiz.engine.answers.arithmetic`.
"""

from __future__ import annotations

from attnquiz.engine.answers.arithmetic import Expr, number_from
from attnquiz.engine.answers.parse import (
    Invalid,
    Number,
    ReadError,
    Several,
    Token,
    as_written,
    check_words,
    clip,
    echo_structure,
    match_brackets,
    prepare,
    remembered,
    tokenize,
)
from attnquiz.engine.answers.read_matrices import structure


@remembered
def number(text: str, *, allow_percent: bool = False) -> Number | Invalid:
    """Read one number, or an arithmetic expression of numbers.

    Commas, spaces or underscores between groups of three digits group thousands (``589,824``,
    ``589 824``, ``589_824``); ``0,35`` is refused with a request for a point. ``35%`` is read as
    0.35 where ``allow_percent``, after a single number only. A list of numbers is invalid here.
    """
    try:
        clean = as_written(prepare(text))
        tokens = tokenize(clean, grouping=True)
        check_words(tokens, names=False)
        _check_decimal_comma(tokens)
        _check_percent(tokens, allow_percent)
        match_brackets(tokens)
        return number_from(Expr(tokens, 0, len(tokens), allow_percent=allow_percent).parse())
    except Several:
        return _several_numbers(clean)
    except ReadError as err:
        return Invalid(err.reason, err.read_as)


def _several_numbers(text: str) -> Invalid:
    """The message for a list where one number was expected, showing the list when it can be read."""
    found = structure(text)
    if isinstance(found, tuple):
        return Invalid(
            "Expected a single number, but read a list. Write decimals with a point and products with `*`.",
            echo_structure(found),
        )
    if isinstance(found, Invalid) and "several" not in found.reason:
        return Invalid(f"Expected a single number, but read several. {found.reason}", found.read_as)
    return Invalid("Expected a single number, but read several. Write products with `*`.")


def _check_decimal_comma(tokens: list[Token]) -> None:
    """``0,35`` (a decimal comma) and ``1234,567`` (misplaced grouping) are refused with advice."""
    for a, sep, b in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if a.kind != "num" or sep.text != "," or b.kind != "num" or sep.space or b.space:
            continue
        pair = clip(f"{a.text},{b.text}")
        # 1234,567 misplaces a grouping comma; 0,622 (no group of thousands starts with 0) is a decimal.
        if b.text.isdigit() and len(b.text) == 3 and a.text.isdigit() and not a.text.startswith("0"):
            raise ReadError(f"`{pair}`: commas group thousands in threes (589,824).")
        raise ReadError(
            f"`{pair}`: write decimals with a point ({clip(a.text)}.{clip(b.text)}), not a comma."
        )


def _check_percent(tokens: list[Token], allowed: bool) -> None:
    """A percent sign only ends a single number: ``35%`` or ``-2.5%``."""
    if not any(tok.kind == "op" and tok.text == "%" for tok in tokens):
        return
    if not allowed:
        raise ReadError("A percent sign is not expected here: give the number as a decimal (35% is 0.35).")
    kinds = [(tok.kind, tok.text) for tok in tokens]
    if kinds and kinds[0] in {("op", "-"), ("op", "+")}:
        kinds = kinds[1:]
    if len(kinds) != 2 or kinds[0][0] != "num" or kinds[1] != ("op", "%"):
        raise ReadError("A percent sign may only follow a single number, as in 35%.")


__all__ = [
    "number",
]
