"""Join PDFs page after page into one file, written as a stream: memory does not grow with the pages.

A class export compiles its worksheets (and its key) in pieces of a few students, since Typst lays
a whole document out at once and its memory grows with the document. `PdfJoin` reads each piece
as it comes (with pypdf), copies the objects its pages use under new numbers straight to the
output file and forgets the piece; it keeps only each object's offset (for the cross-reference
table), the numbers of the pages (for the page tree written at the end), a digest per shared
object (below) and, for the structure tree, the number of each top-level structure element and
one leaf of the parent tree per piece. A writer that holds every page object, as pypdf's own
``PdfWriter`` does, would grow with the class.

What is copied: each page and everything it refers to, except its ``/Parent`` (the joined file has
one page tree, written last). The first piece's document information (title, author), language
and viewer preferences are kept, with ``/DisplayDocTitle`` set (a reader's window shows the title,
not the file name), and an XMP metadata stream is written with the title, the language and the
page count of the whole file.

Tagged pieces (Typst's tagged PDF, for screen readers) keep their tags: the joined file has one
structure tree, whose ``/Document`` element holds the top-level elements of every piece in order
(headings, paragraphs, formulas with their alternative text, figures, tables), and one parent
tree, a number tree with a leaf per piece. A piece's parent-tree keys (its pages'
``/StructParents``, its annotations' ``/StructParent``) are moved past the keys of the pieces
before it, so every key is still unique; ``/RoleMap`` and ``/ClassMap`` are the union of the
pieces' (which must agree). The catalog says ``/MarkInfo << /Marked true >>``. Either every piece
is tagged or none is.

Each piece embeds its own subset of the fonts; an object that is byte for byte the same as one
already written (after renumbering; a font file, a font, an image) is written once and shared,
which is what keeps the file of a whole class close to the sum of its pages. Structure elements
are never shared: each has one place in the tree.

Every object that is not a stream (structure elements, the parent tree's arrays, pages, font
dictionaries: most objects of a tagged file) is written into a compressed object stream of up to
`OBJECTS_PER_STREAM` objects, and the cross-reference is a stream too (PDF 1.5): written one by one,
a class's tags took two thirds of its file. Only the batch being filled is held.

The output depends only on the pieces and their order, so the same pieces give the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import re
import zlib
from array import array
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from attnquiz.engine.markup.xml_text import escape as xml_escape

_HEADER = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
_SKIPPED_PAGE_KEYS = frozenset({"/Parent"})
_PARENT_KEYS = frozenset({"/StructParents", "/StructParent"})
NUMBER_TREE_FANOUT = 64
"""Entries (leaves or nodes) per node of the joined parent tree above its leaves."""
OBJECTS_PER_STREAM = 200
"""Objects per object stream: enough for compression to find the structure elements' repetitions,
few enough that a reader's random access unpacks little (and the batch held here stays small)."""


class PdfJoin:
    """A PDF written to ``out`` one piece at a time: `add` each piece's bytes, then `finish`."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        # Where object n is: offsets[n] is its file offset when streams[n] is 0, and its index in the
        # object stream numbered streams[n] otherwise. Arrays: a class has a million objects.
        self.offsets = array("q", [0])  # 0 is the free object
        self.streams = array("q", [0])
        self.batch: list[tuple[int, bytes]] = []  # objects waiting for the next object stream
        self.pages = array("q")  # the pages' numbers (arrays of numbers: 8 bytes each, not an int object)
        self.shared: dict[bytes, int] = {}  # digest of an object's bytes → its number in the output
        self.info: dict[str, Any] | None = None
        self.lang: Any = None
        self.preferences: bytes = b""  # the first piece's viewer preferences, but /DisplayDocTitle
        self.document_id = b""
        self.position = 0
        self.digest = hashlib.sha256()  # of everything written: the file's instance identifier
        self.tagged: bool | None = None  # whether the pieces are tagged (known at the first piece)
        self.elements = array("q")  # the top-level structure elements, in order
        self.leaves: list[tuple[int, bytes, bytes]] = []  # parent-tree leaves: (object, first key, last key)
        self.id_leaves: list[tuple[int, bytes, bytes]] = []  # ID-tree leaves (a piece's own, or none)
        self.next_key = 0  # the first parent-tree key free for the next piece
        self.role_map: dict[str, bytes] = {}
        self.class_map: dict[str, bytes] = {}
        self._write(_HEADER)
        self.pages_number = self._reserve()  # the page tree, written by `finish`
        self.tree_number = self._reserve()  # the structure tree root, written by `finish` (if tagged)
        self.document_number = self._reserve()  # its /Document element, written by `finish`

    def _write(self, data: bytes) -> None:
        self.out.write(data)
        self.digest.update(data)
        self.position += len(data)

    def _reserve(self) -> int:
        self.offsets.append(0)
        self.streams.append(0)
        return len(self.offsets) - 1

    def _object(self, number: int, body: bytes) -> None:
        """Object ``number``: a stream is written now, anything else into the next object stream."""
        if body.endswith(b"\nendstream"):  # how every stream here ends (`_serialise`, the XMP packet)
            self._direct(number, body)
            return
        self.batch.append((number, body))
        if len(self.batch) >= OBJECTS_PER_STREAM:
            self._flush_batch()

    def _direct(self, number: int, body: bytes) -> None:
        self.offsets[number] = self.position
        self._write(b"%d 0 obj\n" % number + body + b"\nendobj\n")

    def _flush_batch(self) -> None:
        """Write the waiting objects as one compressed object stream (``/Type /ObjStm``)."""
        if not self.batch:
            return
        stream = self._reserve()
        header: list[bytes] = []
        bodies: list[bytes] = []
        position = 0
        for index, (number, body) in enumerate(self.batch):
            header.append(b"%d %d" % (number, position))
            bodies.append(body)
            position += len(body) + 1
            self.offsets[number] = index
            self.streams[number] = stream
        head = b" ".join(header) + b"\n"
        packed = zlib.compress(head + b"\n".join(bodies) + b"\n", 6)
        self.batch = []
        self._direct(
            stream,
            b"<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream"
            % (len(header), len(head), len(packed), packed),
        )

    def add(self, pdf: bytes) -> None:
        """Append every page of ``pdf`` (a whole PDF file) to the output, and its structure tree."""
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(pdf), strict=True)  # a piece is Typst's: a broken one is a bug
        catalog: Any = reader.trailer["/Root"].get_object()
        tree_reference = catalog.raw_get("/StructTreeRoot") if "/StructTreeRoot" in catalog else None
        tagged = tree_reference is not None
        if self.tagged is None:
            self.tagged = tagged
        elif self.tagged != tagged:
            raise ValueError("a tagged piece and an untagged piece cannot be joined into one file")
        if self.info is None:
            info = reader.trailer.get("/Info")
            self.info = dict(info.get_object()) if info is not None else {}
            self.lang = catalog.get("/Lang")
            self.preferences = _preferences(catalog.get("/ViewerPreferences"))
            self.document_id = _document_id(reader)
        copier = _Copier(self, reader, pdf, self.next_key)
        for page in reader.pages:
            if page.indirect_reference is None:
                raise ValueError("a page of the piece is not an indirect object")
            self.pages.append(copier.page(page.indirect_reference.idnum))
        if tree_reference is not None:
            self._structure(copier, tree_reference)

    def _structure(self, copier: _Copier, tree_reference: Any) -> None:
        """Copy the piece's structure elements under the joined /Document and its parent tree as a leaf."""
        from pypdf.generic import IndirectObject

        tree = tree_reference.get_object()
        if isinstance(tree_reference, IndirectObject):
            copier.numbers[tree_reference.idnum] = self.tree_number
        copier.share = False  # a structure element has one place in the tree: never one object for two
        top = _listed(tree.raw_get("/K")) if "/K" in tree else []
        document: Any = top[0].get_object() if len(top) == 1 and isinstance(top[0], IndirectObject) else None
        if document is not None and document.get("/S") == "/Document":
            # The piece's /Document is the joined file's: its children are the joined one's.
            copier.numbers[top[0].idnum] = self.document_number
            top = _listed(document.raw_get("/K")) if "/K" in document else []
        elif isinstance(tree_reference, IndirectObject):
            copier.numbers[tree_reference.idnum] = self.document_number  # their parent becomes /Document
        for kid in top:
            if not isinstance(kid, IndirectObject):
                raise ValueError("a top-level structure element of the piece is not an indirect object")
            self.elements.append(copier.copy(kid.idnum))
        for name, table in (("/RoleMap", self.role_map), ("/ClassMap", self.class_map)):
            if name not in tree:
                continue
            for key, value in tree[name].get_object().items():
                body = _serialise(value, copier.copy)
                if table.setdefault(key, body) != body:
                    raise ValueError(f"the pieces' {name} entries for {key} differ")
        ids = sorted(
            (copier.id_prefix + _string_bytes(name), value)
            for name, value in _tree_entries(tree, "/IDTree", "/Names")
        )
        if ids:
            # A table's header cells have IDs its data cells name (/Headers): unique in a piece, so
            # each piece's are prefixed with its number (fixed width: the order of the names is the
            # order of the pieces) and the leaves of the joined ID tree follow one another.
            names = b" ".join(b"<%s> %s" % (key.hex().encode(), _serialise(v, copier.copy)) for key, v in ids)
            leaf = self._reserve()
            limits = b"<%s> <%s>" % (ids[0][0].hex().encode(), ids[-1][0].hex().encode())
            self._object(leaf, b"<< /Limits [%s] /Names [%s] >>" % (limits, names))
            self.id_leaves.append((leaf, ids[0][0], ids[-1][0]))
        else:
            self.id_leaves.append((0, b"", b""))  # no leaf: the next piece's prefix is still new
        entries = sorted((int(key), value) for key, value in _tree_entries(tree, "/ParentTree", "/Nums"))
        if entries:
            nums = b" ".join(
                b"%d %s" % (self.next_key + key, _serialise(value, copier.copy)) for key, value in entries
            )
            first, last = self.next_key + entries[0][0], self.next_key + entries[-1][0]
            leaf = self._reserve()
            self._object(leaf, b"<< /Limits [%d %d] /Nums [%s] >>" % (first, last, nums))
            self.leaves.append((leaf, b"%d" % first, b"%d" % last))
        following = int(tree.get("/ParentTreeNextKey", 0))
        if entries:
            following = max(following, entries[-1][0] + 1)
        self.next_key += following

    def finish(self) -> None:
        """Write the page tree, the structure tree, the catalog, the document information, the XMP
        metadata and the cross-reference table."""
        kids = b" ".join(b"%d 0 R" % n for n in self.pages)
        self._object(self.pages_number, b"<< /Type /Pages /Count %d /Kids [%s] >>" % (len(self.pages), kids))
        info = dict(self.info or {})
        lang = _serialise(self.lang, _no_references) if self.lang is not None else None
        catalog = [b"/Type /Catalog /Pages %d 0 R" % self.pages_number]
        if lang:
            catalog.append(b"/Lang " + lang)
        if self.tagged:
            catalog.append(b"/StructTreeRoot %d 0 R /MarkInfo << /Marked true >>" % self.tree_number)
            self._tree()
        if "/Title" in info:
            catalog.append(b"/ViewerPreferences << " + self.preferences + b"/DisplayDocTitle true >>")
        metadata = self._reserve()
        self._xmp(metadata, info)
        catalog.append(b"/Metadata %d 0 R" % metadata)
        catalog_number = self._reserve()
        self._object(catalog_number, b"<< " + b" ".join(catalog) + b" >>")
        info_number = self._reserve()
        entries = b"".join(
            _serialise_name(key) + b" " + _serialise(value, _no_references)
            for key, value in sorted(info.items())
            if not _has_reference(value)
        )
        self._object(info_number, b"<<" + entries + b">>")
        self._flush_batch()
        instance = self.digest.hexdigest()[:32].encode()
        xref = self._reserve()
        start = self.position
        self.offsets[xref] = start
        # One row per object (PDF 1.7, 7.5.8.3): type 0 free, 1 at a file offset, 2 in an object stream.
        rows = bytearray(b"\x00" + (0).to_bytes(5, "big") + (65535).to_bytes(2, "big"))
        for number in range(1, len(self.offsets)):
            stream = self.streams[number]
            if stream:
                rows += b"\x02" + stream.to_bytes(5, "big") + self.offsets[number].to_bytes(2, "big")
            elif self.offsets[number] == 0:  # reserved and never written (the tree of an untagged file)
                rows += b"\x00" * 8
            else:
                rows += b"\x01" + self.offsets[number].to_bytes(5, "big") + b"\x00\x00"
        packed = zlib.compress(bytes(rows), 6)
        self._write(
            b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 5 2] /Root %d 0 R /Info %d 0 R /ID [<%s> <%s>] "
            b"/Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n"
            % (
                xref,
                len(self.offsets),
                catalog_number,
                info_number,
                self.document_id.hex().encode(),
                instance,
                len(packed),
                packed,
                start,
            )
        )

    def _tree(self) -> None:
        """The joined /Document element, the parent tree over the pieces' leaves and the tree root."""
        kids = b" ".join(b"%d 0 R" % n for n in self.elements)
        self._object(
            self.document_number,
            b"<< /Type /StructElem /S /Document /P %d 0 R /K [%s] >>" % (self.tree_number, kids),
        )
        parent_tree = self._tree_of(self.leaves, lambda key: key)
        id_leaves = [leaf for leaf in self.id_leaves if leaf[0]]
        id_tree = self._tree_of(id_leaves, lambda key: b"<%s>" % key.hex().encode()) if id_leaves else 0
        maps = b"".join(
            name + b" <<" + b"".join(_serialise_name(k) + b" " + v for k, v in sorted(table.items())) + b">> "
            for name, table in ((b"/RoleMap", self.role_map), (b"/ClassMap", self.class_map))
            if table
        )
        self._object(
            self.tree_number,
            b"<< /Type /StructTreeRoot /K [%d 0 R] /ParentTree %d 0 R /ParentTreeNextKey %d %s%s>>"
            % (
                self.document_number,
                parent_tree,
                self.next_key,
                b"/IDTree %d 0 R " % id_tree if id_tree else b"",
                maps,
            ),
        )

    def _tree_of(self, leaves: list[tuple[int, bytes, bytes]], key: Callable[[bytes], bytes]) -> int:
        """A number or name tree over its leaves (written, in key order): nodes of at most
        `NUMBER_TREE_FANOUT` kids with their limits (``key`` writes one), and a root of kids."""
        level = leaves
        while len(level) > NUMBER_TREE_FANOUT:
            above = []
            for start in range(0, len(level), NUMBER_TREE_FANOUT):
                group = level[start : start + NUMBER_TREE_FANOUT]
                node = self._reserve()
                refs = b" ".join(b"%d 0 R" % n for n, _, _ in group)
                limits = key(group[0][1]) + b" " + key(group[-1][2])
                self._object(node, b"<< /Limits [%s] /Kids [%s] >>" % (limits, refs))
                above.append((node, group[0][1], group[-1][2]))
            level = above
        root = self._reserve()
        self._object(root, b"<< /Kids [%s] >>" % b" ".join(b"%d 0 R" % n for n, _, _ in level))
        return root

    def _xmp(self, number: int, info: dict[str, Any]) -> None:
        """XMP metadata for the whole file: title, author, language, page count (PDF/UA asks for
        the title there; readers show the XMP title first)."""

        def text(key: str) -> str:
            value = info.get(key)
            return xml_escape(str(value)) if value is not None and not _has_reference(value) else ""

        described = [
            f'<dc:title><rdf:Alt><rdf:li xml:lang="x-default">{text("/Title")}</rdf:li></rdf:Alt></dc:title>'
            if text("/Title")
            else "",
            f"<dc:creator><rdf:Seq><rdf:li>{text('/Author')}</rdf:li></rdf:Seq></dc:creator>"
            if text("/Author")
            else "",
            f"<xmp:CreatorTool>{text('/Creator')}</xmp:CreatorTool>" if text("/Creator") else "",
            f"<dc:language><rdf:Bag><rdf:li>{xml_escape(str(self.lang))}</rdf:li></rdf:Bag></dc:language>"
            if self.lang is not None
            else "",
            f"<xmpTPg:NPages>{len(self.pages)}</xmpTPg:NPages><dc:format>application/pdf</dc:format>",
            "<pdf:PDFVersion>1.7</pdf:PDFVersion>",
        ]
        packet = (
            '<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>'
            '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" '
            'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:xmpTPg="http://ns.adobe.com/xap/1.0/t/pg/" '
            'xmlns:pdf="http://ns.adobe.com/pdf/1.3/">'
            + "".join(described)
            + '</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="r"?>'
        ).encode("utf-8")
        self._object(
            number,
            b"<< /Type /Metadata /Subtype /XML /Length %d >>\nstream\n%s\nendstream" % (len(packet), packet),
        )


class _Copier:
    """One piece's objects under their numbers in the output: each written once, after what it refers to.

    Most objects of a tagged piece are small dictionaries and arrays (structure elements, the
    parent tree's arrays, font descriptors): those are copied from the piece's bytes as they are,
    with their references renumbered (`_raw`), which is many times faster than parsing each into
    pypdf objects. Pages (whose ``/Parent`` is dropped) and streams go through pypdf.
    """

    def __init__(self, join: PdfJoin, reader: Any, data: bytes, key_offset: int) -> None:
        self.join = join
        self.reader = reader
        self.data = data
        self.offsets: dict[int, int] = dict(reader.xref.get(0, {}))  # where each object of the piece starts
        self.key_offset = key_offset  # added to the piece's /StructParents and /StructParent keys
        self.id_prefix = b"%08d:" % len(join.id_leaves)  # before each structure element ID of the piece
        self.share = True  # whether an object the same as one already written is that object
        self.numbers: dict[int, int] = {}  # number in the piece → number in the output
        self.open: set[int] = set()  # objects being copied (a reference back to one is a cycle)
        self.page_numbers = {
            page.indirect_reference.idnum for page in reader.pages if page.indirect_reference
        }
        self.tree_numbers = _page_tree_nodes(reader)

    def page(self, number: int) -> int:
        """Copy a page (and what it uses) under a new number that is never shared with another page."""
        return self.copy(number, page=True)

    def copy(self, number: int, page: bool = False) -> int:
        if number in self.numbers:
            return self.numbers[number]
        if number in self.open:
            # A cycle (an annotation pointing back at its page, a structure element's parent): the
            # object in progress gets its number now, and is written with it; it is then not shared.
            self.numbers[number] = self.join._reserve()
            return self.numbers[number]
        if number in self.tree_numbers:  # a reference to the piece's page tree: the joined file's tree
            return self.join.pages_number
        page = page or number in self.page_numbers  # a link to a page copies it as a page, once
        self.open.add(number)
        body = None if page else self._raw(number)
        if body is None:
            skipped = _SKIPPED_PAGE_KEYS if page else frozenset()
            body = _serialise(self.reader.get_object(number), self.copy, skipped, self.key_offset)
        self.open.discard(number)
        if number in self.numbers:  # reserved by a cycle through it
            self.join._object(self.numbers[number], body)
            return self.numbers[number]
        shared = self.share and not page
        if shared:
            digest = hashlib.sha256(body).digest()
            known = self.join.shared.get(digest)
            if known is not None:
                self.numbers[number] = known
                return known
        new = self.join._reserve()
        self.join._object(new, body)
        self.numbers[number] = new
        if shared:
            self.join.shared[digest] = new
        return new

    def _raw(self, number: int) -> bytes | None:
        """The object's body from the piece's bytes, references renumbered (copying what they name)
        and parent-tree keys moved; None for a stream or an object not found where the
        cross-reference table says (pypdf copies those)."""
        offset = self.offsets.get(number)
        if offset is None:
            return None
        data = self.data
        header = _OBJECT_HEADER.match(data, offset)
        if header is None or int(header.group(1)) != number:
            return None
        position = header.end()
        end = data.find(b"endobj", position)
        if end > 0 and _SPECIAL.search(data, position, end) is None:
            # The usual object: no string, comment or stream, so its first ``endobj`` is its end and
            # every match of a reference is one.
            return _REFERENCE_OR_KEY.sub(self._renumbered, data[position:end]).strip()
        out: list[bytes] = []
        start = position
        while True:
            token = _TOKEN.search(data, position)
            if token is None:
                return None
            kind = token.lastgroup
            if kind == "ref":
                out.append(data[start : token.start()])
                out.append(b"%d 0 R" % self.copy(int(token.group("number"))))
                start = position = token.end()
            elif kind == "key":
                out.append(data[start : token.start()])
                out.append(token.group("name") + b" %d" % (int(token.group("value")) + self.key_offset))
                start = position = token.end()
            elif kind in ("string", "hex"):
                if kind == "string":
                    position = _string_end(data, token.end())
                else:
                    position = data.find(b">", token.end()) + 1
                if position <= 0:
                    return None
                if _names_an_id(data, header.end(), token.start()):  # an /ID, or one in /Headers
                    out.append(data[start : token.start()])
                    out.append(_prefixed(self.id_prefix, data[token.start() : position]))
                    start = position
            elif kind == "comment":
                position = token.end()
            elif kind == "stream":
                return None
            else:  # endobj
                out.append(data[start : token.start()])
                return b"".join(out).strip()

    def _renumbered(self, token: re.Match[bytes]) -> bytes:
        if token.lastgroup == "ref":
            return b"%d 0 R" % self.copy(int(token.group("number")))
        return token.group("name") + b" %d" % (int(token.group("value")) + self.key_offset)


_OBJECT_HEADER = re.compile(rb"\s*(\d+)\s+0\s+obj")
_DELIMITER = rb"(?=[\s()<>\[\]{}/%]|$)"
# Each alternative starts with a character, its lookbehind after it (``\d(?<![\w.#+\-]\d)`` is a digit
# with no word character, dot or sign before it): so the regular expression engine skips to the
# next possible first character instead of trying every position (twice as fast, the same matches).
_TOKEN = re.compile(
    rb"(?P<ref>(?P<number>\d(?<![\w.#+\-]\d)\d*)\s+\d+\s+R" + _DELIMITER + rb")"
    rb"|(?P<key>(?P<name>/StructParents?)" + _DELIMITER + rb"\s*(?P<value>\d+)" + _DELIMITER + rb")"
    rb"|(?P<string>\()"
    rb"|(?P<hex><(?<!<<)(?!<))"
    rb"|(?P<comment>%[^\r\n]*)"
    rb"|(?P<stream>s(?<![\w#/]s)tream" + _DELIMITER + rb")"
    rb"|(?P<endobj>e(?<![\w#/]e)ndobj" + _DELIMITER + rb")"
)
"""What renumbering an object's bytes must see: a reference, a parent-tree key, the start of a
string (skipped whole: its bytes are never tokens), a hex string (a ``<`` not of ``<<``), a
comment, a stream (copied through pypdf) and the object's end."""
_REFERENCE_OR_KEY = re.compile(_TOKEN.pattern.split(b"|(?P<string>")[0])
_SPECIAL = re.compile(rb"[(%]|<(?<!<<)(?!<)|stream")
"""What an object copied by one substitution of references and keys must not hold."""
_STRING_PART = re.compile(rb"[()\\]")


def _string_end(data: bytes, position: int) -> int:
    """Where the literal string whose ``(`` is just before ``position`` ends (after its ``)``);
    -1 if it never does. Escapes are skipped; unescaped parentheses nest."""
    depth = 1
    while depth:
        found = _STRING_PART.search(data, position)
        if found is None:
            return -1
        char = found.group()
        position = found.end()
        if char == b"\\":
            position += 1
        elif char == b"(":
            depth += 1
        else:
            depth -= 1
    return position


def _page_tree_nodes(reader: Any) -> set[int]:
    """The numbers of the piece's page tree nodes (every /Pages, not the pages)."""
    found: set[int] = set()
    pending = [reader.trailer["/Root"].raw_get("/Pages")]
    while pending:
        reference = pending.pop()
        if not hasattr(reference, "idnum") or reference.idnum in found:
            continue
        node = reference.get_object()
        if node.get("/Type") != "/Pages":
            continue
        found.add(reference.idnum)
        pending.extend(node.raw_get("/Kids") if "/Kids" in node else [])
    return found


def _listed(value: Any) -> list[Any]:
    """A structure element's kids (one kid, or an array of them, perhaps an indirect one) as a list."""
    from pypdf.generic import ArrayObject, IndirectObject

    if isinstance(value, IndirectObject) and isinstance(value.get_object(), ArrayObject):
        value = value.get_object()
    return list(value) if isinstance(value, ArrayObject) else [value]


def _tree_entries(tree: Any, name: str, entries: str) -> Iterator[tuple[Any, Any]]:
    """The (key, value) pairs of the number or name tree ``tree[name]`` (``entries``: /Nums or
    /Names), values unresolved (references stay references); none if there is no such tree."""
    if name not in tree:
        return
    pending = [tree[name].get_object()]
    while pending:
        node = pending.pop()
        if entries in node:
            pairs = node[entries]
            for index in range(0, len(pairs) - 1, 2):
                yield pairs[index], pairs[index + 1]
        pending.extend(kid.get_object() for kid in node.get("/Kids", []))


def _string_bytes(value: Any) -> bytes:
    """A PDF string's bytes, as written (pypdf may have read it as text)."""
    original = getattr(value, "original_bytes", None)
    return bytes(original) if original is not None else bytes(value)


_ID_BEFORE = re.compile(rb"/ID\s*$")
_HEADERS = re.compile(rb"/Headers\s*\[[^\]]*$")


def _names_an_id(data: bytes, start: int, position: int) -> bool:
    """Whether the string at ``position`` of the object starting at ``start`` is a structure
    element's /ID or one of the IDs of its /Headers."""
    before = data[max(start, position - 400) : position]
    return _ID_BEFORE.search(before) is not None or _HEADERS.search(before) is not None


def _prefixed(prefix: bytes, string: bytes) -> bytes:
    """A string token (literal or hex) with ``prefix`` before its bytes."""
    if string.startswith(b"("):
        return b"(" + prefix.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + string[1:]
    return b"<" + prefix.hex().encode() + string[1:]


def _preferences(value: Any) -> bytes:
    """A piece's viewer preferences as dictionary entries, without /DisplayDocTitle (set by the join)."""
    if value is None:
        return b""
    return b"".join(
        _serialise_name(key) + b" " + _serialise(item, _no_references) + b" "
        for key, item in value.get_object().items()
        if key != "/DisplayDocTitle" and not _has_reference(item)
    )


def _document_id(reader: Any) -> bytes:
    """The first part of the piece's file identifier (the same document, whichever piece), or the
    digest of its title when it has none."""
    ids = reader.trailer.get("/ID")
    if ids:
        first = ids[0]
        return bytes(first.original_bytes if hasattr(first, "original_bytes") else str(first).encode())[:32]
    info = reader.trailer.get("/Info")
    title = str(info.get_object().get("/Title", "")) if info is not None else ""
    return hashlib.sha256(title.encode("utf-8")).digest()[:16]


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


def _serialise(
    value: Any,
    number_of: Callable[[int], int],
    skipped: frozenset[str] = frozenset(),
    key_offset: int = 0,
) -> bytes:
    """An object as PDF bytes, each reference renumbered by ``number_of`` (which copies what it
    names), each parent-tree key (``/StructParents``, ``/StructParent``) moved by ``key_offset``."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NumberObject, StreamObject

    if isinstance(value, IndirectObject):
        return b"%d 0 R" % number_of(value.idnum)
    if isinstance(value, ArrayObject):
        return b"[" + b" ".join(_serialise(item, number_of, key_offset=key_offset) for item in value) + b"]"
    if isinstance(value, DictionaryObject):
        data = b""
        if isinstance(value, StreamObject):
            # The stream's bytes as stored (still compressed), with its length; the piece's filters stay.
            data = bytes(value._data)  # pypdf keeps a read stream's encoded bytes here
        entries = []
        for key, item in value.items():
            if key in skipped or (isinstance(value, StreamObject) and key == "/Length"):
                continue
            if key in _PARENT_KEYS and isinstance(item, NumberObject):
                entries.append(_serialise_name(key) + b" %d" % (int(item) + key_offset))
            else:
                entries.append(
                    _serialise_name(key) + b" " + _serialise(item, number_of, key_offset=key_offset)
                )
        if isinstance(value, StreamObject):
            entries.append(b"/Length %d" % len(data))
            return b"<<" + b" ".join(entries) + b">>\nstream\n" + data + b"\nendstream"
        return b"<<" + b" ".join(entries) + b">>"
    buffer = io.BytesIO()
    value.write_to_stream(buffer)
    return buffer.getvalue()


__all__ = ["NUMBER_TREE_FANOUT", "OBJECTS_PER_STREAM", "PdfJoin"]
