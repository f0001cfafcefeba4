"""Writing an export to disk: which files each format makes, and their names.

Worksheet formats (``pdf``, ``html``, ``md``) write into a folder: ``worksheets.<ext>`` and
``key.<ext>``, or with ``split`` one ``worksheet-07.<ext>`` and ``key-07.<ext>`` per student.
LMS formats (``moodle``, ``qti``, ``json``) write one file. Bytes are produced first and
written after, so a failed export leaves no half-written file behind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
        output.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            path = output / name
            path.write_bytes(data)
            written.files.append(path)
        return written
    if output.is_dir():
        example = default_output(fmt, plan.bank)
        raise ExportError(f"{output} is a folder: a {fmt} export is one file (-o {example})")
    data, warnings = lms_file(plan, fmt, progress=progress)
    if output.parent != Path():
        output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(data)
    written.files.append(output)
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
    "worksheet_files",
    "write",
]
