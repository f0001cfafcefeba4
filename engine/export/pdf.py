"""PDF worksheets and keys: the Typst source of `engine.export.typst`, compiled by the `typst` wheel.

Only the fonts inside the wheel are used (system fonts are ignored), so the bytes do not depend
on the machine, and the document sets no date, so they do not depend on the clock either: the
same seed gives the same PDF. Fonts are embedded (subset) by Typst.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.export import typst as typst_source
from engine.export.worksheet import ClassPlan, ExportError, KeyStyle, Paper, Sheet


def compile_typst(source: str) -> bytes:
    """Compile Typst source to PDF bytes; a Typst error or warning is a bug here, so it raises."""
    import typst  # imported here: loading the compiler is not free, and most commands never need it

    try:
        pdf, warnings = typst.compile_with_warnings(source.encode("utf-8"), ignore_system_fonts=True)
    except typst.TypstError as exc:
        raise ExportError(f"typst could not compile the document: {exc.message} {exc.diagnostic}") from exc
    if warnings:
        messages = "; ".join(w.message for w in warnings)
        raise ExportError(f"typst warned while compiling the document: {messages}")
    if not isinstance(pdf, bytes):
        raise ExportError("typst returned no PDF")
    return pdf


def worksheets(plan: ClassPlan, sheets: Iterable[Sheet], paper: Paper = "a4") -> bytes:
    """The worksheets of ``sheets`` as one PDF."""
    return compile_typst(typst_source.worksheets(plan, sheets, paper))


def key(plan: ClassPlan, sheets: Iterable[Sheet], paper: Paper = "a4", style: KeyStyle = "full") -> bytes:
    """The answer key of ``sheets`` as one PDF."""
    return compile_typst(typst_source.key(plan, sheets, paper, style))


__all__ = ["compile_typst", "key", "worksheets"]
