"""Tagged PDFs (issue 31): the joined file of a class keeps one structure tree that a screen reader
can follow (headings, formulas with their spoken form, figures with their alternative text and
their values as a table), its document language and title, a consistent parent tree, and a
reading order that is the visual one, also in the two columns of the brief key. Read back with
pypdf from the bytes the export writes."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.figures import table as figure_table
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.export.pdf.join import NUMBER_TREE_FANOUT, PdfJoin
from attnquiz.engine.export.pdf.worksheets import compile_typst
from attnquiz.engine.figures import Figure
from attnquiz.engine.plan.class_plan import ClassPlan, KeyStyle, plan_class

FIGURE_ITEMS = (
    "it-referent-weight",  # a heatmap in the prompt and one in the solution
    "unscaled-saturation",  # a line plot in the prompt
    "scaling-saturation",
    "softmax-purpose",
    "w-o-hand-example",
    "mha-params-formula",
)


def _plan(students: int) -> ClassPlan:
    return plan_class(banks.load("week1"), students=students, master_seed=2026, items=FIGURE_ITEMS)


@dataclass
class Element:
    kind: str
    attributes: dict[str, Any]
    content: list[tuple[int, int]] = field(default_factory=list)  # (page index, MCID), in order
    kids: list[Element] = field(default_factory=list)

    def walk(self) -> Iterator[Element]:
        yield self
        for kid in self.kids:
            yield from kid.walk()


@dataclass
class Mark:
    text: str
    x: float
    y: float


@dataclass
class Tagged:
    """A tagged PDF read back: its structure tree and, page by page as asked (text extraction is
    slow), the text and position of each piece of marked content."""

    reader: PdfReader
    document: Element
    read_pages: set[int] = field(default_factory=set)
    marks: dict[tuple[int, int], Mark] = field(default_factory=dict)

    def mark(self, key: tuple[int, int]) -> Mark | None:
        if key[0] not in self.read_pages:
            self.read_pages.add(key[0])
            self.marks.update(_marks(self.reader, key[0]))
        return self.marks.get(key)

    def text(self, element: Element) -> str:
        """All the text of an element and its descendants, in the tree's order, spaces normalised."""
        marks = [self.mark(key) for e in element.walk() for key in e.content]
        return " ".join("".join(m.text for m in marks if m is not None).split())


def _read(data: bytes) -> Tagged:
    reader = PdfReader(io.BytesIO(data), strict=True)
    pages = {
        page.indirect_reference.idnum: n for n, page in enumerate(reader.pages) if page.indirect_reference
    }

    def element(reference: Any) -> Element:
        node = reference.get_object()
        found = Element(str(node["/S"]), {k: node[k] for k in node if k in ("/Alt", "/ID", "/A", "/T")})
        page = node.raw_get("/Pg") if "/Pg" in node else None
        kids: Any = node.raw_get("/K") if "/K" in node else ArrayObject()
        kids = kids.get_object() if isinstance(kids, IndirectObject) else kids
        kid: Any
        for kid in kids if isinstance(kids, ArrayObject) else [kids]:
            if isinstance(kid, int):
                assert page is not None, "marked content of an element with no page"
                found.content.append((pages[page.idnum], int(kid)))
                continue
            value: Any = kid.get_object()
            if value.get("/Type") == "/MCR":
                where: Any = value.raw_get("/Pg") if "/Pg" in value else page
                found.content.append((pages[where.idnum], int(value["/MCID"])))
            elif value.get("/Type") != "/OBJR":
                found.kids.append(element(kid))
        return found

    catalog: Any = reader.trailer["/Root"]
    root: Any = catalog["/StructTreeRoot"]
    top = root.raw_get("/K")
    top = top if isinstance(top, ArrayObject) else [top]
    assert len(top) == 1, "one /Document element at the root"
    return Tagged(reader, element(top[0]))


def _marks(reader: PdfReader, number: int) -> dict[tuple[int, int], Mark]:
    """Each piece of marked content of a page: its text and where its first text is drawn."""
    marks: dict[tuple[int, int], Mark] = {}
    stack: list[int | None] = []

    def before(operator: bytes, operands: list[Any], cm: Any, tm: Any) -> None:
        if operator == b"BDC":
            properties = operands[1] if len(operands) > 1 else None
            mcid = properties.get("/MCID") if isinstance(properties, DictionaryObject) else None
            stack.append(None if mcid is None else int(mcid))
        elif operator == b"BMC":
            stack.append(None)
        elif operator == b"EMC" and stack:
            stack.pop()

    def text(chunk: str, cm: Any, tm: Any, font: Any, size: Any) -> None:
        current = next((m for m in reversed(stack) if m is not None), None)
        if current is None or not chunk.strip():
            return
        key = (number, current)
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        if key in marks:
            marks[key].text += chunk
        else:
            marks[key] = Mark(chunk, x, y)

    reader.pages[number].extract_text(visitor_operand_before=before, visitor_text=text)
    return marks


def _mcids_drawn(reader: PdfReader) -> set[tuple[int, int]]:
    """Every MCID a page's content stream opens (text or not)."""
    found: set[tuple[int, int]] = set()
    for number, page in enumerate(reader.pages):
        contents = page.get_contents()
        assert contents is not None
        for mcid in re.findall(rb"/MCID (\d+)", contents.get_data()):
            found.add((number, int(mcid)))
    return found


def _check_parent_tree(tagged: Tagged) -> None:
    """Every MCID a page draws is found through the page's /StructParents in the parent tree, and
    leads back to the element whose content it is; the tree's keys are unique and below
    /ParentTreeNextKey; every /Headers ID of a table cell is in the ID tree."""
    reader = tagged.reader
    catalog: Any = reader.trailer["/Root"]
    root: Any = catalog["/StructTreeRoot"]
    entries: dict[int, Any] = {}
    pending = [root["/ParentTree"]]
    while pending:
        node = pending.pop().get_object()
        nums = node.get("/Nums", [])
        for index in range(0, len(nums), 2):
            key = int(nums[index])
            assert key not in entries, f"parent-tree key {key} twice"
            entries[key] = nums[index + 1]
        kids = node.get("/Kids", [])
        assert len(kids) <= NUMBER_TREE_FANOUT
        pending.extend(kids)
    assert max(entries) < int(root["/ParentTreeNextKey"])
    owner: dict[tuple[int, int], str] = {}
    for element in tagged.document.walk():
        for mark in element.content:
            owner[mark] = element.kind
    drawn = _mcids_drawn(reader)
    assert drawn == set(owner), "every marked content is an element's, and every element's is drawn"
    for number, page in enumerate(reader.pages):
        parents = entries[int(page["/StructParents"])].get_object()  # type: ignore[call-overload]
        for n, mcid in drawn:
            if n == number:
                assert str(parents[mcid].get_object()["/S"]) == owner[(n, mcid)]
    ids: set[str] = set()
    if "/IDTree" in root:
        pending = [root["/IDTree"]]
        while pending:
            node = pending.pop().get_object()
            names = node.get("/Names", [])
            ids.update(str(names[index]) for index in range(0, len(names), 2))
            pending.extend(node.get("/Kids", []))
    for element in tagged.document.walk():
        for attribute in _attributes(element):
            for name in attribute.get("/Headers", []):
                assert str(name) in ids, f"a cell's header {name} is in no ID tree"


def _attributes(element: Element) -> list[Any]:
    value = element.attributes.get("/A")
    if value is None:
        return []
    value = value.get_object()
    return [a.get_object() for a in value] if isinstance(value, ArrayObject) else [value]


def _figures(plan: ClassPlan, where: tuple[str, ...]) -> list[Figure]:
    return [
        f for sheet in plan.sheets for q in sheet.questions for f in q.variant.figures if f.where in where
    ]


@pytest.fixture(scope="module")
def class_of_100() -> tuple[ClassPlan, bytes, Tagged]:
    """The worksheets of 100 students as the export joins them, and their tags read back."""
    plan = _plan(100)
    data = pdf.worksheets(plan, plan.sheets, jobs=1)
    return plan, data, _read(data)


def test_the_joined_worksheets_of_100_students_keep_their_headings_maths_and_figures(
    class_of_100: tuple[ClassPlan, bytes, Tagged],
) -> None:
    plan, _, tagged = class_of_100
    assert pdf.documents(plan, "a4", None)[0].pieces(100) > NUMBER_TREE_FANOUT // 4  # really joined
    elements = list(tagged.document.walk())
    kinds = [e.kind for e in elements]
    # A sheet title per student (H1) and a heading per question (H2), in the class's order.
    titles = [e for e in elements if e.kind == "/H1"]
    questions = [e for e in elements if e.kind == "/H2"]
    assert len(titles) == 100
    assert len(questions) == 100 * len(FIGURE_ITEMS)
    for student in (0, 1, 50, 98, 99):  # the text of some (reading every page's text is slow)
        assert tagged.text(titles[student]) == plan.title
        for n in range(1, 7):
            heading = tagged.text(questions[6 * student + n - 1])
            assert heading.startswith(f"Question {n}")
            source = plan.sheets[student].questions[n - 1].source
            assert heading.replace(" ", "").endswith(source.replace(" ", ""))
    # Every formula is tagged with its spoken form; there are many.
    formulas = [e for e in elements if e.kind == "/Formula"]
    assert len(formulas) > 100 * 10
    assert all(str(e.attributes.get("/Alt", "")).strip() for e in formulas)
    # Every prompt figure is a /Figure whose alternative text is its description, followed by its
    # values as a table: the same figures, in the same order, as the sheets hold.
    figures = _figures(plan, ("prompt",))
    assert [str(e.attributes["/Alt"]) for e in elements if e.kind == "/Figure"] == [
        figure_table.alt_text(f) for f in figures
    ]
    assert kinds.count("/Figure") == 200
    _check_parent_tree(tagged)


def test_each_figures_table_holds_its_values_with_headers(
    class_of_100: tuple[ClassPlan, bytes, Tagged],
) -> None:
    plan, _, tagged = class_of_100
    tables = []
    for parent in tagged.document.walk():
        for before, after in zip(parent.kids, parent.kids[1:], strict=False):
            if before.kind == "/Figure":
                assert after.kind == "/Table", "a figure's values follow it"
                tables.append(after)
    figures = _figures(plan, ("prompt",))
    assert len(tables) == len(figures)
    chosen = [*range(6), *range(len(figures) - 6, len(figures))]  # the first and last students' figures
    for table, figure in [(tables[n], figures[n]) for n in chosen]:
        caption, head, rows, note = figure_table.values(figure)
        sections = {kid.kind: kid for kid in table.kids}
        assert tagged.text(sections["/Caption"]) == " ".join(
            (caption + (f" ({note})" if note else "")).split()
        )
        header_cells = [tagged.text(c) for c in sections["/THead"].walk() if c.kind == "/TH"]
        assert header_cells == [" ".join(h.split()) for h in head]
        body = [[tagged.text(c) for c in row.kids] for row in sections["/TBody"].kids]
        assert body == [[" ".join(cell.split()) for cell in row] for row in rows]


def test_the_joined_file_says_its_language_and_title(class_of_100: tuple[ClassPlan, bytes, Tagged]) -> None:
    plan, data, _ = class_of_100
    reader = PdfReader(io.BytesIO(data), strict=True)
    catalog: Any = reader.trailer["/Root"]
    assert catalog["/Lang"] == "en"
    assert bool(catalog["/MarkInfo"]["/Marked"])
    assert bool(catalog["/ViewerPreferences"]["/DisplayDocTitle"])
    title = f"{plan.title}: worksheets"
    assert reader.metadata is not None
    assert reader.metadata.title == title
    xmp = catalog["/Metadata"].get_object().get_data().decode("utf-8")
    assert f'<rdf:li xml:lang="x-default">{title}</rdf:li>' in xmp
    assert "<dc:language><rdf:Bag><rdf:li>en</rdf:li></rdf:Bag></dc:language>" in xmp
    assert f"<xmpTPg:NPages>{len(reader.pages)}</xmpTPg:NPages>" in xmp


@pytest.mark.parametrize("style", ["full", "grid"])
def test_a_single_piece_says_its_language_and_title_too(style: KeyStyle) -> None:
    plan = _plan(1)
    data = pdf.key(plan, plan.sheets, style=style, jobs=1)
    reader = PdfReader(io.BytesIO(data), strict=True)
    catalog: Any = reader.trailer["/Root"]
    assert catalog["/Lang"] == "en"
    assert reader.metadata is not None
    assert reader.metadata.title in {f"{plan.title}: answer key", f"{plan.title}: marking grid"}
    _check_parent_tree(_read(data))


def test_the_brief_key_is_read_column_by_column_as_it_is_printed() -> None:
    """The brief key sets several students a page in two columns: the structure tree gives the
    students, and each one's answers, in the order a reader's eye takes (down the first column,
    then down the second, page after page)."""
    plan = _plan(50)  # two pieces of 40 and 10 students
    data = pdf.key(plan, plan.sheets, style="brief", jobs=1)
    tagged = _read(data)
    width = float(tagged.reader.pages[0].mediabox.width)
    students = [e for e in tagged.document.walk() if e.kind == "/H2"]
    assert [tagged.text(e).split()[1] for e in students] == [str(s.student) for s in plan.sheets]
    spots = []
    for element in tagged.document.walk():
        if element.kind == "/TR":
            first = next((key for cell in element.kids for e in cell.walk() for key in e.content), None)
            if first is None:
                continue
            mark = tagged.mark(first)
            if mark is not None:
                spots.append((first[0], mark.x > width / 2, -mark.y))
    assert len(spots) > 50 * len(FIGURE_ITEMS)
    assert len({(page, column) for page, column, _ in spots}) > 4  # both columns of several pages
    assert spots == sorted(spots), "rows in tree order are rows in reading order"
    _check_parent_tree(tagged)


def test_the_marking_grid_in_pieces_keeps_its_header_cells() -> None:
    """The grid's tables name their header cells by ID (/Headers): each piece's IDs are its own,
    so the join prefixes them; every cell's headers are still found in the one ID tree."""
    plan = _plan(45)  # three pieces of the grid
    data = pdf.key(plan, plan.sheets, style="grid", jobs=1)
    tagged = _read(data)
    cells = [e for e in tagged.document.walk() if e.kind == "/TD"]
    assert any(a.get("/Headers") for e in cells for a in _attributes(e))
    _check_parent_tree(tagged)


_HOSTILE = 'x) 1 0 R (y \\\\ /StructParents 9 endobj stream % <a> "q"'


def _piece(label: str) -> bytes:
    alt = _HOSTILE.replace("\\", "\\\\").replace('"', '\\"')
    source = (
        '#set document(title: "t", date: none)\n#set text(font: "New Computer Modern", lang: "en")\n'
        f"= Heading {label}\n"
        f'Text #math.equation(block: false, alt: "{alt}", $x^2$) and\n'
        f'#figure(alt: "{alt}", kind: "f", supplement: none, numbering: none, rect(width: 1cm))\n'
        '#link("https://example.org")[a link]\n#pagebreak()\nPage two.\n'
    )
    return compile_typst(source)


def test_alternative_texts_that_look_like_pdf_syntax_survive_the_join() -> None:
    """Strings are copied as strings: a reference, a key, a keyword or a comment inside an alt text
    is neither renumbered nor cut, and annotations keep their parent-tree keys."""
    buffer = io.BytesIO()
    join = PdfJoin(buffer)
    for label in "ABC":
        join.add(_piece(label))
    join.finish()
    tagged = _read(buffer.getvalue())
    elements = list(tagged.document.walk())
    assert [tagged.text(e) for e in elements if e.kind == "/H1"] == ["Heading A", "Heading B", "Heading C"]
    alts = [str(e.attributes["/Alt"]) for e in elements if e.kind in ("/Formula", "/Figure")]
    assert alts == [_HOSTILE] * 6
    keys = [int(a["/StructParent"]) for page in tagged.reader.pages for a in page.get("/Annots", [])]
    assert len(keys) == len(set(keys)) == 3
    _check_parent_tree(tagged)


def test_a_tagged_piece_and_an_untagged_one_are_refused() -> None:
    join = PdfJoin(io.BytesIO())
    join.add(_piece("A"))
    with pytest.raises(ValueError, match="tagged"):
        join.add(compile_typst('#set document(title: "t", date: none)\nplain', tagged=False))


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_a_worksheet_and_its_key_meet_typsts_pdf_ua_1_checks(bank: str) -> None:
    """Typst's own PDF/UA-1 export refuses a document with a formula or an image without alternative
    text, or a figure without one: a whole bank's worksheet and key pass it (veraPDF, a Java tool,
    cannot be installed here to validate further)."""
    import typst

    plan = plan_class(banks.load(bank), students=1, master_seed=2026)
    for doc in (pdf.documents(plan, "a4", None)[0], pdf.Document("key.pdf", "key", "a4", 1)):
        source = doc.source(plan, plan.sheets)
        data = typst.compile(source.encode("utf-8"), ignore_system_fonts=True, pdf_standards=["ua-1"])
        assert isinstance(data, bytes)
        assert b"pdfuaid:part" in data
