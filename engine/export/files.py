"""Writing an export to disk: which files each format makes, and their names.

Worksheet formats (``pdf``, ``html``, ``md``) write into a folder: ``worksheets.<ext>`` and
``key.<ext>``, or with ``split`` one ``worksheet-07.<ext>`` and ``key-07.<ext>`` per student.
LMS formats (``moodle``, ``qti``, ``json``) write one file. Bytes are produced first and
written after, each to a temporary name in the destination folder; only when every file of the
export is complete are they renamed into place (`save`), so no half-written file ever has a final
name, and worksheets and key are replaced together or not at all.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

from attnquiz.engine.export.worksheet import ClassPlan, ExportError, KeyStyle, Paper, Progress, Sheet

Format = Literal["pdf", "html", "md", "moodle", "qti", "json"]
WORKSHEET_FORMATS: tuple[Format, ...] = ("pdf", "html", "md")
LMS_FORMATS: tuple[Format, ...] = ("moodle", "qti", "json")
EXTENSIONS: dict[Format, str] = {
    "pdf": ".pdf",
    "html": ".html",
    "md": ".md",
    "moodle": ".xml",
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
    suffix = "-canvas" if fmt == "qti" else ""
    return Path(f"{bank}{suffix}{EXTENSIONS[fmt]}")


def _sources(
    fmt: Format, paper: Paper, key: KeyStyle
) -> tuple[Callable[[ClassPlan, Sequence[Sheet]], str], Callable[[ClassPlan, Sequence[Sheet]], str]]:
    """The functions that write the source of a worksheet file and of a key file of some sheets."""
    if fmt == "pdf":
        from attnquiz.engine.export import typst

        return (lambda p, s: typst.worksheets(p, s, paper)), (lambda p, s: typst.key(p, s, paper, key))
    if fmt == "html":
        from attnquiz.engine.export import html

        return (lambda p, s: html.worksheets(p, s, paper)), (lambda p, s: html.key(p, s, paper, key))
    from attnquiz.engine.export import markdown

    return markdown.worksheets, (lambda p, s: markdown.key(p, s, key))


def _finish(
    fmt: Format, documents: list[tuple[str, Callable[[], str]]], progress: Progress | None
) -> dict[str, bytes]:
    """Sources → file bytes: PDFs compiled while the next source is written (see pdf.compile_all)."""
    if fmt != "pdf":
        return {name: build().encode("utf-8") for name, build in documents}
    from attnquiz.engine.export.pdf import compile_all

    return compile_all(documents, progress)


def worksheet_files(
    plan: ClassPlan,
    fmt: Format,
    *,
    paper: Paper = "a4",
    key: KeyStyle | None = "full",
    split: bool = False,
    progress: Progress | None = None,
) -> dict[str, bytes]:
    """The files of a worksheet export, by name: the sheets, and the key unless ``key`` is None."""
    if fmt not in WORKSHEET_FORMATS:
        raise ExportError(f"{fmt} is not a worksheet format ({', '.join(WORKSHEET_FORMATS)})")
    sheets_of, key_of = _sources(fmt, paper, key or "full")
    ext = EXTENSIONS[fmt]
    documents: list[tuple[str, Callable[[], str]]] = []
    if not split:
        sheets_name = f"worksheets{ext}"
        if key is not None:
            # The key first: it is the longer compile, so it should start first.
            documents.append((f"key{ext}", lambda: key_of(plan, plan.sheets)))
        documents.append((sheets_name, lambda: sheets_of(plan, plan.sheets)))
        files = _finish(fmt, documents, progress)
        return {sheets_name: files.pop(sheets_name), **files}
    width = max(2, len(str(len(plan.sheets))))
    for sheet in plan.sheets:
        number = str(sheet.student).zfill(width)
        documents.append((f"worksheet-{number}{ext}", partial(sheets_of, plan, [sheet])))
        if key is not None:
            documents.append((f"key-{number}{ext}", partial(key_of, plan, [sheet])))
    return _finish(fmt, documents, progress)


def lms_file(plan: ClassPlan, fmt: Format, *, progress: Progress | None = None) -> tuple[bytes, list[str]]:
    """The single file of an LMS export, and its warnings."""
    if fmt == "moodle":
        from attnquiz.engine.export import moodle

        built = moodle.build(plan, progress=progress)
        return built.text.encode("utf-8"), built.warnings
    if fmt == "qti":
        from attnquiz.engine.export import qti

        package = qti.package(plan, progress=progress)
        return package.data, package.warnings
    if fmt == "json":
        from attnquiz.engine.export import json_export

        return json_export.dumps(plan).encode("utf-8"), []
    raise ExportError(f"{fmt} is not an LMS format ({', '.join(LMS_FORMATS)})")


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


def _is_special(path: Path) -> bool:
    """Whether ``path`` is a device or pipe (``/dev/stdout``, a FIFO): written in place, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def save(outputs: Mapping[Path, bytes]) -> list[Path]:
    """Write every file, all or nothing: each to a temporary name beside it, then all renamed into place.

    A crash or kill part-way leaves at most a hidden ``.NAME.*.part`` file, never a half-written
    file under a final name; an error (a full disk, a folder that cannot be made) removes the
    temporary files, leaves every earlier file as it was and raises `ExportError` in one line.
    A device or pipe (``-o /dev/stdout``) is written directly, since it cannot be renamed over.
    """
    staged: list[tuple[Path, Path]] = []
    current = Path()  # the file being written, named by the error if writing it fails
    try:
        for current, data in outputs.items():
            if _is_special(current):
                continue
            folder = _folder_for(current)
            handle, name = tempfile.mkstemp(dir=folder, prefix=f".{current.name}.", suffix=".part")
            temp = Path(name)
            staged.append((temp, current))
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            temp.chmod(_mode_for(current))
        for current, data in outputs.items():
            if _is_special(current):
                with current.open("wb") as out:
                    out.write(data)
        for temp, current in staged:
            temp.replace(current)
    except OSError as exc:
        raise ExportError(f"cannot write {current}: {_why(exc)}") from None
    finally:
        for temp, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()  # only left when a later file failed (a renamed one is gone)
    return list(outputs)


def _mode_for(path: Path) -> int:
    """The permissions of the file being replaced, else rw-r--r-- (a temporary file starts at rw-------)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o644


def write(
    plan: ClassPlan,
    fmt: Format,
    output: Path,
    *,
    paper: Paper = "a4",
    key: KeyStyle | None = "full",
    split: bool = False,
    progress: Progress | None = None,
) -> Written:
    """Make the export and write it: into the folder ``output`` (worksheets) or the file ``output``."""
    written = Written()
    if fmt in WORKSHEET_FORMATS:
        if output.exists() and not output.is_dir():
            raise ExportError(f"{output} is a file: a {fmt} export writes into a folder (-o out/)")
        files = worksheet_files(plan, fmt, paper=paper, key=key, split=split, progress=progress)
        written.files.extend(save({output / name: data for name, data in files.items()}))
        return written
    if output.is_dir():
        example = default_output(fmt, plan.bank)
        raise ExportError(f"{output} is a folder: a {fmt} export is one file (-o {example})")
    data, warnings = lms_file(plan, fmt, progress=progress)
    written.files.extend(save({output: data}))
    written.warnings.extend(warnings)
    return written


__all__ = [
    "EXTENSIONS",
    "LMS_FORMATS",
    "WORKSHEET_FORMATS",
    "Format",
    "Written",
    "default_output",
    "lms_file",
    "save",
    "worksheet_files",
    "write",
]
