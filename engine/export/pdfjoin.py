"""Join PDFs page after page into one file, written as a stream: memory does not grow with the pages.

A class export compiles its worksheets (and its key) in pieces of a few students, since Typst lays
a whole document out at once and its memory grows with the document. `PdfJoin` reads each piece
as it comes (with pypdf), copies the objects its pages use under new numbers straight to the
output file and forgets the piece; it keeps only each object's offset (for the cross-reference
table), the numbers of the pages (for the page tree written at the end) and a digest per
shared object (below). A writer that holds every page object, as pypdf's own ``PdfWriter`` does,
would grow with the class.

What is copied: each page and everything it refers to, except its ``/Parent`` (the joined file has
one page tree, written last) and its ``/StructParents`` (Typst's tagged-PDF structure tree is
per document and is not carried over: the joined file is untagged). The first piece's document
information (title, author) and language are kept.

Each piece embeds its own subset of the fonts; an object that is byte for byte the same as one
already written (after renumbering; a font file, a font, an image) is written once and shared,
which is what keeps the file of a whole class close to the sum of its pages.

The output depends only on the pieces and their order, so the same pieces give the same bytes.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from typing import Any, BinaryIO

_HEADER = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
_SKIPPED_PAGE_KEYS = frozenset({"/Parent", "/StructParents"})


class PdfJoin:
    """A PDF written to ``out`` one piece at a time: `add` each piece's bytes, then `finish`."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.offsets: list[int] = [0]  # offsets[n] is where object n starts; 0 is the free object
        self.pages: list[int] = []
        self.shared: dict[bytes, int] = {}  # digest of an object's bytes → its number in the output
        self.info: dict[str, Any] | None = None
        self.lang: Any = None
        self.position = 0
        self._write(_HEADER)
        self.pages_number = self._reserve()  # the page tree, written by `finish`

    def _write(self, data: bytes) -> None:
        self.out.write(data)
        self.position += len(data)

    def _reserve(self) -> int:
        self.offsets.append(0)
        return len(self.offsets) - 1

    def _object(self, number: int, body: bytes) -> None:
        self.offsets[number] = self.position
        self._write(b"%d 0 obj\n" % number + body + b"\nendobj\n")

    def add(self, pdf: bytes) -> None:
        """Append every page of ``pdf`` (a whole PDF file) to the output."""
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(pdf))
        if self.info is None:
            info = reader.trailer.get("/Info")
            self.info = dict(info.get_object()) if info is not None else {}
            catalog: Any = reader.trailer["/Root"].get_object()
            self.lang = catalog.get("/Lang")
        copier = _Copier(self, reader)
        for page in reader.pages:
            if page.indirect_reference is None:
                raise ValueError("a page of the piece is not an indirect object")
            self.pages.append(copier.page(page.indirect_reference.idnum))

    def finish(self) -> None:
        """Write the page tree, the catalog, the document information and the cross-reference table."""
        kids = b" ".join(b"%d 0 R" % n for n in self.pages)
        self._object(self.pages_number, b"<< /Type /Pages /Count %d /Kids [%s] >>" % (len(self.pages), kids))
        catalog = self._reserve()
        lang = _serialise(self.lang, _no_references) if self.lang is not None else None
        self._object(
            catalog,
            b"<< /Type /Catalog /Pages %d 0 R" % self.pages_number
            + (b" /Lang " + lang if lang else b"")
            + b" >>",
        )
        info = self._reserve()
        entries = b"".join(
            _serialise_name(key) + b" " + _serialise(value, _no_references)
            for key, value in sorted((self.info or {}).items())
            if not _has_reference(value)
        )
        self._object(info, b"<<" + entries + b">>")
        start = self.position
        lines = [b"xref\n0 %d\n" % len(self.offsets), b"0000000000 65535 f \n"]
        lines.extend(b"%010d 00000 n \n" % offset for offset in self.offsets[1:])
        self._write(b"".join(lines))
        self._write(
            b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(self.offsets), catalog, info, start)
        )


class _Copier:
    """One piece's objects under their numbers in the output: each written once, after what it refers to."""

    def __init__(self, join: PdfJoin, reader: Any) -> None:
        self.join = join
        self.reader = reader
        self.numbers: dict[int, int] = {}  # number in the piece → number in the output
        self.open: set[int] = set()  # objects being copied (a reference back to one is a cycle)
        self.page_numbers = {
            page.indirect_reference.idnum for page in reader.pages if page.indirect_reference
        }

    def page(self, number: int) -> int:
        """Copy a page (and what it uses) under a new number that is never shared with another page."""
        return self.copy(number, page=True)

    def copy(self, number: int, page: bool = False) -> int:
        if number in self.numbers:
            return self.numbers[number]
        if number in self.open:
            # A cycle (an annotation pointing back at its page): the object in progress gets its number
            # now, and is written with it; it is then not shared.
            self.numbers[number] = self.join._reserve()
            return self.numbers[number]
        obj = self.reader.get_object(number)
        if (
            isinstance(obj, dict) and obj.get("/Type") == "/Pages"
        ):  # a reference to the piece's page tree: the joined file's tree
            return self.join.pages_number
        page = page or number in self.page_numbers  # a link to a page copies it as a page, once
        self.open.add(number)
        skipped = _SKIPPED_PAGE_KEYS if page else frozenset()
        body = _serialise(obj, self.copy, skipped)
        self.open.discard(number)
        if number in self.numbers:  # reserved by a cycle through it
            self.join._object(self.numbers[number], body)
            return self.numbers[number]
        if not page:
            digest = hashlib.sha256(body).digest()
            known = self.join.shared.get(digest)
            if known is not None:
                self.numbers[number] = known
                return known
        new = self.join._reserve()
        self.join._object(new, body)
        self.numbers[number] = new
        if not page:
            self.join.shared[digest] = new
        return new


def _no_references(number: int) -> int:
    raise ValueError(f"unexpected reference to object {number}")


def _has_reference(value: Any) -> bool:
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

    if isinstance(value, IndirectObject):
        return True
    if isinstance(value, DictionaryObject):
        return any(_has_reference(v) for v in value.values())
    if isinstance(value, ArrayObject):
        return any(_has_reference(v) for v in value)
    return False


def _serialise_name(name: str) -> bytes:
    from pypdf.generic import NameObject

    buffer = io.BytesIO()
    NameObject(name).write_to_stream(buffer)
    return buffer.getvalue()


def _serialise(value: Any, number_of: Callable[[int], int], skipped: frozenset[str] = frozenset()) -> bytes:
    """An object as PDF bytes, each reference renumbered by ``number_of`` (which copies what it names)."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, StreamObject

    if isinstance(value, IndirectObject):
        return b"%d 0 R" % number_of(value.idnum)
    if isinstance(value, ArrayObject):
        return b"[" + b" ".join(_serialise(item, number_of) for item in value) + b"]"
    if isinstance(value, DictionaryObject):
        data = b""
        if isinstance(value, StreamObject):
            # The stream's bytes as stored (still compressed), with its length; the piece's filters stay.
            data = bytes(value._data)  # pypdf keeps a read stream's encoded bytes here
        entries = [
            _serialise_name(key) + b" " + _serialise(item, number_of)
            for key, item in value.items()
            if key not in skipped and not (isinstance(value, StreamObject) and key == "/Length")
        ]
        if isinstance(value, StreamObject):
            entries.append(b"/Length %d" % len(data))
            return b"<<" + b" ".join(entries) + b">>\nstream\n" + data + b"\nendstream"
        return b"<<" + b" ".join(entries) + b">>"
    buffer = io.BytesIO()
    value.write_to_stream(buffer)
    return buffer.getvalue()


__all__ = ["PdfJoin"]
