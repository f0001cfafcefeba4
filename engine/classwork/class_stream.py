"""A class graded as a stream: rows read, graded and written to the marks one at a time.

`quiz grade BANK answers.csv` of a large class keeps, of each row, only what is still to be said
once the class is graded: the summary's sums and counts (`Tally`), the rows that could not be
graded, a line of the printed table of marks when the marks go to no file (`TableRow`), and, for
``--json`` or the report, the row itself in a spool file on disk (`RowSpool`) that is read back a
row at a time. The marks' CSV is written as the rows come; only the rows before the first one
graded wait (a row says the marks a student can earn, known from the first graded row).
"""

from __future__ import annotations

import codecs
import io
import json
import pickle
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.classwork.class_marks import Row, Summary, Tally, row_json
from attnquiz.engine.classwork.grading import ClassColumns, graded_file
from attnquiz.engine.classwork.marks_writer import MarksWriter

TableRow = tuple[int, str, str, str, float | None, str]
"""A row of the printed table of marks: line, student, name, code, the total (None for a row that
could not be graded), the named mistakes."""


def table_row(row: Row) -> TableRow:
    """What the printed table of marks shows of ``row``."""
    if not row.graded:
        return (row.line, row.student, row.name, row.code, None, "")
    mistakes = ", ".join(f"{c.item}: {c.mistake}" for c in row.cells if c.mistake)
    return (row.line, row.student, row.name, row.code, row.total, mistakes)


class RowSpool:
    """Rows kept on disk in file order (pickled to an unnamed temporary file) and read back one at a
    time, as often as asked: a class's rows for ``--json`` or the report, never all in memory."""

    def __init__(self) -> None:
        # Closed by `close` (or the end of a ``with`` block): it lives as long as the spool.
        self._file: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._pickler = pickle.Pickler(self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self.count = 0

    def add(self, row: Row) -> None:
        """Keep one row (after the rows kept before it)."""
        self._file.seek(0, io.SEEK_END)
        self._pickler.dump(row)
        self._pickler.clear_memo()  # each row on its own: nothing of the earlier rows is held
        self.count += 1

    def __iter__(self) -> Iterator[Row]:
        self._file.flush()
        self._file.seek(0)
        for _ in range(self.count):
            row = pickle.load(self._file)
            if not isinstance(row, Row):  # pragma: no cover - the file is this process's own
                raise TypeError("a row spool holds rows only")
            yield row

    def close(self) -> None:
        """Remove the file."""
        self._file.close()

    def __enter__(self) -> RowSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class StreamedClass:
    """What is left of a class graded as a stream: its columns, its summary's tally, the printed
    table's rows (when asked for) and the spooled rows (when asked for)."""

    columns: ClassColumns
    tally: Tally
    table: list[TableRow] | None = None
    spool: RowSpool | None = None

    # As the report reads a marked class (`attnquiz.engine.classwork.report.MarkedClass`).
    @property
    def file(self) -> str:
        """The answers file, as named to `grade_stream`."""
        return self.columns.file

    @property
    def items(self) -> tuple[str, ...]:
        """The columns of the marks."""
        return self.columns.items

    @property
    def rows(self) -> RowSpool:
        """The rows, read back from the spool (a class graded with one)."""
        if self.spool is None:
            raise ValueError("the class was graded without a row spool")
        return self.spool


def grade_stream(
    bank: Bank,
    path: Path,
    *,
    marks: IO[bytes] | None = None,
    table: bool = False,
    spool: RowSpool | None = None,
    master_seed: int | None = None,
    students: int | None = None,
    jobs: int = 1,
) -> StreamedClass:
    """Grade the answers file ``path`` a row at a time: the marks' CSV written to ``marks`` (its
    bytes, with the answers' byte-order mark) as the rows come, the rows added to ``spool``, and
    a `TableRow` each kept when ``table``."""
    with graded_file(bank, path, master_seed=master_seed, students=students, jobs=jobs) as (columns, rows):
        tally = Tally(columns.items)
        graded = StreamedClass(columns, tally, [] if table else None, spool)
        text = None
        writer = None
        if marks is not None:
            if columns.bom:
                marks.write(codecs.BOM_UTF8)
            text = io.TextIOWrapper(marks, encoding="utf-8", newline="", write_through=True)
            writer = MarksWriter(text, columns.items, columns.delimiter)
        out_of: float | None = None
        held: list[Row] = []
        for row in rows:
            tally.add(row)
            if spool is not None:
                spool.add(row)
            if graded.table is not None:
                graded.table.append(table_row(row))
            if writer is None:
                continue
            if out_of is None and row.graded:
                # The first graded row says what the columns are worth: the rows before it wait for it.
                out_of = tally.out_of
                for early in held:
                    writer.write(early, out_of)
                held.clear()
            if out_of is None:
                held.append(row)
            else:
                writer.write(row, out_of)
        if writer is not None and text is not None:
            for early in held:
                writer.write(early, tally.out_of)
            held.clear()
            text.flush()
            text.detach()  # the caller's file stays open
    return graded


def json_chunks(
    columns: ClassColumns, rows: Iterable[Row], summary: Summary, *, ensure_ascii: bool
) -> Iterator[str]:
    """The text of ``ClassMarks.to_json()`` as JSON with an indent of 2 (``json.dumps``'s own,
    character for character), made a row at a time."""

    def dumps(data: Any) -> str:
        return json.dumps(data, ensure_ascii=ensure_ascii, indent=2, separators=(",", ": "))

    head = dumps({"bank": columns.bank, "file": columns.file, "items": list(columns.items), "rows": []})
    yield head[: -len("[]\n}")]
    first = True
    for row in rows:
        yield ("[\n" if first else ",\n") + _indented(dumps(row_json(row)), "    ", first_line=True)
        first = False
    yield "[]" if first else "\n  ]"
    yield ',\n  "summary": ' + _indented(dumps(summary.to_json()), "  ", first_line=False) + "\n}"


def _indented(text: str, margin: str, *, first_line: bool) -> str:
    """``text`` with ``margin`` before each line (the first one too when ``first_line``)."""
    lines = text.split("\n")
    return "\n".join((margin if first_line or k else "") + line for k, line in enumerate(lines))


__all__ = ["RowSpool", "StreamedClass", "TableRow", "grade_stream", "json_chunks", "table_row"]
