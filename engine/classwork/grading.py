"""Grading a class: answers.csv → each student's variants rebuilt from their seed → marks and a summary.

The file has a header row naming its columns: ``student`` (the number on the worksheet) and/or
``code`` (the variant code printed on it), optionally ``name``, then one column per question,
headed by the item's id (``quiz grade BANK --template`` writes such a file for a class). Each
cell is graded by `attnquiz.engine.grading.grade.grade`, the grader every other part of quiz uses. A row
that
cannot be graded (an unknown student, a student given twice, a bad code, missing cells, a cell
too long) is reported with its line number and kept in the marks with the reason, never dropped
nor counted in the class's means; a file that cannot be read at all (not text, no header, a
column that names no item) is an error.

Spreadsheets in comma-decimal locales save CSV with ``;`` between cells and ``,`` as the decimal
mark (``2,75``): in such a file a cell that is one number with a decimal comma is read as that
number. The marks are written back the way the answers came (the same delimiter, decimal mark
and byte-order mark), so the instructor's spreadsheet opens them as it opened the answers; a text
cell that a spreadsheet would run as a formula is neutralised as OWASP advises (a leading ``'``;
`attnquiz.engine.classwork.marks_writer`).

The file is read (`attnquiz.engine.classwork.answers_file`) and graded a row at a time
(`graded_stream`, `graded_file`): a large class is never in memory whole unless its caller keeps
every row (`grade_text`, `grade_file`: a `ClassMarks`). Its summary is gathered row by row
(`attnquiz.engine.classwork.class_marks.Tally`), with the same numbers either way.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.bank.loaded import Bank, BankItem
from attnquiz.engine.classwork.answers_file import (
    AnswersFileError,
    csv_rows,
    opened,
    read_header,
    read_start,
)
from attnquiz.engine.classwork.class_marks import AWAITS_REVIEW, Cell, CellStatus, ClassMarks, Row
from attnquiz.engine.errors import QuizError, VariantCodeError
from attnquiz.engine.grading.grade import grade
from attnquiz.engine.grading.outcome import Status
from attnquiz.engine.grading.parts import grade_parts
from attnquiz.engine.parallel import ordered_map
from attnquiz.engine.plan.class_plan import student_seed
from attnquiz.engine.seeding import ORIGINAL_CODE, QuestionStreams, seed_from_code, variant_code
from attnquiz.engine.typed_numbers import whole
from attnquiz.engine.variant import Question


def review_feedback(marker: str) -> str:
    """What a student's page and the marks say of a cell left for the scan's review."""
    return (
        f"This answer {AWAITS_REVIEW} ({marker.strip()}): settle it with `quiz scan --fix` (or "
        "`quiz serve --scan`) and grade again. It counts 0 until then."
    )


def is_under_review(text: str) -> bool:
    """Whether a cell is one `quiz scan` left for review: ``?review N`` exactly (a bare ``?review`` is
    an answer like any other, and graded as one)."""
    marker = text.strip()
    return marker.startswith(UNDER_REVIEW) and marker[len(UNDER_REVIEW) :].strip().isdigit()


def _cell_status(status: Status) -> CellStatus:
    """A grade's status as a cell's: an unscored (concept) answer awaits its mark by hand."""
    return "unmarked" if status == "unscored" else status


MAX_CELL_CHARS = 131_072
"""A longer cell makes its row "not graded: cell too long" (Python's own CSV default limit)."""


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


# One number written with a decimal comma, as a comma-decimal spreadsheet saves it (2,75  -0,5  1,5E-06).
_DECIMAL_COMMA = re.compile(r"[-+\u2212]?\d*,\d+(?:[eE][-+]?\d+)?")


def _response(cell: str, decimal_comma: bool) -> str:
    text = cell.strip()
    if decimal_comma and _DECIMAL_COMMA.fullmatch(text):
        return text.replace(",", ".")
    return text


def _part_cells(
    question: Question, responses: dict[str, str], decimal_comma: bool, headings: dict[tuple[str, str], str]
) -> list[Cell]:
    """The cells of one question in parts, graded together so that errors carry forward.

    Only the parts whose columns the file has get a cell; a part without a column is graded as
    unanswered (it carries nothing forward)."""
    labels = question.variant.answer.labels  # type: ignore[union-attr]
    unknown = sorted(set(responses) - set(labels))
    if unknown:
        raise _RowProblem(f"{question.item_id} has no part ({unknown[0]}); its parts are {', '.join(labels)}")
    texts = [_response(responses.get(label, ""), decimal_comma) for label in labels]
    # A part left for the scan's review is graded as unanswered (it carries nothing forward) and
    # said as in review, never read as an answer.
    review = [is_under_review(text) for text in texts]
    heard = ["" if held else text for text, held in zip(texts, review, strict=True)]
    result = grade_parts(question.variant.answer, heard)  # type: ignore[arg-type]
    cells: list[Cell] = []
    for text, held, graded in zip(texts, review, result.parts, strict=True):
        if graded.label not in responses:
            continue
        column = headings[question.item_id, graded.label]
        worth = graded.weight
        if held:
            cells.append(
                Cell(column, text, "review", 0.0, None, review_feedback(text), worth=worth, review=text)
            )
            continue
        if not text:
            cells.append(Cell(column, "", "blank", 0.0, None, "No answer.", worth=worth))
            continue
        part = graded.grade
        mistake = part.mistake.tag if part.mistake is not None else None
        status = _cell_status(part.status)
        cells.append(Cell(column, text, status, part.score, mistake, part.feedback, worth=worth))
    return cells


# ---------------------------------------------------------------------------------------------
# Grading
# ---------------------------------------------------------------------------------------------


class _RowProblem(Exception):
    """A reason a row cannot be graded (reported with its line; the other rows go on)."""


def _seed_of(
    student: str, code: str, master_seed: int | None, students: int | None
) -> tuple[int | None, str]:
    """The row's seed (None for the past papers' own questions) and its variant code."""
    number: int | None = None
    if student:
        number = whole(student)
        if number is None:
            raise _RowProblem(f"student {student[:20]!r} is not a student number")
        if number < 1 or (students is not None and number > students):
            limit = f" (the class has students 1 to {students})" if students is not None else ""
            raise _RowProblem(f"unknown student {number}{limit}")
    if code:
        if code.strip().lower() == ORIGINAL_CODE:
            return None, ORIGINAL_CODE
        try:
            seed = seed_from_code(code)
        except VariantCodeError as exc:
            raise _RowProblem(str(exc)) from None
        if number is not None and master_seed is not None:
            expected = variant_code(student_seed(master_seed, number))
            if expected != variant_code(seed):
                raise _RowProblem(
                    f"student {number} has variant {expected} with --seed {master_seed}, but the row says "
                    f"{code.strip()}: check the code, the student number and the seed"
                )
        return seed, variant_code(seed)
    if number is None:
        raise _RowProblem("the row gives neither a student number nor a variant code")
    if master_seed is None:
        raise _RowProblem(
            f"student {number} has no variant code in the file, and no --seed was given to rebuild it"
        )
    if students is None:
        # Any number rebuilds some sheet from the seed: without the class size, a typo (student 13
        # for 31) or a stranger would be graded on a sheet nobody had and counted in the means.
        raise _RowProblem(
            f"student {number} has no variant code in the file, and without --students (the class "
            "size) quiz cannot tell whether that student exists: give --students N or the sheet's code"
        )
    seed = student_seed(master_seed, number)
    return seed, variant_code(seed)


def _question(entry: BankItem, seed: int | None, streams: QuestionStreams | None = None) -> Question:
    return entry.original() if seed is None else entry.question(seed, streams)


def _cell(question: Question, response: str, decimal_comma: bool = False) -> Cell:
    text = _response(response, decimal_comma)
    if not text:
        return _blank(question.item_id)
    if is_under_review(text):  # `quiz scan` could not decide it: never graded as an answer
        return Cell(question.item_id, text, "review", 0.0, None, review_feedback(text), review=text)
    result = grade(question, text)
    mistake = result.mistake.tag if result.mistake is not None else None
    return Cell(question.item_id, text, _cell_status(result.status), result.score, mistake, result.feedback)


@functools.lru_cache(maxsize=1024)  # one cell an item, the same in every row (a Cell is immutable)
def _blank(item: str) -> Cell:
    return Cell(item, "", "blank", 0.0, None, "No answer.")


UNDER_REVIEW = "?review "
"""How `quiz scan` writes a cell it left for review (its ``REVIEW_PREFIX``; scan is a layer above)."""
_MARK = re.compile(r"\+?(\d{1,4}(?:[.,]\d{1,4})?)")


def _concept_cell(
    question: Question, answer: ExplainAnswer, response: str, mark_text: str, heading: str
) -> Cell:
    """A concept question's cell: the answer kept as written, never scored by its text; the mark given
    by hand (0 to the number of key points) is its score, as a share of the question's one mark."""
    text = response.strip()
    points = len(answer.points)
    given = mark_text.strip()
    for cell in (given, text):  # a mark (or an answer) the scan could not read: not a mark, not "invalid"
        if is_under_review(cell):
            return Cell(
                question.item_id, text, "review", 0.0, None, review_feedback(cell), None, points, review=cell
            )
    if not given:
        if not text:
            return Cell(question.item_id, "", "blank", 0.0, None, "No answer.", None, points)
        awaiting = f"Awaiting a mark by hand (0 to {points}, a mark for each key point)."
        return Cell(question.item_id, text, "unmarked", 0.0, None, awaiting, None, points)
    number = _MARK.fullmatch(given)
    mark = float(number.group(1).replace(",", ".")) if number is not None else None
    if mark is None or mark > points:
        # That one cell's problem: the row's other answers are graded, and this one earns nothing
        # until the mark is fixed (said in the marks and the summary, never silently a 0).
        problem = (
            f"column {heading!r}: the mark {given[:20]!r} is not a number from 0 to {points} (a mark for "
            f"each key point of {question.item_id})"
        )
        return Cell(question.item_id, text, "invalid", 0.0, None, problem, None, points, problem=problem)
    status: CellStatus = "correct" if mark == points else "wrong" if mark == 0 else "partial"
    feedback = f"Marked by hand: {mark:g} of {points} key points."
    return Cell(question.item_id, text, status, mark / points, None, feedback, mark, points)


def _row_cells(
    columns: list[tuple[int, str, str | None]],
    entries: dict[str, BankItem],
    seed: int | None,
    cells: list[str],
    decimal_comma: bool,
    headings: dict[tuple[str, str], str],
    marks: dict[str, tuple[int, str, int | None]] | None = None,
    mark_only: frozenset[str] = frozenset(),
    streams: QuestionStreams | None = None,
    concepts: dict[str, Question] | None = None,
) -> Iterator[Cell]:
    """One row's cells in column order; the parts of one question are graded together; a concept
    question's answer is kept, with the mark from its mark column (``marks``), if any (``mark_only``:
    the concept questions whose only column is the mark); ``streams``: the seed's random streams of
    the row's items, seeded at once; ``concepts``: the concept questions built for earlier rows."""
    by_part: dict[str, list[Cell]] = {}
    built: dict[str, Question] = {}  # a question in parts has a column per part: built once a row
    for index, item, label in columns:
        if item not in built:
            entry = entries[item]
            if label is None and entry.explain is None and not _response(cells[index], decimal_comma):
                # A blank answer to a question with one answer is "No answer." whatever the variant:
                # it is not built (a class leaves many blanks, and building is most of the work).
                yield _blank(item)
                continue
            if entry.explain is not None and seed is not None and concepts is not None:
                # A concept question is the same for every seed (`attnquiz.engine.bank.concept_items`):
                # built for the first row that has one, and its answer's key points read by the others.
                if item not in concepts:
                    concepts[item] = _question(entry, seed, streams)
                built[item] = concepts[item]
            else:
                built[item] = _question(entry, seed, streams)
        question = built[item]
        if label is None and isinstance(question.answer, ExplainAnswer):
            response = "" if item in mark_only else cells[index]
            mark_index, heading, _ = (marks or {}).get(item, (None, f"{item} mark", None))
            mark_text = cells[mark_index] if mark_index is not None else ""
            yield _concept_cell(question, question.answer, response, mark_text, heading)
            continue
        if label is None:
            yield _cell(question, cells[index], decimal_comma)
            continue
        if item not in by_part:
            if not question.variant.parts:
                raise _RowProblem(f"{item} is not a question in parts: head its column {item!r}")
            responses = {lab: cells[i] for i, it, lab in columns if it == item and lab is not None}
            by_part[item] = _part_cells(question, responses, decimal_comma, headings)
        yield by_part[item].pop(0)


def grade_text(
    bank: Bank,
    text: str,
    *,
    file: str = "answers.csv",
    master_seed: int | None = None,
    students: int | None = None,
    bom: bool = False,
    jobs: int = 1,
) -> ClassMarks:
    """Grade the answers in ``text`` (CSV with a header row); see the module docstring.

    ``bom`` says the file began with a UTF-8 byte-order mark (so the marks are written with one);
    ``jobs``: processes grading rows at once for a large class (the marks are the same).
    """
    stream = io.StringIO(text, newline="")
    with graded_stream(
        bank, stream, file, master_seed=master_seed, students=students, bom=bom, jobs=jobs
    ) as (
        columns,
        rows,
    ):
        return columns.marks(tuple(rows))


@dataclass(frozen=True, slots=True)
class ClassColumns:
    """What a class's marks are of, known from the answers file's header before any row is graded."""

    bank: str
    file: str
    items: tuple[str, ...]
    has_names: bool = False
    delimiter: str = ","
    bom: bool = False

    def marks(self, rows: tuple[Row, ...]) -> ClassMarks:
        """The class's marks: these columns and every row."""
        return ClassMarks(
            self.bank,
            self.file,
            self.items,
            rows,
            has_names=self.has_names,
            delimiter=self.delimiter,
            bom=self.bom,
        )


@contextlib.contextmanager
def graded_stream(
    bank: Bank,
    stream: TextIO,
    file: str,
    *,
    master_seed: int | None = None,
    students: int | None = None,
    bom: bool = False,
    jobs: int = 1,
) -> Iterator[tuple[ClassColumns, Iterator[Row]]]:
    """The answers read from ``stream`` a row at a time: the columns (the header is read, and refused
    with `AnswersFileError`, before this returns), and the rows graded in file order as they are
    asked for (``jobs``: processes grading at once; only a few rows are ever read ahead)."""
    delimiter, marked = read_start(stream)
    # Closed however grading ends (a bad header raises): the reader's field limit is put back then.
    with contextlib.closing(csv_rows(stream, delimiter)) as rows:
        columns, graded = _graded(bank, rows, file, delimiter, master_seed, students, bom or marked, jobs)
        with contextlib.closing(graded):
            yield columns, graded


def _graded(
    bank: Bank,
    rows: Iterator[tuple[int, list[str]]],
    file: str,
    delimiter: str,
    master_seed: int | None,
    students: int | None,
    bom: bool,
    jobs: int = 1,
) -> tuple[ClassColumns, Generator[Row, None, None]]:
    decimal_comma = delimiter == ";"
    first = next(rows, None)
    while first is not None and not any(c.strip() for c in first[1]):
        first = next(rows, None)
    if first is None:
        raise AnswersFileError(f"{file}: the file is empty (`quiz grade {bank.name} --template` writes one)")
    header = read_header(first[1], bank, file)
    # Columns in file order: a whole item's, or one part's of a question in parts (graded by item).
    whole: list[tuple[int, str, str | None]] = [(index, item, None) for index, item in header.items]
    # A concept question given only by its marks (the answers stayed on paper) is graded at its mark column.
    mark_only = frozenset(item for item in header.marks if item not in {i for _, i in header.items})
    whole += [(header.marks[item][0], item, None) for item in mark_only]
    columns = sorted(whole + [(i, item, lab) for i, item, lab in header.parts])
    item_ids = tuple(item if label is None else header.headings[item, label] for _, item, label in columns)
    entries = {item: bank.get(item) for _, item, _ in columns}
    # Each row is checked here, in file order (a student given twice is found by the rows before);
    # then the rows to grade are graded, maybe by several processes, and come back in that order.
    seen_students: dict[int, int] = {}
    seen_variants: dict[tuple[int | None, str], tuple[int, str]] = {}

    def get(cells: list[str], index: int | None) -> str:
        return cells[index].strip() if index is not None and index < len(cells) else ""

    def checked() -> Iterator[Row | _Pending]:
        for line, cells in rows:
            if not any(c.strip() for c in cells):
                continue  # a blank line between rows is not a student
            student, code, name = get(cells, header.student), get(cells, header.code), get(cells, header.name)
            try:
                if len(cells) < header.width:
                    raise _RowProblem(
                        f"{len(cells)} cells where the header has {header.width}: missing cells (an empty "
                        "answer is an empty cell between commas)"
                    )
                if any(c.strip() for c in cells[header.width :]):
                    raise _RowProblem(f"{len(cells)} cells where the header has {header.width}")
                longest = max(len(c) for c in cells)
                if longest > MAX_CELL_CHARS:
                    raise _RowProblem(
                        f"cell too long ({longest:,} characters; a cell holds at most {MAX_CELL_CHARS:,})"
                    )
                seed, shown = _seed_of(student, code, master_seed, students)
                _check_once(student, seed, shown, line, seen_students, seen_variants)
            except _RowProblem as problem:
                yield Row(line, student, name, code, problem=str(problem))
                continue
            except QuizError as exc:  # e.g. a code that is not a variant code
                yield Row(line, student, name, code, problem=str(exc))
                continue
            yield _Pending(line, student, name, code, shown, seed, cells)

    grader = _RowGrader(columns, entries, decimal_comma, header.headings, header.marks, mark_only)
    # Workers pay for themselves from a few thousand cells (a cell takes about 0.2 ms).
    enough = -(-_PARALLEL_CELLS // max(1, len(columns)))
    chunk = 8
    if any(_runs_code(entry) for entry in entries.values()):
        # A code cell runs a sandbox (about 0.1 s of CPU): two rows already pay for the workers, and
        # a row a message keeps them evenly busy.
        enough, chunk = 2, 1

    def graded() -> Generator[Row, None, None]:
        # A row refused by the checks passes through the workers as it is, keeping its place.
        yield from ordered_map(_grade_row, grader, checked(), jobs=jobs, min_tasks=enough, chunk=chunk)

    marks = ClassColumns(
        bank.name, file, item_ids, has_names=header.name is not None, delimiter=delimiter, bom=bom
    )
    return marks, graded()


_PARALLEL_CELLS = 3000


def _runs_code(entry: BankItem) -> bool:
    """Whether the item is a code question (graded by running the answer), told without building it."""
    return entry.explain is None and entry.formula is None and entry.spec.name.startswith("code_")


@dataclass(frozen=True)
class _Pending:
    """A row that passed the file-order checks, to be graded."""

    line: int
    student: str
    name: str
    code: str
    shown: str
    seed: int | None
    cells: list[str]


@dataclass(frozen=True)
class _RowGrader:
    """What grading any row needs: the columns, the items, and how the file writes numbers."""

    columns: list[tuple[int, str, str | None]]
    entries: dict[str, BankItem]
    decimal_comma: bool
    headings: dict[tuple[str, str], str]
    marks: dict[str, tuple[int, str, int | None]]
    mark_only: frozenset[str]
    concepts: dict[str, Question] = field(default_factory=dict)
    """The concept questions built so far, by item (each the same for every seed)."""

    @functools.cached_property
    def streams_of(self) -> tuple[tuple[str, str], ...]:
        """The (bank, item) of every item of the columns, whose random streams a row seeds at once."""
        return tuple(dict.fromkeys((entry.bank, entry.id) for entry in self.entries.values()))


def _grade_row(grader: _RowGrader, row: _Pending | Row) -> Row:
    """One row's graded `Row`, or the row with the reason it cannot be graded (a task of `_graded`,
    maybe in a worker process: every problem is returned as text, never raised); a row the checks
    refused is returned as it is."""
    if isinstance(row, Row):
        return row
    try:
        graded = tuple(
            _row_cells(
                grader.columns,
                grader.entries,
                row.seed,
                row.cells,
                grader.decimal_comma,
                grader.headings,
                grader.marks,
                grader.mark_only,
                None if row.seed is None else QuestionStreams(row.seed, grader.streams_of),
                grader.concepts,
            )
        )
    except _RowProblem as problem:
        return Row(row.line, row.student, row.name, row.code, problem=str(problem))
    except QuizError as exc:  # e.g. an item with no original asked for with code "original"
        return Row(row.line, row.student, row.name, row.code, problem=str(exc))
    return Row(row.line, row.student, row.name, row.shown, graded)


def _check_once(
    student: str,
    seed: int | None,
    shown: str,
    line: int,
    seen_students: dict[int, int],
    seen_variants: dict[tuple[int | None, str], tuple[int, str]],
) -> None:
    """Refuse a row for a student already graded: by number, or by the variant (a code, or a number
    rebuilt from the seed, name the same sheet). The first row stays graded; this one is reported."""
    number = whole(student) if student else None
    if number is not None and number in seen_students:
        raise _RowProblem(f"student {number} is already on line {seen_students[number]}")
    # The past papers' questions are the same for everyone: there the number alone says who.
    variant = (None, student) if seed is None else (seed, "")
    if seed is not None and variant in seen_variants:
        first, who = seen_variants[variant]
        raise _RowProblem(f"variant {shown} is already on line {first} ({who}): the same sheet graded twice")
    if number is not None:
        seen_students[number] = line
    seen_variants[variant] = (line, f"student {number}" if number is not None else f"variant {shown}")


def grade_file(
    bank: Bank, path: Path, *, master_seed: int | None = None, students: int | None = None, jobs: int = 1
) -> ClassMarks:
    """Grade an answers file on disk (``jobs``: processes at once for a large class)."""
    with graded_file(bank, path, master_seed=master_seed, students=students, jobs=jobs) as (columns, rows):
        return columns.marks(tuple(rows))


@contextlib.contextmanager
def graded_file(
    bank: Bank, path: Path, *, master_seed: int | None = None, students: int | None = None, jobs: int = 1
) -> Iterator[tuple[ClassColumns, Iterator[Row]]]:
    """`graded_stream` of an answers file on disk, read a row at a time (checked whole first:
    `attnquiz.engine.classwork.answers_file.opened`)."""
    with (
        opened(path) as (text, bom),
        graded_stream(
            bank, text, str(path), master_seed=master_seed, students=students, bom=bom, jobs=jobs
        ) as (
            columns,
            rows,
        ),
    ):
        yield columns, rows


__all__ = [
    "MAX_CELL_CHARS",
    "UNDER_REVIEW",
    "ClassColumns",
    "grade_file",
    "grade_text",
    "graded_file",
    "graded_stream",
    "is_under_review",
    "review_feedback",
]
