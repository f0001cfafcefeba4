"""A class's marks and report written as one set: after any stop, the old set or the new one.

``quiz grade --report rep -o marks.csv`` writes two things that belong together: the report's pages
are made from those marks. Written one after the other, a kill between them would leave new marks
beside the old report, a teacher reading last week's pages against this week's marks. So:

1. everything is *staged*: the report's files, each written as it is made, in a new sibling
   folder ``.rep.PID.new`` (with ``manifest.json``: each file's digest, and the digest and path of
   the marks it was made from), the marks (made in memory) in a temporary file beside
   ``marks.csv``. A stop now leaves the old set; the staged files are removed (or swept by the
   next run);
2. the *commit point*: a journal ``.rep.quiz-commit`` beside the report, naming what is staged,
   written to a temporary name and renamed into place (one rename: it is there or not);
3. the journal is *applied*: the new report folder takes the old one's place in one step (Linux's
   ``renameat2(RENAME_EXCHANGE)``: the folder is never missing nor half one and half the other;
   elsewhere the old is renamed away and the new in), then the marks are renamed into place, then
   the journal is removed. Each step can be done again (the manifest's token says whether the
   exchange is done), so a stop here is finished by the next ``quiz grade --report`` to that folder
   before it does anything else (`recover`), and an error or Ctrl-C here finishes it at once.

The report replaces only a report: a folder that holds anything else (``--report .`` in a project)
is refused, never swapped away. Catchable signals (Ctrl-C, SIGTERM) wait while a rename is made
(`attnquiz.engine.export.stopping`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import functools
import glob
import hashlib
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from attnquiz.engine.errors import QuizError
from attnquiz.engine.export import stopping
from attnquiz.engine.export.files import process_running

MANIFEST = "manifest.json"
"""The report's list of its files and of the marks it was made from (what makes it one set)."""
REPORT_FILES = frozenset(
    {"index.html", "items.csv", "mistakes.csv", "options.csv", "topics.csv", "students.csv"}
)
"""The files of a report written before reports had a manifest (a folder of only these, and
``students/*.html``, is a report and may be replaced)."""

_MARKS_NOTE = ".marks"
"""In a staged report folder until its journal is written: where its marks are being staged."""
Step = Callable[[str], None]
"""Called with the name of each step as it is reached (tests stop the writing there)."""


class ReportSetError(QuizError):
    """The marks and report could not be written (the old set is kept, or the next run finishes)."""


def _no_step(name: str) -> None:
    """No test is watching."""


def _journal(report: Path) -> Path:
    return report.parent / f".{report.name}.quiz-commit"


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened, as on Windows)."""
    with contextlib.suppress(OSError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def _write_file(path: Path, data: bytes) -> None:
    with path.open("wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _is_replaceable_report(folder: Path) -> bool:
    """Whether ``folder`` is empty or a report (ours, or one written before manifests)."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return False
    for entry in entries:
        if entry.name == "students" and entry.is_dir() and not entry.is_symlink():
            if not all(p.suffix == ".html" and p.is_file() for p in entry.iterdir()):
                return False
        elif entry.name not in REPORT_FILES | {MANIFEST} or not entry.is_file() or entry.is_symlink():
            return False
    return True


@functools.cache
def _renameat2() -> Any:
    """libc's ``renameat2``, or None where there is none."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    with contextlib.suppress(OSError):
        return getattr(ctypes.CDLL(name, use_errno=True), "renameat2", None)
    return None


def _exchange(new: Path, old: Path) -> bool:
    """Swap two folders in one step (``renameat2(RENAME_EXCHANGE)``, Linux 3.15 and glibc 2.28);
    False where that does not exist (another system, a file system without it)."""
    rename2 = _renameat2()
    if rename2 is None:
        return False
    at_fdcwd, exchange = -100, 2
    done = rename2(at_fdcwd, os.fsencode(new), at_fdcwd, os.fsencode(old), exchange)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(old))


def _token(folder: Path) -> str | None:
    """The token in a report folder's manifest (None when it has none)."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    token = data.get("token") if isinstance(data, dict) else None
    return token if isinstance(token, str) else None


def _apply(journal: Path, record: Mapping[str, Any], step: Step) -> None:
    """Apply a committed journal; every step may be done again after a stop."""
    report = Path(record["report"])
    staged = Path(record["staged"])
    aside = Path(record["aside"])  # where the old folder goes where folders cannot be swapped
    for folder in (staged, report):  # the journal names the marks now: the staging note goes
        if _token(folder) == record["token"]:
            (folder / _MARKS_NOTE).unlink(missing_ok=True)
    if _token(report) != record["token"] and staged.is_dir():
        step("exchange")
        with stopping.held():
            if not report.is_dir():
                staged.replace(report)
            elif not _exchange(staged, report):
                # No atomic swap here: the old folder is renamed away, then the new one in (a stop
                # between the two leaves no report, and the journal brings the new one).
                report.replace(aside)
                staged.replace(report)
        _fsync_folder(report.parent)
    for old in (staged, aside):
        if old.is_dir() and _token(old) != record["token"]:
            step("remove-old")
            shutil.rmtree(old, ignore_errors=True)  # the old report, swapped out
    marks_temp, marks = record.get("marks_temp"), record.get("marks")
    if marks_temp and marks and Path(marks_temp).exists():
        step("marks")
        with stopping.held():
            Path(marks_temp).replace(marks)
        _fsync_folder(Path(marks).parent)
    step("journal")
    with stopping.held():
        journal.unlink(missing_ok=True)
    _fsync_folder(journal.parent)


def recover(report: Path) -> bool:
    """Finish a set whose writing was stopped after its commit point (True if there was one), and
    remove what a set stopped before it left behind (its staged folder and marks)."""
    report = report.resolve()
    journal = _journal(report)
    finished = False
    if journal.exists():
        try:
            record = json.loads(journal.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ReportSetError(
                f"cannot read {journal} (the record of an unfinished report): {exc}"
            ) from None
        if not isinstance(record, dict) or Path(str(record.get("report"))) != report:
            raise ReportSetError(f"{journal} is not the record of the report {report}: move it away")
        _apply(journal, record, _no_step)
        finished = True
    _sweep(report)
    return finished


def _sweep(report: Path) -> None:
    """Remove staged folders of this report that a stopped run left (named for a process gone)."""
    with contextlib.suppress(OSError):
        for leftover in report.parent.glob(f".{glob.escape(report.name)}.*.new"):
            pid = leftover.name[len(report.name) + 2 :].partition(".")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not process_running(int(pid)):
                _remove_staged_marks(leftover)
                shutil.rmtree(leftover, ignore_errors=True)
        for leftover in report.parent.glob(f"{glob.escape(_journal(report).name)}.*.part"):
            pid = leftover.name[len(_journal(report).name) + 1 :].partition(".")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not process_running(int(pid)):
                leftover.unlink(missing_ok=True)  # a journal never committed
        for leftover in report.parent.glob(f".{glob.escape(report.name)}.*.old"):
            pid = leftover.name[len(report.name) + 2 :].partition(".")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not process_running(int(pid)):
                shutil.rmtree(leftover, ignore_errors=True)


def _remove_staged_marks(staged: Path) -> None:
    """The marks staged with a report folder that was never committed (named in its note)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        note = json.loads((staged / _MARKS_NOTE).read_text(encoding="utf-8"))
        for leftover in Path(note["folder"]).glob(glob.escape(note["prefix"]) + "*.part"):
            leftover.unlink(missing_ok=True)


def write_set(
    report: Path,
    files: Mapping[str, bytes] | Iterable[tuple[str, bytes]],
    marks: tuple[Path, bytes] | None = None,
    *,
    step: Step = _no_step,
) -> Path:
    """Write the report ``files`` (by their paths inside it; a mapping, or pairs made as they are
    written) into the folder ``report`` and the ``marks`` file, as one set (see the module
    docstring); the report's folder, resolved."""
    report = report.resolve()
    if report.exists() and not report.is_dir():
        raise ReportSetError(f"{report} is a file: --report needs a folder")
    if report in (Path(report.anchor), Path.cwd().resolve()) or Path.cwd().resolve().is_relative_to(report):
        # Replaced whole, a report folder is never the working folder or one that holds it.
        raise ReportSetError(
            f"{report} holds the working folder: give --report a folder of its own (e.g. report/)"
        )
    recover(report)
    if report.is_dir() and not _is_replaceable_report(report):
        raise ReportSetError(
            f"{report} holds files that are not a quiz report: give --report a new or empty folder "
            "(a report replaces its folder whole)"
        )
    marks_path = marks[0].resolve() if marks is not None else None
    if marks_path is not None and marks_path.is_relative_to(report):
        raise ReportSetError(f"write the marks outside the report's folder ({report}): it is replaced whole")
    if marks_path is not None and marks_path.is_dir():
        raise ReportSetError(f"{marks_path} is a folder: give a file name for the CSV")
    token = secrets.token_hex(8)
    journal = _journal(report)
    staged: Path | None = None
    marks_temp: Path | None = None
    committed = False
    with stopping.terminated_as_exception():
        try:
            try:
                report.parent.mkdir(parents=True, exist_ok=True)
                with stopping.held():  # no signal between the folder's making and its noting
                    prefix = f".{report.name}.{os.getpid()}."
                    staged = Path(tempfile.mkdtemp(dir=report.parent, prefix=prefix, suffix=".new"))
                step("stage-report")
                manifest: dict[str, Any] = {"format": "quiz class report", "version": 1, "token": token}
                hashes: dict[str, str] = {}
                # Each file is written as it comes (a report's pages are made one at a time).
                for name, data in files.items() if isinstance(files, Mapping) else files:
                    target = staged / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    _write_file(target, data)
                    hashes[name] = hashlib.sha256(data).hexdigest()
                manifest["files"] = hashes
                if marks is not None and marks_path is not None:
                    manifest["marks"] = {
                        "path": str(marks_path),
                        "sha256": hashlib.sha256(marks[1]).hexdigest(),
                    }
                    step("stage-marks")
                    marks_path.parent.mkdir(parents=True, exist_ok=True)
                    prefix = f".{marks_path.name}.{os.getpid()}."
                    # Noted in the staged folder first: a kill now leaves nothing the next run cannot find.
                    note = {"folder": str(marks_path.parent), "prefix": prefix}
                    _write_file(staged / _MARKS_NOTE, json.dumps(note).encode("utf-8"))
                    with stopping.held():
                        handle, name = tempfile.mkstemp(dir=marks_path.parent, prefix=prefix, suffix=".part")
                        marks_temp = Path(name)
                    os.close(handle)
                    _write_file(marks_temp, marks[1])
                    with contextlib.suppress(OSError):
                        marks_temp.chmod(_mode(marks_path))
                _write_file(staged / MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))
                staged.chmod(0o755)
                step("journal-write")
                record = {
                    "report": str(report),
                    "staged": str(staged),
                    "aside": str(staged.with_suffix(".old")),
                    "token": token,
                    "marks": str(marks_path) if marks_path is not None else None,
                    "marks_temp": str(marks_temp) if marks_temp is not None else None,
                }
                pending = journal.with_name(journal.name + f".{os.getpid()}.part")
                _write_file(pending, json.dumps(record).encode("utf-8"))
                step("commit")
                with stopping.held():
                    pending.replace(journal)  # the commit point
                    committed = True
                _fsync_folder(journal.parent)
            except BaseException:
                if not committed:  # the old set stays: nothing staged is kept
                    with stopping.held():
                        if staged is not None:
                            shutil.rmtree(staged, ignore_errors=True)
                        if marks_temp is not None:
                            marks_temp.unlink(missing_ok=True)
                        for pending in journal.parent.glob(f"{journal.name}.{os.getpid()}.part"):
                            pending.unlink(missing_ok=True)
                raise
            try:
                _apply(journal, record, step)
            except BaseException:
                # Past the commit point the new set is the one: finish it now if at all possible.
                with stopping.held():
                    _apply(journal, record, _no_step)
                raise
        except OSError as exc:
            where = exc.filename or report
            raise ReportSetError(
                f"cannot write the report {report}: {where}: {exc.strerror or exc}"
            ) from None
    return report


def _mode(path: Path) -> int:
    """The permissions of the file being replaced, else rw-r--r--."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o644


__all__ = ["MANIFEST", "ReportSetError", "recover", "write_set"]
