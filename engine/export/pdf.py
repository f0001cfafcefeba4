"""PDF worksheets and keys: the Typst source of `attnquiz.engine.export.typst`, compiled by the `typst` wheel.

Only the fonts inside the wheel are used (system fonts are ignored), so the bytes do not depend
on the machine, and the document sets no date, so they do not depend on the clock either: the
same seed gives the same PDF. Fonts are embedded (subset) by Typst.

A class export compiles several documents (the worksheets and the key, or one pair per student).
Typst releases the GIL and lays pages out on several threads, so `compile_all` hands each document
to the compiler as soon as its source is written, and writes the next source while it compiles.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from attnquiz.engine.export import typst as typst_source
from attnquiz.engine.export.worksheet import ClassPlan, ExportError, KeyStyle, Paper, Progress, Sheet


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


def compile_all(
    documents: Sequence[tuple[str, Callable[[], str]]], progress: Progress | None = None
) -> dict[str, bytes]:
    """Each named document's source built (in order, in this thread) and compiled to PDF bytes.

    A document's compile starts as soon as its source exists, so the compiler and the writing of
    the next source overlap; at most two compile at once (more would only share the same cores).
    Put the biggest document first: its compile is the longest. Returns the PDFs in that order.
    """
    if progress is not None:
        progress(0, len(documents))
    futures: dict[str, Future[bytes]] = {}
    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        for name, build in documents:
            futures[name] = pool.submit(compile_typst, build())
        done: dict[str, bytes] = {}
        for count, (name, future) in enumerate(futures.items(), 1):
            done[name] = future.result()
            if progress is not None:
                progress(count, len(futures))
    return done


def worksheets(plan: ClassPlan, sheets: Iterable[Sheet], paper: Paper = "a4") -> bytes:
    """The worksheets of ``sheets`` as one PDF."""
    return compile_typst(typst_source.worksheets(plan, sheets, paper))


def key(plan: ClassPlan, sheets: Iterable[Sheet], paper: Paper = "a4", style: KeyStyle = "full") -> bytes:
    """The answer key of ``sheets`` as one PDF."""
    return compile_typst(typst_source.key(plan, sheets, paper, style))


__all__ = ["compile_all", "compile_typst", "key", "worksheets"]
