"""Reading vectors and matrices: ``[0.881, 0.119]``, ``[1 2; 3 4]``, rows on separate lines.

The splitting of a response into nested lists of entries (brackets, commas, semicolons, new lines and
MATLAB's rule for spaces) is here too; `attnquiz.engine.answers.read_shapes` reads a shape's list of
dimensions with it.
"""

from __future__ import annotations

from collections.abc import Callable

from attnquiz.engine.answers.arithmetic import Expr, Val, number_from, read_literal
from attnquiz.engine.answers.parse import (
    FUNCTIONS,
    Invalid,
    Number,
    ReadError,
    Several,
    Structure,
    Token,
    as_written,
    canonical_name,
    check_words,
    clip,
    echo_structure,
    match_brackets,
    prepare,
    remembered,
    tokenize,
)

_OPERAND_STARTS = {"num", "name", "open", "sqrt"}


def _ends_operand(tok: Token) -> bool:
    if tok.kind == "name":
        return canonical_name(tok.text) not in FUNCTIONS
    return tok.kind in {"num", "close", "sup"} or (tok.kind == "op" and tok.text == "%")


def _starts_operand(tokens: list[Token], j: int) -> bool:
    tok = tokens[j]
    if tok.kind in _OPERAND_STARTS:
        return True
    # MATLAB's rule: "1 -2" is two entries, while "1 - 2" and "1 -  2" are one.
    if tok.kind == "op" and tok.text in "+-" and j + 1 < len(tokens):
        nxt = tokens[j + 1]
        return not nxt.space and nxt.kind in _OPERAND_STARTS
    return False


def _soften_newlines(tokens: list[Token]) -> list[Token]:
    """New lines separate rows only between two entries; elsewhere (after a comma, before a closing
    bracket, around an operator, blank lines) they are spaces."""
    kept: list[Token] = []
    pending = False
    for j, tok in enumerate(tokens):
        if tok.kind == "nl":
            prev = kept[-1] if kept else None
            nxt = tokens[j + 1] if j + 1 < len(tokens) else None
            hard = (
                prev is not None
                and nxt is not None
                and _ends_operand(prev)
                and (nxt.kind in _OPERAND_STARTS or (nxt.kind == "op" and nxt.text in "+-"))
            )
            if not hard:
                pending = True
                continue
        if pending:
            tok = Token(tok.kind, tok.text, tok.pos, True)
            pending = False
        kept.append(tok)
    return kept


Item = list["Item"] | tuple[int, int]  # a list of items, or the token span (start, end) of one entry


class _Lists:
    """Splits tokens into nested lists of entries: brackets; ``,`` between entries; ``;`` or a new
    line between rows; whitespace between two operands (MATLAB's rule)."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = _soften_newlines(tokens)
        self.partner = match_brackets(self.tokens)
        self.is_list = self._mark_lists()

    def splits(self, j: int) -> bool:
        """Whether the whitespace before token ``j`` separates two entries."""
        return (
            self.tokens[j].space
            and j > 0
            and _ends_operand(self.tokens[j - 1])
            and _starts_operand(self.tokens, j)
        )

    def _mark_lists(self) -> list[bool]:
        """Which opening brackets hold a list: every ``[`` and ``{``, and a ``(`` holding a separator."""
        marks = [tok.kind == "open" and tok.text != "(" for tok in self.tokens]
        stack: list[int] = []
        for j, tok in enumerate(self.tokens):
            if stack and (tok.kind in {"sep", "nl"} or self.splits(j)):
                marks[stack[-1]] = True
            if tok.kind == "open":
                stack.append(j)
            elif tok.kind == "close":
                stack.pop()
        return marks

    def top(self) -> tuple[list[Item], bool]:
        """The items of the whole response, and whether it was one bracketed list."""
        items = self.level(0, len(self.tokens))
        whole = bool(self.tokens) and self.is_list[0] and self.partner[0] == len(self.tokens) - 1
        return items, whole

    def level(self, start: int, end: int) -> list[Item]:
        """The items between ``start`` and ``end``; several rows become a list of rows."""
        rows: list[list[Item]] = [[]]
        j = entry = start
        after_separator = True
        while j < end:
            tok = self.tokens[j]
            if tok.kind in {"sep", "nl"}:
                if j > entry:
                    rows[-1].append((entry, j))
                elif tok.text == "," and after_separator:
                    raise ReadError(f"An entry is missing before the comma at character {tok.pos + 1}.")
                if tok.text != ",":
                    rows.append([])
                after_separator = True
                j = entry = j + 1
                continue
            if j > entry and self.splits(j):
                rows[-1].append((entry, j))
                entry = j
            after_separator = False
            if tok.kind == "open" and self.is_list[j]:
                if j != entry:
                    raise ReadError(f"Unexpected `{tok.text}` at character {tok.pos + 1}, inside an entry.")
                close = self.partner[j]
                follow = close + 1
                if follow < end and self.tokens[follow].kind not in {"sep", "nl"} and not self.splits(follow):
                    bad = self.tokens[follow]
                    raise ReadError(
                        f"Unexpected `{clip(bad.text)}` at character {bad.pos + 1}, after a bracket."
                    )
                rows[-1].append(self.level(j + 1, close))
                j = entry = close + 1
                continue
            j = self.partner[j] + 1 if tok.kind == "open" else j + 1
        if end > entry:
            rows[-1].append((entry, end))
        filled = [row for row in rows if row]
        if len(filled) <= 1:
            return filled[0] if filled else []
        # A row holding a single bracketed list is that list: "[1, 2]; [3, 4]".
        return [row[0] if len(row) == 1 and isinstance(row[0], list) else list(row) for row in filled]


Entry = Number | str
Nested = list["Nested"] | Entry
EntryReader = Callable[[list[Token], int, int], Entry]


def _read_entries(lists: _Lists, items: list[Item], read: EntryReader) -> list[Nested]:
    return [
        read(lists.tokens, item[0], item[1]) if isinstance(item, tuple) else _read_entries(lists, item, read)
        for item in items
    ]


def read_number(tokens: list[Token], start: int, end: int) -> Entry:
    """The entry ``tokens[start:end]`` read as a number (an `EntryReader`)."""
    tok = tokens[start]
    if end - start == 1 and tok.kind == "num":  # the common entry, without the expression machinery
        lit = read_literal(tok.text)
        return number_from(Val(lit.value, lit.text, lit))
    return number_from(Expr(tokens, start, end).parse())


def lists(text: str, read: EntryReader, *, names: bool) -> tuple[list[Nested], bool]:
    """The nested lists of entries of a response, each entry read by ``read``, and whether the whole
    response was one bracketed list; ``names`` lets entries be names (a shape's dimensions)."""
    clean = prepare(text)
    tokens = tokenize(clean if names else as_written(clean), grouping=False)
    check_words(tokens, names=names)
    lists = _Lists(tokens)
    items, whole = lists.top()
    return _read_entries(lists, items, read), whole


@remembered
def structure(text: str) -> Structure | Invalid:
    """Read a number, a vector or a matrix, whichever the response is.

    A vector is ``[0.881, 0.119]``, ``(0.881, 0.119)``, ``0.881 0.119`` or ``0.881, 0.119``; a
    matrix is ``[[1, 2], [3, 4]]``, ``[1 2; 3 4]``, ``1 2; 3 4`` or rows on separate lines. A
    single entry without brackets is a number. Ragged rows and deeper nesting are invalid.
    """
    try:
        values, whole = lists(text, read_number, names=False)
    except Several:
        return Invalid("Could not tell the entries apart: separate them with commas, e.g. [a, b].")
    except ReadError as err:
        return Invalid(err.reason, err.read_as)
    if whole:
        inner = values[0]
        values = inner if isinstance(inner, list) else [inner]
    elif len(values) == 1 and isinstance(values[0], Number):
        return values[0]
    if not values:
        return Invalid("The list is empty.")
    if all(isinstance(v, Number) for v in values):
        return tuple(v for v in values if isinstance(v, Number))
    if not all(isinstance(v, list) for v in values):
        return Invalid("The response mixes numbers and rows: write [a, b] or [[a, b], [c, d]].")
    rows: list[tuple[Number, ...]] = []
    for row in values:
        if not isinstance(row, list) or not all(isinstance(v, Number) for v in row):
            return Invalid("Too many levels of brackets: a matrix is a list of rows of numbers.")
        rows.append(tuple(v for v in row if isinstance(v, Number)))
    lengths = [len(r) for r in rows]
    if len(set(lengths)) != 1:
        shown = ", ".join(str(n) for n in lengths)
        return Invalid(
            f"The rows have different lengths ({shown}): every row needs the same number of entries.",
            "[" + ", ".join(echo_structure(r) for r in rows) + "]",
        )
    return tuple(rows)


__all__ = [
    "structure",
]
