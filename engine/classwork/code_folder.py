"""Grading a class's code: a folder of submissions, one file per student, each run in the sandbox.

A submission is a Python file or a Jupyter notebook named by the student's number: ``12.py``,
``12.ipynb``, ``student-12.py`` or ``student_12.ipynb`` (leading zeros allowed: ``007.py`` is student
7). A notebook's code cells are joined in order, each after a ``# cell N`` line (so an error's line
can be found in the notebook), with IPython's ``%magic`` and ``!shell`` lines kept as comments; the
notebook is read as JSON, never run outside the sandbox. Each student's file is graded against
each code item asked for (the item's function is looked up in the file), on the student's own
variant (the master seed and the student's number, as their worksheet), by the worker pool.

Whatever the folder holds, every file is read with a cap, and anything that is not a submission is
one line for that student (or that file), never an end to the class: a file too large, not UTF-8,
a notebook that is not JSON (or nested too deep, or with too many cells), a symbolic link (never
followed: it could point anywhere), something that is not a regular file, two submissions for one
student, a name that is no student number or a number outside the class. A student of the class
with no file in the folder is listed as having handed nothing in. Files whose names begin with a
dot (``.DS_Store``, ``.ipynb_checkpoints``) are the system's or the editor's and are passed over.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attnquiz.engine.answers.kinds import CodeAnswer
from attnquiz.engine.bank.loaded import Bank, BankItem
from attnquiz.engine.classwork.answers_file import AnswersFileError
from attnquiz.engine.classwork.class_marks import Cell, CellStatus, ClassMarks, Row
from attnquiz.engine.code.grading import MAX_SOURCE
from attnquiz.engine.errors import QuizError
from attnquiz.engine.grading.grade import grade
from attnquiz.engine.parallel import ordered_map
from attnquiz.engine.plan.class_plan import student_seed
from attnquiz.engine.seeding import variant_code

MAX_PY_BYTES = 4 * MAX_SOURCE
"""A Python file's cap, in bytes: the longest code accepted, in UTF-8's widest characters."""
MAX_NOTEBOOK_BYTES = 20_000_000
"""A notebook's cap: its outputs (plots saved as base64) may be far larger than its code."""
MAX_CELLS = 5_000
"""A notebook with more cells than this is not a student's answer."""
MAX_ENTRIES = 20_000
"""The most entries a submissions folder may hold (a class has at most 10,000 students)."""

_NAME = re.compile(r"(?:student[-_ ]?)?([0-9]{1,9})\.(py|ipynb)", re.IGNORECASE | re.ASCII)


class SubmissionsError(AnswersFileError):
    """A submissions folder that cannot be graded at all (not a folder, unreadable, too many entries)."""


@dataclass(frozen=True, slots=True)
class Submission:
    """One student's file: its name, and the code in it, or why it cannot be graded."""

    student: int
    file: str
    source: str = ""
    problem: str = ""
    cells: tuple[tuple[int, int], ...] = ()
    """A notebook's code cells: (the line of the joined code its code starts on, its number)."""

    def where(self, line: int) -> str:
        """A line of the code as its author finds it: in a notebook, its cell and the line there."""
        start, number = next(((s, n) for s, n in reversed(self.cells) if s <= line), (0, 0))
        return f"line {line}" if not number else f"line {line} (cell {number}, line {line - start + 1})"


def student_of(name: str) -> int | None:
    """The student number a submission's file name gives (``student-12.py`` → 12), or None."""
    match = _NAME.fullmatch(name)
    return int(match.group(1)) if match is not None else None


def _read(folder: Path, name: str, cap: int) -> bytes:
    """A file of the folder, never through a symbolic link, never blocking (a FIFO), at most ``cap``
    bytes: `OSError` with a message for the user otherwise."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(folder / name, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError("a symbolic link: not followed (copy the file itself into the folder)") from None
        raise OSError(f"cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if info.st_size > cap:
            raise OSError(f"too large ({info.st_size:,} bytes; a submission may have at most {cap:,})")
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            chunk = os.read(handle, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > cap:
            raise OSError(f"too large (more than {cap:,} bytes)")
        return data
    finally:
        os.close(handle)


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"not UTF-8 text (line {line}): save it as UTF-8") from None


def notebook_code(text: str) -> str:
    """The code of a Jupyter notebook (format 4): its code cells in order, each after ``# cell N``;
    ``%magic`` and ``!shell`` lines become comments. `ValueError` says why a text is not one."""
    return notebook_cells(text)[0]


def notebook_cells(text: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """`notebook_code`, and where each code cell's code starts in it: (line, the cell's number)."""
    try:
        document = json.loads(text)
    except RecursionError:
        raise ValueError("not a notebook: its JSON is nested too deep") from None
    except ValueError as exc:
        raise ValueError(f"not a notebook: not JSON ({str(exc).split(':')[0]})") from None
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        if isinstance(document, dict) and isinstance(document.get("worksheets"), list):
            raise ValueError("an old notebook (format 3): open it in Jupyter and save it again")
        raise ValueError("not a notebook: no list of cells")
    cells = document["cells"]
    if len(cells) > MAX_CELLS:
        raise ValueError(f"a notebook of {len(cells):,} cells (at most {MAX_CELLS:,})")
    pieces: list[str] = []
    starts: list[tuple[int, int]] = []
    line = 1
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise ValueError(f"not a notebook: cell {number} is not a cell")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise ValueError(f"not a notebook: cell {number}'s source is not text")
        code = "\n".join(_magic_as_comment(row) for row in source.split("\n")).rstrip("\n")
        starts.append((line + 1, number))  # after its "# cell N" line
        pieces.append(f"# cell {number}\n{code}\n")
        line += code.count("\n") + 3  # the marker, the code, the blank line between cells
    return "\n".join(pieces), tuple(starts)


def _magic_as_comment(line: str) -> str:
    """IPython's ``%magic`` or ``!shell`` line as a comment at its indentation (Python cannot run it)."""
    code = line.lstrip()
    return line[: len(line) - len(code)] + "# " + code if code.startswith(("%", "!")) else line


def _submission(folder: Path, name: str, student: int) -> Submission:
    notebook = name.lower().endswith(".ipynb")
    try:
        data = _read(folder, name, MAX_NOTEBOOK_BYTES if notebook else MAX_PY_BYTES)
        text = _text(data)
        source, cells = notebook_cells(text) if notebook else (text, ())
    except (OSError, ValueError) as exc:
        return Submission(student, name, problem=f"{name}: {exc}")
    if len(source) > MAX_SOURCE:
        # Refused here, not kept as the answer: a class of such files would fill the marks and report.
        code = "its code cells hold" if notebook else "it holds"
        return Submission(
            student,
            name,
            problem=f"{name}: {code} {len(source):,} characters of code (at most {MAX_SOURCE:,})",
        )
    return Submission(student, name, source, cells=cells)


_LINE = re.compile(r"\bat line (\d+)\b")


def read_folder(folder: Path, students: int) -> tuple[list[Submission], list[str]]:
    """The submissions of students 1 to ``students`` in ``folder``, by student number (a student with
    no file, or with two, is a `Submission` with a problem), and the folder's other files, each as
    one line saying why it is not graded."""
    try:
        with os.scandir(folder) as listing:
            entries = []
            for entry in listing:
                entries.append(entry)
                if len(entries) > MAX_ENTRIES:
                    raise SubmissionsError(f"{folder}: more than {MAX_ENTRIES:,} files: not a class's folder")
    except NotADirectoryError:
        raise SubmissionsError(f"{folder}: not a folder") from None
    except OSError as exc:
        raise SubmissionsError(f"{folder}: cannot read the folder ({exc.strerror or exc})") from None
    by_student: dict[int, list[str]] = {}
    others: list[str] = []
    for entry in sorted(entries, key=lambda e: e.name):
        name = entry.name
        if name.startswith("."):
            continue
        # A name is printed on one line: its undecodable bytes and control characters escaped.
        shown = "".join(
            c if c.isprintable() else repr(c)[1:-1]
            for c in name.encode("utf-8", "backslashreplace").decode("utf-8")[:80]
        )
        number = student_of(name)
        if number is None:
            others.append(f"{shown}: not a submission (name it by the student number: 12.py or 12.ipynb)")
        elif not 1 <= number <= students:
            others.append(f"{shown}: unknown student {number} (the class has students 1 to {students})")
        else:
            by_student.setdefault(number, []).append(name)
    submissions: list[Submission] = []
    for student in range(1, students + 1):
        names = by_student.get(student, [])
        if not names:
            submissions.append(Submission(student, "", problem="handed nothing in (no file in the folder)"))
        elif len(names) > 1:
            said = " and ".join(names)
            submissions.append(
                Submission(student, "", problem=f"two submissions: {said} (keep one and grade again)")
            )
        else:
            submissions.append(_submission(folder, names[0], student))
    return submissions, others


def unprotected() -> str:
    """What a class's code could reach here, said once before it runs ("" where Landlock keeps each
    program to its own folder): without it, a student's code can read whatever this user can, a
    classmate's submission among it."""
    from attnquiz.engine.code import sandbox

    landlock = sandbox.run("def f():\n    return 1.0\n", "f", [[]]).protections.get("landlock", "")
    if landlock.startswith("on"):
        return ""
    return (
        f"the sandbox has no Landlock here ({landlock or 'not reported'}): each student's code can read "
        "the files you can, the other submissions among them (it still has its limits, and no network "
        "where the kernel allows a namespace); grade on a kernel with Landlock (Linux 5.13 or later) to "
        "keep each program to its own folder"
    )


@dataclass(frozen=True)
class _Grader:
    entries: tuple[BankItem, ...]
    master_seed: int


def _grade_submission(grader: _Grader, submission: Submission) -> Row:
    """One student's row (a task of `grade_folder`, maybe in a worker: problems returned, never raised)."""
    seed = student_seed(grader.master_seed, submission.student)
    who = str(submission.student)
    if submission.problem:
        return Row(submission.student, who, submission.file, variant_code(seed), problem=submission.problem)
    cells: list[Cell] = []
    try:
        for entry in grader.entries:
            question = entry.question(seed)
            if not submission.source.strip():
                cells.append(Cell(entry.id, "", "blank", 0.0, None, "No answer."))
                continue
            # Graded as written (never stripped): an error's line is the line in the student's file.
            result = grade(question, submission.source)
            status: CellStatus = "unmarked" if result.status == "unscored" else result.status
            mistake = result.mistake.tag if result.mistake is not None else None
            feedback = result.feedback
            if submission.cells:  # a notebook's line numbers said as its author finds them
                feedback = _LINE.sub(lambda m: "at " + submission.where(int(m.group(1))), feedback)
            cells.append(Cell(entry.id, submission.source, status, result.score, mistake, feedback))
    except QuizError as exc:
        return Row(submission.student, who, submission.file, variant_code(seed), problem=str(exc))
    return Row(submission.student, who, submission.file, variant_code(seed), tuple(cells))


def grade_folder(
    bank: Bank,
    folder: Path,
    items: list[str],
    *,
    master_seed: int,
    students: int,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[ClassMarks, list[str]]:
    """Grade a folder of code submissions (see the module docstring) on ``items`` (code items of
    ``bank``): the class's marks, a row per student 1 to ``students`` (the row's ``name`` is the file
    graded), and the folder's files that are no student's submission, a line each. ``progress(done,
    total)`` is told of each student graded."""
    if not items:
        raise SubmissionsError(
            f"say which code items the files answer: --items ITEM (`quiz list {bank.name}`)"
        )
    entries = tuple(bank.get(item) for item in items)
    for entry in entries:
        if not isinstance(entry.question(student_seed(master_seed, 1)).answer, CodeAnswer):
            raise SubmissionsError(
                f"{entry.id} is not a code question: a folder of .py files and notebooks answers code items"
            )
    submissions, others = read_folder(folder, students)
    graded: list[Row] = []
    # Reported as each row comes back (after the workers are started: a progress bar's threads
    # would otherwise keep them from being forked).
    for row in ordered_map(
        _grade_submission, _Grader(entries, master_seed), submissions, jobs=jobs, min_tasks=2
    ):
        graded.append(row)
        if progress is not None:
            progress(len(graded), len(submissions))
    rows = tuple(graded)
    marks = ClassMarks(bank.name, str(folder), tuple(items), rows, has_names=True)
    return marks, others


__all__ = [
    "MAX_CELLS",
    "MAX_NOTEBOOK_BYTES",
    "MAX_PY_BYTES",
    "Submission",
    "SubmissionsError",
    "grade_folder",
    "notebook_cells",
    "notebook_code",
    "read_folder",
    "student_of",
    "unprotected",
]
