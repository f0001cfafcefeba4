"""``marks.csv``: a class's marks written in its answers file's dialect, whole or a row at a time.

Who, the marks of each question (its score times what it is worth: a part its weight), total, out
of, the named mistakes, notes. The delimiter, the decimal mark (a comma in a ``;`` file) and the
byte-order mark are the answers file's, so the instructor's spreadsheet opens the marks as it
opened the answers; a text cell that a spreadsheet would run as a formula is neutralised as OWASP
advises (a leading ``'``). `MarksWriter` writes the rows as they come (a class graded as a stream);
`marks_csv` and `marks_file` write a `ClassMarks` whole, through it.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from typing import TextIO

from attnquiz.engine.classwork.class_marks import AWAITING, AWAITS_REVIEW, ClassMarks, Row

# A spreadsheet runs a cell that starts with one of these as a formula (OWASP: CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")


def _text_cell(text: str) -> str:
    """A text cell as OWASP advises: one that a spreadsheet would run as a formula gets a leading ``'``.

    A plain number (``-3``) is left as it is: a spreadsheet reads it as that number, never a formula.
    """
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


class MarksWriter:
    """The marks' CSV written to ``out`` a row at a time: the header row when made, then `write`."""

    def __init__(self, out: TextIO, items: tuple[str, ...], delimiter: str) -> None:
        self._writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
        self._items = items
        self._decimal_comma = delimiter == ";"
        self._writer.writerow(
            ["line", "student", "name", "code", *items, "total", "out_of", "mistakes", "notes"]
        )

    def number(self, score: float) -> str:
        """A number of marks as the marks write it: 3 decimals at most, the file's decimal mark."""
        text = f"{score:.3f}".rstrip("0").rstrip(".")
        return text.replace(".", ",") if self._decimal_comma else text

    def write(self, row: Row, out_of: float) -> None:
        """One row of the marks (``out_of``: the marks a student can earn, on every row)."""
        writer = self._writer
        said_out_of = self.number(out_of)
        who = [row.line, _text_cell(row.student), _text_cell(row.name), _text_cell(row.code)]
        if not row.graded:
            blanks = [""] * len(self._items)
            note = _text_cell(f"not graded: {row.problem}")
            writer.writerow([*who, *blanks, "", said_out_of, "", note])
            return
        mistakes = "; ".join(f"{c.item}: {c.mistake}" for c in row.cells if c.mistake)
        said = {"blank": "no answer", "invalid": "could not be read", "unmarked": "awaits a mark by hand"}
        notes = "; ".join(
            f"{c.item}: not graded: {c.problem}"
            if c.problem
            else f"{c.item}: {AWAITS_REVIEW} ({c.review})"
            if c.status == "review"
            else f"{c.item}: {said[c.status]}"
            for c in row.cells
            if c.problem or c.status in said or c.status == "review"
        )
        # An answer awaiting its mark or the scan's review, or whose mark is not one, has no score
        # yet (an empty cell, not a 0 that looks like one).
        scores = ["" if c.status in AWAITING or c.problem else self.number(c.marks) for c in row.cells]
        writer.writerow(
            [*who, *scores, self.number(row.total), said_out_of, _text_cell(mistakes), _text_cell(notes)]
        )


def marks_csv(marks: ClassMarks) -> str:
    """The marks as CSV: who, the marks of each question (its score times what it is worth: a part
    its weight), total, out of, the named mistakes, notes.

    Written in the answers file's own dialect: its delimiter, and a decimal comma in a ``;`` file.
    """
    buffer = io.StringIO()
    writer = MarksWriter(buffer, marks.items, marks.delimiter)
    out_of = marks.out_of
    for row in marks.rows:
        writer.write(row, out_of)
    return buffer.getvalue()


def marks_file(marks: ClassMarks) -> bytes:
    """The bytes of ``marks.csv``: `marks_csv` in UTF-8, with the byte-order mark if the answers had one."""
    return (codecs.BOM_UTF8 if marks.bom else b"") + marks_csv(marks).encode("utf-8")


__all__ = ["MarksWriter", "marks_csv", "marks_file"]
