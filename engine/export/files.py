"""Writing an export to disk: which files each format makes, and their names.

Worksheet formats (``pdf``, ``html``, ``md``) write into a folder: ``worksheets.<ext>`` and
``key.<ext>``, or with ``split`` one ``worksheet-07.<ext>`` and ``key-07.<ext>`` per student.
LMS formats (``moodle``, ``stack``, ``qti``, ``json``) write one file. Each file is written (PDF and LMS files
streamed as they are made) to a temporary name in the destination folder; only when every file of
the export is complete are they renamed into place (`Staging`), so no half-written file ever has a
final name, and worksheets and key are replaced together or not at all.
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO, Literal

from attnquiz.engine.export import stopping
from attnquiz.engine.export.text.text_document import TextDocument, utf8, write_together
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, KeyStyle, Paper, Progress, Sheet

if TYPE_CHECKING:
    from attnquiz.engine.export.pdf.worksheets import Document

Format = Literal["pdf", "html", "md", "moodle", "stack", "qti", "json"]
WORKSHEET_FORMATS: tuple[Format, ...] = ("pdf", "html", "md")
LMS_FORMATS: tuple[Format, ...] = ("moodle", "stack", "qti", "json")
EXTENSIONS: dict[Format, str] = {
    "pdf": ".pdf",
    "html": ".html",
    "md": ".md",
    "moodle": ".xml",
    "stack": ".xml",
    "qti": ".zip",
    "json": ".json",
}


@dataclass
class Written:
    """What an export wrote, and the notes on what an LMS will do differently from quiz."""

    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def default_output(fmt: Format, bank: str) -> Path:
    """Where an export goes when no ``-o`` is given."""
    if fmt in WORKSHEET_FORMATS:
        return Path()
    suffix = {"qti": "-canvas", "stack": "-stack"}.get(fmt, "")
    return Path(f"{bank}{suffix}{EXTENSIONS[fmt]}")


def _documents(
    fmt: Format, plan: ClassPlan, paper: Paper, key: KeyStyle | None
) -> list[tuple[str, str, TextDocument]]:
    """The documents of an HTML or Markdown export: the worksheets, and the key unless ``key`` is
    None, each with its file name stem for the class and for one student (``--split``)."""
    if fmt == "html":
        from attnquiz.engine.export.text import html

        sheets, answers = html.worksheet_document(plan, paper), html.key_document(plan, paper, key or "full")
    else:
        from attnquiz.engine.export.text import markdown

        sheets, answers = markdown.worksheet_document(plan), markdown.key_document(plan, key or "full")
    found = [("worksheets", "worksheet", sheets)]
    return found if key is None else [*found, ("key", "key", answers)]


def _write_text_files(
    plan: ClassPlan,
    fmt: Format,
    open_file: Callable[[str], contextlib.AbstractContextManager[BinaryIO]],
    *,
    paper: Paper,
    key: KeyStyle | None,
    split: bool,
    progress: Progress | None,
    first: list[Sheet] | None = None,
) -> list[str]:
    """Write an HTML or Markdown export, file by file through ``open_file(name)``; its file names.

    Each sheet is built once, for the worksheets and the key together, written and dropped
    (`ClassSheets` keeps none), so the memory is one sheet's whatever the class. ``first`` is given
    the first sheet as it is built (what the export's notes are read from).
    """
    documents = _documents(fmt, plan, paper, key)
    ext = EXTENSIONS[fmt]
    total = len(plan.sheets)
    if not split:
        names = [f"{stem}{ext}" for stem, _, _ in documents]
        with contextlib.ExitStack() as stack:
            writers = [utf8(stack.enter_context(open_file(name))) for name in names]
            told = None if progress is None else (lambda done: progress(done, total))
            write_together(
                [document for _, _, document in documents], writers, _noting(plan.sheets, first), told
            )
        return names
    names = []
    width = max(2, len(str(total)))
    for done, sheet in enumerate(_noting(plan.sheets, first), 1):
        number = str(sheet.student).zfill(width)
        for _, stem, document in documents:
            name = f"{stem}-{number}{ext}"
            with open_file(name) as out:
                write_together([document], [utf8(out)], [sheet])
            names.append(name)
        if progress is not None:
            progress(done, total)
    return names


def _noting(sheets: Iterable[Sheet], first: list[Sheet] | None) -> Iterator[Sheet]:
    """The sheets, the first of them also put in ``first`` as it is read (so it is built once)."""
    for sheet in sheets:
        if first is not None and not first:
            first.append(sheet)
        yield sheet


def _pdf_documents(plan: ClassPlan, paper: Paper, key: KeyStyle | None, split: bool) -> list[Document]:
    """The PDF files of an export as documents compiled in pieces (see `pdf.write_documents`)."""
    from attnquiz.engine.export.pdf.worksheets import Document, documents

    if not split:
        return documents(plan, paper, key)
    # One file per student, each one piece: every student's files compile in parallel.
    width = max(2, len(str(len(plan.sheets))))
    docs: list[Document] = []
    for position in range(len(plan.sheets)):
        label = str(position + 1).zfill(width)
        only = range(position, position + 1)
        docs.append(Document(f"worksheet-{label}.pdf", "worksheets", paper, 1, only))
        if key is not None:
            docs.append(Document(f"key-{label}.pdf", "key", paper, 1, only, style=key))
    return docs


def worksheet_files(
    plan: ClassPlan,
    fmt: Format,
    *,
    paper: Paper = "a4",
    key: KeyStyle | None = "full",
    split: bool = False,
    progress: Progress | None = None,
    jobs: int | None = None,
) -> dict[str, bytes]:
    """The files of a worksheet export, by name: the sheets, and the key unless ``key`` is None.

    Every file in memory at once: `write` streams an export to disk instead.
    """
    if fmt not in WORKSHEET_FORMATS:
        raise ExportError(f"{fmt} is not a worksheet format ({', '.join(WORKSHEET_FORMATS)})")
    buffers: dict[str, io.BytesIO] = {}

    def keep(name: str) -> contextlib.AbstractContextManager[BinaryIO]:
        buffers[name] = io.BytesIO()
        return contextlib.nullcontext(buffers[name])

    if fmt == "pdf":
        from attnquiz.engine.export.pdf.worksheets import write_documents

        write_documents(plan, _pdf_documents(plan, paper, key, split), keep, jobs=jobs, progress=progress)
    else:
        _write_text_files(plan, fmt, keep, paper=paper, key=key, split=split, progress=progress)
    return {name: buffer.getvalue() for name, buffer in buffers.items()}


def write_lms(plan: ClassPlan, fmt: Format, out: BinaryIO, *, progress: Progress | None = None) -> list[str]:
    """Write the single file of an LMS export to ``out`` as it is made (never whole in memory);
    returns its warnings."""
    if fmt == "moodle":
        from attnquiz.engine.export.lms import moodle

        return moodle.write(plan, out, progress=progress)
    if fmt == "stack":
        from attnquiz.engine.export.lms import stack

        return stack.write(plan, out, progress=progress)
    if fmt == "qti":
        from attnquiz.engine.export.lms import qti

        return qti.write(plan, out, progress=progress)
    if fmt == "json":
        from attnquiz.engine.export.lms import json_export

        json_export.write(plan, out)
        return []
    raise ExportError(f"{fmt} is not an LMS format ({', '.join(LMS_FORMATS)})")


def lms_file(plan: ClassPlan, fmt: Format, *, progress: Progress | None = None) -> tuple[bytes, list[str]]:
    """The single file of an LMS export in memory, and its warnings."""
    buffer = io.BytesIO()
    warnings = write_lms(plan, fmt, buffer, progress=progress)
    return buffer.getvalue(), warnings


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _folder_for(path: Path) -> Path:
    """The folder ``path`` goes into, made if missing; a clear error when it cannot be."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = _blocking_file(folder)
        if blocking is not None:
            raise ExportError(f"cannot write {path}: {blocking} is a file, not a folder") from None
        raise ExportError(f"cannot make the folder {folder} for {path}: {_why(exc)}") from None
    return folder


def _blocking_file(folder: Path) -> Path | None:
    """The first ancestor of ``folder`` (or itself) that exists but is not a folder, if any."""
    for candidate in [*reversed(folder.parents), folder]:
        if candidate.exists() and not candidate.is_dir():
            return candidate
    return None


def is_special(path: Path) -> bool:
    """Whether ``path`` is a device or pipe (``/dev/stdout``, a FIFO): written in place, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


class Staging:
    """Files written under temporary names beside their final ones and renamed into place together.

    `open` gives a temporary file to write (a device or pipe, ``-o /dev/stdout``, is written
    directly, since it cannot be renamed over); `commit` renames every file into place. Used as a
    context manager, an error, Ctrl-C or SIGTERM before `commit` removes the temporary files
    (`attnquiz.engine.export.stopping` makes sure no signal lands between a file's creation and
    its noting, or between two renames). Only a kill that nothing can catch (SIGKILL) leaves a
    hidden ``.NAME.PID.*.part`` file, never a half-written file under a final name; the next export
    to that folder removes it. An `OSError` becomes `ExportError`
    in one line naming the file.
    """

    def __init__(self) -> None:
        self.staged: list[tuple[Path, Path]] = []
        self.current = Path()  # the file being written, named by the error if writing it fails
        self._signals = contextlib.ExitStack()

    def __enter__(self) -> Staging:
        # SIGTERM, like Ctrl-C, now ends in __exit__'s clean-up rather than with the files left.
        self._signals.enter_context(stopping.terminated_as_exception())
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        try:
            with stopping.held():  # a second Ctrl-C does not cut the clean-up short
                for temp, _ in self.staged:
                    with contextlib.suppress(FileNotFoundError):
                        temp.unlink()  # only left when something failed before the renames
        finally:
            self._signals.close()
        if isinstance(error, OSError):
            raise ExportError(f"cannot write {self.current}: {_why(error)}") from None

    @contextlib.contextmanager
    def open(self, path: Path) -> Iterator[BinaryIO]:
        """A file to write that becomes ``path`` at `commit`; flushed to disk when the block ends."""
        self.current = path
        if is_special(path):
            with path.open("wb") as out:
                yield out
            return
        folder = _folder_for(path)
        _sweep(folder, path.name)
        with stopping.held():  # no signal between the file's creation and its noting for removal
            handle, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.{os.getpid()}.", suffix=".part")
            temp = Path(name)
            self.staged.append((temp, path))
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        temp.chmod(_mode_for(path))

    def write(self, path: Path, data: bytes) -> None:
        """Stage ``data`` as the file ``path``."""
        with self.open(path) as out:
            out.write(data)

    def commit(self) -> None:
        """Rename every staged file into place (all the writing is done by now), with no signal
        between two renames: the files are replaced together."""
        with stopping.held():
            for temp, final in self.staged:
                self.current = final
                temp.replace(final)


def _sweep(folder: Path, name: str) -> None:
    """Remove the temporary files of ``name`` that an export killed outright (SIGKILL, a power cut)
    left in ``folder``: the user's own, named for a process that no longer runs."""
    try:
        leftovers = list(folder.glob(f".{glob.escape(name)}.*.part"))
    except OSError:
        return
    for leftover in leftovers:
        pid = leftover.name[len(name) + 2 :].partition(".")[0]
        if not pid.isascii() or not pid.isdigit() or int(pid) == os.getpid() or process_running(int(pid)):
            continue
        getuid = getattr(os, "getuid", None)
        with contextlib.suppress(OSError):
            if getuid is None or leftover.lstat().st_uid == getuid():
                leftover.unlink()


def process_running(pid: int) -> bool:
    """Whether process ``pid`` may still be running (whoever owns it): its staged files are left alone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or not a process id: leave its file alone
    return True


def save(outputs: Mapping[Path, bytes]) -> list[Path]:
    """Write every file, all or nothing: each to a temporary name beside it, then all renamed into place
    (see `Staging`)."""
    with Staging() as stage:
        for path, data in outputs.items():
            stage.write(path, data)
        stage.commit()
    return list(outputs)


def _mode_for(path: Path) -> int:
    """The permissions of the file being replaced, else rw-r--r-- (a temporary file starts at rw-------)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o644


def _images_to_copy(sheets: list[Sheet], output: Path) -> list[str]:
    """What a Markdown export must say about its images: it names them by their paths relative to
    the bank (``figures/map.png``), so their folders must travel with the Markdown files (HTML, PDF
    and the LMS files embed them). Read from the first sheet: every sheet shows the same images."""
    from attnquiz.engine.markup.markdown import image_sources

    shown: dict[str, str] = {}  # what a Markdown file names (a folder/, or a file) → where it is now
    for question in sheets[0].questions if sheets else ():
        for text in question.variant.texts():
            if "![" in text:
                for _, src in image_sources(text):
                    parts = PurePosixPath(src).parts
                    top = parts[0] + "/" if len(parts) > 1 else parts[0]
                    shown.setdefault(top, str(Path(question.folder) / top) if question.folder else top)
    if not shown:
        return []
    return [
        f"the Markdown shows images by their paths next to the bank ({', '.join(shown)}): copy "
        f"{', '.join(shown.values())} into {output} so that they travel with it"
    ]


def write(
    plan: ClassPlan,
    fmt: Format,
    output: Path,
    *,
    paper: Paper = "a4",
    key: KeyStyle | None = "full",
    split: bool = False,
    progress: Progress | None = None,
    jobs: int | None = None,
    bank: str | None = None,
    answer_sheet: bool = False,
    max_size: int | None = None,
) -> Written:
    """Make the export and write it: into the folder ``output`` (worksheets) or the file ``output``.

    Every file is streamed into its temporary file as it is made (memory does not grow with the
    class), and the files take their names together at the end. ``jobs``: PDF pieces made
    at once, by worker processes (default: every CPU); ``bank``: what the plan's bank was loaded by
    (`banks.load(bank, plugins=True)`), so that workers can load it too (see `pdf.write_documents`);
    ``max_size``: a Moodle or STACK file cut into parts of at most this many bytes (`part_path`).
    """
    written = Written()
    if fmt in WORKSHEET_FORMATS:
        if output.exists() and not output.is_dir():
            raise ExportError(f"{output} is a file: a {fmt} export writes into a folder (-o out/)")
        if fmt != "pdf":
            first: list[Sheet] = []
            with Staging() as stage:
                names = _write_text_files(
                    plan,
                    fmt,
                    lambda name: stage.open(output / name),
                    paper=paper,
                    key=key,
                    split=split,
                    progress=progress,
                    first=first,
                )
                stage.commit()
            written.files.extend(output / name for name in names)
            if fmt == "md":
                written.warnings.extend(_images_to_copy(first, output))
            return written
        from attnquiz.engine.export.pdf.worksheets import write_documents

        docs = _pdf_documents(plan, paper, key, split)
        if answer_sheet:  # machine-readable answer sheets and their layout (`answer_sheet`)
            from attnquiz.engine.export.pdf import answer_sheet as sheets_layout
            from attnquiz.engine.export.pdf.worksheets import Document

            docs.append(Document("answer-sheets.pdf", "answer-sheets", paper, sheets_layout.PIECE_STUDENTS))
        with Staging() as stage:
            write_documents(
                plan, docs, lambda name: stage.open(output / name), jobs=jobs, progress=progress, bank=bank
            )
            if answer_sheet:
                with stage.open(output / "answer-sheets.json") as out:
                    sheets_layout.write_json(plan, paper, out)
            stage.commit()
        if answer_sheet:
            written.files.append(output / "answer-sheets.json")
        written.files.extend(output / doc.name for doc in docs)
        return written
    if output.is_dir():
        example = default_output(fmt, plan.bank)
        raise ExportError(f"{output} is a folder: a {fmt} export is one file (-o {example})")
    if max_size is not None:
        return _write_parts(plan, fmt, output, max_size, progress)
    with Staging() as stage:
        with stage.open(output) as out:
            written.warnings.extend(write_lms(plan, fmt, out, progress=progress))
        stage.commit()
    written.files.append(output)
    return written


def part_path(output: Path, number: int) -> Path:
    """Part ``number`` of a file cut into parts: ``week1.xml`` → ``week1-1.xml``, ``week1-2.xml``, ..."""
    return output.with_name(f"{output.stem}-{number}{output.suffix}")


SPLIT_FORMATS: tuple[Format, ...] = ("moodle", "stack")
"""The formats an export can cut into parts (`write`'s ``max_size``): a question bank of XML
questions, which a site imports file by file into the same categories."""


def _write_parts(
    plan: ClassPlan, fmt: Format, output: Path, max_size: int, progress: Progress | None
) -> Written:
    """A Moodle or STACK export in parts of at most ``max_size`` bytes, each a whole file that
    imports on its own: whole questions only, each part repeating the category of its first
    question. The parts are staged and take their names together, like every export's files."""
    from attnquiz.engine.export.lms.moodle_file import Parts

    if fmt not in SPLIT_FORMATS:
        raise ExportError(
            f"a {fmt} export is one file: only {' and '.join(SPLIT_FORMATS)} exports are cut into parts"
        )
    if is_special(output):
        raise ExportError(
            f"{output} is not a file: an export cut into parts needs a file name (-o week1.xml)"
        )
    written = Written()
    with Staging() as stage:

        def open_part(number: int) -> contextlib.AbstractContextManager[BinaryIO]:
            written.files.append(part_path(output, number))
            return stage.open(written.files[-1])

        parts = Parts(open_part, max_size)
        if fmt == "moodle":
            from attnquiz.engine.export.lms import moodle

            written.warnings.extend(moodle.write(plan, parts, progress=progress))
        else:
            from attnquiz.engine.export.lms import stack

            written.warnings.extend(stack.write(plan, parts, progress=progress))
        stage.commit()
    stale = part_path(output, len(written.files) + 1)
    if stale.exists():
        written.warnings.append(
            f"{stale} (and any later part) is left from an earlier export, not part of this one: "
            "do not import it with these parts"
        )
    return written


__all__ = [
    "EXTENSIONS",
    "LMS_FORMATS",
    "SPLIT_FORMATS",
    "WORKSHEET_FORMATS",
    "Format",
    "Staging",
    "Written",
    "default_output",
    "is_special",
    "lms_file",
    "part_path",
    "save",
    "worksheet_files",
    "write",
    "write_lms",
]
