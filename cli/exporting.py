"""The `quiz export` and `quiz grade` commands: worksheets, keys and LMS files, and marking a class."""

from __future__ import annotations

import functools
import re
import shlex
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from attnquiz.common import fail, new_seed, print_json, user_errors
from attnquiz.options import BankArg, JobsOpt, JsonOpt

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from attnquiz.engine.bank.loaded import Bank
    from attnquiz.engine.classwork.class_marks import ClassMarks, Tally
    from attnquiz.engine.classwork.class_stream import TableRow
    from attnquiz.engine.plan.class_plan import ClassPlan

FormatName = Literal["pdf", "html", "md", "moodle", "stack", "qti", "json"]
KeyName = Literal["grid", "full", "brief", "none"]
PaperName = Literal["a4", "us-letter"]

SeedOpt = Annotated[
    int | None,
    typer.Option(
        "--seed",
        "-s",
        min=0,
        max=2**32 - 1,
        help="Master seed of the class: student n gets the variant of derive_seed(seed, n). "
        "Random (and printed) when not given.",
    ),
]
ItemsOpt = Annotated[
    list[str] | None,
    typer.Option("--items", "-i", help="Only these items (ids, comma-separated or repeated)."),
]
TopicOpt = Annotated[
    list[str] | None,
    typer.Option("--topic", "-t", help="Only items of these topics (comma-separated or repeated)."),
]
CountOpt = Annotated[
    int | None,
    typer.Option(
        "--count", "-n", min=1, help="Draw this many of the selected items (the same for the class)."
    ),
]
OriginalOpt = Annotated[
    bool, typer.Option("--original", help="The past papers' own questions, not variants.")
]
AllOpt = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Every selected item on every sheet. Without it, a worksheet holds one item of each topic "
        "(drawn from the seed, the same for the class) unless --items, --topic or --count say otherwise.",
    ),
]
PER_TOPIC = 1  # a worksheet's default: one question of each topic, a sheet a student does in a sitting
StudentsOpt = Annotated[
    int | None, typer.Option("--students", min=1, max=10_000, help="Number of students (one variant each).")
]

MaxSizeOpt = Annotated[
    str | None,
    typer.Option(
        "--max-size",
        help="Cut a moodle or stack export into files of at most this size, for a site's upload limit "
        "(e.g. 20MB, 500kB, 1.5MiB): -o week1.xml writes week1-1.xml, week1-2.xml, ..., each of whole "
        "questions that imports on its own.",
    ),
]
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?|\.[0-9]+)\s*([kmg]i?)?b?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "ki": 2**10, "mi": 2**20, "gi": 2**30}


def parse_size(text: str) -> int | None:
    """A size such as ``20MB``, ``500 kB``, ``1.5MiB`` or ``20000000`` in bytes (kB, MB and GB in
    powers of ten, KiB, MiB and GiB in powers of two; case does not matter), rounded down; None if
    ``text`` is no size."""
    from decimal import Decimal

    found = _SIZE.fullmatch(text)
    if found is None or len(text) > 40:
        return None
    return int(Decimal(found.group(1)) * _UNITS[(found.group(2) or "").lower()])


_SHOW_AFTER = 0.3  # seconds: a bar for anything that takes longer than a moment, none for quick runs


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


class _Bar:
    """A progress bar on standard error, drawn only on a terminal and only once a step takes a moment.

    The first report starts a timer; if the step is still running when it fires, the bar appears
    (with a spinner and the elapsed time, which keep moving while a PDF compiles in one go).
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.lock = threading.Lock()
        self.done = 0
        self.total = 0
        self.closed = False
        self.timer: threading.Timer | None = None
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        with self.lock:
            self.done, self.total = done, total
            if self.progress is not None and self.task is not None:
                self.progress.update(self.task, completed=done, total=total)
            elif self.timer is None and not self.closed and sys.stderr.isatty():
                self.timer = threading.Timer(_SHOW_AFTER, self._show)
                self.timer.daemon = True
                self.timer.start()

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TaskProgressColumn, TimeElapsedColumn

        with self.lock:
            if self.closed:
                return
            self.progress = Progress(
                SpinnerColumn(),
                "{task.description}",
                BarColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=self.total, completed=self.done)

    def __enter__(self) -> _Bar:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        with self.lock:
            self.closed = True
            if self.timer is not None:
                self.timer.cancel()
            if self.progress is not None:
                self.progress.stop()


def _plan(
    bank: Bank,
    *,
    students: int,
    seed: int | None,
    original: bool,
    items: list[str],
    topics: list[str],
    count: int | None,
    whole: bool = True,
) -> ClassPlan:
    """The class; unless ``whole`` (or a selection is given), one item of each topic (see `PER_TOPIC`)."""
    from attnquiz.engine.plan.class_plan import plan_class

    per_topic = None if whole or original or items or topics or count is not None else PER_TOPIC
    with _Bar("Building variants") as bar:
        return plan_class(
            bank,
            students=students,
            master_seed=None if original else seed,
            items=items,
            topics=topics,
            count=count,
            per_topic=per_topic,
            progress=bar,
        )


def _warn(message: str) -> None:
    typer.echo(f"quiz: warning: {message}", err=True)


@user_errors
def export_command(
    bank: BankArg,
    fmt: Annotated[
        FormatName,
        typer.Option(
            "--format",
            "-f",
            help="pdf, html or md (worksheets and key); moodle, stack (Moodle's STACK), qti or json (LMS).",
        ),
    ] = "pdf",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="A folder for pdf/html/md (default: here); a file for moodle/stack/qti/json "
            "(default: BANK.xml, BANK-stack.xml, BANK-canvas.zip, BANK.json).",
        ),
    ] = None,
    students: StudentsOpt = None,
    variants: Annotated[
        int | None,
        typer.Option("--variants", min=1, max=10_000, help="Variants per item (the same as --students)."),
    ] = None,
    seed: SeedOpt = None,
    original: OriginalOpt = False,
    items: ItemsOpt = None,
    topic: TopicOpt = None,
    count: CountOpt = None,
    every: AllOpt = False,
    key: Annotated[
        KeyName,
        typer.Option(
            "--key",
            help="Answer key: grid (a student a row, a question a column: for marking by hand), full "
            "(answers, worked solutions and wrong answers to recognise: for tutoring), brief, none.",
        ),
    ] = "grid",
    split: Annotated[bool, typer.Option("--split", help="One file per student (pdf, html, md).")] = False,
    paper: Annotated[PaperName, typer.Option("--paper", help="Page size: a4 or us-letter.")] = "a4",
    jobs: JobsOpt = None,
    answer_sheet: Annotated[
        bool,
        typer.Option(
            "--answer-sheet",
            help="Also answer-sheets.pdf, bubble sheets that `quiz scan` reads, and their layout "
            "answer-sheets.json (pdf only).",
        ),
    ] = False,
    max_size: MaxSizeOpt = None,
) -> None:
    """Export worksheets with an answer key, or a Moodle, STACK, Canvas (QTI 1.2) or JSON question bank.

    Each student (or LMS variant) n gets its own variant of every item, from the master seed;
    its variant code is printed on the sheet, and `quiz grade` rebuilds it to mark the answers.

    \b
    Examples:
      quiz export week1 --students 30 --seed 2026 --format pdf -o out/
      quiz export week1 --variants 20 --format moodle -o week1.xml
      quiz export week1 --variants 20 --format stack -o week1-stack.xml
    """
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.export.files import (
        LMS_FORMATS,
        SPLIT_FORMATS,
        Written,
        default_output,
        lms_file,
        write,
    )

    if students is not None and variants is not None and students != variants:
        fail("--students and --variants mean the same here: give one of them", 2)
    if original and seed is not None:
        fail("give --seed or --original, not both: the original questions have no seed", 2)
    if split and fmt in LMS_FORMATS:
        fail(f"--split is for worksheets (pdf, html, md), not {fmt}", 2)
    if key == "grid" and fmt != "pdf":
        key = "full"  # the grid is a PDF page layout; HTML and Markdown keep the full key by default
    if every and (items or topic or count is not None):
        fail("--all takes every item: give it without --items, --topic or --count", 2)
    if answer_sheet and fmt != "pdf":
        fail(f"--answer-sheet is for pdf exports (the sheets are printed and scanned), not {fmt}", 2)
    limit = None
    if max_size is not None:
        if fmt not in SPLIT_FORMATS:
            fail(f"--max-size is for moodle and stack exports, not {fmt}", 2)
        limit = parse_size(max_size)
        if limit is None:
            fail(f"--max-size {max_size!r} is not a size: give it as 20MB, 500kB or 1.5MiB", 2)
        if limit < 1:
            fail(f"--max-size {max_size!r} is less than a byte: no question fits", 2)
    count_of = students or variants or 1
    if original and fmt in LMS_FORMATS and count_of > 1:
        _warn("the original questions have one version each: exporting 1 variant per item")
        count_of = 1
    seed_given = seed is not None
    if not original and seed is None:
        seed = new_seed()
    loaded = banks.load(bank, plugins=True)
    plan = _plan(
        loaded,
        students=count_of,
        seed=seed,
        original=original,
        items=_split(items),
        topics=_split(topic),
        count=count,
        whole=every or fmt in LMS_FORMATS,  # an LMS bank holds every item; a quiz there draws from it
    )
    if plan.skipped:
        _warn(
            f"left out {len(plan.skipped)} item(s) with no original question (the paper's statement is not "
            f"in the notes): {', '.join(plan.skipped)}"
        )
    to_stdout = output is not None and str(output) == "-"
    if to_stdout and limit is not None:
        fail("--max-size writes several files: give a file name (-o week1.xml), not -o -", 2)
    if to_stdout and fmt not in {"moodle", "stack", "json"}:
        fail(
            f"-o - (standard output) is for moodle, stack and json; a {fmt} export needs a file or a folder",
            2,
        )
    target = output if output is not None else default_output(fmt, loaded.name)
    from attnquiz.engine.export.stopping import Terminated

    try:
        with _Bar(f"Writing {fmt}") as bar:
            if to_stdout:
                data, warnings = lms_file(plan, fmt, progress=bar)
                written = Written([], warnings)
            else:
                written = write(
                    plan,
                    fmt,
                    target,
                    paper=paper,
                    key=None if key == "none" else key,
                    split=split,
                    progress=bar,
                    jobs=jobs,
                    bank=bank,  # worker processes load the bank as this command did
                    answer_sheet=answer_sheet,
                    max_size=limit,
                )
    except Terminated:
        _note("quiz: stopped by SIGTERM before the export was complete: no file was written")
        raise
    except KeyboardInterrupt:
        # Typer ends a command interrupted by Ctrl-C with status 130 and says nothing: say what became
        # of the files (the worker processes have been stopped, the temporary files removed).
        _note("quiz: interrupted before the export was complete: no file was written")
        raise
    for message in written.warnings:
        _warn(message)
    if to_stdout:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    # With the export itself on standard output, the report goes to standard error.
    report = typer.echo if not to_stdout else _note
    what = "past-paper questions" if original else f"{count_of} variant{'s' if count_of != 1 else ''}"
    report(f"Wrote {len(plan.items)} item{'s' if len(plan.items) != 1 else ''} × {what}:")
    chosen_by_default = not (every or items or topic or count is not None or original or fmt in LMS_FORMATS)
    if chosen_by_default:
        report("  (one item of each topic; --all for every item, or --items, --topic, --count)")
    for path in [str(p) for p in written.files] or ["standard output"]:
        report(f"  {path}")
    if not original:
        source = "" if seed_given else " (chosen at random; keep it)"
        # The bank as the user named it: it found the bank just now, so it finds it for `quiz grade`
        # too (a bank given by path has no name that `quiz grade` could look up).
        command = f"quiz grade {shlex.quote(bank)} answers.csv --seed {seed} --students {count_of}"
        if fmt not in LMS_FORMATS:  # the template's columns: the items of these sheets
            selection = (
                " --all"
                if every
                else "".join(
                    f" --{flag} {shlex.quote(','.join(values))}"
                    for flag, values in (("items", items), ("topic", topic))
                    if values
                )
                + (f" --count {count}" if count is not None else "")
            )
            template = (
                f"quiz grade {shlex.quote(bank)} --template --seed {seed} --students {count_of}{selection}"
            )
            report(f"An answers file for these sheets: `{template} -o answers.csv`.")
        if fmt in {"moodle", "qti"}:
            # The LMS gives each student one variant of each item at random and marks it: no row of
            # an answers file belongs to a variant, so `quiz grade` has nothing to mark here.
            lms_name = "Moodle" if fmt == "moodle" else "Canvas"
            report(
                f"Master seed {seed}{source}: {lms_name} gives each student one variant of each item at "
                "random and marks it there. A question's name holds its variant code and seed; "
                f"`quiz show {shlex.quote(bank)} ITEM --seed SEED --solution` rebuilds it with its answer."
            )
        else:
            report(f"Master seed {seed}{source}: grade with `{command}`.")
    if answer_sheet:
        layout = shlex.quote(str(target / "answer-sheets.json"))
        report(f"Read the filled answer sheets with `quiz scan SCANS… --sheets {layout} -o answers.csv`.")


def _note(message: str) -> None:
    typer.echo(message, err=True)


@user_errors
def grade_command(
    bank: BankArg,
    answers: Annotated[
        Path | None,
        typer.Argument(
            help="CSV: a header (student and/or code, name, one column per item id), a row per student. "
            "Or a folder of code submissions, a .py file or Jupyter notebook per student named by the "
            "student number (12.py, student-12.ipynb), graded on --items with --seed and --students."
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            "-s",
            min=0,
            max=2**32 - 1,
            help="The master seed of the worksheets (for rows without a code).",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the marks (or the --template) as CSV here.")
    ] = None,
    template: Annotated[
        bool, typer.Option("--template", help="Write an empty answers.csv for the class instead of grading.")
    ] = False,
    students: StudentsOpt = None,
    original: OriginalOpt = False,
    items: ItemsOpt = None,
    topic: TopicOpt = None,
    count: CountOpt = None,
    every: AllOpt = False,
    as_json: JsonOpt = False,
    report_dir: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Also write the class report here: index.html (charts, item analysis, named mistakes), "
            "a result page per student, and CSV tables.",
        ),
    ] = None,
    jobs: JobsOpt = None,
) -> None:
    """Grade a class: rebuild each student's variants and mark every answer with the shared grader.

    Writes marks per question, the total and the named mistakes (-o marks.csv) and prints a
    summary: the mean per question and the most common mistakes. Rows that cannot be graded are
    listed by line (and kept in the marks with the reason); the exit code is then 1.

    \b
    A folder of code submissions is graded the same way: each student's file runs in the sandbox
    on that student's variant of each code item in --items, and the marks name the mistakes.

    \b
    Examples:
      quiz grade week1 --template --students 30 --seed 2026 -o answers.csv
      quiz grade week1 answers.csv --seed 2026 -o marks.csv
      quiz grade code submissions/ --items attention --seed 2026 --students 30 -o marks.csv --report report/
    """
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.parallel import default_jobs
    from attnquiz.engine.plan.columns import template_csv

    loaded = banks.load(bank, plugins=True)
    if template:
        if answers is not None:
            fail("--template writes a new answers file: give no ANSWERS file with it", 2)
        if students is None:
            fail("--template needs --students N: the number of rows to write", 2)
        if seed is None and not original:
            fail("--template needs --seed (the master seed of the worksheets) or --original", 2)
        plan = _plan(
            loaded, students=students, seed=seed, original=original, items=_split(items),
            topics=_split(topic), count=count, whole=every,
        )  # fmt: skip
        text = template_csv(plan)
        if output is None:
            typer.echo(text, nl=False)
        else:
            _save_csv(output, text.encode("utf-8"))
            typer.echo(f"Wrote {output}: {students} rows, {_template_columns(text, len(plan.items))}.")
        return
    if answers is None:
        fail("give the answers file (CSV), or --template to write an empty one", 2)
    others: list[str] = []
    if answers.is_dir():
        if topic or count is not None or original or every:
            fail("a folder of code submissions is graded on --items: --topic, --count, --all and --original "
                 "are for --template", 2)  # fmt: skip
        if seed is None or students is None:
            fail(
                "a folder of code submissions needs --seed (the master seed of the worksheets) and "
                "--students N (the class size): each file is graded on its student's variant",
                2,
            )
        from attnquiz.engine.classwork.code_folder import grade_folder, unprotected

        warning = unprotected()
        if warning:
            typer.echo(f"quiz: warning: {warning}", err=True)

        with _Bar("Running each student's code") as bar:
            marks, others = grade_folder(
                loaded, answers, _split(items), master_seed=seed, students=students,
                jobs=default_jobs() if jobs is None else jobs, progress=bar,
            )  # fmt: skip
        _report_and_show(loaded, marks, output, report_dir, as_json, others, folder=True)
        return
    if answers.suffix.lower() in {".py", ".ipynb"}:
        fail(
            f"{answers} is one student's code: give the folder of the class's submissions (a file each, "
            "named by the student number), or grade one file with `quiz answer BANK ITEM --file`",
            2,
        )
    if items or topic or count is not None or original or every:
        fail("the answers file's header names the items: --items, --topic, --count, --all and --original "
             "are for --template", 2)  # fmt: skip
    workers = default_jobs() if jobs is None else jobs
    _grade_streamed(loaded, answers, output, report_dir, as_json, seed=seed, students=students, jobs=workers)


def _grade_streamed(
    loaded: Bank,
    answers: Path,
    output: Path | None,
    report_dir: Path | None,
    as_json: bool,
    *,
    seed: int | None,
    students: int | None,
    jobs: int,
) -> None:
    """Grade an answers file a row at a time (`attnquiz.engine.classwork.class_stream`): the marks
    written as the rows come, the rows spooled to disk for --json and the report; then the report,
    the JSON or the summary, as `_report_and_show` writes them, and exit 1 when anything was not
    graded."""
    import contextlib
    import io

    from attnquiz.engine.classwork.class_stream import RowSpool, grade_stream, json_chunks
    from attnquiz.engine.export.files import Staging, is_special
    from attnquiz.terminal import is_unicode

    if output is not None and report_dir is None and output.is_dir():  # (with a report: said by the report)
        fail(f"{output} is a folder: give a file name for the CSV (-o {output / 'marks.csv'})")
    with contextlib.ExitStack() as stack:
        spool = stack.enter_context(RowSpool()) if as_json or report_dir is not None else None
        table = output is None and not as_json
        grade = functools.partial(
            grade_stream,
            loaded,
            answers,
            table=table,
            spool=spool,
            master_seed=seed,
            students=students,
            jobs=jobs,
        )
        if output is not None and report_dir is None:
            stage = stack.enter_context(Staging())
            with stage.open(output) as out:
                graded = grade(marks=out)
            stage.commit()
        else:
            # The marks and the report are one set, written together once the report is made (the
            # marks are a line a student: kept in memory until then).
            buffer = io.BytesIO() if output is not None else None
            graded = grade(marks=buffer)
        if report_dir is not None:
            from attnquiz.engine.classwork.report import write_report

            data = buffer.getvalue() if buffer is not None else b""
            # Marks sent to a device or pipe (-o /dev/stdout) cannot be renamed into place: written first.
            together = None if output is None or is_special(output) else (output, data)
            if output is not None and together is None:
                _save_csv(output, data)
            written = write_report(loaded, graded, report_dir, together)
            typer.echo(f"Class report: {written[0]} ({len(written)} files).", err=as_json)
        summary = graded.tally.summary()
        if spool is not None and as_json:
            ascii_only = not is_unicode(sys.stdout)
            for chunk in json_chunks(graded.columns, spool, summary, ensure_ascii=ascii_only):
                sys.stdout.write(chunk)
            sys.stdout.write("\n")
            sys.stdout.flush()
        else:
            _show_marks(graded.columns.file, graded.tally, graded.table, wrote=output)
    if graded.tally.problems or summary.bad_cells:
        raise typer.Exit(1)


def _report_and_show(
    loaded: Bank,
    marks: ClassMarks,
    output: Path | None,
    report_dir: Path | None,
    as_json: bool,
    others: list[str],
    folder: bool = False,
) -> None:
    """Write the marks (and the report), show the summary, and exit 1 when anything was not graded
    (``others``: the files of a submissions folder that are no student's, a line each)."""
    from attnquiz.engine.classwork.marks_writer import marks_file

    if report_dir is not None:
        from attnquiz.engine.classwork.report import write_report
        from attnquiz.engine.export.files import is_special

        # The marks and the report are one set (never new marks beside an old report); marks sent to
        # a device or pipe (-o /dev/stdout) cannot be renamed into place and are written first.
        together = None if output is None or is_special(output) else (output, marks_file(marks))
        if output is not None and together is None:
            _save_csv(output, marks_file(marks))
        written = write_report(loaded, marks, report_dir, together)
        typer.echo(f"Class report: {written[0]} ({len(written)} files).", err=as_json)
    elif output is not None:
        _save_csv(output, marks_file(marks))
    if as_json:
        print_json({**marks.to_json(), **({"other_files": others} if others else {})})
    else:
        from attnquiz.engine.classwork.class_marks import Tally
        from attnquiz.engine.classwork.class_stream import table_row

        tally = Tally(marks.items)
        for row in marks.rows:
            tally.add(row)
        table = [table_row(row) for row in marks.rows] if output is None else None
        _show_marks(marks.file, tally, table, wrote=output, by_student=folder)
    for other in others:
        typer.echo(f"{marks.file}: {other}", err=True)
    if others:
        count = len(others)
        files = "1 file in the folder is" if count == 1 else f"{count} files in the folder are"
        typer.echo(f"quiz: {files} no student's submission (listed above, not graded)", err=True)
    if marks.problems or marks.summary().bad_cells or others:
        raise typer.Exit(1)


def _template_columns(text: str, questions: int) -> str:
    """What a template's answer columns are: one per question, or per part for a question in parts
    ("10 answer columns for 8 questions, 2 of them in parts (a column per part)")."""
    import csv
    import io

    header = next(csv.reader(io.StringIO(text)))
    columns = len(header) - 3  # after student, name and code
    in_parts = len({cell.split(" ", 1)[1] for cell in header[3:] if _PART_HEADING.match(cell)})
    said = f"{columns} answer column{'s' if columns != 1 else ''} for {questions} "
    said += "question" if questions == 1 else "questions"
    if in_parts:
        said += f", {in_parts} of them in parts (a column per part)"
    return said


_PART_HEADING = re.compile(r"\d+[a-z] \S")


def _save_csv(output: Path, data: bytes) -> None:
    """Write a CSV file whole or not at all (a clear line, not a traceback, when it cannot be)."""
    from attnquiz.engine.export.files import save

    if output.is_dir():
        fail(f"{output} is a folder: give a file name for the CSV (-o {output / 'marks.csv'})")
    save({output: data})


def _show_marks(
    file: str, tally: Tally, table: list[TableRow] | None, wrote: Path | None, by_student: bool = False
) -> None:
    """The class summary (and the ``table`` of marks when they were not written to a file)."""
    from rich.table import Table
    from rich.text import Text

    from attnquiz.display import console
    from attnquiz.engine.classwork.class_marks import plain_number, review_summary

    # Names, codes, file names and mistake tags come from the file and the bank: shown as plain
    # text (`Text`), never read as rich markup (a name like `[/]` or `[link=…]` is just a name).
    summary = tally.summary()
    if wrote is None and table is not None:
        marks_table = Table(title=Text(f"Marks: {file}"), title_justify="left")
        for column in ("line", "student", "name", "code", "total", "mistakes"):
            marks_table.add_column(column, justify="right" if column in {"line", "total"} else "left")
        for line, student, name, code, total, mistakes in table:
            who = (Text(str(line)), Text(student), Text(name), Text(code))
            if total is not None:
                marks_table.add_row(*who, f"{total:.2f} / {plain_number(summary.out_of)}", Text(mistakes))
            else:
                marks_table.add_row(*who, "—", "not graded")
        console.print(marks_table)
    items = Table(title=f"{summary.graded} students graded, mean {summary.mean_total:.2f} / "
                  f"{plain_number(summary.out_of)}", title_justify="left")  # fmt: skip
    items.add_column("question")
    weighted = any(entry.worth != 1 for entry in summary.items)
    if weighted:
        items.add_column("worth", justify="right")  # a part counts its weight
    items.add_column("mean", justify="right")
    shown = ["correct", "partial", "wrong", "invalid", "blank"]
    if any(entry.counts.get("unmarked") for entry in summary.items):
        shown.append("unmarked")  # concept answers awaiting a mark by hand
    if summary.review:
        shown.append("review")  # cells `quiz scan` left for its review (`?review N`)
    for status in shown:
        items.add_column(status, justify="right")
    for entry in summary.items:
        worth = [f"{plain_number(entry.worth)}"] if weighted else []
        counts = (str(entry.counts.get(s, 0)) for s in shown)
        items.add_row(Text(entry.item), *worth, f"{entry.mean:.2f}", *counts)
    console.print(items)
    if tally.counting():
        console.print(Text(tally.counting()))
    if summary.unmarked:
        marking = [entry.item for entry in summary.items if entry.counts.get("unmarked")]
        waiting = (
            "1 concept answer awaits"
            if summary.unmarked == 1
            else f"{summary.unmarked} concept answers await"
        )
        console.print(
            Text(
                f"{waiting} marking by hand ({', '.join(marking)}): they count 0 until then. Fill in the "
                "mark column (e.g. `ITEM mark (0-4)`, a mark for each key point; `quiz grade --template` "
                "writes it) and grade again."
            )
        )
    if summary.review:
        columns = [entry.item for entry in summary.items if entry.counts.get("review")]
        console.print(Text(review_summary(summary.review, columns)))
    if summary.mistakes:
        console.print("Most common mistakes:")
        for item, tag, n in summary.mistakes:
            console.print(Text(f"  {n:>3} × {item}: {tag}"))
    if wrote is not None:
        console.print(Text(f"Marks written to {wrote}."))
    for row in tally.problems:
        # A folder's row is a student (its line is the student's number), a file's a line of it.
        where = f"student {row.student}" if by_student else str(row.line)
        typer.echo(f"{file}:{where}: {row.problem}", err=True)
    if tally.problems:
        count = len(tally.problems)
        rows = ("student" if by_student else "row") + ("s" if count != 1 else "")
        typer.echo(
            f"quiz: {count} {rows} could not be graded (listed above, kept in the marks with the reason)",
            err=True,
        )
    for line, problem in summary.bad_cells:
        typer.echo(f"{file}:{line}: {problem}", err=True)
    if summary.bad_cells:
        count = len(summary.bad_cells)
        typer.echo(
            f"quiz: {count} cell{'s' if count != 1 else ''} could not be graded (listed above; each earns "
            "nothing until it is fixed, and the rest of its row is graded)",
            err=True,
        )
