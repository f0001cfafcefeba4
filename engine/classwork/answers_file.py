"""Reading an answers file: its bytes checked, its dialect, its header row, then its rows one at a time.

A file on disk is checked whole first (its size, that it is text, that it is UTF-8: an error names
the line) without being held, then read again a row at a time, so that a class of any size is
graded without its file, or its rows, in memory at once; a pipe, which cannot be read twice, is
read whole (it is capped at `MAX_FILE_BYTES`). The header's columns are told apart here: who a row
is (`ID_COLUMNS`), the questions by their item ids, the parts of a question in parts, and the
mark columns of concept questions.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import difflib
import io
import os
import re
import stat
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.capped import TooLarge, read_capped
from attnquiz.engine.errors import QuizError
from attnquiz.engine.plan.columns import mark_column

ID_COLUMNS = {
    "student": "student",
    "student number": "student",
    "student_number": "student",
    "number": "student",
    "code": "code",
    "variant": "code",
    "variant code": "code",
    "variant_code": "code",
    "name": "name",
}
"""Header names (case-insensitive) of the columns that say who a row is, and their meaning."""

MAX_FILE_BYTES = 20_000_000
"""The largest answers file read (bytes)."""


class AnswersFileError(QuizError):
    """An answers file that cannot be read as a class's answers at all."""


@dataclass
class Header:
    """Which column holds what."""

    student: int | None = None
    code: int | None = None
    name: int | None = None
    items: list[tuple[int, str]] = field(default_factory=list)
    # Columns of one part of a question in parts, headed "3a ITEM" (or "ITEM (a)"): (index, item, label).
    parts: list[tuple[int, str, str]] = field(default_factory=list)
    # Each part column's heading as the file writes it, by (item, label): the marks keep it.
    headings: dict[tuple[str, str], str] = field(default_factory=dict)
    # The mark columns of concept questions, headed "ITEM mark" or "ITEM mark (0-4)": item → (index,
    # heading, the most it says a mark can be, or None).
    marks: dict[str, tuple[int, str, int | None]] = field(default_factory=dict)
    width: int = 0


def decode(data: bytes, file: str) -> str:
    """The text of an answers file (UTF-8, with or without the BOM spreadsheets write)."""
    if len(data) > MAX_FILE_BYTES:
        raise AnswersFileError(f"{file}: too large for an answers file ({len(data):,} bytes)")
    if b"\x00" in data[:4096]:
        raise AnswersFileError(f"{file}: not a text file (save the sheet as CSV)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise AnswersFileError(f"{file}:{line}: not UTF-8 text (save the sheet as 'CSV UTF-8')") from exc


@contextlib.contextmanager
def opened(path: Path) -> Iterator[tuple[TextIO, bool]]:
    """An answers file on disk as text to read as it goes, and whether it began with a byte-order mark.

    The file is checked whole first, as `decode` checks it (and with its messages), a block at a
    time; then read again from the start. A pipe or a device cannot be read twice: it is read whole.
    """
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise AnswersFileError(f"{path}: cannot read the answers file ({exc.strerror or exc})") from exc
    with handle:
        try:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                data = read_capped(path, MAX_FILE_BYTES)
                yield io.StringIO(decode(data, str(path)), newline=""), data.startswith(codecs.BOM_UTF8)
                return
            bom = _checked(handle, str(path))
            handle.seek(0)
        except TooLarge as exc:
            raise AnswersFileError(f"{path}: {exc.said('an answers file')}") from None
        except OSError as exc:
            raise AnswersFileError(f"{path}: cannot read the answers file ({exc.strerror or exc})") from exc
        with io.TextIOWrapper(handle, encoding="utf-8-sig", newline="") as text:
            yield text, bom


_BLOCK = 1 << 20


def _checked(handle: BinaryIO, file: str) -> bool:
    """Check a regular file as `read_capped` and `decode` would, a block at a time (the same errors,
    with the same line); whether it begins with a byte-order mark."""
    size = os.fstat(handle.fileno()).st_size
    if size > MAX_FILE_BYTES:
        raise TooLarge(MAX_FILE_BYTES, size)
    start = handle.read(_BLOCK)
    bom = start.startswith(codecs.BOM_UTF8)
    # `decode` reads the line of a bad byte from its offset in the text without the byte-order mark,
    # counted in the file's bytes: the same offset, counted the same way, names the same line.
    skipped = len(codecs.BOM_UTF8) if bom else 0
    read, lines, carry, tail, block = 0, 0, b"", b"", start
    while True:
        read += len(block)
        if read > MAX_FILE_BYTES:
            raise TooLarge(MAX_FILE_BYTES, None)
        before = read - len(block)  # bytes of the file before this block
        if before < 4096 and b"\x00" in block[: 4096 - before]:
            raise AnswersFileError(f"{file}: not a text file (save the sheet as CSV)")
        data = carry + block
        end = len(data) if not block else data.rfind(b"\n") + 1
        piece, carry = data[:end], data[end:]
        offset = read - len(data)  # of ``piece`` in the file
        try:
            piece.decode("utf-8-sig" if offset == 0 else "utf-8")
        except UnicodeDecodeError as exc:
            # Into ``piece``: the first piece is decoded past the mark, so its offsets are the text's.
            at = exc.start - (skipped if offset else 0)
            line = lines + piece[: max(0, at)].count(b"\n") - (tail[at:].count(b"\n") if at < 0 else 0)
            raise AnswersFileError(
                f"{file}:{line + 1}: not UTF-8 text (save the sheet as 'CSV UTF-8')"
            ) from exc
        lines += piece.count(b"\n")
        tail = (tail + piece)[-len(codecs.BOM_UTF8) :]
        if not block:
            return bom
        block = handle.read(_BLOCK)


def read_start(stream: TextIO) -> tuple[str, bool]:
    """The delimiter of the answers in ``stream`` (read from its first line that is not blank) and
    whether the text begins with a byte-order mark; the stream is left at its start, past that mark."""
    seen = ""
    while True:
        piece = stream.read(max(65_536, len(seen)))
        seen += piece
        body = seen.removeprefix("\ufeff").lstrip("\r\n")
        if "\n" in body or not piece:
            break
    bom = seen.startswith("\ufeff")
    stream.seek(0)
    if bom:
        stream.read(1)
    return _dialect(body.split("\n", 1)[0]), bom


def _dialect(first_line: str) -> str:
    """The delimiter a spreadsheet used: tab, semicolon (in comma-decimal locales) or comma."""
    if "\t" in first_line:
        return "\t"
    if first_line.count(";") > first_line.count(","):
        return ";"
    return ","


def csv_rows(stream: TextIO, delimiter: str) -> Generator[tuple[int, list[str]], None, None]:
    """CSV rows with the line each starts on (a quoted cell may span lines), read as they are asked for.

    The csv module refuses a cell over its field limit with an error that would end the whole
    class; the limit is lifted to the file size while reading, and `grade_text` turns a long
    cell into a row that is not graded.
    """
    reader = csv.reader(stream, delimiter=delimiter)
    line = 1
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, MAX_FILE_BYTES))
    try:
        for row in reader:
            yield line, row
            line = reader.line_num + 1
    finally:
        csv.field_size_limit(limit)


def read_header(cells: list[str], bank: Bank, file: str) -> Header:
    """The header row's columns told apart (`AnswersFileError` for one that names nothing of ``bank``)."""
    header = Header(width=len(cells))
    ids = [entry.id for entry in bank.items]
    seen: dict[str, int] = {}
    for index, raw in enumerate(cells):
        label = raw.strip()
        role = ID_COLUMNS.get(label.lower())
        key = role or label
        if key in seen:
            raise AnswersFileError(
                f"{file}:1: column {label!r} appears twice (columns {seen[key] + 1} and {index + 1})"
            )
        seen[key] = index
        part = part_heading(label)
        marked = _MARK_COLUMN.fullmatch(label)
        if role is not None:
            setattr(header, role, index)
        elif label in ids:
            header.items.append((index, label))
        elif part is not None and part[0] in ids:
            header.parts.append((index, *part))
            header.headings[part] = label
        elif marked is not None and marked.group(1) in ids:
            item = marked.group(1)
            if item in header.marks:
                earlier = header.marks[item][0]
                raise AnswersFileError(
                    f"{file}:1: {item} has two mark columns (columns {earlier + 1} and {index + 1})"
                )
            most = int(marked.group(2)) if marked.group(2) is not None else None
            header.marks[item] = (index, label, most)
        elif _BARE_PART.fullmatch(label):
            raise AnswersFileError(
                f"{file}:1: column {label!r} names a part but not its question: head it `{label} ITEM` with "
                f"the item id (`quiz grade {bank.name} --template` writes the headings)"
            )
        elif not label:
            raise AnswersFileError(f"{file}:1: column {index + 1} has no name (name it after an item id)")
        else:
            close = difflib.get_close_matches(label, ids, n=1, cutoff=0.6)
            hint = (
                f" (did you mean {close[0]}?)" if close else f"; `quiz list {bank.name}` shows the item ids"
            )
            raise AnswersFileError(
                f"{file}:1: column {label!r} is neither student, code nor name, nor an item of bank "
                f"{bank.name!r}{hint}"
            )
    if header.student is None and header.code is None:
        raise AnswersFileError(
            f"{file}:1: the first row must name the columns: `student` or `code` (or both), optionally "
            f"`name`, then one column per question headed by its item id (`quiz grade {bank.name} "
            "--template` writes one)"
        )
    if not header.items and not header.parts and not header.marks:
        raise AnswersFileError(f"{file}:1: no column is headed by an item id of bank {bank.name!r}")
    _check_mark_columns(header, bank, file)
    return header


_MARK_COLUMN = re.compile(r"(.+?)\s+mark(?:\s*\(\s*0\s*[-\u2013]\s*(\d{1,3})\s*\))?", re.IGNORECASE)
"""The column of a concept question's marks by hand: ``why-scale mark (0-4)``, or ``why-scale mark``."""


def _check_mark_columns(header: Header, bank: Bank, file: str) -> None:
    """Each mark column belongs to a concept question, and says the right most a mark can be."""
    for item, (_, heading, most) in header.marks.items():
        try:
            answer = bank.get(item).question(0).answer  # a concept question is the same for every seed
        except QuizError:
            continue  # an item that cannot be built: each row says why
        if not isinstance(answer, ExplainAnswer):
            raise AnswersFileError(
                f"{file}:1: column {heading!r}: {item} is not a concept question, and only a concept "
                "question's answers are marked by hand (quiz grade marks the others)"
            )
        n = len(answer.points)
        if most is not None and most != n:
            raise AnswersFileError(
                f"{file}:1: column {heading!r}: {item} has {n} key points, a mark each, so its marks are "
                f"0 to {n} (head the column {mark_column(item, n)!r})"
            )


_PART_COLUMN = re.compile(r"(\d+)([a-z])\s+(\S.*)")
"""A column of one part of a question in parts: ``3a params-chain`` (question 3, part (a))."""
_OLD_PART_COLUMN = re.compile(r"(.+?)\s*\(([a-z])\)")
"""The heading files written before the question numbers had, still read: ``params-chain (a)``."""
_BARE_PART = re.compile(r"\d+[a-z]")


def part_heading(heading: str) -> tuple[str, str] | None:
    """(item, label) of a part column's heading, in either form; None for any other heading."""
    new = _PART_COLUMN.fullmatch(heading)
    if new is not None:
        return new.group(3).strip(), new.group(2)
    old = _OLD_PART_COLUMN.fullmatch(heading)
    return (old.group(1), old.group(2)) if old is not None else None


__all__ = [
    "ID_COLUMNS",
    "MAX_FILE_BYTES",
    "AnswersFileError",
    "Header",
    "csv_rows",
    "decode",
    "opened",
    "part_heading",
    "read_header",
    "read_start",
]
